// ws_client and gateway_client through a real socket, against a scripted server that sends
// the frames OpenClaw's real gateway sent (tests/vectors/gateway).
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "tests/gateway/client_script_server.hpp"
#include "gateway/gateway_client.hpp"
#include "gateway/ws_client.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using gateway::testing::script_server;
using gateway::testing::script_socket;
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {
std::string vector_path(const std::string& name) { return sessionrt::testing::vectors_dir() + "/gateway/" + name; }

const std::string kChallenge =
    R"({"type":"event","event":"connect.challenge","payload":{"nonce":"1c0ef51b-fa16-43f0-97bf-1553506379a4","ts":1796148529909}})";

// The real server's hello-ok answer, re-addressed to the request id `id`.
std::string real_hello_for(const std::string& id) {
  bj::object hello = bj::parse(sessionrt::testing::read_text(vector_path("real-hello-ok.json"))).as_object();
  hello["id"] = id;
  return bj::serialize(hello);
}

std::string id_of(const std::string& req) { return std::string(bj::parse(req).at("id").as_string()); }

gateway_client_options options_for(const script_server& s) {
  gateway_client_options o;
  o.port = s.port();
  o.identity.token = "secret";
  o.identity.scopes = {"operator.admin"};
  o.connect_timeout = 10s;
  return o;
}
}  // namespace

TEST_CASE("ws_client exchanges text messages and reads the close code and reason the server sent") {
  std::optional<std::string> got;
  script_server server([&](script_socket& s) {
    s.send_text("hello from the server");
    got = s.receive_text();
    s.close(4008, "bye now");
  });
  auto c = ws_client::connect("127.0.0.1", server.port(), 5s);
  REQUIRE(c.ok());
  auto first = (*c)->receive_text(5s);
  REQUIRE(first.ok());
  CHECK(*first == "hello from the server");
  REQUIRE((*c)->send_text("hello from the client").ok());
  auto after = (*c)->receive_text(5s);
  REQUIRE_FALSE(after.ok());
  CHECK(after.error().code() == errc::io_error);
  CHECK_THAT(after.error().message(), Catch::Contains("code 4008: bye now"));
  REQUIRE((*c)->close_code().has_value());
  CHECK(*(*c)->close_code() == 4008);
  CHECK((*c)->close_reason() == "bye now");
  CHECK_FALSE((*c)->is_open());
  server.join();
  CHECK(server.failure().empty());
  REQUIRE(got.has_value());
  CHECK(*got == "hello from the client");
}

TEST_CASE("ws_client's receive timeout leaves the connection usable") {
  script_server server([&](script_socket& s) {
    auto ping = s.receive_text();  // sent by the client after its first receive timed out
    if (ping) s.send_text("late " + *ping);
    s.receive_text(2s);
  });
  auto c = ws_client::connect("127.0.0.1", server.port(), 5s);
  REQUIRE(c.ok());
  auto none = (*c)->receive_text(50ms);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code() == errc::timeout);
  REQUIRE((*c)->send_text("answer").ok());
  auto late = (*c)->receive_text(5s);
  REQUIRE(late.ok());
  CHECK(*late == "late answer");
  CHECK((*c)->close(1000).ok());
  server.join();
}

TEST_CASE("ws_client fails a message over its limit and says which limit") {
  script_server server([&](script_socket& s) {
    s.send_text(std::string(2048, 'x'));
    s.receive_text(2s);
  });
  ws_connect_options o;
  o.port = server.port();
  o.max_message_bytes = 1024;
  auto c = ws_client::connect(o);
  REQUIRE(c.ok());
  auto r = (*c)->receive_text(5s);
  REQUIRE_FALSE(r.ok());
  REQUIRE_FALSE((*c)->is_open());
  server.join();
}

TEST_CASE("ws_client refuses a port nobody listens on with an error naming the address") {
  std::uint16_t port;
  {
    script_server idle([](script_socket&) {});
    port = idle.port();
    auto c = ws_client::connect("127.0.0.1", port, 5s);  // lets the idle server finish
    REQUIRE(c.ok());
  }
  auto c = ws_client::connect("127.0.0.1", port, 2s);
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.error().message(), Catch::Contains("127.0.0.1:" + std::to_string(port)));
}

TEST_CASE("gateway_client completes the handshake with the real server's frames and sends the CLI's connect") {
  std::optional<std::string> connect_req;
  script_server server([&](script_socket& s) {
    s.send_text(kChallenge);
    connect_req = s.receive_text();
    if (!connect_req) return;
    s.send_text(real_hello_for(id_of(*connect_req)));
    s.receive_text(2s);
  });
  auto c = gateway_client::connect(options_for(server));
  REQUIRE(c.ok());
  CHECK((*c)->challenge_nonce() == "1c0ef51b-fa16-43f0-97bf-1553506379a4");
  CHECK((*c)->hello().at("type") == "hello-ok");
  CHECK((*c)->hello().at("protocol").as_int64() == 4);
  (void)(*c)->close();
  server.join();
  REQUIRE(connect_req.has_value());
  bj::object req = bj::parse(*connect_req).as_object();
  CHECK(req.at("type") == "req");
  CHECK(req.at("method") == "connect");
  CHECK(req.at("params").at("auth").at("token") == "secret");
  CHECK(req.at("params").at("client").at("id") == "cli");
  CHECK(req.at("params").at("scopes").as_array().size() == 1);
}

