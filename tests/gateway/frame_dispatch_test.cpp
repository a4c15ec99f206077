// frame_dispatch without sockets: a port that records what would be sent, closed and run on a
// worker, and a core with metrics and no runtime (every case below stops before a call would
// ask the runtime). Refusals are counted by their fault, never by a message's text.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <deque>
#include <map>

#include "gateway/frame_dispatch.hpp"

using namespace sessionrt::gateway;
namespace bj = boost::json;

namespace {

struct recording_port final : dispatch_port {
  std::vector<std::pair<std::uint64_t, std::string>> sent;
  struct closing {
    std::uint64_t conn;
    int code;
    std::string reason;
  };
  std::vector<closing> closed;
  std::vector<std::uint64_t> connected_ids;
  std::deque<std::function<void()>> workers;  // run_off_loop's jobs, not run until the test runs them
  std::deque<std::function<void()>> loop;     // to_loop's
  bool queue_full = false;
  std::map<std::uint64_t, dispatch_conn*> conns;

  void send(dispatch_conn& c, const std::string& text) override { sent.emplace_back(c.id, text); }
  void close(dispatch_conn& c, int code, const std::string& reason) override {
    closed.push_back({c.id, code, reason});
    c.state.mark_closed();  // as the socket's on_close_begun does
  }
  void connected(dispatch_conn& c) override { connected_ids.push_back(c.id); }
  bool run_off_loop(std::uint64_t, std::function<void()>& job) override {
    if (queue_full) return false;
    workers.push_back(std::move(job));
    return true;
  }
  void to_loop(std::function<void()> fn) override { loop.push_back(std::move(fn)); }
  dispatch_conn* find(std::uint64_t id) override {
    auto it = conns.find(id);
    return it == conns.end() ? nullptr : it->second;
  }
  bj::object last() const { return bj::parse(sent.back().second).as_object(); }
  static void run_all(std::deque<std::function<void()>>& q) {
    while (!q.empty()) {
      auto fn = std::move(q.front());
      q.pop_front();
      fn();
    }
  }
};

struct fixture {
  gateway_metrics metrics;
  gateway_core core;
  recording_port port;
  dispatch_options opt;
  std::unique_ptr<frame_dispatch> dispatch;
  dispatch_conn conn{7};

  explicit fixture(std::size_t in_flight_limit = 32) {
    core.metrics = &metrics;
    opt.token = "tok";
    opt.max_requests_in_flight = in_flight_limit;
    opt.busy_retry_after_ms = 1500;
    dispatch = std::make_unique<frame_dispatch>(opt, core, port);
    port.conns[conn.id] = &conn;
  }
  // Past connect without hello-ok (which reads the runtime's settings).
  void open(const std::string& scope = "operator.admin") {
    auto v = conn.state.check_connect(connect_params("tok", scope), "tok");
    REQUIRE(v.ok);
  }
  static bj::object connect_params(const std::string& token, const std::string& scope = "operator.admin", int min = 4,
                                   int max = 4) {
    return bj::object{{"minProtocol", min},
                      {"maxProtocol", max},
                      {"client", bj::object{{"id", "cli"}, {"version", "1"}, {"platform", "linux"}, {"mode", "cli"}}},
                      {"auth", bj::object{{"token", token}}},
                      {"scopes", bj::array{bj::string(scope)}}};
  }
  static std::string req(const std::string& id, const std::string& method, bj::value params = bj::object{}) {
    return bj::serialize(bj::object{{"type", "req"}, {"id", id}, {"method", method}, {"params", params}});
  }
};

}  // namespace

