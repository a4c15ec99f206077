// Any node serves any client (issue #36), end to end: a private etcd and two
// `sessionrt gateway --cluster` processes (the same token, their own state dirs, a 2 s lease).
// Once both hold their shards, a client connected to node A calls chat.send, chat.history,
// sessions.patch, chat.abort and sessions.reset for a session whose shard node B holds: each is
// answered as if A had served it (the chat.send with its streamed deltas and final), and the
// turn is in B's transcript, not A's. A session A holds runs on A. Every wait is bounded and
// waits for a state (etcd's keys, a reply, an event), never a fixed time.
// The hidden "[forward-latency]" case measures the added latency of a forwarded turn against a
// local one (SESSIONRT_FORWARD_TURNS turns each, default 200) for BENCHMARKS.md.
// Skipped (SKIPPED: etcd not found) without an etcd binary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
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
const std::string k_cluster = "fwd";
const std::string k_token = "cluster-shared-token";

std::unique_ptr<gateway::gateway_client> client_of(const testing::placement_view& v, const std::string& node) {
  auto c = testing::admin_client(v, node, k_token);
  INFO((c ? std::string() : c.error().message()));
  REQUIRE(c.ok());
  return std::move(*c);
}

// A call, retried while the answer is UNAVAILABLE and retryable (the owner directory of the node
// may not have caught up with the owner keys yet), at most 20 times.
result<bj::value> call(gateway::gateway_client& c, const std::string& method, const bj::object& params, int* retries = nullptr) {
  for (int attempt = 0;; ++attempt) {
    auto r = c.request(method, params, 20s);
    const auto& e = c.last_error();
    if (r || attempt == 20 || !e || e->code != "UNAVAILABLE" || !e->retryable) return r;
    if (retries) ++*retries;
    std::this_thread::sleep_for(std::chrono::milliseconds(gateway::kForwardRetryAfterMs / 4));  // the answer's retryAfterMs, shortened
  }
}

struct turn_seen {
  bool started = false;
  int deltas = 0;
  std::string final_text, state, error;
};

// chat.send, then the run's chat events to its closing one.
turn_seen turn(gateway::gateway_client& c, const std::string& key, const std::string& message, const std::string& run) {
  turn_seen t;
  auto r = call(c, "chat.send", {{"sessionKey", key}, {"message", message}, {"idempotencyKey", run}});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r);
  t.started = r->at("status") == "started";
  const auto until = steady::now() + 30s;
  while (steady::now() < until) {
    auto ev = c.next_event(10s);
    REQUIRE(ev);
    if (ev->event != "chat" || ev->payload.at("runId").as_string() != run) continue;
    const std::string state(ev->payload.at("state").as_string());
    if (state == "delta") {
      ++t.deltas;
      continue;
    }
    t.state = state;
    if (const auto* e = ev->payload.as_object().if_contains("errorMessage")) t.error = std::string(e->as_string());
    if (const auto* m = ev->payload.as_object().if_contains("message"))
      t.final_text = std::string(m->at("content").at(0).at("text").as_string());
    break;
  }
  return t;
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace

