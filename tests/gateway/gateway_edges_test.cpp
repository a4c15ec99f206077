// The gateway's edge, where a client's input first meets the runtime: a session key is put in
// its store form once for every method (so a key without "agent:" is one session, not two), a
// label is capped as OpenClaw caps it, and a gateway refused at start leaves the running one's
// token file alone.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <map>

#include "messages/json_access.hpp"
#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using namespace sessionrt::gateway::testing;
namespace bj = boost::json;
using namespace std::chrono_literals;

TEST_CASE("gateway: a key without the agent prefix is one session for every method") {
  running_gateway g;
  auto c = g.client();
  // chat.send "probe2": the sender gets deltas and a final right away under the stored key.
  auto ack = c->request("chat.send", bj::object{{"sessionKey", "Probe2"}, {"message", "hello there friend"},
                                                {"idempotencyKey", "p-1"}}, 10s);
  REQUIRE(ack.ok());
  auto events = run_events(*c, "p-1", 10s);
  REQUIRE(events.ok());
  REQUIRE(events->size() >= 2);
  CHECK(events->front().at("state") == "delta");
  CHECK(events->back().at("state") == "final");
  for (const auto& e : *events) CHECK(e.at("sessionKey") == "agent:main:probe2");

  auto h = c->request("chat.history", bj::object{{"sessionKey", "probe2"}}, 10s);
  REQUIRE(h.ok());
  CHECK(h->at("messages").as_array().size() == 2);
  CHECK(h->at("sessionInfo").at("key") == "agent:main:probe2");
  auto d = c->request("sessions.describe", bj::object{{"key", "probe2"}}, 10s);
  REQUIRE(d.ok());
  CHECK(d->at("session").at("key") == "agent:main:probe2");
  auto p = c->request("sessions.patch", bj::object{{"key", "probe2"}, {"label", "Probe"}}, 10s);
  REQUIRE(p.ok());
  CHECK(p->at("key") == "agent:main:probe2");
  auto list = c->request("sessions.list", bj::object{}, 10s);
  REQUIRE(list.ok());
  CHECK(list->at("count") == 1);  // patch found the session chat.send made, it did not add one
  CHECK(list->at("sessions").as_array().at(0).at("label") == "Probe");
  // The agentId param names the agent of a bare key; an unknown agent is refused.
  auto other = c->request("sessions.describe", bj::object{{"key", "probe2"}, {"agentId", "work"}}, 10s);
  REQUIRE_FALSE(other.ok());
  CHECK_THAT(c->last_error()->message, Catch::Contains("no agent work"));
}

TEST_CASE("gateway: sessions.patch refuses a label over 512 characters and keeps the old one") {
  running_gateway g;
  auto c = g.client();
  REQUIRE(c->request("sessions.patch", bj::object{{"key", "main"}, {"label", "before"}}, 10s).ok());
  auto big = c->request("sessions.patch", bj::object{{"key", "main"}, {"label", std::string(513, 'x')}}, 10s);
  REQUIRE_FALSE(big.ok());
  CHECK(c->last_error()->code == "INVALID_REQUEST");
  CHECK(c->last_error()->message == "invalid sessions.patch params: at /label: must NOT have more than 512 characters");
  // 512 characters of 2-byte UTF-8 (1,024 bytes) is at the limit, not over it.
  std::string wide;
  for (int i = 0; i < 512; ++i) wide += "\xC3\xA9";
  auto at_limit = c->request("sessions.patch", bj::object{{"key", "main"}, {"label", wide}}, 10s);
  REQUIRE(at_limit.ok());
  CHECK(at_limit->at("entry").at("label").as_string().size() == 1024);
}

TEST_CASE("gateway: a second gateway refused at start does not replace the token file") {
  sessionrt::testing::temp_dir dir;
  auto start = [&](int port) {
    gateway_options o;
    o.runtime.settings.state_dir = dir.path();
    o.runtime.threads = 2;
    o.port = port;
    return gateway_server::start(std::move(o));
  };
  auto first = start(0);
  REQUIRE(first.ok());
  const std::string token_path = dir.path() + "/gateway.token";
  const std::string token = sessionrt::testing::read_text(token_path);
  REQUIRE(token.size() > 20);
  auto info_before = sessionrt::testing::read_text(dir.path() + "/gateway.json");
  // Remove the file as an operator might, then start a second gateway on the same dir: it is
  // refused (the runtime owns the dir) and must not write a token of its own.
  REQUIRE(::unlink(token_path.c_str()) == 0);
  auto second = start(0);
  REQUIRE_FALSE(second.ok());
  CHECK_FALSE(sessionrt::testing::exists(token_path));
  CHECK(sessionrt::testing::read_text(dir.path() + "/gateway.json") == info_before);
  REQUIRE((*first)->stop().ok());
}

TEST_CASE("gateway: sessions.list includeDerivedTitles names a session by its label, else its first message") {
  running_gateway g;
  auto c = g.client();
  for (const auto& [key, text] : {std::pair<std::string, std::string>{"agent:main:one", "  what is the   plan for\ntomorrow?"},
                                  {"agent:main:two", std::string(80, 'x')}}) {
    auto ack = c->request("chat.send", bj::object{{"sessionKey", key}, {"message", text}, {"idempotencyKey", key}}, 10s);
    REQUIRE(ack.ok());
    REQUIRE(run_events(*c, key, 10s).ok());
  }
  REQUIRE(c->request("sessions.patch", bj::object{{"key", "agent:main:two"}, {"label", "Labelled"}}, 10s).ok());
  REQUIRE(c->request("chat.send", bj::object{{"sessionKey", "agent:main:three"}, {"message", "/status"},
                                             {"idempotencyKey", "three"}}, 10s).ok());
  REQUIRE(run_events(*c, "three", 10s).ok());
  auto list = c->request("sessions.list", bj::object{{"includeDerivedTitles", true}}, 10s);
  REQUIRE(list.ok());
  std::map<std::string, std::string> titles;
  for (const auto& s : list->at("sessions").as_array()) {
    const auto& o = s.as_object();
    if (o.contains("derivedTitle")) titles[std::string(o.at("key").as_string())] = std::string(o.at("derivedTitle").as_string());
  }
  CHECK(titles["agent:main:one"] == "what is the plan for tomorrow?");
  CHECK(titles["agent:main:two"] == "Labelled");
  CHECK_FALSE(titles.count("agent:main:three"));  // a /command names nothing
  // Without the flag, no title is read.
  auto plain = c->request("sessions.list", bj::object{}, 10s);
  REQUIRE(plain.ok());
  for (const auto& s : plain->at("sessions").as_array()) CHECK_FALSE(s.as_object().contains("derivedTitle"));
}
