// Shard tables, placement rounds, owner keys and fencing against a real etcd.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <set>

#include "cluster/blocking_etcd.hpp"
#include "cluster/cluster_keys.hpp"
#include "cluster/epoch_fence.hpp"
#include "cluster/node_membership.hpp"
#include "cluster/placement_round.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_epoch_file.hpp"
#include "cluster/shard_table_store.hpp"
#include "storage/fs.hpp"
#include "tests/cluster/etcd_process.hpp"

namespace sessionrt::cluster {
namespace {

const std::string k_cluster = "test";

// A member: its lease and node key, written as node_membership writes them.
std::int64_t add_member(const blocking_etcd& etcd, const std::string& id, bool draining = false) {
  auto lease = etcd.lease_grant(30);
  REQUIRE(lease.ok());
  std::string record = node_record_json("127.0.0.1:7000", "test");
  if (draining) record = R"({"address":"127.0.0.1:7000","build":"test","draining":true})";
  REQUIRE(etcd.put(node_key(k_cluster, id), record, lease->id).ok());
  return lease->id;
}

result<round_outcome> round(const blocking_etcd& etcd, const placement_planner& planner = placement_planner()) {
  return await_call<result<round_outcome>>([&](etcd_client::done<round_outcome> cb) {
    run_placement_round(etcd.async(), k_cluster, "main", 256, planner, std::move(cb));
  });
}

result<shard_table> read_table(const shard_table_store& store) {
  return await_call<result<shard_table>>([&](etcd_client::done<shard_table> cb) { store.read("main", 256, std::move(cb)); });
}
result<std::int64_t> write_table(const shard_table_store& store, const shard_table& t) {
  return await_call<result<std::int64_t>>([&](etcd_client::done<std::int64_t> cb) { store.write(t, std::move(cb)); });
}
result<shard_claim> acquire(const shard_claims& c, const shard_id& s, const std::string& node, std::int64_t lease) {
  return await_call<result<shard_claim>>([&](etcd_client::done<shard_claim> cb) { c.acquire(s, node, lease, std::move(cb)); });
}
status release(const shard_claims& c, const shard_claim& claim) {
  return await_call<status>([&](etcd_client::done_status cb) { c.release(claim, std::move(cb)); });
}

}  // namespace

TEST_CASE("shard table: of two planners racing on one revision, one txn loses", "[cluster][shards][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto a = blocking_etcd::connect({server->endpoint(), 5000});
  auto b = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE((a.ok() && b.ok()));
  shard_table_store store_a(a->async(), k_cluster), store_b(b->async(), k_cluster);
  placement_planner planner;

  // Both read the table before either writes (it does not exist yet: revision 0).
  auto ta = read_table(store_a);
  auto tb = read_table(store_b);
  REQUIRE((ta.ok() && tb.ok()));
  CHECK(ta->revision == 0);
  CHECK(tb->shards() == 256);
  ta->owners = planner.plan(ta->owners, {{"n1", false}, {"n2", false}}).owners;
  tb->owners = planner.plan(tb->owners, {{"n3", false}}).owners;
  auto won = write_table(store_a, *ta);
  REQUIRE(won.ok());
  auto lost = write_table(store_b, *tb);
  REQUIRE(!lost.ok());
  CHECK(lost.error().code() == errc::already_exists);
  CHECK_THAT(lost.error().message(), Catch::Contains("txn failed") && Catch::Contains("/sessionrt/test/shards/main") &&
                                         Catch::Contains("since revision 0 (now " + std::to_string(*won) + ")"));
  auto stored = read_table(store_b);
  REQUIRE(stored.ok());
  CHECK(stored->revision == *won);
  CHECK(stored->owners == ta->owners);  // the loser changed nothing

  // The loser reads again and plans again; now the winner's copy is stale in turn.
  stored->owners = planner.plan(stored->owners, {{"n1", false}, {"n2", false}, {"n3", false}}).owners;
  auto second = write_table(store_b, *stored);
  REQUIRE(second.ok());
  CHECK(*second > *won);
  ta->revision = *won;
  auto stale = write_table(store_a, *ta);
  REQUIRE(!stale.ok());
  CHECK_THAT(stale.error().message(), Catch::Contains("since revision " + std::to_string(*won)));
}

TEST_CASE("placement over etcd: a join moves at most 10 percent per round, every shard has one owner", "[cluster][shards][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  add_member(*etcd, "n1");
  add_member(*etcd, "n2");
  auto first = round(*etcd);
  REQUIRE(first.ok());
  CHECK(first->plan.assignments.size() == 256);  // a new table: placed at once
  CHECK(first->plan.complete);
  shard_table_store store(etcd->async(), k_cluster);
  auto before = read_table(store);
  REQUIRE(before.ok());
  CHECK(before->revision == first->written_revision);

  add_member(*etcd, "n3");
  int rounds = 0;
  for (;;) {
    auto r = round(*etcd);
    REQUIRE(r.ok());
    auto after = read_table(store);
    REQUIRE(after.ok());
    int changed = 0;
    for (int i = 0; i < 256; ++i) changed += before->owners[static_cast<std::size_t>(i)] != after->owners[static_cast<std::size_t>(i)];
    CHECK(changed <= 25);
    CHECK(changed == static_cast<int>(r->plan.moves.size()));
    for (const auto& o : after->owners) CHECK((o == "n1" || o == "n2" || o == "n3"));
    if (r->written_revision == 0) {
      CHECK(after->revision == before->revision);  // nothing to do: nothing written
      break;
    }
    CHECK(r->read_revision == before->revision);
    before = std::move(after);
    REQUIRE(++rounds < 10);
  }
  CHECK(rounds == 4);
  std::map<std::string, int> per;
  for (const auto& o : before->owners) ++per[o];
  CHECK(per["n3"] == 85);

  // A node whose lease ends leaves the membership: its shards are reassigned in one round.
  auto nodes = etcd->range_prefix("/sessionrt/test/nodes/");
  REQUIRE(nodes.ok());
  REQUIRE(etcd->lease_revoke(nodes->kvs.at(0).lease).ok());  // n1
  auto failover = round(*etcd);
  REQUIRE(failover.ok());
  CHECK(failover->plan.assignments.size() == static_cast<std::size_t>(per["n1"]));
  CHECK(failover->plan.moves.empty());
  auto final_table = read_table(store);
  for (const auto& o : final_table->owners) CHECK((o == "n2" || o == "n3"));
}

TEST_CASE("owner keys: racing nodes, one holder per shard, epochs rise with each holder", "[cluster][shards][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  shard_claims claims(etcd->async(), k_cluster);
  const std::vector<std::string> nodes = {"n1", "n2", "n3", "n4", "n5"};
  std::map<std::string, std::int64_t> lease;
  for (const auto& n : nodes) lease[n] = add_member(*etcd, n);

  // Every node tries every one of 16 shards at once: each shard gets exactly one holder.
  struct outcome {
    std::mutex mu;
    std::condition_variable cv;
    int done = 0;
    std::map<int, std::vector<shard_claim>> won;
    std::map<int, int> refused;
  } out;
  for (int shard = 0; shard < 16; ++shard)
    for (const auto& n : nodes)
      claims.acquire({"main", shard}, n, lease[n], [&out, shard](result<shard_claim> r) {
        std::lock_guard g(out.mu);
        if (r.ok()) out.won[shard].push_back(*r);
        else if (r.error().code() == errc::locked) ++out.refused[shard];
        ++out.done;
        out.cv.notify_all();
      });
  {
    std::unique_lock g(out.mu);
    REQUIRE(out.cv.wait_for(g, std::chrono::seconds(30), [&] { return out.done == 16 * 5; }));
  }
  for (int shard = 0; shard < 16; ++shard) {
    CHECK(out.won[shard].size() == 1);
    CHECK(out.refused[shard] == 4);
  }

  const shard_id s{"main", 3};
  const shard_claim first = out.won[3].at(0);
  const std::string other = first.node == "n1" ? "n2" : "n1";
  auto again = acquire(claims, s, first.node, first.lease);  // the holder asking again
  REQUIRE(again.ok());
  CHECK(again->epoch == first.epoch);
  auto refused = acquire(claims, s, other, lease[other]);
  REQUIRE(!refused.ok());
  CHECK(refused.error().code() == errc::locked);
  CHECK_THAT(refused.error().message(), Catch::Contains("shard main/3 is held by node " + first.node) &&
                                            Catch::Contains("epoch " + std::to_string(first.epoch)));

  REQUIRE(release(claims, first).ok());
  auto second = acquire(claims, s, other, lease[other]);
  REQUIRE(second.ok());
  CHECK(second->epoch > first.epoch);
  auto old_release = release(claims, first);  // the old holder's claim no longer releases anything
  CHECK(old_release.code() == errc::locked);
  CHECK_THAT(old_release.message(), Catch::Contains("fenced") && Catch::Contains("node " + other));
  CHECK(lease_hex(0x1f) == "0x1f");
}

TEST_CASE("fencing: after its lease ends a node cannot take back, stamp or write its old shard", "[cluster][fence][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  auto loop = providers::http_loop::start();
  REQUIRE(loop.ok());
  auto client = etcd_client::make(**loop, {server->endpoint(), 5000});
  REQUIRE(client.ok());
  manual_clock mono(0);
  auto opts = [](std::string id) {
    membership_options o;
    o.cluster = k_cluster;
    o.node_id = std::move(id);
    o.ttl_s = 10;
    return o;
  };
  node_membership a(*client, opts("a"), mono, mono), b(*client, opts("b"), mono, mono);
  REQUIRE(await_call<status>([&](etcd_client::done_status cb) { a.join(std::move(cb)); }).ok());
  REQUIRE(await_call<status>([&](etcd_client::done_status cb) { b.join(std::move(cb)); }).ok());
  shard_claims claims(*client, k_cluster);
  testing::temp_dir shared;  // the shared state dir every node mounts
  const std::string shard_dir = shared.file("shards/main/17");
  const shard_id s{"main", 17};

  auto ca = acquire(claims, s, "a", a.lease());
  REQUIRE(ca.ok());
  epoch_fence fa(s, "a", ca->epoch);
  auto opened = open_shard(storage::posix_fs(), shard_dir, fa);
  REQUIRE(opened.ok());
  CHECK(fa.check_write(*opened, a.permit()).ok());

  // a is cut off: etcd ends its lease (as at expiry) while a itself has not noticed.
  REQUIRE(etcd->lease_revoke(a.lease()).ok());
  auto cb = acquire(claims, s, "b", b.lease());
  REQUIRE(cb.ok());
  CHECK(cb->epoch > ca->epoch);
  epoch_fence fb(s, "b", cb->epoch);
  auto opened_b = open_shard(storage::posix_fs(), shard_dir, fb);
  REQUIRE(opened_b.ok());
  CHECK(*opened_b == cb->epoch);

  // a, still within its own TTL/2, re-reads the stamp before a write and is refused.
  auto durable = read_shard_epoch(storage::posix_fs(), shard_epoch_path(shard_dir));
  REQUIRE(durable.ok());
  auto write = fa.check_write(**durable, a.permit());
  CHECK(write.code() == errc::locked);
  CHECK_THAT(write.message(), Catch::Contains("fenced"));
  auto reopen = open_shard(storage::posix_fs(), shard_dir, fa);
  REQUIRE(!reopen.ok());
  CHECK(reopen.error().code() == errc::locked);
  CHECK(**read_shard_epoch(storage::posix_fs(), shard_epoch_path(shard_dir)) == cb->epoch);
  auto retake = acquire(claims, s, "a", a.lease());  // its lease is gone: it cannot take the key
  REQUIRE(!retake.ok());
  CHECK(retake.error().code() == errc::locked);
  CHECK(release(claims, *ca).code() == errc::locked);
  // Its next keepalive tells a that it is out; from then on its permit refuses every write.
  auto renewal = await_call<status>([&](etcd_client::done_status cb2) { a.renew(std::move(cb2)); });
  CHECK(renewal.code() == errc::not_found);
  CHECK(!a.permit().may_write());
  CHECK(fb.check_write(cb->epoch, b.permit()).ok());
}

}  // namespace sessionrt::cluster
