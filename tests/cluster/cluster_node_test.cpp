// cluster_node against a real etcd, ticked by the test (no timer thread): election, placement,
// claims, handoff at shutdown, and fencing plus rejoin after the lease ended. Also the shard.*
// event builders.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cluster/blocking_etcd.hpp"
#include "cluster/cluster_keys.hpp"
#include "cluster/cluster_node.hpp"
#include "cluster/monotonic_alarms.hpp"
#include "cluster/monotonic_clock.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "tests/cluster/etcd_process.hpp"

namespace sessionrt::cluster {
namespace {

constexpr int k_shards = 16;

struct event_log {
  std::mutex mu;
  std::vector<lifecycle_event> events;
  std::function<void(lifecycle_event)> sink() {
    return [this](lifecycle_event e) {
      std::lock_guard g(mu);
      events.push_back(std::move(e));
    };
  }
  std::size_t count(std::string_view type, const std::string& node) {
    std::lock_guard g(mu);
    std::size_t n = 0;
    for (const auto& e : events)
      if (e.type == type && e.data.at("node").as_string() == node) ++n;
    return n;
  }
};

cluster_node_options node_options(const std::string& id, std::int64_t ttl_s) {
  cluster_node_options o;
  o.cluster = "test";
  o.node_id = id;
  o.address = "127.0.0.1:1";
  o.build = "test";
  o.ttl_s = ttl_s;
  o.shards_per_agent = k_shards;
  o.placement_every_ms = 0;  // a leader plans at every tick: the test drives the ticks
  return o;
}

// Every owner key: shard index -> holder.
std::map<int, shard_claim> owners(const blocking_etcd& etcd) {
  auto r = await_call<result<std::vector<shard_claim>>>(
      [&](etcd_client::done<std::vector<shard_claim>> cb) { shard_claims(etcd.async(), "test").list(std::move(cb)); });
  REQUIRE(r.ok());
  std::map<int, shard_claim> out;
  for (auto& c : *r) out[c.shard.index] = c;
  return out;
}

// Ticks each node in turn until `done` holds; false after `rounds` rounds.
template <class Pred>
bool tick_until(std::vector<cluster_node*> nodes, Pred done, int rounds = 20) {
  for (int i = 0; i < rounds; ++i) {
    if (done()) return true;
    for (auto* n : nodes) (void)n->tick();
  }
  return done();
}

}  // namespace

TEST_CASE("shard events: acquired, released and fenced carry agent, shard, epoch and node", "[cluster][node]") {
  payloads::shard_ownership p{"main", 17, 42, "n1", ""};
  auto e = payloads::make_event({"", "main", ""}, 5, payloads::shard_acquired{p});
  CHECK(e.type == "shard.acquired");
  CHECK(e.agent_id == "main");
  CHECK(e.data == boost::json::object{{"agent", "main"}, {"shard", 17}, {"epoch", 42}, {"node", "n1"}});
  p.reason = "lease lost";
  e = payloads::make_event({"", "main", ""}, 5, payloads::shard_fenced{p});
  CHECK(e.type == "shard.fenced");
  CHECK(e.data.at("reason") == "lease lost");
  CHECK(payloads::make_event({}, 5, payloads::shard_released{p}).type == "shard.released");
}

TEST_CASE("cluster node: one leader, every shard held once, and a leaving node hands off", "[cluster][node][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  monotonic_alarms alarms;
  event_log log;
  cluster_node_hooks hooks;
  hooks.publish = log.sink();
  std::vector<shard_id> drained;
  std::mutex drained_mu;
  hooks.drain = [&](const shard_id& s, std::function<void()> done) {
    {
      std::lock_guard g(drained_mu);
      drained.push_back(s);
    }
    done();
  };
  cluster_node n1(etcd->async(), node_options("n1", 5), hooks, process_monotonic_clock(), alarms);
  cluster_node n2(etcd->async(), node_options("n2", 5), hooks, process_monotonic_clock(), alarms);
  REQUIRE(n1.join().ok());
  REQUIRE(n2.join().ok());

  const bool balanced = tick_until({&n1, &n2}, [&] {
    return n1.held().size() == k_shards / 2 && n2.held().size() == k_shards / 2;
  });
  REQUIRE(balanced);
  CHECK(n1.is_leader() != n2.is_leader());
  auto held = owners(*etcd);
  REQUIRE(held.size() == std::size_t(k_shards));
  std::int64_t max_epoch = 0;
  for (const auto& [i, c] : held) {
    max_epoch = std::max(max_epoch, c.epoch);
    CHECK(c.lease == (c.node == "n1" ? n1.membership().lease() : n2.membership().lease()));
  }
  CHECK(log.count("shard.acquired", "n1") == k_shards / 2);
  CHECK(n1.check_write(n1.held()[0].shard).ok());
  CHECK(n1.check_write(n2.held()[0].shard).code() == errc::locked);
  CHECK(n1.figures().shards_held == k_shards / 2);
  CHECK(n1.metrics_text().find("sessionrt_cluster_shards_held 8\n") != std::string::npos);

  // n1 leaves: its 8 shards are drained and released, and n2 takes them at higher epochs.
  const auto n1_shards = n1.held();
  REQUIRE(n1.shutdown(5000).ok());
  CHECK(drained.size() == n1_shards.size());
  CHECK(log.count("shard.released", "n1") == k_shards / 2);
  CHECK(!n1.check_write(n1_shards[0].shard).ok());
  REQUIRE(tick_until({&n2}, [&] { return n2.held().size() == std::size_t(k_shards); }));
  CHECK(n2.is_leader());
  held = owners(*etcd);
  for (const auto& c : n1_shards) {
    CHECK(held.at(c.shard.index).node == "n2");
    CHECK(held.at(c.shard.index).epoch > max_epoch);
  }
}

TEST_CASE("cluster node: after its lease ended a node fences its shards and takes them back at new epochs",
          "[cluster][node][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  monotonic_alarms alarms;
  event_log log;
  cluster_node_hooks hooks;
  hooks.publish = log.sink();
  cluster_node n1(etcd->async(), node_options("n1", 2), hooks, process_monotonic_clock(), alarms);
  REQUIRE(n1.join().ok());
  REQUIRE(tick_until({&n1}, [&] { return n1.held().size() == std::size_t(k_shards); }));
  const std::int64_t old_lease = n1.membership().lease();
  std::int64_t old_max = 0;
  for (const auto& c : n1.held()) old_max = std::max(old_max, c.epoch);

  // The lease ends behind the node's back (as when etcd expired it during a pause).
  REQUIRE(etcd->lease_revoke(old_lease).ok());
  // The next keepalive (every TTL/3) learns it: bounded by a few keepalive periods.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (n1.membership().phase() != membership_phase::lost && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(n1.membership().phase() == membership_phase::lost);
  CHECK(!n1.membership().permit().may_write());

  (void)n1.tick();  // fences everything, rejoins, takes the shards again
  CHECK(log.count("shard.fenced", "n1") == std::size_t(k_shards));
  CHECK(n1.membership().lease() != old_lease);
  REQUIRE(tick_until({&n1}, [&] { return n1.held().size() == std::size_t(k_shards); }));
  for (const auto& c : n1.held()) CHECK(c.epoch > old_max);
  CHECK(n1.figures().lease_losses == 1);
  CHECK(n1.figures().joins == 2);
}

}  // namespace sessionrt::cluster
