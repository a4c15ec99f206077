#include "cluster/blocking_etcd.hpp"

namespace sessionrt::cluster {

template <class T>
using done = etcd_client::done<T>;

result<blocking_etcd> blocking_etcd::connect(etcd_options options) {
  auto loop = providers::http_loop::start();
  if (!loop) return loop.error().with_context("starting the HTTP loop for etcd");
  auto client = etcd_client::make(**loop, std::move(options));
  if (!client) return client.error();
  return blocking_etcd(std::move(*loop), std::move(*client));
}

result<etcd_range_result> blocking_etcd::range(const std::string& key) const {
  return await_call<result<etcd_range_result>>([&](done<etcd_range_result> cb) { client_.range(key, std::move(cb)); });
}
result<etcd_range_result> blocking_etcd::range_prefix(const std::string& prefix) const {
  return await_call<result<etcd_range_result>>(
      [&](done<etcd_range_result> cb) { client_.range_prefix(prefix, std::move(cb)); });
}
result<std::int64_t> blocking_etcd::put(const std::string& key, const std::string& value, std::int64_t lease) const {
  return await_call<result<std::int64_t>>([&](done<std::int64_t> cb) { client_.put(key, value, lease, std::move(cb)); });
}
result<std::int64_t> blocking_etcd::erase(const std::string& key, bool prefix) const {
  return await_call<result<std::int64_t>>([&](done<std::int64_t> cb) { client_.erase(key, prefix, std::move(cb)); });
}
result<etcd_txn_result> blocking_etcd::txn(const etcd_txn& t) const {
  return await_call<result<etcd_txn_result>>([&](done<etcd_txn_result> cb) { client_.txn(t, std::move(cb)); });
}
result<etcd_lease> blocking_etcd::lease_grant(std::int64_t ttl_s) const {
  return await_call<result<etcd_lease>>([&](done<etcd_lease> cb) { client_.lease_grant(ttl_s, std::move(cb)); });
}
result<etcd_lease> blocking_etcd::lease_keepalive(std::int64_t id) const {
  return await_call<result<etcd_lease>>([&](done<etcd_lease> cb) { client_.lease_keepalive(id, std::move(cb)); });
}
status blocking_etcd::lease_revoke(std::int64_t id) const {
  return await_call<status>([&](etcd_client::done_status cb) { client_.lease_revoke(id, std::move(cb)); });
}
result<std::int64_t> blocking_etcd::lease_time_to_live(std::int64_t id) const {
  return await_call<result<std::int64_t>>([&](done<std::int64_t> cb) { client_.lease_time_to_live(id, std::move(cb)); });
}

}  // namespace sessionrt::cluster