TEST_CASE("frame_dispatch: the challenge goes first with no seq, and the handshake deadline closes only before connect") {
  fixture f;
  f.dispatch->opened(f.conn);
  REQUIRE(f.port.sent.size() == 1);
  auto challenge = f.port.last();
  CHECK(challenge.at("event") == "connect.challenge");
  CHECK_FALSE(challenge.contains("seq"));
  CHECK(challenge.at("payload").as_object().contains("nonce"));

  f.open();
  f.dispatch->handshake_expired(f.conn, 10);
  CHECK(f.port.closed.empty());
  CHECK(f.metrics.refusals(refusal::handshake_timeout) == 0);

  fixture g;
  g.dispatch->handshake_expired(g.conn, 10);
  REQUIRE(g.port.closed.size() == 1);
  CHECK(g.port.closed[0].code == 1008);
  CHECK(g.port.closed[0].reason == "handshake timeout");
  CHECK(g.metrics.refusals(refusal::handshake_timeout) == 1);
}

TEST_CASE("frame_dispatch: bad frames are counted by their fault: not JSON, before connect, not a request") {
  fixture f;
  f.dispatch->on_text(f.conn, "{nope");
  CHECK(f.metrics.refusals(refusal::not_json) == 1);
  CHECK(f.port.sent.empty());  // no id to answer
  REQUIRE(f.port.closed.size() == 1);
  CHECK(f.port.closed[0].code == 1008);
  CHECK(f.port.closed[0].reason == "invalid request frame: not JSON");
  f.dispatch->on_text(f.conn, fixture::req("1", "sessions.list"));
  CHECK(f.port.closed.size() == 1);  // closed: nothing more is read
  CHECK(f.metrics.frames_in.load() == 1);

  fixture g;
  g.dispatch->on_text(g.conn, fixture::req("1", "sessions.list"));
  CHECK(g.metrics.refusals(refusal::before_connect) == 1);
  CHECK(g.metrics.refusals(refusal::bad_frame) == 0);
  REQUIRE(g.port.sent.size() == 1);
  CHECK(g.port.last().at("error").at("message") == "invalid handshake: first request must be connect");
  REQUIRE(g.port.closed.size() == 1);

  fixture h;
  h.open();
  h.dispatch->on_text(h.conn, R"({"type":"req","id":"9"})");  // no method: answered, stays open
  CHECK(h.metrics.refusals(refusal::bad_frame) == 1);
  CHECK(h.port.closed.empty());
  CHECK(h.port.last().at("id") == "9");
}

TEST_CASE("frame_dispatch: a refused connect is answered then closed, counted by its fault") {
  fixture f;
  f.dispatch->on_text(f.conn, fixture::req("c1", "connect", fixture::connect_params("wrong")));
  CHECK(f.metrics.refusals(refusal::token_mismatch) == 1);
  REQUIRE(f.port.sent.size() == 1);
  CHECK(f.port.last().at("error").at("details").at("code") == "AUTH_TOKEN_MISMATCH");
  REQUIRE(f.port.closed.size() == 1);
  CHECK(f.port.closed[0].code == 1008);
  CHECK(f.port.connected_ids.empty());

  fixture g;
  g.dispatch->on_text(g.conn, fixture::req("c1", "connect", fixture::connect_params("tok", "operator.read", 5, 6)));
  CHECK(g.metrics.refusals(refusal::protocol_mismatch) == 1);
  REQUIRE(g.port.closed.size() == 1);
  CHECK(g.port.closed[0].code == 1002);

  fixture h;
  h.dispatch->on_text(h.conn, fixture::req("c1", "connect", bj::object{{"minProtocol", 4}}));
  CHECK(h.metrics.refusals(refusal::bad_connect) == 1);
  CHECK(h.metrics.refusals(refusal::token_mismatch) == 0);
}

