// The gateway server through a real socket on 127.0.0.1 (ephemeral port): the handshake and
// every refusal (OpenClaw's close codes and messages), the limits, HTTP /healthz and /metrics.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "messages/json_access.hpp"
#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using namespace sessionrt::gateway::testing;
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {

bj::object parse(const std::string& s) { return bj::parse(s).as_object(); }

std::string connect_frame(const std::string& token, int protocol = 4, const std::string& client = "cli") {
  client_identity who;
  who.token = token;
  who.client_id = client;
  auto p = connect_params(who);
  p["minProtocol"] = protocol;
  p["maxProtocol"] = protocol;
  return bj::serialize(bj::object{{"type", "req"}, {"id", "1:c"}, {"method", "connect"}, {"params", p}});
}

// Reads frames until the connection ends; returns the responses seen.
std::vector<bj::object> read_until_closed(ws_client& ws) {
  std::vector<bj::object> out;
  for (int i = 0; i < 100; ++i) {
    auto m = ws.receive_text(5s);
    if (!m.ok()) break;
    out.push_back(parse(*m));
  }
  return out;
}

}  // namespace

TEST_CASE("gateway: the challenge comes first without seq then connect answers hello-ok with the method table") {
  running_gateway g;
  auto ws = g.raw();
  auto first = ws->receive_text(5s);
  REQUIRE(first.ok());
  auto ch = parse(*first);
  CHECK(ch.at("event") == "connect.challenge");
  CHECK_FALSE(ch.contains("seq"));
  CHECK(ch.at("payload").at("ts").is_int64());
  CHECK(ch.at("payload").at("ts").as_int64() > 0);
  CHECK(ch.at("payload").at("nonce").as_string().size() == 36);
  REQUIRE(ws->send_text(connect_frame("tok")).ok());
  auto hello = ws->receive_text(5s);
  REQUIRE(hello.ok());
  auto res = parse(*hello);
  CHECK(res.at("ok") == true);
  const auto& p = res.at("payload").as_object();
  CHECK(p.at("type") == "hello-ok");
  CHECK(p.at("protocol") == 4);
  bool has_list = false, has_send = false;
  for (const auto& m : p.at("features").at("methods").as_array()) {
    has_list = has_list || m == "sessions.list";
    has_send = has_send || m == "chat.send";
  }
  CHECK(has_list);
  CHECK(has_send);
  CHECK(p.at("policy").at("tickIntervalMs") == 30000);
  CHECK(p.at("auth").at("scopes").as_array().front() == "operator.read");
  CHECK(p.at("snapshot").at("sessionDefaults").at("mainSessionKey") == "agent:main:main");
}

TEST_CASE("gateway: a wrong token gets AUTH_TOKEN_MISMATCH and close 1008") {
  running_gateway g;
  auto ws = g.raw();
  REQUIRE(ws->receive_text(5s).ok());
  REQUIRE(ws->send_text(connect_frame("nope")).ok());
  auto frames = read_until_closed(*ws);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].at("ok") == false);
  CHECK(frames[0].at("error").at("message") == "unauthorized: gateway token mismatch");
  CHECK(frames[0].at("error").at("details").at("code") == "AUTH_TOKEN_MISMATCH");
  REQUIRE(ws->close_code());
  CHECK(*ws->close_code() == 1008);
}

TEST_CASE("gateway: protocol 5 gets PROTOCOL_MISMATCH and close 1002") {
  running_gateway g;
  auto ws = g.raw();
  REQUIRE(ws->receive_text(5s).ok());
  REQUIRE(ws->send_text(connect_frame("tok", 5)).ok());
  auto frames = read_until_closed(*ws);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].at("error").at("message") == "protocol mismatch");
  CHECK(frames[0].at("error").at("details").at("expectedProtocol") == 4);
  REQUIRE(ws->close_code());
  CHECK(*ws->close_code() == 1002);
}

TEST_CASE("gateway: a first request that is not connect and an unknown client id close 1008") {
  running_gateway g;
  {
    auto ws = g.raw();
    REQUIRE(ws->receive_text(5s).ok());
    REQUIRE(ws->send_text(R"({"type":"req","id":"1","method":"sessions.list","params":{}})").ok());
    auto frames = read_until_closed(*ws);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].at("error").at("message") == "invalid handshake: first request must be connect");
    REQUIRE(ws->close_code());
    CHECK(*ws->close_code() == 1008);
  }
  {
    auto ws = g.raw();
    REQUIRE(ws->receive_text(5s).ok());
    REQUIRE(ws->send_text(connect_frame("tok", 4, "not-a-client")).ok());
    auto frames = read_until_closed(*ws);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].at("error").at("message") ==
          "invalid connect params: at /client/id: must be equal to one of the allowed values");
    CHECK(*ws->close_code() == 1008);
  }
}

TEST_CASE("gateway: not JSON closes 1008, an unknown method answers and keeps the connection") {
  running_gateway g;
  auto c = g.client();
  auto r = c->request("no.such.method", bj::object{}, 5s);
  REQUIRE_FALSE(r.ok());
  REQUIRE(c->last_error());
  CHECK(c->last_error()->code == "INVALID_REQUEST");
  CHECK(c->last_error()->message == "unknown method: no.such.method");
  auto list = c->request("sessions.list", bj::object{}, 5s);
  REQUIRE(list.ok());
  REQUIRE(c->socket().send_text("{this is not json").ok());
  auto e = c->next_event(5s);
  CHECK_FALSE(e.ok());
  REQUIRE(c->close_code());
  CHECK(*c->close_code() == 1008);
  auto [code, body] = http_get(g.server->port(), "/metrics", "tok");
  CHECK(code == 200);
  CHECK(metric(body, "sessionrt_gateway_refused_total{reason=\"not_json\"}") == 1);
  CHECK(metric(body, "sessionrt_gateway_refused_total{reason=\"unknown_method\"}") == 1);
}

