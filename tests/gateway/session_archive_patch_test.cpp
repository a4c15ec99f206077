// sessions.patch {archived: true|false}: OpenClaw 2026.9's archive in place and restore through
// the gateway (actors/maintenance/manual_archive.hpp), through a real socket.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "messages/json_access.hpp"
#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using namespace sessionrt::gateway::testing;
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {

bj::object call(gateway_client& c, const std::string& method, bj::object params = {}) {
  auto r = c.request(method, params, 10s);
  if (!r.ok()) FAIL(method << ": " << r.error().message());
  return r->as_object();
}

std::string error_of_call(gateway_client& c, const std::string& method, bj::object params = {}) {
  auto r = c.request(method, params, 10s);
  if (r.ok()) FAIL(method << " answered " << bj::serialize(*r));
  return r.error().message();
}

void exchange(gateway_client& c, const std::string& key, const std::string& text, const std::string& run) {
  call(c, "chat.send", {{"sessionKey", key}, {"message", text}, {"idempotencyKey", run}});
  auto events = run_events(c, run);
  REQUIRE(events.ok());
  REQUIRE(events->back().at("state") == "final");
}

bool listed(gateway_client& c, const std::string& key, bj::object params = {}) {
  const auto list = call(c, "sessions.list", std::move(params));
  for (const auto& s : list.at("sessions").as_array())
    if (s.at("key") == key.c_str()) return true;
  return false;
}

}  // namespace

TEST_CASE("sessions.patch archived: true archives in place as OpenClaw 2026.9 does, false restores") {
  running_gateway g;
  auto c = g.client();
  const std::string key = "agent:main:shelf";
  exchange(*c, key, "hi", "run-shelf");
  const std::string id(call(*c, "sessions.describe", {{"key", key}}).at("session").at("sessionId").as_string());
  call(*c, "sessions.patch", {{"key", key}, {"pinned", true}});

  CHECK(error_of_call(*c, "sessions.patch", {{"key", key}, {"archived", true}})
            .find("expectedSessionId required for session lifecycle patch: " + key) != std::string::npos);
  CHECK(error_of_call(*c, "sessions.patch", {{"key", key}, {"archived", true}, {"expectedSessionId", "other"}})
            .find("changed before patch") != std::string::npos);
  CHECK(error_of_call(*c, "sessions.patch", {{"key", "agent:main:none"}, {"archived", true}, {"expectedSessionId", "x"}})
            .find("session not found: agent:main:none") != std::string::npos);
  CHECK(error_of_call(*c, "sessions.patch", {{"key", key}, {"archived", "yes"}, {"expectedSessionId", id}})
            .find("at /archived: must be boolean") != std::string::npos);

  auto p = call(*c, "sessions.patch", {{"key", key}, {"archived", true}, {"expectedSessionId", id}});
  const auto& e = p.at("entry").as_object();
  REQUIRE(e.contains("archivedAt"));
  CHECK(json::get_string(e, "archiveReason") == std::optional<std::string_view>("manual"));
  CHECK_FALSE(e.contains("pinnedAt"));  // archiving unpins
  CHECK(json::get_string(e, "sessionId") == std::optional<std::string_view>(id));  // the session stays
  CHECK_FALSE(listed(*c, key));
  CHECK(listed(*c, key, {{"archived", true}}));
  CHECK(error_of_call(*c, "sessions.patch", {{"key", key}, {"pinned", true}})
            .find("cannot pin an archived session; restore it first") != std::string::npos);

  auto r = call(*c, "sessions.patch", {{"key", key}, {"archived", false}, {"expectedSessionId", id}});
  CHECK_FALSE(r.at("entry").as_object().contains("archivedAt"));
  CHECK_FALSE(r.at("entry").as_object().contains("archiveReason"));
  CHECK(listed(*c, key));
}

TEST_CASE("sessions.patch archived: the main session cannot be archived") {
  running_gateway g;
  auto c = g.client();
  exchange(*c, "agent:main:main", "hi", "run-main");
  const std::string id(call(*c, "sessions.describe", {{"key", "agent:main:main"}}).at("session").at("sessionId").as_string());
  CHECK(error_of_call(*c, "sessions.patch", {{"key", "agent:main:main"}, {"archived", true}, {"expectedSessionId", id}})
            .find("Cannot archive an agent's main session.") != std::string::npos);
}
