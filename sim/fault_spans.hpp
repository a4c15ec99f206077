// fault_spans: the fault windows a run opened (fault steps) and what each cost, for the
// report's faults table and marks. A span opens at its step's virtual time for the step's
// duration: fault_window_fs makes storage fail inside it, and this counts, per span, the
// turns answered inside it (failed or not) and the engine's sessions.json writes that failed
// inside it. Not fault_window_fs's own injection count: how many of the runtime's writes hit a
// span depends on what the runtime wrote by itself, the engine's writes are a function of the
// seed. Thread-safe: answers come from the runtime's threads.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "sim/fault_window_fs.hpp"
#include "sim/report_json.hpp"
#include "sim/scenario.hpp"

namespace sessionrt::sim {

std::string fault_kind_name(fault_kind k);
std::string fault_target_name(fault_target t);

class fault_spans {
 public:
  explicit fault_spans(fault_window_fs& files) : files_(files) {}

  // The fault step `s` at `now`: the window starts failing storage, its span is marked.
  void open(const step& s, std::int64_t now, report_figures& figs);
  // A turn answered at `now` (ok or failed): counted in every span open then.
  void turn_answered(std::int64_t now, bool ok);
  // A sessions.json write of the engine failed at `now`.
  void store_write_failed(std::int64_t now);
  // Every span becomes a fault record of the report (at the end of the run).
  void finalize(report_figures& figs) const;

 private:
  struct span {
    const step* s;
    std::size_t window;
    std::int64_t from, until;
    std::int64_t failed_turns = 0, turns = 0, failed_store_writes = 0;
  };
  fault_window_fs& files_;
  mutable std::mutex mu_;
  std::vector<span> spans_;
};

}  // namespace sessionrt::sim
