// write_permit: may this node still acknowledge writes? Only while its lease is surely alive,
// with a margin: a write is allowed while the last successful renewal is younger than TTL/2 on
// a monotonic clock, so a process that was paused (SIGSTOP, a long stall) or cut off from etcd
// stops writing well before etcd lets its lease expire (at TTL) and another node can take its
// shards.
//
// Contract:
//   - renewed(sent_at) takes the time the renewal (grant or keepalive) was SENT, not when its
//     answer came: etcd restarts the TTL when it receives the request, which is later, so the
//     node's deadline is never later than etcd's. Older renewals than the latest are ignored.
//   - lost() (the lease expired or was revoked) refuses every write until start() gives a new
//     lease; before the first start() nothing may be written.
//   - The clock must be monotonic (monotonic_clock; a manual_clock in tests).
//   - Thread-safe: renewals arrive on the HTTP loop, writers ask from their own threads.
//   - check() names the node, the age and the limit in its error (errc::locked: the shards may
//     already belong to another node).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "messages/clock.hpp"
#include "messages/status.hpp"

namespace sessionrt::cluster {

class write_permit {
 public:
  write_permit(const clock& monotonic, std::string node_id);

  // A new lease of `ttl_ms`, granted by a request sent at `granted_sent_at_ms`.
  void start(std::int64_t ttl_ms, std::int64_t granted_sent_at_ms);
  void renewed(std::int64_t sent_at_ms);
  void lost();

  bool may_write() const { return check().ok(); }
  status check() const;
  // Until when (monotonic ms) writes are allowed; 0 when none are.
  std::int64_t valid_until_ms() const;
  std::int64_t last_renewal_ms() const { return last_renewal_.load(); }
  std::int64_t ttl_ms() const { return ttl_ms_.load(); }

 private:
  const clock& clock_;
  std::string node_;
  std::atomic<std::int64_t> ttl_ms_{0};
  std::atomic<std::int64_t> last_renewal_{0};
  std::atomic<bool> held_{false};
};

}  // namespace sessionrt::cluster
