// hold_queue on a manual clock: the calls held for a shard in handoff leave in arrival order, one
// at a time per key, until their deadline; the node's bound and a closed connection.
#include "gateway/hold_queue.hpp"

#include <catch2/catch.hpp>

using namespace sessionrt::gateway;
using namespace std::chrono_literals;

namespace {
const hold_queue::time_point t0{};

std::vector<std::uint64_t> ids(const std::vector<hold_queue::entry>& es) {
  std::vector<std::uint64_t> out;
  for (const auto& e : es) out.push_back(e.id);
  return out;
}
}  // namespace

TEST_CASE("hold queue: a key's calls leave in arrival order, the next once the previous was answered", "[hold]") {
  hold_queue q({10s, 100});
  const auto s1 = q.arrive(), s2 = q.arrive(), s3 = q.arrive();
  CHECK_FALSE(q.busy("k"));
  // The second arrival is refused first (its forward came back sooner): it still waits behind
  // the first.
  REQUIRE(q.hold("k", 2, s2, 7, t0) == hold_queue::admit::held);
  REQUIRE(q.hold("k", 1, s1, 7, t0) == hold_queue::admit::held);
  REQUIRE(q.hold("k", 3, s3, 8, t0) == hold_queue::admit::held);
  CHECK(q.busy("k"));
  CHECK(q.held() == 3);
  hold_queue::entry e;
  REQUIRE(q.take("k", e));
  CHECK(e.id == 1);
  hold_queue::entry again;
  CHECK_FALSE(q.take("k", again));  // one at a time per key
  CHECK(q.idle_keys().empty());
  q.finished("k");
  CHECK(q.held() == 2);
  REQUIRE(q.take("k", e));
  CHECK(e.id == 2);
  // Refused again by the owner it was sent to: it waits at its place, before the third.
  q.put_back(e);
  CHECK(q.idle_keys() == std::vector<std::string>{"k"});
  REQUIRE(q.take("k", e));
  CHECK(e.id == 2);
  q.finished("k");
  REQUIRE(q.take("k", e));
  CHECK(e.id == 3);
  CHECK(q.busy("k"));  // on its way: a new call of the key still queues behind it
  q.finished("k");
  CHECK_FALSE(q.busy("k"));
  CHECK(q.held() == 0);
}

TEST_CASE("hold queue: keys are independent", "[hold]") {
  hold_queue q({10s, 100});
  REQUIRE(q.hold("a", 1, q.arrive(), 1, t0) == hold_queue::admit::held);
  REQUIRE(q.hold("b", 2, q.arrive(), 1, t0) == hold_queue::admit::held);
  hold_queue::entry e;
  REQUIRE(q.take("a", e));
  CHECK(q.idle_keys() == std::vector<std::string>{"b"});
  REQUIRE(q.take("b", e));
  CHECK(e.id == 2);
}

TEST_CASE("hold queue: a call held past its deadline leaves, one on its way does not", "[hold]") {
  hold_queue q({5s, 100});
  REQUIRE(q.hold("k", 1, q.arrive(), 1, t0) == hold_queue::admit::held);
  REQUIRE(q.hold("k", 2, q.arrive(), 1, t0 + 2s) == hold_queue::admit::held);
  REQUIRE(q.hold("j", 3, q.arrive(), 1, t0 + 1s) == hold_queue::admit::held);
  hold_queue::entry taken;
  REQUIRE(q.take("j", taken));
  CHECK(q.expired(t0 + 4s).empty());
  CHECK(ids(q.expired(t0 + 5s)) == std::vector<std::uint64_t>{1});
  CHECK(q.held() == 2);  // 2 waiting, 3 on its way (past its deadline, answered by its owner)
  CHECK(ids(q.expired(t0 + 60s)) == std::vector<std::uint64_t>{2});
  CHECK_FALSE(q.busy("k"));
  CHECK(q.busy("j"));
  q.finished("j");
  CHECK(q.held() == 0);
}

TEST_CASE("hold queue: past the node's bound a call is refused, a put-back one is taken back", "[hold]") {
  hold_queue q({10s, 2});
  REQUIRE(q.hold("a", 1, q.arrive(), 1, t0) == hold_queue::admit::held);
  REQUIRE(q.hold("b", 2, q.arrive(), 1, t0) == hold_queue::admit::held);
  CHECK(q.hold("c", 3, q.arrive(), 1, t0) == hold_queue::admit::full);
  CHECK_FALSE(q.busy("c"));
  hold_queue::entry e;
  REQUIRE(q.take("a", e));
  CHECK(q.hold("c", 3, q.arrive(), 1, t0) == hold_queue::admit::full);  // on its way still counts
  q.put_back(e);
  CHECK(q.held() == 2);
  REQUIRE(q.take("a", e));
  q.finished("a");
  CHECK(q.hold("c", 3, q.arrive(), 1, t0) == hold_queue::admit::held);
}

TEST_CASE("hold queue: a closed connection's held calls are dropped", "[hold]") {
  hold_queue q({10s, 100});
  REQUIRE(q.hold("k", 1, q.arrive(), 1, t0) == hold_queue::admit::held);
  REQUIRE(q.hold("k", 2, q.arrive(), 2, t0) == hold_queue::admit::held);
  REQUIRE(q.hold("j", 3, q.arrive(), 1, t0) == hold_queue::admit::held);
  CHECK(ids(q.drop_conn(1)) == std::vector<std::uint64_t>{1, 3});
  CHECK(q.held() == 1);
  CHECK_FALSE(q.busy("j"));
  hold_queue::entry e;
  REQUIRE(q.take("k", e));
  CHECK(e.id == 2);
}