TEST_CASE("forwarding: a client on node A chats, reads, patches and resets a session node B owns",
          "[cluster][forward][etcd]") {
  SESSIONRT_TEST_ETCD(etcd);
  auto client = blocking_etcd::connect({etcd->endpoint(), 2000});
  REQUIRE(client);
  testing::node_processes nodes({k_cluster, k_token, 2, false});
  nodes.start("a", etcd->endpoint());
  nodes.start("b", etcd->endpoint());
  auto v = testing::wait_placement(*client, k_cluster, {{"a", 128}, {"b", 128}}, 60s);
  INFO(nodes.logs());
  REQUIRE(v);
  const std::string remote = testing::key_held_by(*v, "b", "fwd"), local = testing::key_held_by(*v, "a", "here");
  auto on_a = client_of(*v, "a");
  auto on_b = client_of(*v, "b");

  // chat.send through A: answered started, then streamed, as a local run is.
  int retries = 0;
  auto t = turn(*on_a, remote, "forwarded hello", "fwd-run-1");
  INFO(t.error);
  CHECK(t.started);
  CHECK(t.deltas > 0);
  CHECK(t.state == "final");
  CHECK_THAT(t.final_text, Catch::Contains("forwarded hello"));
  // The turn is B's: in B's transcript, not in A's.
  CHECK_THAT(testing::transcripts_under(nodes.node("b").state_dir), Catch::Contains("forwarded hello"));
  CHECK_THAT(testing::transcripts_under(nodes.node("a").state_dir), !Catch::Contains("forwarded hello"));

  // The same idempotencyKey again through A: B's dedupe answers, no second turn.
  auto again = call(*on_a, "chat.send", {{"sessionKey", remote}, {"message", "forwarded hello"}, {"idempotencyKey", "fwd-run-1"}});
  REQUIRE(again);
  CHECK(again->at("status") == "ok");

  // chat.history through A is B's history.
  auto hist_a = call(*on_a, "chat.history", {{"sessionKey", remote}}, &retries);
  auto hist_b = call(*on_b, "chat.history", {{"sessionKey", remote}});
  INFO((hist_a ? std::string() : hist_a.error().message()));
  INFO((hist_b ? std::string() : hist_b.error().message()));
  REQUIRE(hist_a);
  REQUIRE(hist_b);
  CHECK(hist_a->at("messages").as_array().size() == 2);
  CHECK(hist_a->at("sessionId") == hist_b->at("sessionId"));

  // sessions.patch through A changes B's row.
  auto patched = call(*on_a, "sessions.patch", {{"key", remote}, {"label", "via-a"}}, &retries);
  REQUIRE(patched);
  CHECK(patched->at("entry").at("label") == "via-a");
  auto described = call(*on_b, "sessions.describe", {{"key", remote}});
  REQUIRE(described);
  CHECK(described->at("session").at("label") == "via-a");

  // chat.abort through A: nothing runs on B.
  auto aborted = call(*on_a, "chat.abort", {{"sessionKey", remote}}, &retries);
  REQUIRE(aborted);
  CHECK(aborted->at("aborted") == false);

  // sessions.reset through A: B's session gets a new id.
  auto reset = call(*on_a, "sessions.reset", {{"key", remote}, {"reason", "reset"}}, &retries);
  REQUIRE(reset);
  CHECK(reset->at("entry").at("sessionId") != hist_b->at("sessionId"));
  auto after = call(*on_b, "chat.history", {{"sessionKey", remote}});
  REQUIRE(after);
  CHECK(after->at("sessionId") == reset->at("entry").at("sessionId"));

  // A session A holds runs on A.
  auto mine = turn(*on_a, local, "local hello", "local-run-1");
  INFO(mine.error);
  CHECK(mine.state == "final");
  CHECK_THAT(testing::transcripts_under(nodes.node("a").state_dir), Catch::Contains("local hello"));
  CHECK_THAT(testing::transcripts_under(nodes.node("b").state_dir), !Catch::Contains("local hello"));
  WARN("forwarding: UNAVAILABLE retries while A's owner view caught up: " << retries);
}

TEST_CASE("forwarding: added latency of a turn through another node", "[.][forward-latency][etcd]") {
  SESSIONRT_TEST_ETCD(etcd);
  auto client = blocking_etcd::connect({etcd->endpoint(), 2000});
  REQUIRE(client);
  testing::node_processes nodes({k_cluster, k_token, 2, false});
  nodes.start("a", etcd->endpoint());
  nodes.start("b", etcd->endpoint());
  auto v = testing::wait_placement(*client, k_cluster, {{"a", 128}, {"b", 128}}, 60s);
  REQUIRE(v);
  const char* env = std::getenv("SESSIONRT_FORWARD_TURNS");
  const int turns = env ? std::max(1, std::atoi(env)) : 200;
  auto on_a = client_of(*v, "a");
  std::map<std::string, std::vector<double>> ms;
  // Alternating, so both see the same machine load; one key each, a fresh run id per turn.
  (void)turn(*on_a, testing::key_held_by(*v, "b", "warm"), "warm", "warm-b");
  (void)turn(*on_a, testing::key_held_by(*v, "a", "warm"), "warm", "warm-a");
  for (int i = 0; i < turns; ++i) {
    for (const std::string where : {"local", "forwarded"}) {
      const std::string key = testing::key_held_by(*v, where == "local" ? "a" : "b", "lat");
      const auto t0 = steady::now();
      auto t = turn(*on_a, key, "turn " + std::to_string(i), fmt::format("{}-{}", where, i));
      REQUIRE(t.state == "final");
      ms[where].push_back(std::chrono::duration<double, std::milli>(steady::now() - t0).count());
    }
  }
  for (const auto& [where, v2] : ms)
    WARN(fmt::format("forward latency: {} turns {}: chat.send to final p50 {:.2f} ms, p99 {:.2f} ms", v2.size(), where,
                     pct(v2, 0.5), pct(v2, 0.99)));
  CHECK(ms["forwarded"].size() == std::size_t(turns));
}

}  // namespace sessionrt::cluster
