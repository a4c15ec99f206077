// clock_driver: moves a simulation's virtual time and lets the runtime settle between moves.
// - run_until(t): steps the manual clock towards t, at most kMaxStepMs at a time and never
//   past the next workload event, model answer or report sample (nor, with the scenario's
//   resolution, short of its next tick); sends the workload's events that are due; after each
//   step lets the turns the clock woke finish (quiesce), runs the maintenance pass that became
//   due, writes sessions.json when it owes a write, and takes the report's samples. A crash
//   the drill armed is handled between steps.
// - quiesce(): returns once nothing can progress without virtual time: the runtime settled
//   (sessions, commit log, bus) and, by what the sessions answered the settle with, every
//   one waits on the model, the gate, its debounce alarm or nothing, and every turn in flight
//   is accounted for (sim/quiesce_rule.hpp). Work that ends by itself (the pool, the store, a
//   lock's backoff) is waited for; only a turn no session accounts for falls back to waiting
//   for progress on the wall clock (1 s, counted: tally().fallback_stalls).
// - sessions.json: under virtual time the store has no window of its own; the driver keeps
//   its pace in virtual time instead (actors/store/write_pace.hpp: storage.storeFlushWindowMs,
//   and with durability batch the file's size at storage.storeRewriteBytesPerSec, taken from
//   the largest sessions.json after each write: every store is written at once), as the store
//   keeps it in real time:
//   a step whose answers or events may have changed a row starts the window (the changes are
//   at the step's end time, where the clock stood while they happened), the clock stops at
//   its end (on the scenario's resolution grid, when it has one), and the file is written (runtime::flush) at the first step end at which the
//   oldest unwritten change is at least the window old; a failed write is retried a window
//   later. So what a reader or a crash finds on disk is a function of virtual time, as old as
//   the real runtime would leave it. Not the real store's stretch to 4x a slow write's
//   duration (a wall-clock figure). The run's end writes at once; a power cut does not.
// - The progress line (run_options::progress) about once per simulated hour.
// Runs on one thread (the engine's).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/store/write_pace.hpp"
#include "runtime/runtime.hpp"
#include "sim/crash_drill.hpp"
#include "sim/fault_spans.hpp"
#include "sim/fault_window_fs.hpp"
#include "sim/quiesce_rule.hpp"
#include "sim/report_json.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_model.hpp"
#include "sim/scenario_run.hpp"
#include "sim/step_checks.hpp"
#include "sim/turn_ledger.hpp"
#include "sim/workload.hpp"

namespace sessionrt::storage {
class memory_fs;
}

namespace sessionrt::sim {

class clock_driver {
 public:
  // What the driver works with; references to the engine's parts, which outlive it.
  struct parts {
    const scenario& sc;
    const run_options& opt;
    manual_clock& clk;
    std::unique_ptr<runtime::runtime>& rt;
    const std::unique_ptr<report_figures>& figs;
    scenario_model& model;
    fault_window_fs& faults;
    fault_spans& spans;
    turn_ledger& ledger;
    crash_drill& drill;
    step_checks& checks;
    storage::fs& base;
    const storage::memory_fs* mem;  // base, when the files are in memory (null on disk)
    const std::string& state_dir;
    const std::int64_t& end_ms;  // the run's end (a workload may extend the scenario's)
    // Sends a workload's chat event as a turn (the engine's send_chat, no callback).
    std::function<void(const chat_event&)> send_chat;
  };
  explicit clock_driver(parts p);

  // The workload's events, sent at their times from now on.
  void set_workload(workload_generator gen);
  // Moves virtual time towards `t`; returns early (true) when `stop` holds. False when the
  // run must end (the runtime is gone).
  bool run_until(std::int64_t t, const std::function<bool()>& stop = {});
  void quiesce();
  // What the quiesces saw and decided so far.
  const quiesce_tally& tally() const { return tally_; }
  // The report's samples (rows, disk) when one is due, or now with `force`; the progress line
  // (with `force`, the tally's line too).
  void sample(bool force = false);
  // The end of a scenario step (not a crash): its changes start the window, or the window
  // that ended is written.
  void step_ended() { write_store_if_due(); }

 private:
  std::size_t unexplained_turns() const;
  void dispatch_workload();
  bool maintain_if_due();  // false when the runtime failed
  std::vector<std::string> sessions_dirs() const;  // <state>/agents/<agent>/sessions, each agent
  std::int64_t disk_bytes() const;
  struct store_sizes {
    std::uint64_t largest = 0, total = 0;
  };
  store_sizes store_bytes() const;  // the sessions.json files now
  // sessions.json's window in virtual time (see above).
  void note_row_changes();
  void write_store_if_due();

  parts p_;
  actors::write_pace pace_;     // storage.storeFlushWindowMs and the rewrite rate, as the runtime reads them
  std::int64_t store_window_ms_;  // pace_'s wait for the largest sessions.json the last write left
  std::optional<workload_generator> workload_;
  std::optional<generated_event> next_event_;
  std::int64_t next_sample_ = 0, next_progress_ = 0;
  // The ledger's rows-touched count when last looked at, and the virtual time of the oldest
  // change sessions.json does not hold yet (none: it holds them all).
  std::uint64_t touches_seen_ = 0;
  std::optional<std::int64_t> unwritten_since_;
  std::chrono::steady_clock::time_point wall_start_ = std::chrono::steady_clock::now();
  // Diagnostics for the progress line (where the wall time goes): virtual steps taken, and
  // the quiesces' tally.
  std::int64_t steps_ = 0;
  quiesce_tally tally_;
  // sessions.json writes and the bytes they left (each write rewrites the file whole).
  std::int64_t store_writes_ = 0;
  std::uint64_t store_bytes_written_ = 0;
};

}  // namespace sessionrt::sim
