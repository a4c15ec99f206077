// Any node serves any client (issue #36), the calls and events beyond the first five, end to
// end: a private etcd and two `sessionrt gateway --cluster` processes (the same token, their own
// state dirs, a 2 s lease). A client on node A, for a session whose shard node B holds:
//   - sessions.create (with B's key, and without a key: drawn in A's own shards),
//     sessions.describe, chat.startup, commands.list, sessions.compact and sessions.delete are
//     answered by B through A, and sessions.list on either node lists both nodes' sessions;
//   - subscribed on A (sessions.subscribe, sessions.messages.subscribe), it gets B's
//     sessions.changed and session.message events of that session, the same ones in the same
//     order as a client subscribed on B itself;
//   - after B leaves (SIGTERM: its shards handed to A), a turn on the session, now A's, reaches
//     the same subscriber once: no message relayed from B is pushed again.
// Every wait is bounded and waits for a state (etcd's keys, a reply, an event), never a fixed
// time. Skipped (SKIPPED: etcd not found) without an etcd binary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cluster/blocking_etcd.hpp"
#include "cluster/cluster_nodes.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_id.hpp"
#include "gateway/forward_rule.hpp"
#include "gateway/gateway_client.hpp"
#include "tests/cluster/cluster_processes.hpp"
#include "tests/cluster/placement_wait.hpp"
#include "tests/cluster/etcd_process.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::cluster {
namespace {

namespace bj = boost::json;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;
const std::string k_cluster = "relay";
const std::string k_token = "cluster-shared-token";

std::unique_ptr<gateway::gateway_client> client_of(const testing::placement_view& v, const std::string& node) {
  auto c = testing::admin_client(v, node, k_token);
  INFO((c ? std::string() : c.error().message()));
  REQUIRE(c.ok());
  return std::move(*c);
}

// A call, retried while the answer is UNAVAILABLE and retryable (a node's owner view catching
// up with etcd), at most 40 times.
result<bj::value> call(gateway::gateway_client& c, const std::string& method, const bj::object& params) {
  for (int attempt = 0;; ++attempt) {
    auto r = c.request(method, params, 20s);
    const auto& e = c.last_error();
    if (r || attempt == 40 || !e || e->code != "UNAVAILABLE" || !e->retryable) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(gateway::kForwardRetryAfterMs / 4));
  }
}

// A call that must succeed; the error it got otherwise.
#define REQUIRE_CALL(expr)                                             \
  do {                                                                 \
    auto required_ = (expr);                                           \
    INFO((required_ ? std::string() : required_.error().message()));   \
    REQUIRE(required_);                                                \
  } while (false)

// chat.send, then its events to the closing one; the closing state.
std::string turn(gateway::gateway_client& c, const std::string& key, const std::string& message, const std::string& run) {
  auto r = call(c, "chat.send", {{"sessionKey", key}, {"message", message}, {"idempotencyKey", run}});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r);
  const auto until = steady::now() + 30s;
  while (steady::now() < until) {
    auto ev = c.next_event(10s);
    REQUIRE(ev);
    if (ev->event != "chat" || ev->payload.at("runId").as_string() != run) continue;
    const std::string state(ev->payload.at("state").as_string());
    if (state != "delta") return state;
  }
  return "timeout";
}

// The events of one session a subscriber got: sessions.changed reasons (with the label the row
// had), session.message ids and roles.
struct session_events {
  std::vector<std::string> changed;  // "<reason>:<label>"
  std::vector<std::string> message_ids, roles;
  std::vector<std::string> texts;
};

// Reads `c`'s events of `key` into `into` until `done` holds, bounded by 20 s.
bool collect(gateway::gateway_client& c, const std::string& key, session_events& into,
             const std::function<bool(const session_events&)>& done) {
  const auto until = steady::now() + 20s;
  while (!done(into)) {
    if (steady::now() > until) return false;
    auto ev = c.next_event(2s);
    if (!ev) continue;
    if (!ev->payload.is_object()) continue;
    const auto& p = ev->payload.as_object();
    const auto* k = p.if_contains("sessionKey");
    if (!k || !k->is_string() || k->as_string() != key) continue;
    if (ev->event == "sessions.changed") {
      std::string label;
      if (const auto* s = p.if_contains("session"); s && s->is_object())
        if (const auto* l = s->as_object().if_contains("label"); l && l->is_string()) label = std::string(l->as_string());
      into.changed.push_back(std::string(p.at("reason").as_string()) + ":" + label);
    } else if (ev->event == "session.message") {
      into.message_ids.push_back(std::string(p.at("messageId").as_string()));
      into.roles.push_back(std::string(p.at("message").at("role").as_string()));
      into.texts.push_back(bj::serialize(p.at("message").at("content")));
    }
  }
  return true;
}

bool has_changed(const session_events& e, const std::string& entry) {
  return std::find(e.changed.begin(), e.changed.end(), entry) != e.changed.end();
}

