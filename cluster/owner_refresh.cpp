#include "cluster/owner_refresh.hpp"

#include <chrono>

#include "cluster/blocking_etcd.hpp"
#include "cluster/cluster_keys.hpp"

namespace sessionrt::cluster {

status owner_refresh::refresh_now() {
  auto r = await_call<result<etcd_range_result>>(
      [&](etcd_client::done<etcd_range_result> cb) { etcd_.range_prefix(cluster_prefix(cluster_), std::move(cb)); });
  if (!r) {
    failures_.fetch_add(1);
    std::lock_guard lock(mu_);
    last_error_ = r.error().message();
    return r.error().with_context("reading the shard owners of cluster " + cluster_);
  }
  dir_.replace(decode_owner_snapshot(*r, cluster_));
  refreshes_.fetch_add(1);
  return {};
}

void owner_refresh::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      (void)refresh_now();
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(period_ms_), [this] { return stopping_; });
    }
  });
}

void owner_refresh::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string owner_refresh::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

}  // namespace sessionrt::cluster
