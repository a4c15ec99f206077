// The gateway's methods through a real socket: chat.send streaming to its sender and a watcher
// (not to others), history, idempotency, bad keys, the sessions.* methods, events.subscribe, a
// client killed mid-request, a slow consumer closed 1008, remote runners with failover; a host's
// own turn on a session beside a gateway run.
#include <atomic>
#include <condition_variable>
#include <mutex>
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

std::string text_of(const bj::value& message) {
  std::string out;
  for (const auto& part : message.at("content").as_array())
    if (part.at("type") == "text") out += std::string(part.at("text").as_string());
  return out;
}

// The chat event frames of one run up to its closing one, with their frame seq.
result<std::vector<gateway_event>> run_frames(gateway_client& c, const std::string& run_id) {
  std::vector<gateway_event> out;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto e = wait_event(c, [&](const gateway_event& ev) {
      return ev.event == "chat" && ev.payload.at("runId") == run_id.c_str();
    }, left);
    if (!e.ok()) return e.error();
    out.push_back(*e);
    if (e->payload.at("state") != "delta") return out;
  }
}

// How many chat events the client read and queued so far (they are consumed).
std::size_t queued_chat_events(gateway_client& c) {
  std::size_t n = 0;
  for (auto e = c.next_event(0ms); e.ok(); e = c.next_event(0ms)) n += e->event == "chat" ? 1 : 0;
  return n;
}

bj::object send(gateway_client& c, const std::string& key, const std::string& message, const std::string& idem) {
  auto r = c.request("chat.send", bj::object{{"sessionKey", key}, {"message", message}, {"idempotencyKey", idem}}, 10s);
  if (!r.ok()) FAIL("chat.send: " << r.error().message());
  return r->as_object();
}

}  // namespace

TEST_CASE("gateway: chat.send streams cumulative deltas then final to its sender and a watcher not to others") {
  running_gateway g;
  auto a = g.client();
  auto b = g.client();
  auto outsider = g.client();
  // b watches the session as OpenClaw's TUI does when it opens one; the outsider never names it.
  REQUIRE(b->request("chat.history", bj::object{{"sessionKey", "main"}}, 10s).ok());
  auto ack = send(*a, "agent:main:main", "hello there, how are you today?", "idem-1");
  CHECK(ack.at("runId") == "idem-1");
  CHECK(ack.at("status") == "started");
  for (auto* c : {a.get(), b.get()}) {
    auto frames = run_frames(*c, "idem-1");
    REQUIRE(frames.ok());
    const auto& fin = frames->back();
    REQUIRE(fin.payload.at("state") == "final");
    const std::string reply = text_of(fin.payload.at("message"));
    CHECK_FALSE(reply.empty());
    std::string joined;
    std::int64_t last_seq = 0;
    std::size_t deltas = 0;
    for (const auto& f : *frames) {
      const auto& e = f.payload.as_object();
      CHECK(e.at("sessionKey") == "agent:main:main");
      CHECK(e.at("seq").as_int64() > last_seq);
      last_seq = e.at("seq").as_int64();
      if (e.at("state") != "delta") continue;
      ++deltas;
      CHECK(*f.seq < *fin.seq);  // the frame order on the connection
      joined += std::string(e.at("deltaText").as_string());
      CHECK(text_of(e.at("message")) == joined);  // cumulative
    }
    CHECK(deltas >= 2);
    CHECK(joined == reply);
    // Nothing of the run after its final, up to the answer of a later request.
    REQUIRE(c->request("health", bj::object{}, 10s).ok());
    CHECK(queued_chat_events(*c) == 0);
  }
  // The outsider answers a request sent after the final reached the watchers, with no chat
  // event before that answer.
  REQUIRE(outsider->request("health", bj::object{}, 10s).ok());
  CHECK(queued_chat_events(*outsider) == 0);
  auto h = a->request("chat.history", bj::object{{"sessionKey", "agent:main:main"}, {"limit", 20}}, 10s);
  REQUIRE(h.ok());
  const auto& msgs = h->at("messages").as_array();
  REQUIRE(msgs.size() == 2);
  CHECK(msgs[0].at("role") == "user");
  CHECK(msgs[1].at("role") == "assistant");
  CHECK(h->at("sessionInfo").at("key") == "agent:main:main");
}

