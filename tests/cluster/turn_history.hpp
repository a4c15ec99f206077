// turn_history: what a cluster state dir holds of turn_load's turns, read once the traffic
// stopped (nodes settled or stopped), and the check of it against what the clients saw.
// - read_history() parses every shard's sessions.json and every line of every transcript under
//   <cluster dir>/shards/ (each must parse: `unreadable` names those that do not). For each load
//   key it finds the key's row in its shard's sessions.json (shards/<agent>/<nnn>, nnn from
//   shard_of) and reads the row's transcript: its user lines "<tag> #<seq>" in file order, each
//   with whether an assistant line answering it (parentId) carries the same "<tag> #<seq>".
//   Lines of a key found in another transcript of the shard (an orphan: a session the row no
//   longer names) are counted apart.
// - check_history() joins that to the turns: per turn how many user lines it has (`copies`) and
//   whether one was answered; an acknowledged turn with no answered copy in the key's transcript
//   is *lost*; one whose `final` event's text does not carry the turn's own text (the simulated
//   model echoes it) got another run's reply; copies beyond the first are *duplicates*; per key the seq of the user lines must
//   never go down (arrival order; a repeat of the last one is a duplicate, not a break).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/cluster/turn_load.hpp"

namespace sessionrt::testing {

struct user_line {
  int seq = 0;
  std::string run_id;  // the line's __openclaw.runId, "" when absent
  bool answered = false;
};

struct key_transcript {
  bool row = false;  // the key has a row in its shard's sessions.json
  std::string path;
  std::vector<user_line> lines;
};

struct history_read {
  std::map<std::string, key_transcript> keys;             // by session key
  std::map<std::string, std::vector<user_line>> orphans;  // by session key
  int stores = 0, transcripts = 0, lines = 0;
  std::vector<std::string> unreadable;
};

// `keys[i]` is tagged key_tag(i), as turn_load tags them.
history_read read_history(const std::string& cluster_dir, const std::string& agent,
                          const std::vector<std::string>& keys);

struct turn_presence {
  int copies = 0;
  bool answered = false;
};

struct history_check {
  std::map<std::string, turn_presence> by_run;  // run id -> what the transcript holds
  int acknowledged = 0, lost = 0, duplicates = 0, unacknowledged_present = 0, order_breaks = 0;
  int duplicates_unretried = 0;  // extra copies of turns sent once: no retry can explain them
  int wrong_replies = 0;         // acknowledged turns whose `final` text does not carry their own text
  int orphan_lines = 0, keys_without_row = 0;
  std::vector<std::string> problems;  // the first few, each naming the key and the turn
};

history_check check_history(const history_read& read, const std::vector<load_turn>& turns);

// Figures of the turns `select` picks, as one line: "sent N, acknowledged N, deduped N, failed N,
// unanswered N, lost N, duplicated N, waited N, latency p50 X ms, p99 Y ms, max Z ms" (latency of
// the acknowledged ones, first send to final).
std::string load_figures(const std::vector<load_turn>& turns, const history_check& check,
                         const std::function<bool(const load_turn&)>& select);

}  // namespace sessionrt::testing
