// The CLI's way to the running gateway (gateway/remote_commands): finding a live one from
// <state>/gateway.json, the token, and one call through it, against a real gateway_server.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "gateway/gateway_server.hpp"
#include "gateway/remote_commands.hpp"
#include "storage/process_probe.hpp"
#include "storage/system_clock.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
namespace bj = boost::json;

namespace {
runtime::cli_io io_with(std::map<std::string, std::string>* env) {
  runtime::cli_io io;
  io.files = &storage::posix_fs();
  io.time = &storage::real_clock();
  io.probe = &storage::real_process_probe();
  io.env = [env](std::string_view k) -> std::optional<std::string> {
    auto it = env->find(std::string(k));
    if (it == env->end()) return std::nullopt;
    return it->second;
  };
  return io;
}

std::unique_ptr<gateway_server> start_on(const std::string& dir, const std::string& token) {
  gateway_options o;
  o.runtime.settings.state_dir = dir;
  o.port = 0;
  o.token = token;
  auto s = gateway_server::start(std::move(o));
  REQUIRE(s.ok());
  return std::move(*s);
}
}  // namespace

TEST_CASE("remote CLI finds the live gateway of a state dir and calls it with the token from the environment") {
  sessionrt::testing::temp_dir dir;
  std::map<std::string, std::string> env{{"SESSIONRT_GATEWAY_TOKEN", "tok-env"}};
  auto io = io_with(&env);
  CHECK_FALSE(find_live_gateway(io, dir.path()).has_value());           // no gateway.json
  CHECK_FALSE(call_live_gateway(io, dir.path(), "", "health", bj::object{}).has_value());
  auto server = start_on(dir.path(), "tok-env");
  auto live = find_live_gateway(io, dir.path());
  REQUIRE(live.has_value());
  CHECK(live->port == server->port());
  auto r = call_live_gateway(io, dir.path(), "", "sessions.list", bj::object{});
  REQUIRE(r.has_value());
  REQUIRE(r->ok());
  CHECK(r->value().at("sessions").as_array().empty());
  CHECK(server->stop().ok());
  // gateway.json is gone with the gateway: offline again.
  CHECK_FALSE(find_live_gateway(io, dir.path()).has_value());
}

TEST_CASE("remote CLI reports a wrong token as the gateway's refusal, not as an offline store") {
  sessionrt::testing::temp_dir dir;
  std::map<std::string, std::string> env;
  auto io = io_with(&env);
  auto server = start_on(dir.path(), "right");
  auto r = call_live_gateway(io, dir.path(), "wrong", "health", bj::object{});
  REQUIRE(r.has_value());
  REQUIRE_FALSE(r->ok());
  CHECK_THAT(r->error().message(), Catch::Contains("gateway token mismatch"));
  auto ok = call_live_gateway(io, dir.path(), "right", "health", bj::object{});
  REQUIRE(ok.has_value());
  CHECK(ok->ok());
  CHECK(server->stop().ok());
}

TEST_CASE("remote CLI treats a gateway.json whose pid is gone as no gateway") {
  sessionrt::testing::temp_dir dir;
  std::map<std::string, std::string> env;
  auto io = io_with(&env);
  storage::fake_process_probe probe;  // knows no process but itself: pid 1234 is not alive
  io.probe = &probe;
  sessionrt::testing::write_text(dir.file("gateway.json"), R"({"pid":1234,"port":9,"bind":"127.0.0.1"})");
  CHECK_FALSE(find_live_gateway(io, dir.path()).has_value());
}

TEST_CASE("remote CLI takes the token from --token, then the environment, then <state>/gateway.token") {
  sessionrt::testing::temp_dir dir;
  std::map<std::string, std::string> env;
  auto io = io_with(&env);
  CHECK(gateway_token(io, dir.path(), "").empty());
  sessionrt::testing::write_text(dir.file("gateway.token"), "from-file\n");
  CHECK(gateway_token(io, dir.path(), "") == "from-file");
  env["SESSIONRT_GATEWAY_TOKEN"] = "from-env";
  CHECK(gateway_token(io, dir.path(), "") == "from-env");
  CHECK(gateway_token(io, dir.path(), "explicit") == "explicit");
}
