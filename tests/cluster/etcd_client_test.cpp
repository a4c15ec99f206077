// etcd_client against a real etcd (tests/cluster/etcd_process.hpp starts one per test).
#include "cluster/etcd_client.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "cluster/blocking_etcd.hpp"
#include "tests/cluster/etcd_process.hpp"

namespace sessionrt::cluster {
namespace {

// A loopback port that refuses connections: bound, never listened on, kept for the test.
class refusing_port {
 public:
  refusing_port() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~refusing_port() { ::close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Answers one HTTP request with `response`, on a thread of its own: something that is not etcd.
class one_answer_server {
 public:
  explicit one_answer_server(std::string response) : response_(std::move(response)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 1);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string request;
      char buf[4096];
      // Read the head and the (small) body: up to the blank line plus what follows in the same reads.
      while (request.find("\r\n\r\n") == std::string::npos) {
        const auto n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, static_cast<std::size_t>(n));
      }
      (void)!::write(c, response_.data(), response_.size());
      ::close(c);
    });
  }
  ~one_answer_server() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string response_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("etcd client: an endpoint that is not etcd is named, not misread", "[cluster][etcd]") {
  one_answer_server server("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found");
  auto etcd = blocking_etcd::connect({server.url(), 5000});
  REQUIRE(etcd.ok());
  auto r = etcd->range("/x");
  REQUIRE(!r.ok());
  CHECK(r.error().code() == errc::corrupt);
  CHECK_THAT(r.error().message(), Catch::Contains("HTTP 404") && Catch::Contains("not JSON (not found)") &&
                                      Catch::Contains("etcd 3.4's JSON gateway"));
}

TEST_CASE("etcd client: a bad endpoint is refused, an unreachable etcd is named", "[cluster][etcd]") {
  auto bad = blocking_etcd::connect({"127.0.0.1:2379", 1000});
  REQUIRE(!bad.ok());
  CHECK(bad.error().code() == errc::invalid_argument);
  CHECK_THAT(bad.error().message(), Catch::Contains("not an http:// or https:// URL"));

  refusing_port port;
  auto etcd = blocking_etcd::connect({port.url() + "/", 2000});
  REQUIRE(etcd.ok());
  CHECK(etcd->endpoint() == port.url());  // the trailing '/' dropped
  auto r = etcd->range("/x");
  REQUIRE(!r.ok());
  CHECK(r.error().code() == errc::io_error);
  CHECK_THAT(r.error().message(), Catch::Contains("etcd at " + port.url() + " is unreachable"));
}

TEST_CASE("etcd client: put, range, prefix range and delete over the JSON gateway", "[cluster][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  const std::string binary_value("\0\xff{\"a\":1}", 9);
  auto rev1 = etcd->put("/t/a", binary_value);
  REQUIRE(rev1.ok());
  auto rev2 = etcd->put("/t/b", "2");
  REQUIRE(rev2.ok());
  CHECK(*rev2 == *rev1 + 1);
  REQUIRE(etcd->put("/u", "other").ok());

  auto one = etcd->range("/t/a");
  REQUIRE(one.ok());
  REQUIRE(one->kvs.size() == 1);
  CHECK(one->kvs[0].key == "/t/a");
  CHECK(one->kvs[0].value == binary_value);  // bytes through base64 unchanged
  CHECK(one->kvs[0].create_revision == *rev1);
  CHECK(one->kvs[0].mod_revision == *rev1);
  CHECK(one->kvs[0].version == 1);
  CHECK(one->revision == *rev2 + 1);

  auto all = etcd->range_prefix("/t/");
  REQUIRE(all.ok());
  REQUIRE(all->kvs.size() == 2);
  CHECK(all->kvs[1].key == "/t/b");

  auto none = etcd->range("/t/zz");
  REQUIRE(none.ok());
  CHECK(none->kvs.empty());

  auto deleted = etcd->erase("/t/", true);
  REQUIRE(deleted.ok());
  CHECK(*deleted == 2);
  CHECK(etcd->range_prefix("/t/")->kvs.empty());
  CHECK(etcd->range("/u")->kvs.size() == 1);
}

TEST_CASE("etcd client: a txn takes the branch its compares choose", "[cluster][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  etcd_txn create;
  create.compare = {etcd_compare::absent("/k")};
  create.success = {etcd_op::put("/k", "v1")};
  create.failure = {etcd_op::get("/k")};
  auto first = etcd->txn(create);
  REQUIRE(first.ok());
  CHECK(first->succeeded);
  auto second = etcd->txn(create);
  REQUIRE(second.ok());
  CHECK(!second->succeeded);  // not an error: the caller reads what is there
  REQUIRE(second->ranges.size() == 1);
  REQUIRE(second->ranges[0].kvs.size() == 1);
  CHECK(second->ranges[0].kvs[0].value == "v1");
  CHECK(second->ranges[0].kvs[0].mod_revision == first->revision);

  etcd_txn update;
  update.compare = {etcd_compare::modified_at("/k", first->revision)};
  update.success = {etcd_op::put("/k", "v2"), etcd_op::get("/k")};
  auto third = etcd->txn(update);
  REQUIRE(third.ok());
  CHECK(third->succeeded);
  REQUIRE(third->ranges.size() == 2);
  CHECK(third->ranges[0].kvs.empty());  // the put's slot
  CHECK(third->ranges[1].kvs.at(0).value == "v2");
  auto stale = etcd->txn(update);  // the same revision again: the key moved on
  REQUIRE(stale.ok());
  CHECK(!stale->succeeded);
}

TEST_CASE("etcd client: leases grant, renew, hold keys, and are named when gone", "[cluster][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  auto lease = etcd->lease_grant(30);
  REQUIRE(lease.ok());
  CHECK(lease->ttl_s == 30);
  auto renewed = etcd->lease_keepalive(lease->id);
  REQUIRE(renewed.ok());
  CHECK(renewed->ttl_s == 30);
  auto left = etcd->lease_time_to_live(lease->id);
  REQUIRE(left.ok());
  CHECK(*left > 0);
  CHECK(*left <= 30);
  REQUIRE(etcd->put("/held", "x", lease->id).ok());
  CHECK(etcd->range("/held")->kvs.at(0).lease == lease->id);

  REQUIRE(etcd->lease_revoke(lease->id).ok());
  CHECK(etcd->range("/held")->kvs.empty());  // the lease's keys went with it
  CHECK(*etcd->lease_time_to_live(lease->id) == -1);
  auto gone = etcd->lease_keepalive(lease->id);
  REQUIRE(!gone.ok());
  CHECK(gone.error().code() == errc::not_found);
  CHECK_THAT(gone.error().message(), Catch::Contains("lease " + lease_hex(lease->id) + " expired or was revoked"));
  auto put = etcd->put("/held", "x", lease->id);
  REQUIRE(!put.ok());
  CHECK(put.error().code() == errc::not_found);
  CHECK_THAT(put.error().message(), Catch::Contains("expired or was revoked") && Catch::Contains("/held"));
  auto again = etcd->lease_revoke(lease->id);
  CHECK(again.code() == errc::not_found);
}

}  // namespace sessionrt::cluster
