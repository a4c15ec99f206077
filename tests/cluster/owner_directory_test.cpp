// owner_directory without etcd: snapshots decoded from the keys a range of the cluster's prefix
// returns, and the lookup a gateway asks before a session-keyed call (local / remote / unknown).
#include "cluster/owner_directory.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "cluster/cluster_keys.hpp"
#include "cluster/shard_table.hpp"

namespace sessionrt::cluster {
namespace {

const std::string k_cluster = "c1";

etcd_kv kv(std::string key, std::string value, std::int64_t mod_revision = 5) {
  etcd_kv k;
  k.key = std::move(key);
  k.value = std::move(value);
  k.mod_revision = mod_revision;
  return k;
}

etcd_kv node(const std::string& id, const std::string& address) {
  return kv(node_key(k_cluster, id), fmt::format(R"({{"address":"{}","build":"0.1.0"}})", address));
}

etcd_kv owner(const shard_id& s, const std::string& id, std::int64_t epoch) {
  return kv(owner_key(k_cluster, s.agent, s.index), fmt::format(R"({{"node":"{}"}})", id), epoch);
}

}  // namespace

TEST_CASE("owner directory: a session's shard is local, on a member with its address, or nobody's", "[cluster][owners]") {
  const std::string here = "agent:main:here", there = "agent:main:there";
  const shard_id s_here = shard_of(here), s_there = shard_of(there);
  REQUIRE(s_here != s_there);
  owner_directory dir("n1");
  // Before the first read nothing is known: the caller must not serve it.
  auto before = dir.owner_of(here);
  CHECK(before.at == owner_answer::where::unknown);
  CHECK_THAT(before.why, Catch::Contains("not read"));
  CHECK(dir.revision() == 0);

  etcd_range_result r;
  r.revision = 42;
  r.kvs = {node("n1", "127.0.0.1:7001"), node("n2", "127.0.0.1:7002"), owner(s_here, "n1", 30), owner(s_there, "n2", 31),
           kv(leader_key(k_cluster), R"({"node":"n1"})")};
  dir.replace(decode_owner_snapshot(r, k_cluster));
  CHECK(dir.revision() == 42);

  auto local = dir.owner_of(here);
  CHECK(local.at == owner_answer::where::local);
  CHECK(local.node == "n1");
  CHECK(local.epoch == 30);
  CHECK(local.shard == s_here);

  auto remote = dir.owner_of("Agent:Main:There");  // normalized as shard_of does
  CHECK(remote.at == owner_answer::where::remote);
  CHECK(remote.node == "n2");
  CHECK(remote.address == "127.0.0.1:7002");
  CHECK(remote.epoch == 31);

  // A shard without an owner key: being placed, handed off or failed over.
  std::string free_key;
  for (int i = 0; free_key.empty(); ++i) {
    const std::string k = fmt::format("agent:main:k{}", i);
    if (shard_of(k) != s_here && shard_of(k) != s_there) free_key = k;
  }
  auto none = dir.owner_of(free_key);
  CHECK(none.at == owner_answer::where::unknown);
  CHECK_THAT(none.why, Catch::Contains("has no owner now"));
  CHECK_THAT(none.why, Catch::Contains(to_string(shard_of(free_key))));
}

TEST_CASE("owner directory: a holder that is no member (or has no address) is unknown, bad keys are skipped",
          "[cluster][owners]") {
  const std::string key = "agent:main:orphan";
  etcd_range_result r;
  r.revision = 7;
  r.kvs = {node("n2", ""), owner(shard_of(key), "n3", 6), kv(owners_prefix(k_cluster) + "main/x", R"({"node":"n2"})"),
           kv(node_key(k_cluster, "n4"), "not json")};
  auto snap = decode_owner_snapshot(r, k_cluster);
  CHECK(snap.skipped == 2);
  owner_directory dir("n1");
  dir.replace(snap);
  auto a = dir.owner_of(key);
  CHECK(a.at == owner_answer::where::unknown);
  CHECK_THAT(a.why, Catch::Contains("node n3"));

  r.kvs = {node("n2", ""), owner(shard_of(key), "n2", 6)};
  dir.replace(decode_owner_snapshot(r, k_cluster));
  CHECK(dir.owner_of(key).at == owner_answer::where::unknown);  // a member, but nowhere to reach it
}

TEST_CASE("owner directory: an agent's shard count comes from its shard table", "[cluster][owners]") {
  const std::string key = "agent:ops:alpha";
  const shard_id small = shard_of(key, 16);
  shard_table t = empty_shard_table("ops", 16);
  etcd_range_result r;
  r.revision = 9;
  r.kvs = {kv(shard_table_key(k_cluster, "ops"), encode_shard_table(t)), node("n2", "10.0.0.2:7001"),
           owner(small, "n2", 8)};
  owner_directory dir("n1");
  dir.replace(decode_owner_snapshot(r, k_cluster));
  auto a = dir.owner_of(key);
  CHECK(a.shard == small);
  CHECK(a.at == owner_answer::where::remote);
  CHECK(a.address == "10.0.0.2:7001");
}

}  // namespace sessionrt::cluster
