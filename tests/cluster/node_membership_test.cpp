// node_membership against a real etcd. The node's clock (its permit's and its keepalive
// timer's) is a manual_clock: keepalives go out only when the test moves it, so "a node that
// stops renewing" is a node whose clock the test does not move, while etcd's own clock runs.
#include "cluster/node_membership.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cluster/blocking_etcd.hpp"
#include "tests/cluster/etcd_process.hpp"

namespace sessionrt::cluster {
namespace {

using namespace std::chrono_literals;

// Counts callbacks; the test waits on it instead of sleeping.
struct event_count {
  std::mutex mu;
  std::condition_variable cv;
  int n = 0;
  status last;
  void operator()(const status& st) {
    std::lock_guard g(mu);
    ++n;
    last = st;
    cv.notify_all();
  }
  bool wait_for(int want, std::chrono::milliseconds limit = 10s) {
    std::unique_lock g(mu);
    return cv.wait_for(g, limit, [&] { return n >= want; });
  }
};

struct node_fixture {
  std::unique_ptr<providers::http_loop> loop = providers::http_loop::start().value();
  std::optional<etcd_client> etcd;
  explicit node_fixture(const std::string& endpoint) { etcd.emplace(etcd_client::make(*loop, {endpoint, 5000}).value()); }
};

status join(node_membership& m) {
  return await_call<status>([&](etcd_client::done_status cb) { m.join(std::move(cb)); });
}
status renew(node_membership& m) {
  return await_call<status>([&](etcd_client::done_status cb) { m.renew(std::move(cb)); });
}
status leave(node_membership& m) {
  return await_call<status>([&](etcd_client::done_status cb) { m.leave(std::move(cb)); });
}

membership_options options(std::string id, std::int64_t ttl_s) {
  membership_options o;
  o.cluster = "test";
  o.node_id = std::move(id);
  o.address = "127.0.0.1:7001";
  o.build = "0.1.0-test";
  o.ttl_s = ttl_s;
  return o;
}

}  // namespace

TEST_CASE("membership: a node joins under a lease, renews every TTL/3 and leaves", "[cluster][membership]") {
  SESSIONRT_TEST_ETCD(server);
  auto admin = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(admin.ok());
  event_count renewals;  // before the loop: a completion during its shutdown may still count
  node_fixture f(server->endpoint());
  manual_clock mono(0);
  auto o = options("n1", 10);
  o.on_renewal = std::ref(renewals);
  node_membership node(*f.etcd, o, mono, mono);

  REQUIRE(join(node).ok());
  CHECK(node.phase() == membership_phase::joined);
  CHECK(node.ttl_ms() == 10000);
  CHECK(node.keepalive_interval_ms() == 3333);
  CHECK(node.permit().may_write());
  CHECK(node.permit().valid_until_ms() == 5000);
  auto key = admin->range("/sessionrt/test/nodes/n1");
  REQUIRE(key.ok());
  REQUIRE(key->kvs.size() == 1);
  CHECK(key->kvs[0].value == R"({"address":"127.0.0.1:7001","build":"0.1.0-test"})");
  CHECK(key->kvs[0].lease == node.lease());

  mono.set(3332);
  CHECK(renewals.n == 0);
  mono.set(3333);  // the keepalive alarm fires
  REQUIRE(renewals.wait_for(1));
  CHECK(renewals.last.ok());
  CHECK(node.renewals() == 1);
  CHECK(node.permit().last_renewal_ms() == 3333);
  CHECK(node.permit().valid_until_ms() == 8333);
  mono.set(6666);  // and the next one, scheduled by the first
  REQUIRE(renewals.wait_for(2));
  CHECK(node.permit().last_renewal_ms() == 6666);

  // A second process with the same id is refused while the first one's lease lives.
  node_membership twin(*f.etcd, options("n1", 10), mono, mono);
  auto refused = join(twin);
  CHECK(refused.code() == errc::already_exists);
  CHECK_THAT(refused.message(), Catch::Contains("node id n1 is already a member of cluster test") &&
                                    Catch::Contains(lease_hex(node.lease())));
  CHECK(twin.phase() == membership_phase::idle);

  REQUIRE(leave(node).ok());
  CHECK(node.phase() == membership_phase::left);
  CHECK(!node.permit().may_write());
  CHECK(admin->range("/sessionrt/test/nodes/n1")->kvs.empty());
  CHECK(*admin->lease_time_to_live(node.lease()) == -1);
  REQUIRE(join(twin).ok());  // the id is free again
}

TEST_CASE("membership: a node that stops renewing loses its lease, its key and its permit", "[cluster][membership]") {
  SESSIONRT_TEST_ETCD(server);
  auto admin = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(admin.ok());
  event_count lost;
  node_fixture f(server->endpoint());
  manual_clock mono(0);
  auto o = options("n1", 1);  // etcd's shortest TTL with the test server's 50 ms heartbeat
  o.on_lease_lost = std::ref(lost);
  node_membership node(*f.etcd, o, mono, mono);
  REQUIRE(join(node).ok());
  REQUIRE(node.ttl_ms() == 1000);
  REQUIRE(node.permit().may_write());

  // The node is paused: its clock does not move, nothing renews. Waiting for a real lease to
  // expire is the point of the test; it is bounded (10 s) and asks etcd's own TTL query
  // every 100 ms rather than guessing with a sleep. etcd expires a 1 s lease within ~1.5 s.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::int64_t ttl = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto t = admin->lease_time_to_live(node.lease());
    REQUIRE(t.ok());
    ttl = *t;
    if (ttl == -1) break;
    std::this_thread::sleep_for(100ms);
  }
  REQUIRE(ttl == -1);
  CHECK(admin->range("/sessionrt/test/nodes/n1")->kvs.empty());  // the node key went with the lease