std::size_t count_role(const session_events& e, const std::string& role) {
  return static_cast<std::size_t>(std::count(e.roles.begin(), e.roles.end(), role));
}

}  // namespace

TEST_CASE("forwarding: the other session calls of a shard node B owns are answered by B through node A",
          "[cluster][forward][etcd]") {
  SESSIONRT_TEST_ETCD(etcd);
  auto client = blocking_etcd::connect({etcd->endpoint(), 2000});
  REQUIRE(client);
  // No failover here: a 6 s lease gives B 3 s of scheduling slack before its own fence refuses
  // its writes (with 2 s a renewal 2 ms past TTL/2 on the loaded CI machine failed the test).
  testing::node_processes nodes({k_cluster, k_token, 6});
  nodes.start("a", etcd->endpoint());
  nodes.start("b", etcd->endpoint());
  auto v = testing::wait_placement(*client, k_cluster, {{"a", 128}, {"b", 128}}, 60s);
  INFO(nodes.logs());
  REQUIRE(v);
  const std::string remote = testing::key_held_by(*v, "b", "calls");
  auto on_a = client_of(*v, "a");
  auto on_b = client_of(*v, "b");

  // sessions.create with B's key, through A: the row is B's.
  auto created = call(*on_a, "sessions.create", {{"key", remote}, {"label", "made-via-a"}});
  INFO((created ? std::string() : created.error().message()));
  REQUIRE(created);
  CHECK(created->at("key").as_string() == remote);
  auto on_b_row = call(*on_b, "sessions.describe", {{"key", remote}});
  REQUIRE(on_b_row);
  CHECK(on_b_row->at("session").at("label") == "made-via-a");
  // sessions.describe through A is B's row.
  auto described = call(*on_a, "sessions.describe", {{"key", remote}});
  INFO((described ? std::string() : described.error().message()));
  REQUIRE(described);
  CHECK(described->at("session").at("sessionId") == on_b_row->at("session").at("sessionId"));

  // chat.startup and commands.list through A read B's session.
  REQUIRE(turn(*on_b, remote, "startup hello", "calls-1") == "final");
  auto startup = call(*on_a, "chat.startup", {{"sessionKey", remote}});
  INFO((startup ? std::string() : startup.error().message()));
  REQUIRE(startup);
  CHECK(startup->at("messages").as_array().size() == 2);
  CHECK(startup->as_object().contains("metadata"));
  auto commands = call(*on_a, "commands.list", {{"sessionKey", remote}});
  INFO((commands ? std::string() : commands.error().message()));
  REQUIRE(commands);
  CHECK(!commands->at("commands").as_array().empty());

  // sessions.compact through A: answered by B (ok, compacted or not).
  auto compacted = call(*on_a, "sessions.compact", {{"key", remote}});
  INFO((compacted ? std::string() : compacted.error().message()));
  REQUIRE(compacted);
  CHECK(compacted->at("ok") == true);
  CHECK(compacted->at("key").as_string() == remote);

  // sessions.delete through A removes B's row.
  auto deleted = call(*on_a, "sessions.delete", {{"key", remote}});
  INFO((deleted ? std::string() : deleted.error().message()));
  REQUIRE(deleted);
  CHECK(deleted->at("deleted") == true);
  auto gone = on_b->request("sessions.describe", {{"key", remote}}, 20s);
  CHECK_FALSE(gone);

  // sessions.list on either node lists the sessions of every shard: B's row through A too.
  const std::string listed = testing::key_held_by(*v, "b", "listed");
  REQUIRE_CALL(call(*on_b, "sessions.create", {{"key", listed}, {"label", "listed-on-b"}}));
  const std::string mine = testing::key_held_by(*v, "a", "listed");
  REQUIRE_CALL(call(*on_a, "sessions.create", {{"key", mine}, {"label", "listed-on-a"}}));
  for (auto* c : {on_a.get(), on_b.get()}) {
    auto list = call(*c, "sessions.list", bj::object{});
    INFO((list ? std::string() : list.error().message()));
    REQUIRE(list);
    std::set<std::string> keys;
    for (const auto& r : list->at("sessions").as_array()) keys.insert(std::string(r.at("key").as_string()));
    CHECK(keys.count(listed) == 1);
    CHECK(keys.count(mine) == 1);
    CHECK(list->at("totalCount").as_int64() == static_cast<std::int64_t>(keys.size()));
  }

  // sessions.create without a key, through A: a dashboard key of A's own shards (no hop).
  for (int i = 0; i < 3; ++i) {
    auto fresh = call(*on_a, "sessions.create", bj::object{{"label", fmt::format("fresh-{}", i)}});
    INFO((fresh ? std::string() : fresh.error().message()));
    REQUIRE(fresh);
    const std::string key(fresh->at("key").as_string());
    CHECK(key.rfind("agent:main:dashboard:", 0) == 0);
    CHECK(v->holder.at(shard_of(key).index) == "a");
  }
}

