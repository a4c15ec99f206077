// workload: the generated traffic of a simulation scenario (issue #16), as a lazy stream of
// timed chat and system events for the runtime.
// - parse_workload reads the scenario's "workload" object; every bad value is
//   errc::invalid_argument naming the key path ("workload.users: must be a whole number >= 1,
//   got -3"); unknown keys are errors too (a typo would silently change the traffic).
// - workload_generator is deterministic for (spec, seed, start, zone, days): the same event
//   sequence, byte for byte, on every platform (std::mt19937_64 and our own uniform /
//   exponential / normal / Poisson transforms, never std::*_distribution). It is lazy: it
//   holds the users' fixed traits (a few dozen bytes each) and one batch of the next hour's
//   events, never the whole span. at_ms is non-decreasing; ties keep drawing order.
// - Shape: each user sends messages as a Poisson process whose rate follows the hour of day in
//   the scenario's zone (DST included, by thinning against the local hour of each candidate);
//   a user's activity is a lognormal factor of mean 1. Heartbeats and cron runs are periodic.
// - Content: ASCII text of lognormal length; a tool call is a "[sim:tool NAME]" marker line in
//   the text (the simulated model echoes it); an image is a rich content block
//   {"type":"image","data":<base64 PNG>,"mimeType":"image/png"} after a text block; a silent
//   group message carries the simulated model's "[sim:silent]" marker (a NO_REPLY answer).
// The zone must outlive the generator (date's zones live for the process).
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "messages/chat_event.hpp"
#include "messages/status.hpp"

namespace date {
class time_zone;
}

namespace sessionrt::sim {

struct workload_channel {
  std::string name;    // "telegram", "discord", "whatsapp", "slack", or any channel id
  double weight = 1;   // share of users (and groups) on it, relative to the others
};

struct workload_spec {
  std::int64_t users = 100;
  std::int64_t days = 1;  // a scenario may pass another span to the generator
  std::vector<workload_channel> channels = {{"telegram", 4}, {"discord", 3}, {"whatsapp", 2}, {"slack", 1}};

  // Groups: `share` of the users are members of one of `count` groups; a member sends
  // `messageShare` of its messages to the group (the rest as direct messages); `threadShare` of
  // the group messages go to one of the group's `threadsPerGroup` threads; `silentShare` of
  // them are answered NO_REPLY.
  struct groups_spec {
    std::int64_t count = 0;
    double share = 0;
    double message_share = 0.5;
    double thread_share = 0;
    std::int64_t threads_per_group = 1;
    double silent_share = 0;
  } groups;

  double messages_per_user_per_day = 10;  // mean over users; /new commands come on top
  double new_per_user_per_day = 0;        // "/new" commands
  double activity_sigma = 0.5;            // lognormal spread of the users' activity factor
  // Relative message rate per local hour 0..23 (defaults: quiet at night, peaks at noon and 20:00).
  std::vector<double> hour_weights = {2, 1, 1, 1, 1, 2, 4, 7, 9, 10, 10, 11, 12, 11, 10, 10, 10, 11, 12, 13, 12, 9, 6, 4};

  struct size_spec {
    std::int64_t median_bytes = 80;
    double sigma = 1.0;
    std::int64_t max_bytes = 4000;
  } message_size;

  double tool_call_share = 0;  // messages asking for a tool call
  double image_share = 0;      // messages with an image block
  std::int64_t image_side_px = 64;

  struct heartbeat_spec {
    std::int64_t every_ms = 0;  // 0: none
    std::string session_key;    // "" = the agent's main session
    std::string text = "HEARTBEAT: read HEARTBEAT.md if it exists and report anything urgent.";
  } heartbeat;

  struct cron_spec {
    std::int64_t jobs = 0;
    std::int64_t every_ms = 0;  // each job runs this often; the jobs are spread over the period
    std::string text = "Summarize what happened since the last run.";
  } cron;
};

// Errors name the key path under `path`, e.g. "workload.users: must be a whole number >= 1, got -3".
result<workload_spec> parse_workload(const boost::json::object& o, const std::string& path = "workload");

struct generated_event {
  std::int64_t at_ms = 0;  // virtual epoch ms, non-decreasing
  enum class kind { chat, system } what = kind::chat;
  chat_event chat;   // what == chat; chat.timestamp_ms == at_ms
  system_event sys;  // what == system (heartbeat / cron); sys.timestamp_ms == at_ms
  // What the generator decided, for the engine's counters (chat events only).
  std::int64_t user = -1;  // user index, -1 for system events
  bool is_new_command = false;
  bool in_group = false;
  bool in_thread = false;
  bool silent = false;
  bool has_tool_call = false;
  bool has_image = false;
};

class workload_generator {
 public:
  workload_generator(const workload_spec& spec, std::uint64_t seed, std::int64_t start_ms, const date::time_zone* zone,
                     std::int64_t days);
  std::optional<generated_event> next();

 private:
  struct user_traits {
    double rate_per_hour_max;  // thinning bound: the peak-hour rate of messages + /new
    std::uint32_t channel;
    std::int32_t group;  // -1: direct messages only
  };
  struct pending {  // one drawn event before its content is made (16-24 bytes)
    std::int64_t at_ms;
    std::int64_t order;  // drawing order, breaks ties
    std::int64_t source;  // user index >= 0; -1 heartbeat; -2 - j cron job j
  };

  void fill_batch();
  double local_hour_weight(std::int64_t at_ms);
  generated_event make_chat(const pending& p);
  generated_event make_system(const pending& p);
  std::string message_text(std::int64_t bytes);
  double uniform();  // [0, 1)

  workload_spec spec_;
  std::mt19937_64 rng_;
  std::int64_t start_ms_, end_ms_;
  const date::time_zone* zone_;
  std::vector<user_traits> users_;
  std::vector<std::uint32_t> group_channel_;
  std::vector<std::string> images_;  // base64 PNGs, picked per image
  double max_hour_weight_ = 1;
  double new_fraction_ = 0;  // share of a user's events that are /new
  std::int64_t batch_start_ms_;
  std::vector<pending> batch_;
  std::size_t batch_pos_ = 0;
  std::int64_t order_ = 0;
  std::int64_t next_heartbeat_ms_ = 0;
  std::vector<std::int64_t> next_cron_ms_;
  std::vector<std::int64_t> cron_runs_;
  // The zone's current offset interval, so most local-hour look-ups skip the tz database.
  std::int64_t zone_begin_ms_ = 1, zone_end_ms_ = 0, zone_offset_ms_ = 0;
};

}  // namespace sessionrt::sim
