#include "cluster/write_permit.hpp"

#include <catch2/catch.hpp>

namespace sessionrt::cluster {

TEST_CASE("write permit: no write before a lease, writes until TTL/2 after the last renewal was sent", "[cluster][permit]") {
  manual_clock mono(1000);
  write_permit permit(mono, "n1");
  CHECK(!permit.may_write());
  CHECK_THAT(permit.check().message(), Catch::Contains("no live lease"));

  permit.start(10000, 1000);  // a 10 s lease, granted by a request sent at t=1000
  CHECK(permit.may_write());
  CHECK(permit.valid_until_ms() == 6000);
  mono.set(5999);
  CHECK(permit.may_write());
  mono.set(6000);  // 5000 ms = TTL/2 since the grant was sent: stop, though etcd keeps the lease until 11000
  CHECK(!permit.may_write());
  auto st = permit.check();
  CHECK(st.code() == errc::locked);
  CHECK_THAT(st.message(), Catch::Contains("node n1") && Catch::Contains("5000 ms ago") && Catch::Contains("TTL/2"));

  permit.renewed(4000);  // a keepalive sent at 4000 whose answer came late
  CHECK(permit.may_write());
  CHECK(permit.valid_until_ms() == 9000);
  permit.renewed(3000);  // an older renewal answering after a newer one changes nothing
  CHECK(permit.last_renewal_ms() == 4000);
  mono.set(9000);
  CHECK(!permit.may_write());
}

TEST_CASE("write permit: a paused process finds its permit gone when it resumes", "[cluster][permit]") {
  manual_clock mono(0);
  write_permit permit(mono, "n1");
  permit.start(10000, 0);
  for (std::int64_t t = 3333; t < 30000; t += 3333) {  // keepalives every TTL/3
    mono.set(t);
    CHECK(permit.may_write());
    permit.renewed(t);
  }
  mono.advance(60000);  // SIGSTOP for a minute (the monotonic clock keeps counting), then SIGCONT
  CHECK(!permit.may_write());
}

TEST_CASE("write permit: a lost lease refuses writes until a new lease starts", "[cluster][permit]") {
  manual_clock mono(0);
  write_permit permit(mono, "n1");
  permit.start(10000, 0);
  permit.lost();
  CHECK(!permit.may_write());
  permit.renewed(100);  // a late keepalive answer does not bring it back
  CHECK(!permit.may_write());
  CHECK(permit.valid_until_ms() == 0);
  permit.start(2000, 100);
  CHECK(permit.may_write());
  CHECK(permit.valid_until_ms() == 1100);
}

}  // namespace sessionrt::cluster