TEST_CASE("gateway: the final waits for the deltas that trail the turn's ack on the event bus") {
  running_gateway g;
  auto a = g.client();
  struct bus_hold {
    int port = 0;
    std::atomic<bool> held{false}, acked{false};
  };
  auto hold = std::make_shared<bus_hold>();  // shared: the callback may outlive a failed check
  hold->port = g.server->port();
  // The bus is held at the run's first delta until the turn was acknowledged: the ack then
  // comes before the rest of the run's deltas, as it may under load.
  const auto sub = g.server->rt().subscribe(event_filter{{"reply.delta"}, "", ""}, [hold](const lifecycle_event&) {
    if (hold->held.exchange(true)) return;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!hold->acked && std::chrono::steady_clock::now() < deadline) {
      auto [code, body] = http_get(hold->port, "/metrics", "tok");
      hold->acked = metric(body, "sessionrt_turn_ack_latency_ms_count") >= 1;
    }
  });
  send(*a, "main", "a reply long enough to stream in several pieces, please", "trail-1");
  auto frames = run_frames(*a, "trail-1");
  g.server->rt().unsubscribe(sub);
  REQUIRE(frames.ok());
  CHECK(hold->acked);
  const auto& fin = frames->back();
  REQUIRE(fin.payload.at("state") == "final");
  std::string joined;
  std::size_t deltas = 0;
  for (const auto& f : *frames) {
    if (f.payload.at("state") != "delta") continue;
    ++deltas;
    CHECK(*f.seq < *fin.seq);
    joined += std::string(f.payload.at("deltaText").as_string());
  }
  CHECK(deltas >= 2);
  CHECK(joined == text_of(fin.payload.at("message")));
  REQUIRE(a->request("health", bj::object{}, 10s).ok());
  CHECK(queued_chat_events(*a) == 0);
}

TEST_CASE("gateway: a host's own turn on the session is not taken for a gateway run queued behind it") {
  // The bus is held at the host's turn's first delta until chat.send was answered: the host's
  // turn then streams and ends while the gateway's run waits in the session's queue. Joined by
  // "the session's oldest run" its turn end was taken for the gateway run's, whose deltas were
  // then dropped; joined by runId the host's events name no gateway run.
  running_gateway g;
  auto a = g.client();
  struct bus_hold {
    std::mutex mu;
    std::condition_variable cv;
    bool held = false, release = false;
  };
  auto hold = std::make_shared<bus_hold>();
  const auto sub = g.server->rt().subscribe(event_filter{{"reply.delta"}, "", ""}, [hold](const lifecycle_event& e) {
    if (e.data.contains("runId")) return;
    std::unique_lock lk(hold->mu);
    if (hold->held) return;
    hold->held = true;
    hold->cv.notify_all();
    hold->cv.wait_for(lk, 10s, [&] { return hold->release; });
  });
  chat_event host;
  host.channel = "webchat";
  host.session_key = "agent:main:main";
  host.agent_id = "main";
  host.text = "the host's own message, long enough to stream in several pieces";
  auto host_turn = g.server->rt().send(std::move(host));
  {
    std::unique_lock lk(hold->mu);
    REQUIRE(hold->cv.wait_for(lk, 10s, [&] { return hold->held; }));
  }
  auto started = send(*a, "main", "the gateway's message, long enough to stream in several pieces", "join-1");
  CHECK(started.at("status") == "started");
  {
    std::lock_guard lk(hold->mu);
    hold->release = true;
    hold->cv.notify_all();
  }
  auto frames = run_frames(*a, "join-1");
  g.server->rt().unsubscribe(sub);
  REQUIRE(host_turn.get().st.ok());
  REQUIRE(frames.ok());
  const auto& fin = frames->back();
  REQUIRE(fin.payload.at("state") == "final");
  std::string joined;
  for (const auto& f : *frames)
    if (f.payload.at("state") == "delta") joined += std::string(f.payload.at("deltaText").as_string());
  CHECK(frames->size() >= 3);  // deltas, then the final
  CHECK(joined == text_of(fin.payload.at("message")));
  auto [code, body] = http_get(g.server->port(), "/metrics", "tok");
  REQUIRE(code == 200);
  CHECK(metric(body, "sessionrt_gateway_chat_holds_expired_total") == 0);
}

