// monotonic_alarms: alarms on monotonic_clock's time (storage::real_time_alarms on its default,
// the wall clock, which an operator or NTP may set back: a lease's keepalives must not wait for
// it). One thread of its own; callbacks run there, one at a time, and must be short.
#pragma once
#include "cluster/monotonic_clock.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::cluster {

class monotonic_alarms final : public storage::real_time_alarms {
 public:
  monotonic_alarms() : real_time_alarms(process_monotonic_clock()) {}
};

}  // namespace sessionrt::cluster
