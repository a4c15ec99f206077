// The random seed of a crash test's kill points. SESSIONRT_CRASH_SEED=<n> fixes it, to repeat
// a failed run; unset (or not a number), a fresh one from std::random_device. The caller puts
// it in the test's messages (crash_seed_info) so that every failure prints the value to set.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace sessionrt::testing {

inline std::uint32_t crash_seed() {
  if (const char* v = std::getenv("SESSIONRT_CRASH_SEED"); v && *v) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end && *end == '\0') return static_cast<std::uint32_t>(n);
  }
  return std::random_device{}();
}

// What a failure prints: the line that repeats the run.
inline std::string crash_seed_info(std::uint32_t seed) {
  return "repeat with SESSIONRT_CRASH_SEED=" + std::to_string(seed);
}

}  // namespace sessionrt::testing
