// node_membership: one node's place in a cluster. join() takes a lease of ~TTL seconds and
// writes /sessionrt/<cluster>/nodes/<id> = {address, build} under it (created only when absent:
// two live processes never share an id); keepalives then renew the lease every TTL/3 on the
// alarms given (a failed one is retried after TTL/6); leave() revokes it, which deletes the node
// key and every owner key the lease holds.
//
// Contract:
//   - The permit (write_permit) follows the lease: started by the grant, renewed by each
//     successful keepalive at the time it was sent, closed by leave() and when etcd says the
//     lease is gone (then on_lease_lost runs once and keepalives stop: the node must join
//     again, with a new lease, and take its shards again at new epochs).
//   - `monotonic` is the permit's clock and the alarms' time base (monotonic_clock with
//     monotonic_alarms; one manual_clock for both in tests).
//   - Callbacks (done, on_renewal, on_lease_lost) run on the HTTP loop's thread and must not
//     block. The object may be destroyed with calls in flight: their completions then touch
//     only shared state, and no keepalive is scheduled any more. Destroying it does not revoke
//     the lease (as a crash: etcd expires it after the TTL).
//   - Errors: join: invalid_argument (a bad name), already_exists (the id's key is held by
//     another live lease), etcd_client's (unreachable, timeout); renew: not_found when the
//     lease is gone, etcd_client's otherwise.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cluster/etcd_client.hpp"
#include "cluster/write_permit.hpp"
#include "messages/clock.hpp"

namespace sessionrt::cluster {

struct membership_options {
  std::string cluster;
  std::string node_id;
  std::string address;     // where the other nodes reach this one ("host:port")
  std::string build;       // the build's version; every node of a cluster runs the same one
  std::int64_t ttl_s = 10;
  std::function<void(const status&)> on_renewal;     // after each keepalive the timer sent
  std::function<void(const status&)> on_lease_lost;  // etcd no longer has the lease
};

enum class membership_phase { idle, joining, joined, lost, left };
const char* to_string(membership_phase p);

class node_membership {
 public:
  node_membership(const etcd_client& etcd, membership_options options, const clock& monotonic, alarms& timer);
  ~node_membership();
  node_membership(const node_membership&) = delete;
  node_membership& operator=(const node_membership&) = delete;

  void join(etcd_client::done_status done);
  // One keepalive now (the timer calls the same).
  void renew(etcd_client::done_status done);
  void leave(etcd_client::done_status done);

  const write_permit& permit() const;
  membership_phase phase() const;
  std::int64_t lease() const;          // 0 before join
  std::int64_t ttl_ms() const;         // as granted (etcd may raise a TTL below its minimum)
  std::int64_t keepalive_interval_ms() const;
  std::string key() const;             // /sessionrt/<cluster>/nodes/<id>
  std::uint64_t renewals() const;      // successful keepalives

 private:
  struct state;
  std::shared_ptr<state> s_;
};

// The node key's value: {"address":..,"build":..}.
std::string node_record_json(const std::string& address, const std::string& build);

}  // namespace sessionrt::cluster
