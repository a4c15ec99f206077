// scenario: a simulation scenario file (JSON) as plain values, validated before anything runs.
// - parse_scenario() reads the text with the bounded json reader and checks every key; the
//   first problem is errc::invalid_argument naming the key path and the reason, e.g.
//   "steps[3].expect.resetReason: unknown value 'dialy' (daily|idle|new|reset|none)". An
//   unknown key is an error too (a typo in an expectation must not pass silently), with the
//   closest known key when it looks like one. The "config" object is loaded with the runtime's
//   own loader (runtime/config.hpp); its errors are prefixed "config: ".
// - Time: "start" is an ISO time with an offset or Z; a step's "at" is an ISO time or
//   "+<duration>" after the start, "after" a duration after the previous step's time; a step
//   without either runs right after the previous one. Steps must not go back in time.
// - Step ids are unique; expectations that name another step ("sessionId": {"same": "s1"})
//   must name an earlier one.
// - "workload" is kept as JSON here; the engine hands it to sim::parse_workload.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime_settings.hpp"
#include "messages/chat_event.hpp"
#include "messages/status.hpp"
#include "runtime/simulated_model.hpp"

namespace sessionrt::sim {

struct model_spec {
  runtime::simulated_model_options options;  // context window, reply size, latency (seeded by the run)
  double failure_rate = 0;   // share of calls that fail with an io error
  double overflow_rate = 0;  // share of turn calls that answer with a context overflow error
};

// A number in an expectation: exact, or a range.
struct number_expect {
  std::optional<std::int64_t> exact, at_least, at_most;
  bool holds(std::int64_t v) const;
  std::string describe() const;
};

struct row_expect {
  std::string key;   // "" = the step's key
  bool absent = false;
  boost::json::object fields;  // field -> JSON value that must equal, or {"atLeast"|"atMost"|"exists"}
};

struct transcript_expect {
  std::string key;  // "" = the step's key
  std::vector<std::string> contains, excludes;  // text that must (not) be in some message
  std::optional<number_expect> messages;        // count of message entries
};

struct file_expect {
  std::vector<std::string> exist, absent;          // globs relative to the state dir
  std::vector<std::pair<std::string, number_expect>> count;
};

struct step_expect {
  std::optional<bool> ok;                  // the turn was acknowledged
  std::optional<std::string> key;
  std::optional<std::string> same_session_as, changed_session_from;  // step ids
  std::optional<std::string> reset_reason;  // daily|idle|new|reset, or none
  std::optional<bool> suppressed;
  std::optional<std::string> reply_contains, output_contains, error_contains;
  std::vector<std::string> events_include, events_exclude;  // types (or prefixes ending in '.')
  std::vector<std::pair<std::string, number_expect>> events_count;
  std::vector<transcript_expect> transcripts;
  std::vector<row_expect> rows;
  std::optional<file_expect> files;
  bool any() const;
};

enum class step_kind { send, system, advance, fault, crash, maintain };
enum class fault_kind { enospc, eio, short_write };
enum class fault_target { any, store, transcript };

struct fault_spec {
  fault_kind kind = fault_kind::enospc;
  fault_target target = fault_target::any;
  std::int64_t duration_ms = 0;
};

struct crash_spec {
  std::string on_event;   // "" = crash now; else at the next event of this type (or prefix.)
  std::int64_t within_ms = 3600000;  // simulated time the armed crash waits before it is an error
};

struct step {
  std::string id;
  std::size_t index = 0;
  std::int64_t at_ms = 0;  // resolved: when the step starts
  step_kind kind = step_kind::send;
  chat_event chat;         // send (a command is a send whose text starts with '/')
  system_event sys;
  std::int64_t advance_ms = 0;
  fault_spec fault;
  crash_spec crash;
  step_expect expect;
  std::string label() const;  // "steps[3] (id)"
};

struct scenario {
  std::string name;
  std::string description;
  std::string time_zone;   // IANA; also session.timezone unless the config sets one
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;  // the run lasts at least until here ("days" / "until"; 0 = last step)
  std::uint64_t seed = 1;
  // Virtual time moves in steps of at least this (0 = to each event and model answer exactly):
  // events and answers inside one step are handled together, latencies round up to it. A
  // large workload runs much faster at 1-10 s, at the price of that resolution.
  std::int64_t resolution_ms = 0;
  actors::runtime_settings settings;
  std::vector<std::string> config_warnings;
  model_spec model;
  std::vector<step> steps;
  std::optional<boost::json::object> workload;
  std::vector<std::pair<std::string, number_expect>> expect_summary;  // "resets.daily" -> range
};

result<scenario> parse_scenario(std::string_view text);

}  // namespace sessionrt::sim