TEST_CASE("gateway: an idempotencyKey seen twice gets the first run's id and no second turn") {
  running_gateway g;
  auto c = g.client();
  send(*c, "main", "once only", "dup-1");
  auto second = send(*c, "main", "once only", "dup-1");
  CHECK(second.at("runId") == "dup-1");
  CHECK(second.at("status") != "started");
  REQUIRE(run_events(*c, "dup-1").ok());
  auto h = c->request("chat.history", bj::object{{"sessionKey", "main"}}, 10s);
  REQUIRE(h.ok());
  CHECK(h->at("sessionKey") == "agent:main:main");
  CHECK(h->at("messages").as_array().size() == 2);
  auto [code, body] = http_get(g.server->port(), "/metrics", "tok");
  CHECK(metric(body, "sessionrt_gateway_refused_total{reason=\"duplicate_idempotency_key\"}") == 1);
  CHECK(metric(body, "sessionrt_turns_completed_total") == 1);
}

TEST_CASE("gateway: chat.send to a key the routing rules refuse is INVALID_REQUEST, nothing is stored") {
  running_gateway g;
  auto c = g.client();
  for (const std::string& key : std::vector<std::string>{"../../etc/passwd", "agent:ghost:main", std::string(600, 'k')}) {
    auto r = c->request("chat.send", bj::object{{"sessionKey", key}, {"message", "x"}, {"idempotencyKey", "i-" + key.substr(0, 8)}}, 10s);
    REQUIRE_FALSE(r.ok());
    CHECK(c->last_error()->code == "INVALID_REQUEST");
  }
  auto bad = c->request("chat.send", bj::object{{"sessionKey", "main"}, {"message", 5}, {"idempotencyKey", "i"}}, 10s);
  REQUIRE_FALSE(bad.ok());
  CHECK(c->last_error()->message == "invalid chat.send params: at /message: must be string");
  auto list = c->request("sessions.list", bj::object{}, 10s);
  REQUIRE(list.ok());
  CHECK(list->at("count") == 0);
  auto [code, body] = http_get(g.server->port(), "/metrics", "tok");
  CHECK(metric(body, "sessionrt_gateway_refused_total{reason=\"bad_session_key\"}") == 3);
}

