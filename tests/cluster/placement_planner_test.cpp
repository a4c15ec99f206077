#include "cluster/placement_planner.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

namespace sessionrt::cluster {
namespace {

std::map<std::string, int> counts(const std::vector<std::string>& owners) {
  std::map<std::string, int> c;
  for (const auto& o : owners) ++c[o];
  return c;
}

std::vector<node_view> active(std::initializer_list<const char*> ids) {
  std::vector<node_view> v;
  for (const char* id : ids) v.push_back({id, false});
  return v;
}

// Every shard changed at most once, and the plan's lists agree with its table.
void check_plan_shape(const std::vector<std::string>& before, const placement_plan& p) {
  std::set<int> seen;
  for (const auto* list : {&p.assignments, &p.moves})
    for (const auto& c : *list) {
      CHECK(seen.insert(c.index).second);  // never twice in one round
      CHECK(p.owners[static_cast<std::size_t>(c.index)] == c.to);
      CHECK(c.from != c.to);
    }
  for (std::size_t i = 0; i < before.size(); ++i)
    if (!seen.count(static_cast<int>(i))) CHECK(p.owners[i] == before[i]);
}

}  // namespace

TEST_CASE("placement: the move limit is 10 percent of the shards, at least one", "[cluster][placement]") {
  placement_planner planner;
  CHECK(planner.max_moves(256) == 25);
  CHECK(planner.max_moves(100) == 10);
  CHECK(planner.max_moves(5) == 1);
  CHECK(placement_planner(0.5).max_moves(256) == 128);
}

TEST_CASE("placement: unplaced shards are all assigned in one round, evenly", "[cluster][placement]") {
  placement_planner planner;
  const std::vector<std::string> empty(256);
  auto p = planner.plan(empty, active({"n1", "n2", "n3"}));
  check_plan_shape(empty, p);
  CHECK(p.assignments.size() == 256);  // nobody serves them: no limit
  CHECK(p.moves.empty());
  CHECK(p.complete);
  auto c = counts(p.owners);
  CHECK(c.size() == 3);
  for (const auto& [id, n] : c) CHECK((n == 85 || n == 86));
}

TEST_CASE("placement: a node joining moves at most 25 of 256 shards per round until balanced", "[cluster][placement]") {
  placement_planner planner;
  std::vector<std::string> owners(256);
  for (int i = 0; i < 256; ++i) owners[static_cast<std::size_t>(i)] = i % 2 ? "n1" : "n2";
  const auto nodes = active({"n1", "n2", "n3"});
  int rounds = 0;
  for (;;) {
    auto p = planner.plan(owners, nodes);
    check_plan_shape(owners, p);
    CHECK(p.assignments.empty());
    CHECK(p.moves.size() <= 25);
    for (const auto& m : p.moves) CHECK(m.to == "n3");  // only the newcomer receives
    owners = p.owners;
    if (!p.changed()) {
      CHECK(p.complete);
      break;
    }
    REQUIRE(++rounds < 20);
  }
  CHECK(rounds == 4);  // 85 shards to move: 25 + 25 + 25 + 10
  auto c = counts(owners);
  CHECK(c["n3"] == 85);
  CHECK(c["n1"] + c["n2"] == 171);
  CHECK(std::abs(c["n1"] - c["n2"]) <= 1);
}

TEST_CASE("placement: a balanced table is left alone", "[cluster][placement]") {
  placement_planner planner;
  std::vector<std::string> owners(10);
  for (int i = 0; i < 10; ++i) owners[static_cast<std::size_t>(i)] = i < 4 ? "a" : i < 7 ? "b" : "c";  // 4 3 3
  auto p = planner.plan(owners, active({"c", "b", "a"}));
  CHECK(!p.changed());
  CHECK(p.complete);
  CHECK(p.owners == owners);
}

TEST_CASE("placement: a draining node's shards move off it, at most 10 percent per round", "[cluster][placement]") {
  placement_planner planner;
  std::vector<std::string> owners(256);
  for (int i = 0; i < 256; ++i) owners[static_cast<std::size_t>(i)] = i % 2 ? "n1" : "n2";
  std::vector<node_view> nodes = {{"n1", false}, {"n2", true}};
  auto p = planner.plan(owners, nodes);
  check_plan_shape(owners, p);
  CHECK(p.moves.size() == 25);
  for (const auto& m : p.moves) {
    CHECK(m.from == "n2");
    CHECK(m.to == "n1");
  }
  CHECK(!p.complete);
  int rounds = 1;
  while (p.changed()) {
    owners = p.owners;
    p = planner.plan(owners, nodes);
    check_plan_shape(owners, p);
    CHECK(p.moves.size() <= 25);
    REQUIRE(++rounds < 20);
  }
  CHECK(counts(owners)["n1"] == 256);
}

TEST_CASE("placement: shards of a node that left are reassigned at once, the others stay", "[cluster][placement]") {
  placement_planner planner;
  std::vector<std::string> owners(90);
  for (int i = 0; i < 90; ++i) owners[static_cast<std::size_t>(i)] = i % 3 == 0 ? "a" : i % 3 == 1 ? "b" : "gone";
  auto p = planner.plan(owners, active({"a", "b"}));
  check_plan_shape(owners, p);
  CHECK(p.assignments.size() == 30);
  CHECK(p.moves.empty());
  CHECK(p.complete);
  for (const auto& a : p.assignments) CHECK(a.from == "gone");
  auto c = counts(p.owners);
  CHECK(c["a"] == 45);
  CHECK(c["b"] == 45);
  CHECK(c.count("gone") == 0);
}

TEST_CASE("placement: with no active node nothing changes", "[cluster][placement]") {
  placement_planner planner;
  const std::vector<std::string> owners = {"a", "", "b"};
  auto p = planner.plan(owners, {{"a", true}});
  CHECK(!p.changed());
  CHECK(!p.complete);
  CHECK(p.owners == owners);
}

TEST_CASE("placement: random tables and memberships converge within the limits", "[cluster][placement]") {
  placement_planner planner;
  std::mt19937 rng(36);
  const std::vector<std::string> ids = {"n1", "n2", "n3", "n4", "n5", "n6"};
  for (int trial = 0; trial < 200; ++trial) {
    const int shards = 1 + static_cast<int>(rng() % 300);
    std::vector<std::string> owners(static_cast<std::size_t>(shards));
    for (auto& o : owners) {
      const auto r = rng() % 8;
      o = r < 6 ? ids[r] : r == 6 ? "" : "departed";
    }
    std::vector<node_view> nodes;
    for (const auto& id : ids)
      if (rng() % 3 != 0) nodes.push_back({id, rng() % 5 == 0});
    std::set<std::string> act;
    for (const auto& n : nodes)
      if (!n.draining) act.insert(n.id);
    if (act.empty()) continue;
    int rounds = 0;
    for (;;) {
      auto p = planner.plan(owners, nodes);
      check_plan_shape(owners, p);
      REQUIRE(static_cast<int>(p.moves.size()) <= planner.max_moves(shards));
      for (const auto& a : p.assignments) REQUIRE(act.count(a.to) == 1);
      for (const auto& m : p.moves) REQUIRE(act.count(m.to) == 1);
      owners = p.owners;
      if (!p.changed()) break;
      REQUIRE(++rounds <= shards + 1);
    }
    for (const auto& o : owners) REQUIRE(act.count(o) == 1);  // every shard on an active node
    auto c = counts(owners);
    int lo = shards, hi = 0;
    for (const auto& id : act) lo = std::min(lo, c[id]), hi = std::max(hi, c[id]);
    CHECK(hi - lo <= 1);
  }
}

}  // namespace sessionrt::cluster
