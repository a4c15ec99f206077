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

// A failed turn writes nothing after the record sent while the model ran, so its final record
// repeats that record's (file, seq): the first answer must not release the ack before the
// turn's rows, sent as a row-only append, are written (it waits for (0, rows_seq) too).
TEST_CASE("ack_order: an ack that also waits for a row-only append is released once both are answered") {
  ack_order acks;
  turn_outcome ok;
  ack_order::waits w;
  w.sync_seq = 3;
  w.sync_file = 7;
  w.rows_seq = 2;
  acks.push([](turn_outcome) {}, ok, w);
  CHECK(acks.waiting_on_sync() == 1);
  acks.synced(7, 3, "");  // the record sent while waiting: the bytes are durable
  CHECK(acks.take_ready().empty());
  acks.synced(0, 1, "");  // an earlier row-only append
  CHECK(acks.take_ready().empty());
  acks.synced(0, 2, "");
  auto ready = acks.take_ready();
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].second.st.ok());
  SECTION("a failed row-only append fails the outcome") {
    acks.push([](turn_outcome) {}, ok, w);
    acks.synced(7, 3, "");
    acks.synced(0, 2, "ENOSPC");
    auto failed = acks.take_ready();
    REQUIRE(failed.size() == 1);
    CHECK(failed[0].second.st.code() == errc::io_error);
  }
}