TEST_CASE("gateway: sessions.patch list describe compact reset and delete with sessions.changed events") {
  running_gateway g;
  auto c = g.client();
  REQUIRE(c->request("sessions.subscribe", bj::object{}, 5s).ok());
  send(*c, "agent:main:main", "first message with some words in it", "s-1");
  REQUIRE(run_events(*c, "s-1").ok());
  send(*c, "agent:main:main", "second message with some more words", "s-2");
  REQUIRE(run_events(*c, "s-2").ok());

  auto p = c->request("sessions.patch", bj::object{{"key", "agent:main:main"}, {"label", "My main"}, {"queueMode", "collect"}}, 10s);
  REQUIRE(p.ok());
  CHECK(p->at("ok") == true);
  CHECK(p->at("entry").at("label") == "My main");
  CHECK(p->at("entry").at("queueMode") == "collect");
  auto changed = wait_event(*c, [](const gateway_event& e) {
    return e.event == "sessions.changed" && e.payload.at("reason") == "patch";
  });
  REQUIRE(changed.ok());
  CHECK(changed->payload.at("session").at("label") == "My main");
  auto bad = c->request("sessions.patch", bj::object{{"nokey", 1}}, 5s);
  REQUIRE_FALSE(bad.ok());
  CHECK(c->last_error()->message ==
        "invalid sessions.patch params: must have required property 'key'; at root: unexpected property 'nokey'");
  auto badq = c->request("sessions.patch", bj::object{{"key", "agent:main:main"}, {"queueMode", "sideways"}}, 5s);
  REQUIRE_FALSE(badq.ok());
  CHECK(c->last_error()->message.find("sideways") != std::string::npos);
  auto cleared = c->request("sessions.patch", bj::object{{"key", "agent:main:main"}, {"label", nullptr}}, 10s);
  REQUIRE(cleared.ok());
  CHECK_FALSE(cleared->at("entry").as_object().contains("label"));
  auto created = c->request("sessions.patch", bj::object{{"key", "agent:main:newone"}, {"label", "Brand new"}}, 10s);
  REQUIRE(created.ok());
  CHECK(created->at("entry").at("sessionId").as_string().size() == 36);

  auto list = c->request("sessions.list", bj::object{{"limit", 5}}, 10s);
  REQUIRE(list.ok());
  CHECK(list->at("count") == 2);
  CHECK(list->at("hasMore") == false);
  auto one = c->request("sessions.list", bj::object{{"limit", 1}}, 10s);
  REQUIRE(one.ok());
  CHECK(one->at("count") == 1);
  CHECK(one->at("hasMore") == true);
  CHECK(one->at("nextOffset") == 1);
  auto d = c->request("sessions.describe", bj::object{{"key", "agent:main:main"}}, 10s);
  REQUIRE(d.ok());
  const std::string old_id(d->at("session").at("sessionId").as_string());
  CHECK(d->at("session").at("hasActiveRun") == false);
  CHECK(d->at("session").at("effectiveQueueMode") == "collect");

  auto comp = c->request("sessions.compact", bj::object{{"key", "agent:main:main"}}, 30s);
  REQUIRE(comp.ok());
  CHECK(comp->at("ok") == true);
  CHECK(comp->at("key") == "agent:main:main");
  CHECK(comp->at("compacted").is_bool());

  auto reset = c->request("sessions.reset", bj::object{{"key", "agent:main:main"}, {"reason", "reset"}}, 30s);
  REQUIRE(reset.ok());
  CHECK(reset->at("entry").at("sessionId") != old_id.c_str());
  auto hist = c->request("chat.history", bj::object{{"sessionKey", "agent:main:main"}}, 10s);
  REQUIRE(hist.ok());
  CHECK(hist->at("messages").as_array().empty());

  auto del = c->request("sessions.delete", bj::object{{"key", "agent:main:newone"}}, 10s);
  REQUIRE(del.ok());
  CHECK(del->at("deleted") == true);
  auto del_main = c->request("sessions.delete", bj::object{{"key", "agent:main:main"}}, 10s);
  REQUIRE(del_main.ok());
  REQUIRE(del_main->at("archived").as_array().size() == 1);
  const std::string archived(del_main->at("archived").as_array()[0].as_string());
  CHECK(archived.find(".jsonl.deleted.") != std::string::npos);
  CHECK(sessionrt::testing::exists(archived));
  auto after = c->request("sessions.list", bj::object{}, 10s);
  REQUIRE(after.ok());
  CHECK(after->at("count") == 0);
}

TEST_CASE("gateway: sessionrt.events.subscribe streams lifecycle events with the embedding API's filter") {
  running_gateway g;
  auto c = g.client();
  auto sub = c->request("sessionrt.events.subscribe", bj::object{{"types", bj::array{"turn.completed"}}}, 5s);
  REQUIRE(sub.ok());
  send(*c, "main", "hello events", "ev-1");
  auto e = wait_event(*c, [](const gateway_event& ev) { return ev.event == "sessionrt.event"; });
  REQUIRE(e.ok());
  CHECK(e->payload.at("type") == "turn.completed");
  CHECK(e->payload.at("sessionKey") == "agent:main:main");
}