TEST_CASE("gateway_client matches responses that come out of order and queues the events between them") {
  std::vector<std::string> methods;
  script_server server([&](script_socket& s) {
    s.send_text(kChallenge);
    auto conn = s.receive_text();
    if (!conn) return;
    s.send_text(real_hello_for(id_of(*conn)));
    auto a = s.receive_text();
    auto b = s.receive_text();
    if (!a || !b) return;
    methods = {std::string(bj::parse(*a).at("method").as_string()), std::string(bj::parse(*b).at("method").as_string())};
    // Answer the second first, with events in between.
    s.send_text(R"({"type":"event","event":"tick","payload":{"ts":1},"seq":1})");
    s.send_text(R"({"type":"res","id":")" + id_of(*b) + R"(","ok":true,"payload":{"which":"b"}})");
    s.send_text(R"({"type":"event","event":"sessions.changed","payload":{"sessionKey":"k"},"seq":2})");
    s.send_text(R"({"type":"res","id":")" + id_of(*a) +
                R"(","ok":false,"error":{"code":"INVALID_REQUEST","message":"unknown method: x.y","details":{"code":"Z"}}})");
    s.send_text(R"({"type":"event","event":"tick","payload":{"ts":2},"seq":4})");
    s.receive_text(2s);
  });
  auto c = gateway_client::connect(options_for(server));
  REQUIRE(c.ok());
  auto a = (*c)->send_request("x.y", bj::object{});
  auto b = (*c)->send_request("sessions.list", bj::object{});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a != *b);
  auto rb = (*c)->wait_response(*b, 5s);
  REQUIRE(rb.ok());
  CHECK(rb->at("which") == "b");
  auto ra = (*c)->wait_response(*a, 5s);
  REQUIRE_FALSE(ra.ok());
  CHECK(ra.error().message() == "gateway refused x.y: INVALID_REQUEST: unknown method: x.y");
  REQUIRE((*c)->last_error().has_value());
  CHECK((*c)->last_error()->details.at("code") == "Z");
  auto e1 = (*c)->next_event(5s);
  REQUIRE(e1.ok());
  CHECK(e1->event == "tick");
  auto e2 = (*c)->next_event(5s);
  REQUIRE(e2.ok());
  CHECK(e2->event == "sessions.changed");
  CHECK(e2->payload.at("sessionKey") == "k");
  auto e3 = (*c)->next_event(5s);  // seq 4 after 2: queued, and the gap reported
  REQUIRE(e3.ok());
  CHECK(e3->seq == 4);
  auto gap = (*c)->next_event(200ms);
  REQUIRE_FALSE(gap.ok());
  CHECK(gap.error().message() == "event gap: expected seq 3, got 4 (event tick)");
  (void)(*c)->close();
  server.join();
  CHECK(methods == std::vector<std::string>{"x.y", "sessions.list"});
}

TEST_CASE("gateway_client reports a refused connect with the server's message and close code") {
  script_server server([&](script_socket& s) {
    s.send_text(kChallenge);
    auto conn = s.receive_text();
    if (!conn) return;
    s.send_text(R"({"type":"res","id":")" + id_of(*conn) +
                R"(","ok":false,"error":{"code":"INVALID_REQUEST","message":"unauthorized: gateway token mismatch","details":{"code":"AUTH_TOKEN_MISMATCH"}}})");
    s.close(1008, "unauthorized");
  });
  auto opts = options_for(server);
  opts.identity.token = "wrong";
  auto c = gateway_client::connect(opts);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().message() == "gateway refused connect: INVALID_REQUEST: unauthorized: gateway token mismatch");
  server.join();
}

TEST_CASE("gateway_client gives up on a server that sends no connect.challenge, naming it") {
  script_server server([&](script_socket& s) { s.receive_text(5s); });
  auto opts = options_for(server);
  opts.connect_timeout = 300ms;
  auto c = gateway_client::connect(opts);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == errc::timeout);
  CHECK_THAT(c.error().message(), Catch::Contains("connect.challenge"));
  server.join();
}

TEST_CASE("gateway_client hands events to its handler as they are read during a request") {
  script_server server([&](script_socket& s) {
    s.send_text(kChallenge);
    auto conn = s.receive_text();
    if (!conn) return;
    s.send_text(real_hello_for(id_of(*conn)));
    auto req = s.receive_text();
    if (!req) return;
    for (int i = 1; i <= 3; ++i)
      s.send_text(R"({"type":"event","event":"chat","payload":{"state":"delta","n":)" + std::to_string(i) +
                  R"(},"seq":)" + std::to_string(i) + "}");
    s.send_text(R"({"type":"res","id":")" + id_of(*req) + R"(","ok":true,"payload":{"runId":"r1","status":"started"}})");
    s.receive_text(2s);
  });
  auto c = gateway_client::connect(options_for(server));
  REQUIRE(c.ok());
  std::vector<std::int64_t> seen;
  (*c)->on_event([&](const gateway_event& e) { seen.push_back(e.payload.at("n").as_int64()); });
  auto r = (*c)->request("chat.send", bj::object{{"sessionKey", "k"}, {"message", "hi"}}, 5s);
  REQUIRE(r.ok());
  CHECK(r->at("status") == "started");
  CHECK(seen == std::vector<std::int64_t>{1, 2, 3});
  (void)(*c)->close();
  server.join();
}