TEST_CASE("frame_dispatch: unknown methods, missing scopes and params that are not an object are answered and counted") {
  fixture f;
  f.open("operator.read");
  f.dispatch->on_text(f.conn, fixture::req("1", "no.such.method"));
  CHECK(f.port.last().at("error").at("message") == "unknown method: no.such.method");
  CHECK(f.metrics.refusals(refusal::unknown_method) == 1);
  f.dispatch->on_text(f.conn, fixture::req("2", "sessions.delete"));
  CHECK(f.port.last().at("error").at("code") == "FORBIDDEN");
  CHECK(f.metrics.refusals(refusal::forbidden) == 1);
  f.dispatch->on_text(f.conn, fixture::req("3", "sessions.list", bj::array{1}));
  CHECK(f.port.last().at("error").at("message") == "invalid sessions.list params: must be object");
  CHECK(f.metrics.refusals(refusal::bad_params) == 1);
  CHECK(f.metrics.requests.load() == 3);
  CHECK(f.port.workers.empty());
  CHECK(f.port.closed.empty());
}

TEST_CASE("frame_dispatch: past maxRequestsInFlight, and when the workers' queue is full, UNAVAILABLE at once") {
  fixture f(2);
  f.open();
  for (int i = 0; i < 3; ++i) f.dispatch->on_text(f.conn, fixture::req(std::to_string(i), "sessions.list"));
  CHECK(f.port.workers.size() == 2);
  CHECK(f.conn.in_flight == 2);
  auto busy = f.port.last();
  CHECK(busy.at("id") == "2");
  CHECK(busy.at("error").at("code") == "UNAVAILABLE");
  CHECK(busy.at("error").at("retryable") == true);
  CHECK(busy.at("error").at("retryAfterMs") == 1500);
  CHECK(f.metrics.refusals(refusal::busy_connection) == 1);

  fixture g;
  g.open();
  g.port.queue_full = true;
  g.dispatch->on_text(g.conn, fixture::req("q", "sessions.list"));
  CHECK(g.port.last().at("error").at("code") == "UNAVAILABLE");
  CHECK(g.metrics.refusals(refusal::busy_queue) == 1);
  CHECK(g.conn.in_flight == 0);
}

TEST_CASE("frame_dispatch: a worker answer comes back on the loop and a params error counts by its fault") {
  fixture f;
  f.open();
  // The handler refuses the params before it would ask the runtime.
  f.dispatch->on_text(f.conn, fixture::req("w", "sessions.list", bj::object{{"limit", "ten"}}));
  REQUIRE(f.port.workers.size() == 1);
  CHECK(f.port.sent.empty());
  recording_port::run_all(f.port.workers);
  CHECK(f.port.sent.empty());  // not on the worker's thread
  recording_port::run_all(f.port.loop);
  REQUIRE(f.port.sent.size() == 1);
  auto res = f.port.last();
  CHECK(res.at("id") == "w");
  CHECK(res.at("error").at("message") == "invalid sessions.list params: at /limit: must be integer");
  CHECK(f.metrics.refusals(refusal::bad_params) == 1);
  CHECK(f.conn.in_flight == 0);
}

TEST_CASE("frame_dispatch: an answer for a connection gone meanwhile is counted, not sent") {
  fixture f;
  f.open();
  f.dispatch->on_text(f.conn, fixture::req("w", "sessions.list", bj::object{{"limit", "ten"}}));
  recording_port::run_all(f.port.workers);
  f.dispatch->closed(f.conn);
  f.port.conns.clear();
  recording_port::run_all(f.port.loop);
  CHECK(f.port.sent.empty());
  CHECK(f.metrics.refusals(refusal::disconnect_mid_request) == 1);
  CHECK(f.metrics.refusals(refusal::bad_params) == 0);
}

TEST_CASE("frame_dispatch: frames are written as the protocol has them") {
  CHECK(response_ok("1", bj::object{{"a", 1}}) == R"({"type":"res","id":"1","ok":true,"payload":{"a":1}})");
  frame_error e;
  e.message = "nope";
  e.why = fault::bad_params;  // not on the wire
  CHECK(response_error("2", e) == R"({"type":"res","id":"2","ok":false,"error":{"code":"INVALID_REQUEST","message":"nope"}})");
  CHECK(event_frame("tick", R"({"ts":5})", 3) == R"({"type":"event","event":"tick","payload":{"ts":5},"seq":3})");
}