  // The node resumes: its monotonic clock shows the pause. The permit refuses at once, before
  // any answer from etcd (TTL/2 = 500 ms since the grant was sent).
  mono.set(1500);  // also fires the keepalive alarm due at 333
  auto st = node.permit().check();
  CHECK(st.code() == errc::locked);
  CHECK_THAT(st.message(), Catch::Contains("1500 ms ago") && Catch::Contains("the limit is 500 ms"));
  // Its late keepalive finds the lease gone: the node learns it is out.
  REQUIRE(lost.wait_for(1));
  CHECK(lost.last.code() == errc::not_found);
  CHECK_THAT(lost.last.message(), Catch::Contains("expired or was revoked"));
  CHECK(node.phase() == membership_phase::lost);
  CHECK(!node.permit().may_write());
  auto again = renew(node);
  CHECK(again.code() == errc::invalid_argument);  // nothing to renew: join again

  // Another process takes the id (a new lease).
  node_membership next(*f.etcd, options("n1", 1), mono, mono);
  REQUIRE(join(next).ok());
  CHECK(next.lease() != node.lease());
}

TEST_CASE("membership: joining an unreachable etcd fails naming it and leaves the node idle", "[cluster][membership]") {
  node_fixture f("http://127.0.0.1:9");  // discard port: nothing listens there
  manual_clock mono(0);
  node_membership node(*f.etcd, options("n1", 10), mono, mono);
  auto st = join(node);
  CHECK(st.code() == errc::io_error);
  CHECK_THAT(st.message(), Catch::Contains("etcd at http://127.0.0.1:9 is unreachable") &&
                               Catch::Contains("node n1 joining cluster test"));
  CHECK(node.phase() == membership_phase::idle);
  CHECK(!node.permit().may_write());
  node_membership bad(*f.etcd, options("n/1", 10), mono, mono);
  CHECK(join(bad).code() == errc::invalid_argument);
}

}  // namespace sessionrt::cluster
