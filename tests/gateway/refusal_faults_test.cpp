// Refusals carry their fault (connection_state.hpp), which is what the gateway counts and decides
// by: a params error made anywhere is bad_params, the Origin check replaces only a refusal for
// credentials, whatever the messages say.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "gateway/control_ui.hpp"
#include "gateway/method_table.hpp"
#include "gateway/param_check.hpp"
#include "gateway/runner_pool.hpp"

using namespace sessionrt::gateway;
namespace bj = boost::json;

TEST_CASE("faults: check_params and params_error say bad_params, error_of says nothing") {
  auto e = check_params("chat.send", bj::object{{"message", 1}}, {{"message", ptype::string, true}});
  REQUIRE(e);
  CHECK(e->message == "invalid chat.send params: at /message: must be string");
  CHECK(e->why == fault::bad_params);
  auto made = params_error("chat.history", "at /limit: must be <= 1000");
  CHECK(made.message == "invalid chat.history params: at /limit: must be <= 1000");
  CHECK(made.why == fault::bad_params);
  // The text alone does not make a params error (the old transport matched "invalid * params: ").
  CHECK(error_of("invalid chat.send params: looks like one").why == fault::none);
}

TEST_CASE("faults: the Origin check replaces a refusal for credentials only, by its fault") {
  connect_verdict token;
  token.error.why = fault::token_mismatch;
  auto replaced = with_origin_check(token, false, "origin not allowed");
  CHECK_FALSE(replaced.ok);
  CHECK(replaced.error.why == fault::origin);
  CHECK(replaced.error.details.at("code") == "CONTROL_UI_ORIGIN_NOT_ALLOWED");

  connect_verdict params;
  params.error.why = fault::bad_connect;
  params.error.details = bj::object{{"code", "AUTH_LOOKALIKE"}};  // a code's text decides nothing
  auto kept = with_origin_check(params, false, "origin not allowed");
  CHECK(kept.error.why == fault::bad_connect);
  CHECK(kept.error.details.at("code") == "AUTH_LOOKALIKE");
}

TEST_CASE("faults: sessionrt.turn.result's params problems are named before the call is looked up") {
  CHECK(runner_pool::result_params_problem(bj::object{}) == std::optional<std::string>("must have required property 'callId'"));
  CHECK(runner_pool::result_params_problem(bj::object{{"callId", "c"}, {"delta", 1}}) ==
        std::optional<std::string>("at /delta: must be string"));
  CHECK(runner_pool::result_params_problem(bj::object{{"callId", "c"}}) ==
        std::optional<std::string>("one of delta, message, error is required"));
  CHECK_FALSE(runner_pool::result_params_problem(bj::object{{"callId", "c"}, {"message", bj::object{}}}));
}
