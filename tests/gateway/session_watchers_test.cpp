// session_watchers: the session key -> watching connections index of the transport.
#include <catch2/catch.hpp>

#include "gateway/session_watchers.hpp"

using namespace sessionrt::gateway;

TEST_CASE("session_watchers: each key lists its watchers once and a key nobody watches is dropped") {
  session_watchers w;
  w.add("k", 1);
  w.add("k", 2);
  w.add("k", 1);
  w.add("j", 2);
  CHECK(w.of("k") == std::vector<std::uint64_t>{1, 2});
  CHECK(w.of("nobody").empty());
  w.remove("k", 1);
  CHECK(w.of("k") == std::vector<std::uint64_t>{2});
  w.remove("k", 2);
  CHECK(w.of("k").empty());
  CHECK(w.keys() == 1);
}