TEST_CASE("gateway: a client killed mid-request loses nothing and the others keep being served") {
  running_gateway g;
  {
    auto doomed = g.client();
    REQUIRE(doomed->send_request("chat.send", bj::object{{"sessionKey", "main"}, {"message", "mid-flight"},
                                                         {"idempotencyKey", "kill-1"}}).ok());
    REQUIRE(doomed->send_request("sessions.list", bj::object{}).ok());
    doomed->socket().abort();
  }
  auto c = g.client();
  // The run goes on. The other client watches the session from its chat.history on: the run
  // either shows there already or its final event reaches it.
  auto hist = c->request("chat.history", bj::object{{"sessionKey", "main"}}, 10s);
  REQUIRE(hist.ok());
  if (hist->at("messages").as_array().size() < 2) {
    REQUIRE(wait_event(*c, [](const gateway_event& e) {
      return e.event == "chat" && e.payload.at("runId") == "kill-1" && e.payload.at("state") == "final";
    }, 20s).ok());
    hist = c->request("chat.history", bj::object{{"sessionKey", "main"}}, 10s);
    REQUIRE(hist.ok());
  }
  CHECK(hist->at("messages").as_array().size() == 2);
}

TEST_CASE("gateway: a watcher that stops reading is closed 1008 slow consumer and the others are still served") {
  running_gateway g([](gateway_options& o) { o.max_buffered_bytes = 64 * 1024; });
  auto fast = g.client();
  auto slow = g.client();
  REQUIRE(slow->request("chat.history", bj::object{{"sessionKey", "main"}}, 10s).ok());
  // From here on the slow one reads nothing while the fast one's turns stream to both.
  auto closes = [&] {
    auto [code, body] = http_get(g.server->port(), "/metrics", "tok");
    return metric(body, "sessionrt_gateway_refused_total{reason=\"slow_consumer\"}");
  };
  bool closed = false;
  for (int i = 0; i < 1000 && !closed; ++i) {
    const std::string id = "slow-" + std::to_string(i);
    send(*fast, "main", "turn " + std::to_string(i) + " of a watcher that does not read", id);
    REQUIRE(run_events(*fast, id).ok());
    if (i % 5 == 4) closed = closes() >= 1;
  }
  REQUIRE(closed);
  // Resuming, it reads what was queued before the close frame, then the close frame.
  std::size_t frames = 0;
  while (slow->socket().receive_text(10s).ok()) ++frames;
  CHECK(frames > 0);
  REQUIRE(slow->socket().close_code());
  CHECK(*slow->socket().close_code() == 1008);
  CHECK(slow->socket().close_reason() == "slow consumer");
  CHECK(closes() == 1);
  CHECK(fast->request("health", bj::object{}, 10s).ok());
  send(*fast, "main", "still served", "after-slow");
  CHECK(run_events(*fast, "after-slow").ok());
}

TEST_CASE("gateway: an attached runner answers the turn, when it disconnects the call fails over to another") {
  running_gateway g;
  auto r1 = g.client({"operator.write"});
  auto r2 = g.client({"operator.write"});
  REQUIRE(r1->request("sessionrt.runner.attach", bj::object{}, 5s).ok());
  REQUIRE(r2->request("sessionrt.runner.attach", bj::object{}, 5s).ok());
  auto c = g.client();
  send(*c, "main", "who answers?", "run-1");
  auto is_request = [](const gateway_event& e) { return e.event == "sessionrt.turn.request"; };
  auto first = wait_event(*r1, is_request, 10s);
  REQUIRE(first.ok());
  CHECK(first->payload.at("sessionKey") == "agent:main:main");
  CHECK_FALSE(first->payload.at("messages").as_array().empty());
  r1->socket().abort();  // dies without answering
  auto moved = wait_event(*r2, is_request, 10s);
  REQUIRE(moved.ok());
  const std::string call_id(moved->payload.at("callId").as_string());
  REQUIRE(r2->request("sessionrt.turn.result", bj::object{{"callId", call_id}, {"delta", "Remote "}}, 5s).ok());
  bj::object message{{"role", "assistant"},
                     {"content", bj::array{bj::object{{"type", "text"}, {"text", "Remote hi"}}}},
                     {"stopReason", "stop"},
                     {"usage", bj::object{{"input", 3}, {"output", 2}, {"totalTokens", 5}}}};
  REQUIRE(r2->request("sessionrt.turn.result", bj::object{{"callId", call_id}, {"message", message}}, 5s).ok());
  auto events = run_events(*c, "run-1");
  REQUIRE(events.ok());
  REQUIRE(events->back().at("state") == "final");
  CHECK(text_of(events->back().at("message")) == "Remote hi");
  auto [code, body] = http_get(g.server->port(), "/metrics", "tok");
  CHECK(metric(body, "sessionrt_runner_failovers_total") == 1);
}

