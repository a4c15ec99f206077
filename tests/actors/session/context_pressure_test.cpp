#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "actors/session/context_pressure.hpp"
#include "messages/json_writer.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
using fractions = std::vector<double>;
constexpr std::int64_t threshold = 176000;  // 200k window, default floor and soft threshold
}  // namespace

TEST_CASE("pressure config: defaults are 75% and 90%, valid lists are accepted") {
  CHECK(pressure_config{}.fractions == fractions{0.75, 0.90});
  CHECK(validate_pressure_config(pressure_config{}).ok());
  CHECK(make_pressure_config({}).ok());  // no events
  CHECK(make_pressure_config({0.5}).ok());
  CHECK(make_pressure_config({0.01, 0.5, 0.99})->fractions == fractions{0.01, 0.5, 0.99});
}

TEST_CASE("pressure config: invalid lists are rejected naming the value") {
  struct bad {
    fractions values;
    std::string named;
  };
  const std::vector<bad> rows = {
      {{0.0}, "fraction 0 "},
      {{1.0}, "fraction 1 "},
      {{1.2}, "fraction 1.2 "},
      {{-0.5}, "fraction -0.5 "},
      {{std::nan("")}, "fraction nan "},
      {{0.5, std::numeric_limits<double>::infinity()}, "fraction inf "},
      {{0.9, 0.75}, "fraction 0.75 follows 0.9"},
      {{0.75, 0.75}, "fraction 0.75 follows 0.75"},
      {{0.5, 0.9, 0.8}, "fraction 0.8 follows 0.9"},
  };
  for (const auto& row : rows) {
    INFO(row.named);
    const auto config = make_pressure_config(row.values);
    REQUIRE_FALSE(config.ok());
    CHECK(config.error().code() == errc::invalid_argument);
    CHECK(config.error().message().find(row.named) != std::string::npos);
  }
}

TEST_CASE("pressure: each fraction fires once per compaction cycle") {
  const pressure_config config;
  pressure_state state;
  struct step {
    std::int64_t tokens;
    fractions crossed;
  };
  // 75% of 176000 = 132000, 90% = 158400.
  const std::vector<step> steps = {
      {100000, {}},      {131999, {}},      {132000, {0.75}},  {140000, {}},
      {120000, {}},      {135000, {}},      {158399, {}},      {158400, {0.90}},
      {170000, {}},      {190000, {}},
  };
  for (const auto& s : steps) {
    INFO("tokens " << s.tokens);
    const auto check = check_pressure(config, state, s.tokens, threshold, 0);
    CHECK(check.crossed == s.crossed);
    state = check.next;
  }
  CHECK(state == pressure_state{0, {0.75, 0.90}});
}

TEST_CASE("pressure: a jump past both fractions fires both, lowest first") {
  const auto check = check_pressure(pressure_config{}, pressure_state{}, 170000, threshold, 0);
  CHECK(check.crossed == fractions{0.75, 0.90});
  CHECK(check.next == pressure_state{0, {0.75, 0.90}});
  CHECK(check_pressure(pressure_config{}, check.next, 175000, threshold, 0).crossed.empty());
}

TEST_CASE("pressure: a compaction re-arms every fraction") {
  const pressure_config config;
  auto first = check_pressure(config, pressure_state{}, 160000, threshold, 0);
  REQUIRE(first.crossed == fractions{0.75, 0.90});

  // After compaction the count moves on; tokens dropped, nothing fires yet.
  auto after = check_pressure(config, first.next, 40000, threshold, 1);
  CHECK(after.crossed.empty());
  CHECK(after.next == pressure_state{1, {}});

  auto again = check_pressure(config, after.next, 133000, threshold, 1);
  CHECK(again.crossed == fractions{0.75});
  // A new cycle seen with high tokens right away fires at once.
  auto next_cycle = check_pressure(config, again.next, 160000, threshold, 2);
  CHECK(next_cycle.crossed == fractions{0.75, 0.90});
}

TEST_CASE("pressure: unknown threshold fires nothing - exact products are not rounded up") {
  CHECK(check_pressure(pressure_config{}, pressure_state{}, 500000, 0, 0).crossed.empty());
  CHECK(check_pressure(pressure_config{}, pressure_state{}, 500000, -5, 0).crossed.empty());
  // 0.9 * 176000 is 158400.00000000003 in doubles; 158400 tokens still count as 90%.
  CHECK(check_pressure(pressure_config{{0.9}}, pressure_state{}, 158400, 176000, 0).crossed ==
        fractions{0.9});
  // A fraction that lands between integers needs the next whole token: ceil(1000 * 0.3333).
  CHECK(check_pressure(pressure_config{{0.3333}}, pressure_state{}, 333, 1000, 0).crossed.empty());
  CHECK(check_pressure(pressure_config{{0.3333}}, pressure_state{}, 334, 1000, 0).crossed ==
        fractions{0.3333});
}

TEST_CASE("pressure state round-trips through JSON and rejects malformed input") {
  const pressure_state state{7, {0.75}};
  const auto json = pressure_state_to_json(state);
  CHECK(json::to_compact(json) == R"({"compactionCount":7,"fired":[0.75]})");
  const auto back = pressure_state_from_json(json);
  REQUIRE(back.ok());
  CHECK(*back == state);

  CHECK(pressure_state_from_json(boost::json::parse(R"({"fired":[]})")).error().code() ==
        errc::corrupt);
  CHECK(pressure_state_from_json(boost::json::parse(R"({"compactionCount":1,"fired":["x"]})"))
            .error()
            .message()
            .find("fired") != std::string::npos);
  CHECK_FALSE(pressure_state_from_json(boost::json::parse("[1]")).ok());
}
