// scenario_run: runs one parsed scenario on the virtual clock and returns its report JSON.
// - The runtime's files live in memory (storage::memory_fs), or on disk in the state dir given
//   (or a temp dir, on_disk); the runtime runs on a manual clock starting at the scenario's
//   start, with scenario_model as its model and the fs stack fault_window_fs -> power_loss_fs
//   -> the memory fs or the real filesystem. Both give the same report, byte for byte.
// - Steps run in order at their times; the workload's events (sim/workload.hpp) are sent at
//   theirs, interleaved with the steps. Virtual time only moves when nothing can progress
//   without it (every turn in flight waits on a model answer or a timer), and stops at every
//   model answer's due time, so latencies and bucket placement do not depend on thread timing.
// - Each step's expectations are checked right after it (and after its turn's answer); a crash
//   step's recovery checks run after the restart. Every check becomes an entry of the report's
//   "expectations"; the run does not stop at a failed one.
// - Errors (result) are for runs that could not happen at all (the runtime did not start, the
//   state dir is unusable); expectation failures are in the report and in failed().
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "messages/status.hpp"
#include "sim/quiesce_rule.hpp"
#include "sim/scenario.hpp"

namespace sessionrt::sim {

struct run_options {
  std::optional<std::uint64_t> seed;  // overrides the scenario's
  // "" = the files live in memory (storage::memory_fs) for the run; a dir = they are written
  // there, on disk, and kept.
  std::string state_dir;
  bool on_disk = false;  // with no state_dir: a fresh temp dir on disk, removed afterwards
  // Called about once per simulated hour and at the end with a progress line (no newline).
  std::function<void(const std::string&)> progress;
};

struct run_outcome {
  boost::json::object report;
  std::size_t failed = 0;                 // expectations that failed
  std::vector<std::string> failures;      // "steps[3] (id): why", in order
  std::int64_t turns = 0;
  std::uint64_t bytes_written = 0;        // through the fs, over the whole run
  quiesce_tally quiesce;                  // what the clock driver's quiesces saw and decided
};

result<run_outcome> run_scenario(const scenario& sc, const run_options& options);

}  // namespace sessionrt::sim