TEST_CASE("gateway: a runner that disconnects with no other runner left fails the turn with a clear error") {
  running_gateway g;
  auto r = g.client({"operator.write"});
  REQUIRE(r->request("sessionrt.runner.attach", bj::object{}, 5s).ok());
  auto c = g.client();
  send(*c, "main", "anyone?", "lone-1");
  REQUIRE(wait_event(*r, [](const gateway_event& e) { return e.event == "sessionrt.turn.request"; }, 10s).ok());
  r->socket().abort();
  auto events = run_events(*c, "lone-1");
  REQUIRE(events.ok());
  CHECK(events->back().at("state") == "error");
  CHECK(std::string(events->back().at("errorMessage").as_string()).find("runner disconnected") != std::string::npos);
}

TEST_CASE("gateway: stopping with runs in flight loses no acknowledged turn, the next start continues every session") {
  sessionrt::testing::temp_dir dir;
  auto start = [&] {
    gateway_options o;
    o.runtime.settings.state_dir = dir.path();
    o.runtime.threads = 2;
    o.port = 0;
    o.token = "tok";
    auto s = gateway_server::start(std::move(o));
    if (!s.ok()) FAIL("start: " << s.error().message());
    return std::move(*s);
  };
  auto server = start();
  gateway_client_options co;
  co.port = static_cast<std::uint16_t>(server->port());
  co.identity.token = "tok";
  co.identity.scopes = {"operator.admin"};
  auto c = gateway_client::connect(co);
  REQUIRE(c.ok());
  for (int i = 0; i < 4; ++i) {
    const std::string key = "agent:main:s" + std::to_string(i);
    send(**c, key, "acknowledged turn " + std::to_string(i), "ack-" + std::to_string(i));
    auto events = run_events(**c, "ack-" + std::to_string(i));
    REQUIRE(events.ok());
    REQUIRE(events->back().at("state") == "final");
  }
  for (int i = 0; i < 4; ++i)
    REQUIRE((*c)->send_request("chat.send", bj::object{{"sessionKey", "agent:main:s" + std::to_string(i)},
                                                      {"message", "in flight"},
                                                      {"idempotencyKey", "fly-" + std::to_string(i)}}).ok());
  REQUIRE(server->stop().ok());
  c->reset();
  server = start();
  co.port = static_cast<std::uint16_t>(server->port());
  auto again = gateway_client::connect(co);
  REQUIRE(again.ok());
  for (int i = 0; i < 4; ++i) {
    const std::string key = "agent:main:s" + std::to_string(i);
    auto h = (*again)->request("chat.history", bj::object{{"sessionKey", key}}, 10s);
    REQUIRE(h.ok());
    const auto& msgs = h->at("messages").as_array();
    REQUIRE(msgs.size() >= 2);
    CHECK(msgs[0].at("role") == "user");
    CHECK(msgs[1].at("role") == "assistant");
    send(**again, key, "after the restart", "next-" + std::to_string(i));
    auto events = run_events(**again, "next-" + std::to_string(i));
    REQUIRE(events.ok());
    CHECK(events->back().at("state") == "final");
  }
  REQUIRE(server->stop().ok());
}
