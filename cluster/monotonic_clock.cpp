#include "cluster/monotonic_clock.hpp"

#include <chrono>
#include <thread>

namespace sessionrt::cluster {

std::int64_t monotonic_clock::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void monotonic_clock::sleep_ms(std::int64_t ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

clock& process_monotonic_clock() {
  static monotonic_clock c;
  return c;
}

}  // namespace sessionrt::cluster
