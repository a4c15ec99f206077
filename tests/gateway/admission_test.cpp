#include "gateway/admission.hpp"

#include <catch2/catch.hpp>

using namespace sessionrt::gateway;

namespace {

// Descriptors as a test sets them: `open` is what a count of /proc/self/fd would find.
struct fake_fds {
  std::size_t limit = 1000, open = 10, counts = 0;
  fd_probe probe() {
    return {[this] { return limit; }, [this] {
              ++counts;
              return open;
            }};
  }
};

}  // namespace

TEST_CASE("admission: past max_unauthenticated a socket is refused, connect frees a place", "[admission]") {
  fake_fds fds;
  connection_admission a({100, 2, 8}, fds.probe());
  CHECK(a.accepted(0) == connection_admission::verdict::admit);
  CHECK(a.accepted(0) == connection_admission::verdict::admit);
  CHECK(a.accepted(0) == connection_admission::verdict::too_many_unauthenticated);
  CHECK(a.unauthenticated() == 2);
  CHECK(a.upgraded());
  a.authenticated();
  CHECK(a.unauthenticated() == 1);
  CHECK(a.accepted(0) == connection_admission::verdict::admit);
  a.closed(true, true);  // the authenticated one
  CHECK(a.unauthenticated() == 2);
  CHECK(a.websockets() == 0);
  a.closed(false, false);
  CHECK(a.unauthenticated() == 1);
}

TEST_CASE("admission: past max_connections an upgrade is refused and the socket stays unauthenticated", "[admission]") {
  fake_fds fds;
  connection_admission a({1, 10, 8}, fds.probe());
  REQUIRE(a.accepted(0) == connection_admission::verdict::admit);
  REQUIRE(a.accepted(0) == connection_admission::verdict::admit);
  CHECK(a.upgraded());
  CHECK_FALSE(a.upgraded());
  CHECK(a.websockets() == 1);
  CHECK(a.unauthenticated() == 2);
  a.closed(false, false);
  a.closed(true, false);
  CHECK(a.websockets() == 0);
  CHECK(a.unauthenticated() == 0);
}

TEST_CASE("admission: a socket within fd_reserve of the limit is refused, counted exactly near the limit", "[admission]") {
  fake_fds fds;
  fds.limit = 100;
  connection_admission a({1000, 1000, 10}, fds.probe());
  // Far from the limit one count a second suffices; the estimate follows accepts and closes.
  fds.open = 11;
  CHECK(a.accepted(0) == connection_admission::verdict::admit);
  CHECK(fds.counts == 1);
  CHECK(a.accepted(10) == connection_admission::verdict::admit);
  CHECK(fds.counts == 1);
  CHECK(a.open_fds_estimate() == 12);
  a.closed(false, false);
  CHECK(a.open_fds_estimate() == 11);
  // Others opened descriptors meanwhile: within twice the reserve every accept counts.
  fds.open = 85;
  CHECK(a.accepted(2000) == connection_admission::verdict::admit);  // a second later: counted
  CHECK(fds.counts == 2);
  fds.open = 90;  // with the new socket 90 open: 10 free, the reserve
  CHECK(a.accepted(2001) == connection_admission::verdict::admit);
  CHECK(fds.counts == 3);
  fds.open = 91;
  CHECK(a.accepted(2002) == connection_admission::verdict::fd_reserve);
  CHECK(fds.counts == 4);
  // A refused socket costs no place: the unauthenticated count is unchanged.
  CHECK(a.unauthenticated() == 3);
  // The limit is read again at each accept (raised or lowered while running).
  fds.limit = 200;
  CHECK(a.accepted(2003) == connection_admission::verdict::admit);
}

TEST_CASE("phase_deadlines: the earliest deadline is next, due ones come earliest first", "[admission]") {
  using k = phase_deadlines::kind;
  phase_deadlines d;
  CHECK_FALSE(d.next());
  CHECK_FALSE(d.due(1000));
  d.set(k::handshake, 500);
  d.set(k::request_head, 300);
  d.set(k::message, 900);
  CHECK(*d.next() == 300);
  CHECK_FALSE(d.due(299));
  CHECK(*d.due(600) == k::request_head);
  d.clear(k::request_head);
  CHECK(*d.due(600) == k::handshake);
  d.clear(k::handshake);
  CHECK_FALSE(d.due(600));
  CHECK(*d.next() == 900);
  CHECK(d.armed(k::message));
  CHECK_FALSE(d.armed(k::close_grace));
}
