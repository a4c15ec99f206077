// Locks across processes: a second runtime on the same state dir fails cleanly, and a
// transcript locked by another process makes a turn wait, report lock.contended, then fail
// with the lock's error, leaving the file untouched. Children are forked before any runtime
// thread exists in the parent, and talk to it through pipes (no sleeps).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <mutex>

#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/system_clock.hpp"
#include "storage/write_lock.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

struct child_process {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;
  void wait_ready() {
    char c = 0;
    REQUIRE(read(from_child, &c, 1) == 1);
    REQUIRE(c == 'R');
  }
  void finish() {
    char c = 'Q';
    REQUIRE(write(to_child, &c, 1) == 1);
    int status = 0;
    waitpid(pid, &status, 0);
    close(to_child);
    close(from_child);
  }
};

// Runs `body` in a child; the child writes 'R' when body returned ok, then waits for a byte.
child_process fork_child(const std::function<bool()>& body) {
  int down[2], up[2];
  REQUIRE(pipe(down) == 0);
  REQUIRE(pipe(up) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    const bool ok = body();
    char c = ok ? 'R' : 'F';
    if (write(up[1], &c, 1) != 1) _exit(3);
    if (read(down[0], &c, 1) < 0) _exit(4);
    _exit(ok ? 0 : 1);
  }
  close(down[0]);
  close(up[1]);
  return {pid, down[1], up[0]};
}

runtime_options options_for(const std::string& dir, std::shared_ptr<model_runner> model) {
  runtime_options o;
  o.settings.state_dir = dir;
  o.settings.session.reset.timezone = "UTC";
  o.runner = std::move(model);
  o.threads = 2;
  return o;
}

}  // namespace

TEST_CASE("a second runtime in another process fails at start naming the lock, and writes nothing") {
  testing::temp_dir dir;
  std::unique_ptr<runtime::runtime> holder;
  auto child = fork_child([&] {
    auto model = std::make_shared<simulated_model>(storage::real_clock());
    auto rt = runtime::runtime::start(options_for(dir.path(), model));
    if (!rt.ok()) return false;
    const chat_event ev = testing::dm("1", "from the first runtime");
    if (!(*rt)->send(ev).get().st.ok()) return false;
    holder = std::move(*rt);
    return true;
  });
  child.wait_ready();
  const auto store = *storage::store_path(dir.path(), "main");
  auto before = testing::list_names(storage::path_dirname(store));
  auto opts = options_for(dir.path(), std::make_shared<simulated_model>(storage::real_clock()));
  opts.store_lock_timeout_ms = 0;
  auto second = runtime::runtime::start(opts);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code() == errc::locked);
  CHECK_THAT(second.error().message(), Catch::Contains(fmt::format("pid={}", child.pid)));
  CHECK_THAT(second.error().message(), Catch::Contains("alive=true"));
  CHECK(testing::list_names(storage::path_dirname(store)) == before);
  child.finish();
}

TEST_CASE("a transcript locked by another process: the turn waits, reports lock.contended, then fails cleanly") {
  testing::temp_dir dir;
  auto model = std::make_shared<simulated_model>(storage::real_clock());
  std::string transcript;
  {  // A first turn creates the session and its transcript; then the runtime stops.
    auto rt = runtime::runtime::start(options_for(dir.path(), model));
    REQUIRE(rt.ok());
    const chat_event ev = testing::dm("1", "first");
    REQUIRE((*rt)->send(ev).get().st.ok());
    transcript = std::string((*rt)->session("agent:main:main").value()->session_file().value_or(""));
    REQUIRE((*rt)->stop().ok());
  }
  const std::string before = testing::read_text(transcript);
  std::optional<storage::write_lock> held;
  auto child = fork_child([&] {
    auto lock = storage::acquire_write_lock(storage::posix_fs(), storage::real_clock(), storage::real_process_probe(),
                                            transcript);
    if (!lock.ok()) return false;
    held = std::move(*lock);
    return true;
  });
  child.wait_ready();
  auto opts = options_for(dir.path(), model);
  opts.settings.session.write_lock.acquire_timeout_ms = 300;
  std::mutex mu;  // declared before the runtime: its callback may run until the runtime stops
  std::vector<lifecycle_event> contended;
  auto rt = runtime::runtime::start(opts);
  REQUIRE(rt.ok());
  (*rt)->subscribe({{"lock.contended"}, "", ""}, [&](const lifecycle_event& e) {
    std::lock_guard<std::mutex> g(mu);
    contended.push_back(e);
  });
  const chat_event ev = testing::dm("1", "second");
  auto out = (*rt)->send(ev).get();
  REQUIRE_FALSE(out.st.ok());
  CHECK(out.st.code() == errc::locked);
  CHECK_THAT(out.st.message(), Catch::Contains("session file locked (timeout 300ms)"));
  CHECK_THAT(out.st.message(), Catch::Contains(fmt::format("pid={}", child.pid)));
  (*rt)->settle();
  {
    std::lock_guard<std::mutex> g(mu);
    REQUIRE(contended.size() >= 2);  // the first try and the retries with backoff
    CHECK(contended.front().data.at("pid").as_int64() == child.pid);
  }
  CHECK(testing::read_text(transcript) == before);
  child.finish();  // the holder exits and releases its lock
  auto again = (*rt)->send(ev).get();
  CHECK(again.st.ok());
  REQUIRE((*rt)->stop().ok());
}

TEST_CASE("kill -9 after an acknowledged turn but before the store write: the restarted runtime continues it") {
  testing::temp_dir dir;
  int up[2];
  REQUIRE(pipe(up) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(up[0]);
    auto opts = options_for(dir.path(), std::make_shared<simulated_model>(storage::real_clock()));
    opts.settings.storage.store_flush_window_ms = 600000;  // the row write would come much later
    // Durability sync: the row is only in sessions.json (with batch the commit log holds it
    // and a start replays it: tests/crash/crash_rows_test.cpp).
    opts.settings.storage.durability = storage::durability::sync;
    auto rt = runtime::runtime::start(opts);
    if (!rt.ok()) _exit(2);
    const chat_event ev = testing::dm("7", "acknowledged before the crash");
    auto out = (*rt)->send(ev).get();
    if (!out.st.ok()) _exit(3);
    std::string line = out.session_id + "\n";
    if (write(up[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
    for (;;) pause();  // wait for SIGKILL
  }
  close(up[1]);
  char buf[128] = {};
  std::string id;
  for (ssize_t n; (n = read(up[0], buf, sizeof buf)) > 0;) {
    id.append(buf, static_cast<std::size_t>(n));
    if (id.find('\n') != std::string::npos) break;
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  close(up[0]);
  REQUIRE(id.size() > 1);
  id.pop_back();
  const auto store = *storage::store_path(dir.path(), "main");
  const std::string before = testing::exists(store) ? testing::read_text(store) : "";
  CHECK(before.find(id) == std::string::npos);  // the row was never written

  auto rt = runtime::runtime::start(options_for(dir.path(), std::make_shared<simulated_model>(storage::real_clock())));
  REQUIRE(rt.ok());
  REQUIRE((*rt)->startup().adopted.size() == 1);
  CHECK((*rt)->startup().adopted[0].session_id == id);
  const chat_event ev = testing::dm("7", "after the restart");
  auto out = (*rt)->send(ev).get();
  REQUIRE(out.st.ok());
  CHECK(out.session_id == id);
  CHECK_FALSE(out.new_session);
  REQUIRE((*rt)->stop().ok());
}
