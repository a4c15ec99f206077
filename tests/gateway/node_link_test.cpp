// node_link against a scripted peer gateway (a real socket, the peer's frames written by the
// test): answers and errors relayed as the peer gave them, a chat.send's events routed to the
// connection that sent it (others' runs to nobody in particular), a call past its timeout and a
// lost connection answered UNAVAILABLE retryable, the open run closed with an `error` event,
// and a peer that cannot be reached. Every wait is on a reply or an event, bounded.
#include "gateway/node_link.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <future>
#include <mutex>

#include "tests/gateway/client_script_server.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using gateway::testing::script_server;
using gateway::testing::script_socket;
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {

const std::string kChallenge = R"({"type":"event","event":"connect.challenge","payload":{"nonce":"n-1","ts":1}})";

std::string id_of(const std::string& req) { return std::string(bj::parse(req).at("id").as_string()); }
std::string method_of(const std::string& req) { return std::string(bj::parse(req).at("method").as_string()); }

std::string res_ok(const std::string& id, bj::object payload) {
  return bj::serialize(bj::object{{"type", "res"}, {"id", id}, {"ok", true}, {"payload", std::move(payload)}});
}

std::string chat(std::int64_t frame_seq, const std::string& run, const std::string& state, std::int64_t seq) {
  bj::object p{{"runId", run}, {"sessionKey", "agent:main:x"}, {"agentId", "main"}, {"seq", seq}, {"state", state}};
  return bj::serialize(bj::object{{"type", "event"}, {"event", "chat"}, {"payload", std::move(p)}, {"seq", frame_seq}});
}

// The peer's handshake: challenge, connect, a minimal hello-ok. Returns the connect frame.
std::string handshake(script_socket& s) {
  s.send_text(kChallenge);
  auto c = s.receive_text();
  if (!c) return {};
  s.send_text(res_ok(id_of(*c), bj::object{{"type", "hello-ok"}, {"protocol", 4}}));
  return *c;
}

struct seen_events {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::uint64_t, bj::object>> events;  // origin, payload
  void add(std::uint64_t origin, bj::value p) {
    std::lock_guard lock(mu);
    events.emplace_back(origin, p.as_object());
    cv.notify_all();
  }
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 10s, [&] { return events.size() >= n; });
  }
};

link_call call_of(const std::string& method, bj::object params, std::promise<method_outcome>& done, std::uint64_t origin,
                  std::chrono::milliseconds timeout = 10s) {
  link_call c;
  c.method = method;
  c.params = std::move(params);
  c.origin = origin;
  c.session_key = "agent:main:x";
  c.timeout = timeout;
  c.reply = [&done](method_outcome out) { done.set_value(std::move(out)); };
  return c;
}

node_link_options options_for(std::uint16_t port) {
  node_link_options o;
  o.node_id = "n2";
  o.where = {"127.0.0.1", port};
  o.who = node_link_identity("tok", "n1", "test");
  return o;
}

}  // namespace

