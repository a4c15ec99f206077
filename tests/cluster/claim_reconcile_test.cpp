// claim_reconcile: which owner keys a node takes, gives back, or finds fenced.
#include <catch2/catch.hpp>

#include "cluster/claim_reconcile.hpp"

namespace sessionrt::cluster {
namespace {

shard_table table(std::vector<std::string> owners) {
  shard_table t;
  t.agent = "main";
  t.owners = std::move(owners);
  t.revision = 7;
  return t;
}

shard_claim claim(int index, std::string node, std::int64_t epoch, std::int64_t lease) {
  return shard_claim{shard_id{"main", index}, std::move(node), epoch, lease};
}

claim_inputs inputs() {
  claim_inputs in;
  in.node = "n1";
  in.lease = 100;
  in.may_claim = true;
  in.tables = {table({"n1", "n1", "n2", "n2"})};
  return in;
}

std::vector<int> indexes(const std::vector<shard_id>& v) {
  std::vector<int> out;
  for (const auto& s : v) out.push_back(s.index);
  return out;
}
std::vector<int> indexes(const std::vector<shard_claim>& v) {
  std::vector<int> out;
  for (const auto& c : v) out.push_back(c.shard.index);
  return out;
}

}  // namespace

TEST_CASE("claims: a node takes the free shards its table gives it, and only those", "[cluster][claims]") {
  auto in = inputs();
  in.in_etcd = {claim(2, "n2", 50, 200)};
  const auto act = reconcile_claims(in);
  CHECK(indexes(act.acquire) == std::vector<int>{0, 1});
  CHECK(act.release.empty());
  CHECK(act.fenced.empty());
}

TEST_CASE("claims: a shard the table gives this node but another still holds waits for its release",
          "[cluster][claims]") {
  auto in = inputs();
  in.in_etcd = {claim(0, "n2", 50, 200)};
  CHECK(indexes(reconcile_claims(in).acquire) == std::vector<int>{1});
}

TEST_CASE("claims: nothing is taken without a valid permit, while draining, or without a lease", "[cluster][claims]") {
  auto in = inputs();
  in.may_claim = false;
  CHECK(reconcile_claims(in).acquire.empty());
  in = inputs();
  in.draining = true;
  CHECK(reconcile_claims(in).acquire.empty());
  in = inputs();
  in.lease = 0;
  CHECK(reconcile_claims(in).acquire.empty());
}

TEST_CASE("claims: a held shard the table moved to another node is released, and draining releases all",
          "[cluster][claims]") {
  auto in = inputs();
  in.in_etcd = {claim(0, "n1", 60, 100), claim(2, "n1", 61, 100)};
  in.held = {{shard_id{"main", 0}, in.in_etcd[0]}, {shard_id{"main", 2}, in.in_etcd[1]}};
  auto act = reconcile_claims(in);
  CHECK(indexes(act.release) == std::vector<int>{2});
  CHECK(indexes(act.acquire) == std::vector<int>{1});
  in.draining = true;
  act = reconcile_claims(in);
  CHECK(indexes(act.release) == std::vector<int>{0, 2});
  CHECK(act.acquire.empty());
}

TEST_CASE("claims: a held shard whose key is gone or at another epoch is fenced, not released", "[cluster][claims]") {
  auto in = inputs();
  // Shard 0's key is gone (the lease ended and it expired); shard 1 was taken again by n2.
  in.in_etcd = {claim(1, "n2", 90, 200)};
  in.held = {{shard_id{"main", 0}, claim(0, "n1", 60, 100)}, {shard_id{"main", 1}, claim(1, "n1", 61, 100)}};
  const auto act = reconcile_claims(in);
  CHECK(indexes(act.fenced) == std::vector<int>{0, 1});
  CHECK(act.release.empty());
  // Shard 0 is free again and the table still gives it to n1: taken back at a new epoch.
  CHECK(indexes(act.acquire) == std::vector<int>{0});
}

TEST_CASE("claims: a shard held under an older lease of this node is fenced (a rejoin takes new epochs)",
          "[cluster][claims]") {
  auto in = inputs();
  in.lease = 300;  // rejoined
  in.in_etcd = {claim(0, "n1", 60, 100)};
  in.held = {{shard_id{"main", 0}, claim(0, "n1", 60, 100)}};
  const auto act = reconcile_claims(in);
  CHECK(indexes(act.fenced) == std::vector<int>{0});
  CHECK(act.adopt.empty());  // not under the current lease: not ours
  CHECK(indexes(act.acquire) == std::vector<int>{1});  // 0 waits for the old lease's key to go
}

TEST_CASE("claims: a key under this node's lease that it did not know of is adopted", "[cluster][claims]") {
  auto in = inputs();
  in.in_etcd = {claim(1, "n1", 70, 100), claim(3, "n1", 71, 100)};
  const auto act = reconcile_claims(in);
  CHECK(indexes(act.adopt) == std::vector<int>{1, 3});
  CHECK(indexes(act.release) == std::vector<int>{3});  // the table gives 3 to n2
  CHECK(indexes(act.acquire) == std::vector<int>{0});
}

}  // namespace sessionrt::cluster
