// owner_refresh: keeps an owner_directory current by reading the cluster's prefix from etcd
// (one range, so members, owner keys and shard tables come from one revision) every period_ms,
// on a thread of its own. etcd's JSON gateway has no watch this client speaks (a stream), so it
// polls, as cluster_node's tick does; the period bounds how long a moved shard is looked for on
// its old owner (which refuses, and the client retries).
// Contract: start() once; stop() (and the destructor) wakes and joins the thread. A failed read
// keeps the last snapshot and is counted (failures(), last_error()). refresh_now() reads once on
// the caller's thread (tests, and start-up before the gateway forwards). The etcd client's
// http_loop must outlive this object.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/etcd_client.hpp"
#include "cluster/owner_directory.hpp"

namespace sessionrt::cluster {

class owner_refresh {
 public:
  owner_refresh(const etcd_client& etcd, std::string cluster, owner_directory& directory, std::int64_t period_ms)
      : etcd_(etcd), cluster_(std::move(cluster)), dir_(directory), period_ms_(period_ms) {}
  ~owner_refresh() { stop(); }
  owner_refresh(const owner_refresh&) = delete;
  owner_refresh& operator=(const owner_refresh&) = delete;

  status refresh_now();
  void start();
  void stop();

  std::uint64_t refreshes() const { return refreshes_.load(); }
  std::uint64_t failures() const { return failures_.load(); }
  std::string last_error() const;

 private:
  etcd_client etcd_;
  std::string cluster_;
  owner_directory& dir_;
  std::int64_t period_ms_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::string last_error_;
  std::atomic<std::uint64_t> refreshes_{0}, failures_{0};
};

}  // namespace sessionrt::cluster
