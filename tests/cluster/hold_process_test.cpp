// Calls held during a handoff (issue #36, docs/cluster.md "Calls held during a handoff"), end to
// end: a private etcd and two `sessionrt gateway --cluster` processes on one shared state dir (a
// 2 s lease). A client connected to node A sends chat.send for a session whose shard node B
// holds, right after B was sent SIGTERM (its graceful handoff): the call is sent ONCE, never
// retried, and must be answered "started" and then end "final" (held by A while nobody served
// the shard, delivered once A or B serves it). Every wait is bounded and waits for a state.
// Skipped (SKIPPED: etcd not found) without an etcd binary.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
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
const std::string k_cluster = "hold";
const std::string k_token = "cluster-shared-token";

}  // namespace

TEST_CASE("hold: a chat.send for a shard in handoff is answered started and final without a retry",
          "[cluster][hold][etcd]") {
  SESSIONRT_TEST_ETCD(etcd);
  auto client = blocking_etcd::connect({etcd->endpoint(), 2000});
  REQUIRE(client);
  testing::node_processes nodes({k_cluster, k_token, 2, true});
  nodes.start("a", etcd->endpoint());
  nodes.start("b", etcd->endpoint());
  auto v = testing::wait_placement(*client, k_cluster, {{"a", 0}, {"b", 0}}, 60s);
  INFO(nodes.logs());
  REQUIRE(v);
  const std::string key = testing::key_held_by(*v, "b", "hold");
  auto on_a = testing::admin_client(*v, "a", k_token);
  INFO((on_a ? std::string() : on_a.error().message()));
  REQUIRE(on_a.ok());
  auto& c = **on_a;

  // B leaves gracefully; the send goes at once, while B closes its shards and releases them.
  const pid_t b = nodes.node("b").pid;
  REQUIRE(::kill(b, SIGTERM) == 0);
  auto r = c.request("chat.send", {{"sessionKey", key}, {"message", "held hello"}, {"idempotencyKey", "hold-run-1"}}, 40s);
  const auto& e = c.last_error();
  INFO((e ? e->code + ": " + e->message : std::string("no error")));
  REQUIRE(r);
  CHECK(r->at("status") == "started");
  std::string state, error;
  const auto until = steady::now() + 30s;
  while (steady::now() < until && state.empty()) {
    auto ev = c.next_event(10s);
    REQUIRE(ev);
    if (ev->event != "chat" || ev->payload.at("runId").as_string() != "hold-run-1") continue;
    const std::string s(ev->payload.at("state").as_string());
    if (s == "delta") continue;
    state = s;
    if (const auto* m = ev->payload.as_object().if_contains("errorMessage")) error = std::string(m->as_string());
  }
  INFO(error);
  CHECK(state == "final");
  CHECK(testing::reap(b, 30s) >= 0);
  CHECK_THAT(testing::transcripts_under(nodes.cluster_dir()), Catch::Contains("held hello"));
  // Whether A held it depends on where B's close was when the send came: reported, not asserted.
  WARN("hold: the send was held by A: " << (nodes.logs().find("holding chat.send for " + key) != std::string::npos));
}

}  // namespace sessionrt::cluster
