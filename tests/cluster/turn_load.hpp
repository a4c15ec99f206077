// turn_load: continuous chat traffic through every node of a cluster, for the ownership harness
// (issue #36). A few client threads each own a set of session keys and send them turns one
// after the other (per key strictly in order: the next turn of a key is sent only once the one
// before ended), each turn "<tag> #<seq>" (e.g. "k07 #0012") with a fresh idempotencyKey, through
// a node picked at random among those the address source names, so most turns are forwarded by
// the node link to their shard's owner.
// - A turn is *acknowledged* when its chat `final` event arrived.
// - Retried with the SAME idempotencyKey, after a short pause, through a node picked anew: an
//   UNAVAILABLE retryable answer (shard in motion, owner unknown, node link down); a connection
//   that failed, closed or stayed silent (node killed or stopped: that address is avoided for a
//   few seconds); a run closed with an `error` event (its link was lost, or its owner's shard was
//   closed under it); an `in_flight` answer (the first run still runs on its owner). Each retry
//   counts as one wait.
// - Not retried: an `ok` answer (the owner's dedupe says the key's run ended before: how it ended
//   is not known to the client, so the turn is `deduped`, not acknowledged), `aborted`, any
//   other refusal (`failed`). A turn still open at its deadline is `unanswered` when an attempt
//   may have reached an owner, else `failed`.
// - The address source is called by one poller thread every 200 ms; an empty or failed answer
//   keeps the last list (etcd restarting).
// stop() sends no new turn and waits for the open ones (each bounded by its deadline).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sessionrt::testing {

enum class turn_end { pending, acknowledged, deduped, failed, unanswered };
const char* to_string(turn_end e);

struct load_turn {
  std::string key, text, run_id;  // text: "<tag> #<seq>"
  int seq = 0;
  std::chrono::steady_clock::time_point sent, ended;
  int sends = 0;  // chat.send requests made
  int waits = 0;  // retries (each attempt after the first)
  int reruns = 0; // sent again under a new idempotencyKey after the run ended with an error
  turn_end end = turn_end::pending;
  std::string reply;  // the final event's text
  std::string error;  // the last refusal, failure or error event seen
  std::map<std::string, int> answers;  // how the attempts ended: "started/final", "in_flight", "UNAVAILABLE not_owner", ...
  double latency_ms() const { return std::chrono::duration<double, std::milli>(ended - sent).count(); }
};

struct load_options {
  std::vector<std::string> keys;  // session keys; key i is tagged "k<ii>" and owned by thread i % threads
  int threads = 3;
  std::string token;
  std::function<std::vector<std::string>()> addresses;  // "host:port" of the nodes now
  std::chrono::milliseconds pause{20};                  // between two turns of one thread
  std::chrono::milliseconds turn_deadline{60000};
  std::uint32_t seed = 1;
};

// "k07 #0012"
std::string turn_text(const std::string& tag, int seq);
std::string key_tag(std::size_t index);  // 7 -> "k07"

class turn_load {
 public:
  explicit turn_load(load_options options);
  ~turn_load();
  turn_load(const turn_load&) = delete;
  turn_load& operator=(const turn_load&) = delete;

  void start();
  void stop();
  // Every turn so far (those still open as pending), in the order they were sent.
  std::vector<load_turn> turns() const;
  std::size_t ended() const { return ended_; }

 private:
  void poll_addresses();
  void run(int thread);
  std::vector<std::string> addresses() const;

  load_options options_;
  mutable std::mutex mu_;
  std::deque<load_turn> turns_;
  std::vector<std::string> addresses_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> ended_{0};
  std::vector<std::thread> threads_;
  std::thread poller_;
};

}  // namespace sessionrt::testing
