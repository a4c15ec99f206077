// monotonic_clock: milliseconds since an arbitrary start that never go back (steady_clock), as a
// sessionrt::clock, for the rules that must not move when the wall clock is set (the write
// permit's age of the last lease renewal). Tests pass a manual_clock instead.
#pragma once
#include "messages/clock.hpp"

namespace sessionrt::cluster {

class monotonic_clock final : public clock {
 public:
  std::int64_t now_ms() const override;
  void sleep_ms(std::int64_t ms) override;
};

// The process's one instance.
clock& process_monotonic_clock();

}  // namespace sessionrt::cluster
