#include "sim/fault_spans.hpp"

#include <fmt/format.h>

namespace sessionrt::sim {

std::string fault_kind_name(fault_kind k) {
  return k == fault_kind::enospc ? "enospc" : k == fault_kind::eio ? "eio" : "short_write";
}

std::string fault_target_name(fault_target t) {
  return t == fault_target::any ? "any file" : t == fault_target::store ? "store writes" : "transcript writes";
}

void fault_spans::open(const step& s, std::int64_t now, report_figures& figs) {
  const std::size_t w = files_.add_window(s.fault, now);
  {
    std::lock_guard<std::mutex> g(mu_);
    spans_.push_back({&s, w, now, now + s.fault.duration_ms});
  }
  figs.add_mark(now, "fault", fmt::format("{} on {}", fault_kind_name(s.fault.kind), fault_target_name(s.fault.target)),
                now + s.fault.duration_ms);
}

void fault_spans::turn_answered(std::int64_t now, bool ok) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& f : spans_)
    if (now >= f.from && now < f.until) {
      ++f.turns;
      if (!ok) ++f.failed_turns;
    }
}

void fault_spans::store_write_failed(std::int64_t now) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& f : spans_)
    if (now >= f.from && now < f.until) ++f.failed_store_writes;
}

void fault_spans::finalize(report_figures& figs) const {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& f : spans_) {
    fault_record rec;
    rec.step = f.s->id;
    rec.kind = fault_kind_name(f.s->fault.kind);
    rec.label = fmt::format("{} on {}", rec.kind, fault_target_name(f.s->fault.target));
    rec.from = f.from;
    rec.until = f.until;
    rec.cost["failedStoreWrites"] = f.failed_store_writes;
    rec.cost["turnsDuring"] = f.turns;
    rec.cost["failedTurns"] = f.failed_turns;
    figs.add_fault(std::move(rec));
  }
}

}  // namespace sessionrt::sim