TEST_CASE("gateway: scopes are honoured per method: a read-only client cannot reset") {
  running_gateway g;
  auto c = g.client({"operator.read"});
  auto r = c->request("sessions.reset", bj::object{{"key", "agent:main:main"}}, 5s);
  REQUIRE_FALSE(r.ok());
  CHECK(c->last_error()->code == "FORBIDDEN");
  CHECK(c->last_error()->message == "missing scope: operator.admin");
  auto s = c->request("chat.send", bj::object{{"sessionKey", "main"}, {"message", "x"}, {"idempotencyKey", "k"}}, 5s);
  REQUIRE_FALSE(s.ok());
  CHECK(c->last_error()->message == "missing scope: operator.write");
}

TEST_CASE("gateway: a frame over 64 KiB before connect closes 1009, the next client is served") {
  running_gateway g;
  auto ws = g.raw();
  REQUIRE(ws->receive_text(5s).ok());
  std::string big = R"({"type":"req","id":"1","method":"connect","params":{"pad":")" + std::string(70 * 1024, 'x') + "\"}}";
  (void)ws->send_text(big);
  (void)read_until_closed(*ws);
  REQUIRE(ws->close_code());
  CHECK(*ws->close_code() == 1009);
  auto c = g.client();
  CHECK(c->request("health", bj::object{}, 5s).ok());
}

TEST_CASE("gateway: a handshake that never completes is closed 1008 after the timeout") {
  running_gateway g([](gateway_options& o) { o.handshake_timeout_ms = 200; });
  auto ws = g.raw();
  REQUIRE(ws->receive_text(5s).ok());
  auto next = ws->receive_text(10s);  // waits for the server's close
  CHECK_FALSE(next.ok());
  REQUIRE(ws->close_code());
  CHECK(*ws->close_code() == 1008);
  CHECK(ws->close_reason() == "handshake timeout");
}

TEST_CASE("gateway: past gateway.maxConnections a connection is closed 1008 the others keep working") {
  running_gateway g([](gateway_options& o) { o.max_connections = 1; });
  auto first = g.client();
  auto ws = g.raw();
  auto m = ws->receive_text(5s);
  CHECK_FALSE(m.ok());
  REQUIRE(ws->close_code());
  CHECK(*ws->close_code() == 1008);
  CHECK(ws->close_reason() == "too many connections");
  CHECK(first->request("health", bj::object{}, 5s).ok());
}

TEST_CASE("gateway: GET /healthz answers JSON, /metrics needs the token and lists the counters") {
  running_gateway g;
  auto [hc, hb] = http_get(g.server->port(), "/healthz");
  CHECK(hc == 200);
  CHECK(bj::parse(hb).at("ok") == true);
  auto [uc, ub] = http_get(g.server->port(), "/metrics");
  CHECK(uc == 401);
  auto [mc, mb] = http_get(g.server->port(), "/metrics", "tok");
  CHECK(mc == 200);
  CHECK(mb.find("# TYPE sessionrt_turn_ack_latency_ms histogram") != std::string::npos);
  CHECK(metric(mb, "sessionrt_model_calls_running") == 0);
  CHECK(metric(mb, "sessionrt_sessions_live") == 0);     // read from runtime_stats: -1 if the router did not answer
  CHECK(metric(mb, "sessionrt_sessions_trimmed") == 0);
  CHECK(metric(mb, "sessionrt_gateway_refused_total{reason=\"bad_http\"}") == 1);  // the request without token
  auto [nc, nb] = http_get(g.server->port(), "/nope");
  CHECK(nc == 404);
}

TEST_CASE("gateway: gateway.json names the pid and port while running and is removed on stop") {
  auto g = std::make_unique<running_gateway>();
  const std::string path = g->dir.file("gateway.json");
  REQUIRE(sessionrt::testing::exists(path));
  auto disc = bj::parse(sessionrt::testing::read_text(path)).as_object();
  CHECK(disc.at("port") == g->server->port());
  CHECK(disc.at("pid").as_int64() == static_cast<std::int64_t>(::getpid()));
  REQUIRE(g->server->stop().ok());
  CHECK_FALSE(sessionrt::testing::exists(path));
}

TEST_CASE("gateway: without a token one is generated into <state>/gateway.token mode 0600") {
  sessionrt::testing::temp_dir dir;
  gateway_options o;
  o.runtime.settings.state_dir = dir.path();
  o.runtime.threads = 2;
  o.port = 0;
  ::unsetenv("SESSIONRT_GATEWAY_TOKEN");
  auto s = gateway_server::start(o);
  REQUIRE(s.ok());
  const std::string file = dir.file("gateway.token");
  REQUIRE(sessionrt::testing::exists(file));
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK((*s)->token().size() == 48);
  CHECK(sessionrt::testing::read_text(file) == (*s)->token() + "\n");
  REQUIRE((*s)->stop().ok());
}
