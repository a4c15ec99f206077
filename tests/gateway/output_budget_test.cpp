// output_budget: one socket's unsent bytes against gateway.maxBufferedBytes, and its share of
// the gateway-wide gauge (moved here from connection_state with ws_socket).
#include <catch2/catch.hpp>

#include "gateway/output_budget.hpp"

using sessionrt::gateway::output_budget;

TEST_CASE("output_budget: unsent bytes past the limit mark a slow consumer") {
  output_budget b(100);
  b.set(60);
  CHECK_FALSE(b.over());
  b.set(120);
  CHECK(b.over());
  b.set(70);
  CHECK_FALSE(b.over());
  CHECK(b.unsent() == 70);
}

TEST_CASE("output_budget: the gauge gets each change, and the whole share back at close") {
  output_budget b(100);
  std::int64_t gauge = 0;
  gauge += b.set(60);
  gauge += b.set(10);
  CHECK(gauge == 10);
  gauge += b.set(300);
  CHECK(gauge == 300);
  gauge += b.release();
  CHECK(gauge == 0);
  CHECK(b.unsent() == 0);
}
