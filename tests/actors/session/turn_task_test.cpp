#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "actors/session/turn_task.hpp"

using sessionrt::actors::task;

namespace {

struct parts {
  std::string a, b;
};

task<std::size_t> length_of(const parts& p, std::shared_ptr<int> keep) { co_return p.a.size() + p.b.size() + *keep; }

// What a turn waits on: suspends until the test resumes it.
struct gate {
  std::coroutine_handle<> waiting;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { waiting = h; }
  int await_resume() const noexcept { return 7; }
};

task<int> waits(gate& g) {
  int v = co_await g;
  co_return v + 1;
}

task<int> outer(gate& g, std::shared_ptr<int> keep) {
  const parts named{std::string(40, 'x'), "y"};  // named, not braced inside the co_await
  auto n = co_await length_of(named, keep);
  int w = co_await waits(g);
  co_return static_cast<int>(n) + w;
}

}  // namespace

TEST_CASE("turn_task: nested tasks run to their end, suspend on a wait and resume where they stopped") {
  gate g;
  auto keep = std::make_shared<int>(1);
  auto t = outer(g, keep);
  CHECK_FALSE(t.done());
  t.resume();
  REQUIRE_FALSE(t.done());  // waiting on the gate
  REQUIRE(g.waiting);
  g.waiting.resume();
  REQUIRE(t.done());
  CHECK(t.take() == 42 + 8);
  t.reset();
  CHECK(keep.use_count() == 1);  // nothing freed twice, nothing leaked
}

TEST_CASE("turn_task: destroying a suspended task frees its frames") {
  gate g;
  auto keep = std::make_shared<int>(1);
  {
    auto t = outer(g, keep);
    t.resume();
    CHECK(keep.use_count() > 1);
  }
  CHECK(keep.use_count() == 1);
}