TEST_CASE("node link: answers, errors and a run's events come back to the connection that sent the call") {
  std::string connect_frame, send_frame, history_frame;
  script_server server([&](script_socket& s) {
    connect_frame = handshake(s);
    auto send = s.receive_text();
    if (!send) return;
    send_frame = *send;
    s.send_text(res_ok(id_of(*send), bj::object{{"runId", "r1"}, {"status", "started"}}));
    s.send_text(chat(1, "r1", "delta", 1));
    s.send_text(chat(2, "r9", "delta", 1));  // another client's run of the watched session
    s.send_text(chat(3, "r1", "final", 2));
    auto history = s.receive_text();
    if (!history) return;
    history_frame = *history;
    s.send_text(R"({"type":"res","id":")" + id_of(*history) +
                R"(","ok":false,"error":{"code":"UNAVAILABLE","message":"busy","retryable":true,"retryAfterMs":250}})");
    s.receive_text(2s);
  });
  seen_events events;
  {
    node_link link(options_for(server.port()), [&](std::uint64_t o, const std::string&, bj::value p) { events.add(o, std::move(p)); });
    std::promise<method_outcome> sent;
    link.submit(call_of("chat.send", {{"sessionKey", "x"}, {"message", "hi"}, {"idempotencyKey", "r1"}}, sent, 11));
    auto out = sent.get_future();
    REQUIRE(out.wait_for(10s) == std::future_status::ready);
    auto answer = out.get();
    REQUIRE(std::holds_alternative<bj::value>(answer));
    CHECK(std::get<bj::value>(answer).at("status") == "started");
    REQUIRE(events.wait_for(3));

    std::promise<method_outcome> hist;
    link.submit(call_of("chat.history", {{"sessionKey", "x"}}, hist, 12));
    auto h = hist.get_future();
    REQUIRE(h.wait_for(10s) == std::future_status::ready);
    auto refused = h.get();
    REQUIRE(std::holds_alternative<frame_error>(refused));
    auto e = std::get<frame_error>(refused).to_json();
    CHECK(e.at("code") == "UNAVAILABLE");  // the peer's own answer, as it gave it
    CHECK(e.at("message") == "busy");
    CHECK(e.at("retryAfterMs") == 250);
    CHECK(link.connects() == 1);  // one connection for both calls
  }
  server.join();
  std::lock_guard lock(events.mu);
  REQUIRE(events.events.size() == 3);
  CHECK(events.events[0].first == 11);  // the sender of r1
  CHECK(events.events[0].second.at("state") == "delta");
  CHECK(events.events[1].first == 0);   // r9: nobody in particular (the session's watchers)
  CHECK(events.events[2].first == 11);
  CHECK(events.events[2].second.at("state") == "final");
  auto connect = bj::parse(connect_frame).as_object();
  CHECK(connect.at("params").at("client").at("id") == "gateway-client");
  CHECK(connect.at("params").at("client").at("mode") == "backend");
  CHECK(connect.at("params").at("auth").at("token") == "tok");
  CHECK(method_of(send_frame) == "chat.send");
  CHECK(bj::parse(send_frame).at("params").at("idempotencyKey") == "r1");
  CHECK(method_of(history_frame) == "chat.history");
}

TEST_CASE("node link: a call past its timeout, then a lost connection, are answered UNAVAILABLE and close the open run") {
  std::promise<void> may_close;
  auto closing = may_close.get_future();
  script_server server([&](script_socket& s) {
    handshake(s);
    auto send = s.receive_text();
    if (!send) return;
    s.send_text(res_ok(id_of(*send), bj::object{{"runId", "r2"}, {"status", "started"}}));
    s.send_text(chat(1, "r2", "delta", 1));
    (void)s.receive_text();  // the history call, never answered
    (void)s.receive_text();  // the patch call, never answered
    closing.wait_for(10s);
    s.close(1001, "gateway stopping");
  });
  seen_events events;
  node_link link(options_for(server.port()), [&](std::uint64_t o, const std::string&, bj::value p) { events.add(o, std::move(p)); });
  std::promise<method_outcome> sent;
  link.submit(call_of("chat.send", {{"sessionKey", "x"}, {"message", "hi"}, {"idempotencyKey", "r2"}}, sent, 21));
  REQUIRE(sent.get_future().wait_for(10s) == std::future_status::ready);
  REQUIRE(events.wait_for(1));

  std::promise<method_outcome> hist, patch;
  link.submit(call_of("chat.history", {{"sessionKey", "x"}}, hist, 22, 200ms));
  link.submit(call_of("sessions.patch", {{"key", "x"}}, patch, 23, 60s));
  auto h = hist.get_future();
  REQUIRE(h.wait_for(10s) == std::future_status::ready);
  auto late = h.get();
  REQUIRE(std::holds_alternative<frame_error>(late));
  auto e = std::get<frame_error>(late).to_json();
  CHECK(e.at("code") == "UNAVAILABLE");
  CHECK(e.at("retryable") == true);
  CHECK(e.at("details").at("reason") == "node_timeout");
  CHECK_THAT(std::string(e.at("message").as_string()), Catch::Contains("did not answer chat.history within 200 ms"));

  may_close.set_value();
  auto p = patch.get_future();
  REQUIRE(p.wait_for(10s) == std::future_status::ready);
  auto lost = p.get();
  REQUIRE(std::holds_alternative<frame_error>(lost));
  CHECK(std::get<frame_error>(lost).to_json().at("details").at("reason") == "link_lost");
  REQUIRE(events.wait_for(2));
  server.join();
  std::lock_guard lock(events.mu);
  const auto& [origin, closing_event] = events.events[1];
  CHECK(origin == 21);
  CHECK(closing_event.at("runId") == "r2");
  CHECK(closing_event.at("state") == "error");
  CHECK(closing_event.at("seq") == 2);  // after the delta it had
  CHECK_THAT(std::string(closing_event.at("errorMessage").as_string()), Catch::Contains("lost the connection to node n2"));
}

