// blocking_etcd: etcd_client's calls, each waited for, on a thread that may wait: the CLI, the
// tests, a planner's own thread. Never from the http_loop's thread (a callback of a call): it
// would wait for itself. Owns its http_loop unless given one.
// Errors are etcd_client's; a call never waits longer than the client's timeout (plus connect).
#pragma once
#include <future>
#include <memory>

#include "cluster/etcd_client.hpp"

namespace sessionrt::cluster {

// Runs `start(callback)` and waits for the callback's value (a result<T> or a status).
template <class R, class Start>
R await_call(Start&& start) {
  auto p = std::make_shared<std::promise<R>>();
  auto f = p->get_future();
  start([p](R r) { p->set_value(std::move(r)); });
  return f.get();
}

class blocking_etcd {
 public:
  // A loop of its own (one thread); invalid_argument for a bad endpoint.
  static result<blocking_etcd> connect(etcd_options options);

  const etcd_client& async() const { return client_; }
  const std::string& endpoint() const { return client_.endpoint(); }

  result<etcd_range_result> range(const std::string& key) const;
  result<etcd_range_result> range_prefix(const std::string& prefix) const;
  result<std::int64_t> put(const std::string& key, const std::string& value, std::int64_t lease = 0) const;
  result<std::int64_t> erase(const std::string& key, bool prefix = false) const;
  result<etcd_txn_result> txn(const etcd_txn& t) const;
  result<etcd_lease> lease_grant(std::int64_t ttl_s) const;
  result<etcd_lease> lease_keepalive(std::int64_t id) const;
  status lease_revoke(std::int64_t id) const;
  result<std::int64_t> lease_time_to_live(std::int64_t id) const;

 private:
  blocking_etcd(std::unique_ptr<providers::http_loop> loop, etcd_client client)
      : loop_(std::move(loop)), client_(std::move(client)) {}
  std::unique_ptr<providers::http_loop> loop_;
  etcd_client client_;
};

}  // namespace sessionrt::cluster
