#include "storage/system_clock.hpp"

#include <chrono>
#include <thread>

namespace sessionrt::storage {

std::int64_t system_clock::now_ms() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void system_clock::sleep_ms(std::int64_t ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

clock& real_clock() {
  static system_clock instance;
  return instance;
}

}  // namespace sessionrt::storage
