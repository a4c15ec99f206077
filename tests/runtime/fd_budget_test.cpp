// fd_budget: maxLiveSessions fitted to the open-file limit (one transcript fd per live session).
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include "storage/fd_budget.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;
using namespace sessionrt::storage;

namespace {

// Puts the process's open-file limits back as they were when the test leaves its scope, by
// any path (a failed REQUIRE throws): the limit is per process, so later tests would see it.
class rlimit_restore {
 public:
  explicit rlimit_restore(const rlimit& saved) : saved_(saved) {}
  ~rlimit_restore() { (void)::setrlimit(RLIMIT_NOFILE, &saved_); }
  rlimit_restore(const rlimit_restore&) = delete;
  rlimit_restore& operator=(const rlimit_restore&) = delete;

 private:
  rlimit saved_;
};

}  // namespace

TEST_CASE("fd budget: the soft limit is raised as far as the sessions need, never past the hard one") {
  // A Debian login: soft 1,024, hard 1,048,576; 10,000 sessions need 10,256.
  fd_budget b = plan_fd_budget(1024, 1048576, 10000);
  CHECK(b.soft_after == 10000 + kFdReserve);
  CHECK(b.max_live_sessions == 10000);
  CHECK_FALSE(b.lowered);
  // Enough already: nothing changes (and a higher soft limit is never lowered).
  b = plan_fd_budget(65536, 1048576, 10000);
  CHECK(b.soft_after == 65536);
  CHECK_FALSE(b.lowered);
  // The hard limit is too small: raised to it, and the sessions fitted below it.
  b = plan_fd_budget(1024, 4096, 10000);
  CHECK(b.soft_after == 4096);
  CHECK(b.max_live_sessions == 4096 - kFdReserve);
  CHECK(b.lowered);
  // Tiny limits still leave a session and half the descriptors for the rest.
  b = plan_fd_budget(256, 256, 10000);
  CHECK(b.max_live_sessions == 128);
  CHECK(b.lowered);
  b = plan_fd_budget(1, 1, 10);
  CHECK(b.max_live_sessions == 1);
}

TEST_CASE("fd budget: a runtime raises a low soft limit for its live sessions") {
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 3000) {
    WARN("hard open-file limit below 3,000 here: not checked");
    return;
  }
  rlimit low = saved;
  low.rlim_cur = 600;
  rlimit_restore restore(saved);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);

  testing::temp_dir dir;
  manual_clock clk(1796011140000);
  runtime_options o;
  o.settings.state_dir = dir.path();
  o.settings.session.reset.timezone = "UTC";
  o.settings.session.max_live_sessions = 2000;
  o.runner = std::make_shared<simulated_model>(clk);
  o.time = &clk;
  o.virtual_time = true;
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  rlimit now{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &now) == 0);
  CHECK(now.rlim_cur == 2000 + kFdReserve);
  CHECK((*rt)->startup().open_files.soft_before == 600);
  CHECK((*rt)->settings().session.max_live_sessions == 2000);
  CHECK_FALSE((*rt)->startup().open_files.lowered);
  (void)(*rt)->stop();
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &saved) == 0);  // (restore then puts it back again)
}
