#include "runtime/runtime_stats.hpp"

#include <fmt/format.h>

namespace sessionrt::runtime {

std::string to_text(const runtime_stats& s) {
  if (s.stopped) return "stopped";
  std::string out =
      s.router_error.empty()
          ? fmt::format("live={} trimmed={} slots={} open={} passivating={} queued={} waiting={} turns={} routes={}",
                        s.live, s.trimmed, s.slots, s.open, s.passivating, s.queued, s.waiting, s.turns, s.routes)
          : "router=? (" + s.router_error + ")";
  out += s.timers_error.empty() ? fmt::format(" timers={}", s.timers) : " timers=? (" + s.timers_error + ")";
  out += fmt::format(" model_running={} model_waiting={} model_peak={}", s.model_running, s.model_waiting,
                     s.model_peak);
  return out;
}

}  // namespace sessionrt::runtime
