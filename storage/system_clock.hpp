// The real clock: epoch ms from the system clock; sleep_ms really sleeps.
#pragma once
#include "messages/clock.hpp"

namespace sessionrt::storage {

class system_clock final : public clock {
 public:
  std::int64_t now_ms() const override;
  void sleep_ms(std::int64_t ms) override;
};

// A process-wide instance.
clock& real_clock();

}  // namespace sessionrt::storage