TEST_CASE("node link: a peer that cannot be reached is answered UNAVAILABLE node_unreachable at once") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  const std::uint16_t port = ntohs(a.sin_port);
  ::close(fd);  // nothing listens there now
  node_link link(options_for(port), [](std::uint64_t, const std::string&, bj::value) {});
  std::promise<method_outcome> done;
  link.submit(call_of("chat.history", {{"sessionKey", "x"}}, done, 1));
  auto f = done.get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  auto out = f.get();
  REQUIRE(std::holds_alternative<frame_error>(out));
  auto e = std::get<frame_error>(out).to_json();
  CHECK(e.at("code") == "UNAVAILABLE");
  CHECK(e.at("details").at("reason") == "node_unreachable");
  CHECK(e.at("details").at("node") == "n2");
  CHECK_THAT(std::string(e.at("message").as_string()), Catch::Contains("127.0.0.1:" + std::to_string(port)));
  CHECK(link.connects() == 0);
}

TEST_CASE("node link: wanted subscriptions are made on the peer without a call, and its session events come back in order",
          "[forward]") {
  std::vector<std::string> methods;
  std::string messages_key;
  script_server server([&](script_socket& s) {
    handshake(s);
    // sessions.subscribe and sessions.messages.subscribe, in either order, then the events.
    for (int i = 0; i < 2; ++i) {
      auto req = s.receive_text();
      if (!req) return;
      methods.push_back(method_of(*req));
      if (methods.back() == "sessions.messages.subscribe")
        messages_key = std::string(bj::parse(*req).at("params").at("key").as_string());
      s.send_text(res_ok(id_of(*req), bj::object{{"subscribed", true}}));
    }
    s.send_text(bj::serialize(bj::object{{"type", "event"}, {"event", "sessions.changed"},
                                         {"payload", {{"sessionKey", "agent:main:x"}, {"reason", "patch"}}}, {"seq", 1}}));
    s.send_text(bj::serialize(bj::object{{"type", "event"}, {"event", "session.message"},
                                         {"payload", {{"sessionKey", "agent:main:x"}, {"messageId", "m1"}}}, {"seq", 2}}));
    s.send_text(bj::serialize(bj::object{{"type", "event"}, {"event", "tick"}, {"payload", bj::object{}}, {"seq", 3}}));
    // No longer wanted: unsubscribed on the same connection.
    if (auto req = s.receive_text()) methods.push_back(method_of(*req));
    s.receive_text(2s);
  });
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, bj::object>> got;
  {
    node_link link(options_for(server.port()), [](std::uint64_t, const std::string&, bj::value) {},
                   [&](const std::string& name, bj::value p) {
                     std::lock_guard lock(mu);
                     got.emplace_back(name, p.as_object());
                     cv.notify_all();
                   });
    link.want_sessions(true);
    link.want_messages("agent:main:x", true);
    {
      std::unique_lock lock(mu);
      REQUIRE(cv.wait_for(lock, 10s, [&] { return got.size() >= 2; }));
    }
    link.want_messages("agent:main:x", false);
    server.join();
    CHECK(link.connects() == 1);
  }
  REQUIRE(got.size() == 2);  // the tick is not a session's event
  CHECK(got[0].first == "sessions.changed");
  CHECK(got[0].second.at("reason") == "patch");
  CHECK(got[1].first == "session.message");
  CHECK(got[1].second.at("messageId") == "m1");
  REQUIRE(methods.size() == 3);
  CHECK(std::count(methods.begin(), methods.begin() + 2, "sessions.subscribe") == 1);
  CHECK(std::count(methods.begin(), methods.begin() + 2, "sessions.messages.subscribe") == 1);
  CHECK(messages_key == "agent:main:x");
  CHECK(methods[2] == "sessions.messages.unsubscribe");
}
