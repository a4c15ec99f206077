// crash_drill: a scenario's power cuts (crash steps) and what must hold after them.
// - A crash step either cuts at once (after a quiet runtime: every record sent so far answered,
//   no sync in flight, so what survives is a function of virtual time) or arms a cut on the
//   first lifecycle event of a type (`onEvent`, within `withinMs` of virtual time): the power
//   goes from the bus thread while the session is still inside what the event announced.
// - The cut: power_loss_fs drops what was not synced (seeded), the runtime is stopped and
//   dropped with its lock table, lock files left without a payload are cleared (a reboot
//   outlasts their grace), a "crash" fault record with the cut's cost is added, and the runtime
//   restarts on the same state dir.
// - Recovery checks after the restart: sessions.json loads without quarantine, every transcript
//   loads (at most a torn last line), every acknowledged message is in its transcript, the
//   sessions continue with the same ids, and the store and the transcripts agree.
// on_event() runs on the bus thread; the rest on the driver's thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "runtime/runtime.hpp"
#include "sim/report_json.hpp"
#include "sim/scenario.hpp"
#include "sim/step_checks.hpp"
#include "sim/turn_ledger.hpp"
#include "storage/power_loss_fs.hpp"

namespace sessionrt::sim {

class crash_drill {
 public:
  struct host {
    std::function<void()> quiesce;           // the clock driver's: a quiet runtime
    std::function<status()> start_runtime;  // a new runtime on the same state dir
  };
  crash_drill(const clock& clk, storage::power_loss_fs& power, std::unique_ptr<runtime::runtime>& rt,
              const std::unique_ptr<report_figures>& figs, turn_ledger& ledger, step_checks& checks, storage::fs& base,
              const std::string& state_dir, host h)
      : clk_(clk), power_(power), rt_(rt), figs_(figs), ledger_(ledger), checks_(checks), base_(base), state_dir_(state_dir),
        host_(std::move(h)) {}

  // The crash step `s` at `now`: cuts now, or arms the cut on its event.
  void on_step(const step& s, std::int64_t now);
  // A lifecycle event (bus thread): the armed cut fires when its type matches.
  void on_event(const lifecycle_event& e);
  // Whether the power went (a fired cut not handled yet, or a scripted cut in progress).
  bool fired() const { return fired_.load(); }
  // On the driver's thread, between clock steps: restarts after a fired cut (restarted, or
  // gone when the runtime could not restart), or fails the armed cut whose window passed.
  enum class poll_result { quiet, restarted, gone };
  poll_result poll(std::int64_t now);
  // At the end of the run: an armed cut that never fired is a failed expectation.
  void finish();
  // Cuts the runtime has been through (a turn in flight then is lost, not failed).
  int crashes() const { return crashes_; }

 private:
  void cut(const step& s, const std::string& why);
  void recovery_checks(const step& s);

  const clock& clk_;
  storage::power_loss_fs& power_;
  std::unique_ptr<runtime::runtime>& rt_;
  const std::unique_ptr<report_figures>& figs_;
  turn_ledger& ledger_;
  step_checks& checks_;
  storage::fs& base_;
  const std::string& state_dir_;
  host host_;

  struct armed_cut {
    const step* s = nullptr;
    std::int64_t deadline = 0;
  };
  std::mutex mu_;
  std::optional<armed_cut> armed_;
  std::atomic<bool> fired_{false};
  std::string fired_by_;
  int crashes_ = 0;
  std::set<std::string> transcripts_before_;
};

}  // namespace sessionrt::sim