TEST_CASE("forwarding: a subscriber on node A gets node B's events of B's session once, in order, also after the shard moves to A",
          "[cluster][forward][etcd]") {
  SESSIONRT_TEST_ETCD(etcd);
  auto client = blocking_etcd::connect({etcd->endpoint(), 2000});
  REQUIRE(client);
  testing::node_processes nodes({k_cluster, k_token});
  nodes.start("a", etcd->endpoint());
  nodes.start("b", etcd->endpoint());
  auto v = testing::wait_placement(*client, k_cluster, {{"a", 128}, {"b", 128}}, 60s);
  INFO(nodes.logs());
  REQUIRE(v);
  const std::string key = testing::key_held_by(*v, "b", "events");
  auto sub_a = client_of(*v, "a");   // the subscriber this test is about
  auto sub_b = client_of(*v, "b");   // the same subscriptions on the owner itself, to compare
  auto driver = client_of(*v, "b");  // makes B's events
  REQUIRE_CALL(call(*driver, "sessions.create", {{"key", key}}));
  for (auto* c : {sub_a.get(), sub_b.get()}) {
    REQUIRE_CALL(call(*c, "sessions.subscribe", bj::object{}));
    auto m = call(*c, "sessions.messages.subscribe", {{"key", key}});
    INFO((m ? std::string() : m.error().message()));
    REQUIRE(m);
    CHECK(m->at("subscribed") == true);
  }
  // A subscribes on B at its next sync: probe with patches until A relays one.
  session_events probe_a, probe_b;
  bool relaying = false;
  for (int i = 0; i < 40 && !relaying; ++i) {
    const std::string label = fmt::format("probe-{}", i);
    REQUIRE_CALL(call(*driver, "sessions.patch", {{"key", key}, {"label", label}}));
    relaying = collect(*sub_a, key, probe_a, [&](const session_events& e) { return has_changed(e, "patch:" + label); });
  }
  REQUIRE(relaying);
  const std::string last_probe = probe_a.changed.back();
  REQUIRE(collect(*sub_b, key, probe_b, [&](const session_events& e) { return has_changed(e, last_probe); }));

  // B's turn and a patch after it: A's subscriber gets what B's own subscriber gets.
  REQUIRE(turn(*driver, key, "relay hello", "events-1") == "final");
  REQUIRE_CALL(call(*driver, "sessions.patch", {{"key", key}, {"label", "after-turn"}}));
  session_events on_a, on_b;
  auto enough = [](const session_events& e) { return has_changed(e, "patch:after-turn") && count_role(e, "assistant") >= 1; };
  REQUIRE(collect(*sub_a, key, on_a, enough));
  REQUIRE(collect(*sub_b, key, on_b, enough));
  CHECK(on_a.changed == on_b.changed);
  CHECK(on_a.message_ids == on_b.message_ids);
  CHECK(on_a.roles == std::vector<std::string>{"user", "assistant"});
  const std::set<std::string> relayed(on_a.message_ids.begin(), on_a.message_ids.end());
  CHECK(relayed.size() == on_a.message_ids.size());

  // B leaves: its shards, this session's too, move to A. A turn there reaches A's subscriber
  // once, and what B pushed before is not pushed again.
  sub_b.reset();
  driver.reset();
  CHECK(nodes.terminate("b", 30s) == 0);
  auto after = testing::wait_placement(*client, k_cluster, {{"a", 256}}, 60s);
  REQUIRE(after);
  INFO("--- after B left:\n" << nodes.logs());
  auto driver_a = client_of(*v, "a");
  REQUIRE(turn(*driver_a, key, "moved hello", "events-2") == "final");
  session_events moved;
  REQUIRE(collect(*sub_a, key, moved, [](const session_events& e) { return count_role(e, "assistant") >= 1; }));
  std::vector<std::string> all = on_a.message_ids;
  all.insert(all.end(), moved.message_ids.begin(), moved.message_ids.end());
  const std::set<std::string> once(all.begin(), all.end());
  CHECK(once.size() == all.size());  // no message twice
  CHECK(moved.roles == std::vector<std::string>{"user", "assistant"});
  REQUIRE(moved.texts.size() == 2);
  CHECK_THAT(moved.texts[0], Catch::Contains("moved hello"));
  // A later patch on A (its own event now) comes once too.
  REQUIRE_CALL(call(*driver_a, "sessions.patch", {{"key", key}, {"label", "on-a"}}));
  session_events last;
  REQUIRE(collect(*sub_a, key, last, [](const session_events& e) { return has_changed(e, "patch:on-a"); }));
  CHECK(std::count(last.changed.begin(), last.changed.end(), "patch:on-a") == 1);
}

}  // namespace sessionrt::cluster
