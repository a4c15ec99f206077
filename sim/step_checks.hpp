// step_checks: a scenario step's expectations (scenario.hpp's `expect`), checked against the
// runtime and the files right after the step; each check becomes an expectation record of
// the report, and the run goes on after a failed one.
// - Events: the lifecycle events published while a step runs are recorded (begin_step ..
//   end_step) for events_include / events_exclude / events_count.
// - Turns: the turn's outcome (ok, error, key, reply, reset reason, same / changed session as
//   an earlier step's).
// - Rows, transcripts and files: read through the runtime (rows) and through the fs the
//   runtime stands on (`base`: the memory fs or the disk, below the faults and the power-loss
//   tracking), relative to the state dir.
// Thread-safe for record(); the rest runs on the driver's thread.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "messages/status.hpp"
#include "runtime/runtime.hpp"
#include "sim/report_json.hpp"
#include "sim/scenario.hpp"
#include "storage/fs.hpp"

namespace sessionrt::sim {

// The agent a session key names ("agent:<id>:..."), "main" when it names none.
std::string agent_of(const std::string& key);
// "agents/<agent>/sessions/<id>.jsonl": a transcript's path relative to the state dir.
std::string transcript_rel(const std::string& agent, const std::string& session_id);
// (role, text) of a transcript's messages, oldest first; unreadable lines (a torn tail) skipped.
std::vector<std::pair<std::string, std::string>> transcript_messages(storage::fs& files, const std::string& path);
// Whether `type` matches `pattern` (a type, or a prefix ending in '.').
bool type_matches(const std::string& pattern, const std::string& type);

class step_checks {
 public:
  // References: the engine's report figures, runtime and state dir, which it replaces (a
  // workload's figures, a restart) while these checks live.
  step_checks(const std::unique_ptr<report_figures>& figs, const std::unique_ptr<runtime::runtime>& rt,
              storage::fs& base, const std::string& state_dir)
      : figs_(figs), rt_(rt), base_(base), state_dir_(state_dir) {}

  void begin_step();
  void record(const lifecycle_event& e);  // from the bus thread
  void end_step();

  void expect(const step& s, bool ok, std::string what, std::string detail = "");
  void expect_named(const std::string& step, bool ok, std::string what, std::string detail);
  // A send step's turn, then check_common with its session key.
  void check_turn(const step& s, const turn_outcome& out);
  // Events, transcripts, rows and files; `step_key` stands for an expectation without a key.
  void check_common(const step& s, const std::string& step_key);

  // The path of `key`'s current transcript (from its row).
  result<std::string> transcript_of(const std::string& key);
  // Paths relative to the state dir that match a glob (fnmatch, FNM_PATHNAME), sorted.
  std::vector<std::string> files_matching(const std::string& glob) const;
  bool exists(const std::string& path) const { return base_.stat(path).ok(); }

 private:
  const std::unique_ptr<report_figures>& figs_;
  const std::unique_ptr<runtime::runtime>& rt_;
  storage::fs& base_;
  const std::string& state_dir_;
  std::map<std::string, std::string> session_of_step_;
  std::mutex mu_;
  bool recording_ = false;
  std::vector<lifecycle_event> step_events_;
};

}  // namespace sessionrt::sim
