#include <catch2/catch.hpp>

#include <vector>

#include "actors/session/ack_order.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

TEST_CASE("ack_order: a later turn's ack never overtakes an earlier one, a failed sync fails its outcome") {
  ack_order acks;
  std::vector<int> order;
  turn_outcome ok;
  ok.reply = "r";
  acks.push([&](turn_outcome) { order.push_back(1); }, ok, {5, 1, false});
  acks.push([&](turn_outcome) { order.push_back(2); }, ok, {0, 0, false});
  CHECK(acks.take_ready().empty());  // 2 is ready, 1 is not
  acks.synced(1, 4, "");
  CHECK(acks.take_ready().empty());
  acks.synced(1, 5, "EIO");
  auto ready = acks.take_ready();
  REQUIRE(ready.size() == 2);
  CHECK(ready[0].second.st.code() == errc::io_error);
  CHECK_FALSE(ready[0].second.reply.has_value());
  CHECK(ready[1].second.st.ok());
  for (auto& [sink, out] : ready) sink(out);
  CHECK(order == std::vector<int>{1, 2});
  CHECK(acks.empty());
}
