#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>

#include "messages/iso_time.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/system_clock.hpp"
#include "storage/write_lock.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using sessionrt::testing::temp_dir;

namespace {

constexpr std::int64_t kNow = 1796002475418;  // 2026-11-30T01:34:35.418Z

// The payload OpenClaw writes, for planting other processes' locks.
std::string payload_text(std::int64_t pid, std::int64_t created_ms, std::optional<std::int64_t> starttime,
                         std::optional<std::int64_t> max_hold_ms = 300000) {
  boost::json::object o;
  o["pid"] = pid;
  o["createdAt"] = format_iso_ms(created_ms);
  if (max_hold_ms) o["maxHoldMs"] = *max_hold_ms;
  if (starttime) o["starttime"] = *starttime;
  return json::to_pretty(o) + "\n";
}

void set_mtime_ms(const std::string& path, std::int64_t ms) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ms / 1000;
  times[0].tv_nsec = times[1].tv_nsec = (ms % 1000) * 1000000;
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

// The lock path of "<dir>/<name>" as acquire computes it (realpath of the dir).
std::string lock_of(const temp_dir& dir, const std::string& name) {
  auto p = write_lock_path(posix_fs(), dir.file(name));
  REQUIRE(p.ok());
  return *p;
}

struct recorded_contention {
  std::vector<std::string> reasons;
  contention_outcome outcome;
  int attempt;
  std::int64_t waited_ms;
  std::string owner;
};

write_lock_options recording(std::vector<recorded_contention>& log, std::int64_t timeout_ms = 60000) {
  write_lock_options o;
  o.acquire_timeout_ms = timeout_ms;
  o.on_contended = [&log](const lock_contention& c) {
    log.push_back({c.inspection.stale_reasons, c.outcome, c.attempt, c.waited_ms, c.inspection.owner()});
  };
  return o;
}

// A fake probe that runs a hook when asked whether a pid is alive (between the read of a lock
// and the decision to remove it).
class hooked_probe final : public process_probe {
 public:
  explicit hooked_probe(fake_process_probe& inner) : inner_(inner) {}
  std::function<void(std::int64_t)> on_alive;
  std::int64_t self_pid() const override { return inner_.self_pid(); }
  bool alive(std::int64_t pid) const override {
    if (on_alive) on_alive(pid);
    return inner_.alive(pid);
  }
  std::optional<std::int64_t> start_time(std::int64_t pid) const override { return inner_.start_time(pid); }

 private:
  fake_process_probe& inner_;
};

}  // namespace

TEST_CASE("write lock payload is the JSON.stringify pretty form of pid createdAt maxHoldMs starttime plus newline") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe(4242, 7204072);
  write_lock_options options;
  options.max_hold_ms = 1020000;
  auto lock = acquire_write_lock(posix_fs(), clock, probe, dir.file("s.jsonl"), options);
  REQUIRE(lock.ok());
  const std::string lock_path = lock_of(dir, "s.jsonl");
  CHECK(lock->lock_path() == lock_path);
  CHECK(lock_path.substr(lock_path.size() - 13) == "/s.jsonl.lock");

  const std::string bytes = testing::read_text(lock_path);
  CHECK(bytes ==
        "{\n  \"pid\": 4242,\n  \"createdAt\": \"2026-11-30T01:34:35.418Z\",\n  \"maxHoldMs\": 1020000,\n"
        "  \"starttime\": 7204072\n}\n");
  auto parsed = json::parse(bytes);
  REQUIRE(parsed.ok());
  CHECK(json::to_pretty(*parsed) + "\n" == bytes);
  struct ::stat st;
  REQUIRE(::stat(lock_path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  REQUIRE(lock->release().ok());
  CHECK_FALSE(testing::exists(lock_path));
}

TEST_CASE("write lock payload omits starttime when the probe cannot read it") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe(77, std::nullopt);
  auto lock = acquire_write_lock(posix_fs(), clock, probe, dir.file("s.jsonl"));
  REQUIRE(lock.ok());
  CHECK(testing::read_text(lock->lock_path()) ==
        "{\n  \"pid\": 77,\n  \"createdAt\": \"2026-11-30T01:34:35.418Z\",\n  \"maxHoldMs\": 300000\n}\n");
}

TEST_CASE("the real probe writes this process's pid and /proc starttime") {
  temp_dir dir;
  manual_clock clock(kNow);
  auto lock = acquire_write_lock(posix_fs(), clock, real_process_probe(), dir.file("s.jsonl"));
  REQUIRE(lock.ok());
  auto parsed = json::parse_object(testing::read_text(lock->lock_path()));
  REQUIRE(parsed.ok());
  CHECK(parsed->at("pid").to_number<std::int64_t>() == ::getpid());
  auto own = real_process_probe().start_time(::getpid());
  REQUIRE(own);
  CHECK(parsed->at("starttime").to_number<std::int64_t>() == *own);
  CHECK(real_process_probe().alive(::getpid()));
  CHECK_FALSE(real_process_probe().alive(0));
  CHECK_FALSE(real_process_probe().alive(-5));
}

// Clock ticks since boot, the unit of /proc/<pid>/stat's starttime (USER_HZ: /proc/uptime
// has two decimals).
std::int64_t uptime_ticks() {
  std::ifstream in("/proc/uptime");
  double seconds = 0;
  in >> seconds;
  return static_cast<std::int64_t>(seconds * static_cast<double>(::sysconf(_SC_CLK_TCK)));
}

TEST_CASE("the real probe's own start time is read again in a forked child") {
  auto parent = real_process_probe().start_time(::getpid());  // read once, then kept for this pid
  REQUIRE(parent);
  // The child must start in a later tick than this process did, or a cache that ignored the
  // pid would answer the right value by chance: wait (at most one tick) for the tick to pass.
  while (uptime_ticks() <= *parent + 1) {
  }
  int out[2];
  REQUIRE(::pipe(out) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(out[0]);
    std::int64_t own = real_process_probe().start_time(::getpid()).value_or(-1);
    (void)!::write(out[1], &own, sizeof own);
    ::_exit(0);
  }
  ::close(out[1]);
  std::int64_t reported = -2;
  REQUIRE(::read(out[0], &reported, sizeof reported) == static_cast<ssize_t>(sizeof reported));
  auto seen = real_process_probe().start_time(child);  // another pid: from /proc/<child>/stat
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(seen);
  CHECK(*seen != *parent);  // the two processes are told apart by their start times
  CHECK(reported == *seen);
  CHECK(*real_process_probe().start_time(::getpid()) == *parent);
}

TEST_CASE("a lock held by another live process times out with the OpenClaw message and is taken once that process dies") {
  temp_dir dir;
  const std::string file = dir.file("abc.jsonl");
  const std::string lock_path = lock_of(dir, "abc.jsonl");
  int ready[2], hold[2];
  REQUIRE(::pipe(ready) == 0);
  REQUIRE(::pipe(hold) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    ::close(hold[1]);
    auto lock = acquire_write_lock(posix_fs(), real_clock(), real_process_probe(), file);
    char ok = lock.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    char never;
    (void)!::read(hold[0], &never, 1);  // blocks until killed
    ::_exit(0);
  }
  ::close(ready[1]);
  ::close(hold[0]);
  char ok = 0;
  REQUIRE(::read(ready[0], &ok, 1) == 1);
  REQUIRE(ok == 'y');

  auto held = json::parse_object(testing::read_text(lock_path));
  REQUIRE(held.ok());
  CHECK(held->at("pid").to_number<std::int64_t>() == child);
  auto created = parse_iso_ms(held->at("createdAt").as_string().c_str());
  REQUIRE(created);

  manual_clock clock(*created + 100);
  std::vector<recorded_contention> log;
  auto blocked = acquire_write_lock(posix_fs(), clock, real_process_probe(), file, recording(log, 2000));
  REQUIRE_FALSE(blocked.ok());
  CHECK(blocked.error().code() == errc::locked);
  CHECK(blocked.error().message() ==
        fmt::format("session file locked (timeout 2000ms): pid={} alive=true ageMs=2100 {}", child, lock_path));
  CHECK(clock.now_ms() == *created + 100 + 2000);  // waited exactly the timeout, virtually
  REQUIRE(log.size() >= 2);
  for (auto& c : log) {
    CHECK(c.outcome == contention_outcome::waiting);
    CHECK(c.reasons.empty());
  }
  CHECK(log.front().attempt == 1);
  CHECK(log.back().waited_ms == 2000);
  CHECK(testing::exists(lock_path));

  REQUIRE(::kill(child, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  ::close(ready[0]);
  ::close(hold[1]);

  log.clear();
  auto taken = acquire_write_lock(posix_fs(), clock, real_process_probe(), file, recording(log, 2000));
  REQUIRE(taken.ok());
  REQUIRE(log.size() == 1);
  CHECK(log[0].reasons == std::vector<std::string>{"dead-pid"});
  CHECK(log[0].outcome == contention_outcome::removed_stale);
  CHECK(log[0].owner == fmt::format("pid={} alive=false ageMs=2100", child));
  auto mine = json::parse_object(testing::read_text(lock_path));
  REQUIRE(mine.ok());
  CHECK(mine->at("pid").to_number<std::int64_t>() == ::getpid());
}

TEST_CASE("a killed but unreaped holder in zombie State Z counts as dead") {
  temp_dir dir;
  const std::string file = dir.file("z.jsonl");
  int ready[2], hold[2];
  REQUIRE(::pipe(ready) == 0);
  REQUIRE(::pipe(hold) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    ::close(hold[1]);
    auto lock = acquire_write_lock(posix_fs(), real_clock(), real_process_probe(), file);
    char ok = lock.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    char never;
    (void)!::read(hold[0], &never, 1);  // blocks until killed (or the parent is gone)
    ::_exit(0);
  }
  ::close(ready[1]);
  ::close(hold[0]);
  char ok = 0;
  REQUIRE(::read(ready[0], &ok, 1) == 1);
  REQUIRE(ok == 'y');
  ::close(ready[0]);
  REQUIRE(::kill(child, SIGKILL) == 0);
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);  // a zombie now
  CHECK_FALSE(real_process_probe().alive(child));

  manual_clock clock(kNow);
  std::vector<recorded_contention> log;
  auto taken = acquire_write_lock(posix_fs(), clock, real_process_probe(), file, recording(log, 0));
  CHECK(taken.ok());
  REQUIRE(log.size() == 1);
  CHECK(log[0].reasons.front() == "dead-pid");
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  ::close(hold[1]);
}

TEST_CASE("a recycled pid with another starttime is stale and its lock replaced") {
  temp_dir dir;
  const std::string lock_path = lock_of(dir, "r.jsonl");
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 6);
  testing::write_text(lock_path, payload_text(777, kNow - 1000, 5));

  std::vector<recorded_contention> log;
  auto lock = acquire_write_lock(posix_fs(), clock, probe, dir.file("r.jsonl"), recording(log));
  REQUIRE(lock.ok());
  REQUIRE(log.size() == 1);
  CHECK(log[0].reasons == std::vector<std::string>{"recycled-pid"});
  CHECK(log[0].outcome == contention_outcome::removed_stale);
  CHECK(testing::read_text(lock_path) == payload_text(4242, kNow, 1000));
}

TEST_CASE("same pid and same starttime is the live owner: the acquire waits") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 5);
  const std::string lock_path = lock_of(dir, "w.jsonl");
  testing::write_text(lock_path, payload_text(777, kNow - 1000, 5));
  std::vector<recorded_contention> log;
  auto blocked = acquire_write_lock(posix_fs(), clock, probe, dir.file("w.jsonl"), recording(log, 500));
  REQUIRE_FALSE(blocked.ok());
  CHECK(blocked.error().message() ==
        fmt::format("session file locked (timeout 500ms): pid=777 alive=true ageMs=1500 {}", lock_path));
}

TEST_CASE("a zombie pid in the fake probe is dead-pid") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 5, /*zombie=*/true);
  const std::string lock_path = lock_of(dir, "z.jsonl");
  testing::write_text(lock_path, payload_text(777, kNow - 1000, 5));
  std::vector<recorded_contention> log;
  REQUIRE(acquire_write_lock(posix_fs(), clock, probe, dir.file("z.jsonl"), recording(log)).ok());
  CHECK(log.at(0).reasons == std::vector<std::string>{"dead-pid"});
}

TEST_CASE("too-old and hold-exceeded of a live owner are reported, not removed") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 5);
  write_lock_options options;

  SECTION("too-old") {
    const std::string lock_path = lock_of(dir, "old.jsonl");
    const std::string planted = payload_text(777, kNow - options.stale_ms - 1, 5, std::nullopt);
    testing::write_text(lock_path, planted);
    std::vector<recorded_contention> log;
    auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("old.jsonl"), recording(log));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == errc::locked);
    CHECK(r.error().message() ==
          fmt::format("session file lock stale (too-old): pid=777 alive=true ageMs=1800001 {}", lock_path));
    CHECK(clock.now_ms() == kNow);  // failed at once, no waiting
    REQUIRE(log.size() == 1);
    CHECK(log[0].outcome == contention_outcome::stale_error);
    CHECK(testing::read_text(lock_path) == planted);

    auto ins = inspect_lock(posix_fs(), clock, probe, lock_path);
    REQUIRE(ins.ok());
    CHECK(ins->stale_reasons == std::vector<std::string>{"too-old"});
    CHECK_FALSE(ins->removable);
    CHECK(ins->pid_alive);
    auto cleaned = clean_stale_locks(posix_fs(), clock, probe, dir.path());
    REQUIRE(cleaned.ok());
    CHECK(cleaned->empty());
    CHECK(testing::exists(lock_path));
  }
  SECTION("hold-exceeded") {
    const std::string lock_path = lock_of(dir, "hold.jsonl");
    const std::string planted = payload_text(777, kNow - 5000, 5, 1000);
    testing::write_text(lock_path, planted);
    auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("hold.jsonl"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() ==
          fmt::format("session file lock stale (hold-exceeded): pid=777 alive=true ageMs=5000 {}", lock_path));
    CHECK(testing::read_text(lock_path) == planted);
  }
  SECTION("too-old of a dead owner is removed") {
    const std::string lock_path = lock_of(dir, "dead.jsonl");
    testing::write_text(lock_path, payload_text(778, kNow - options.stale_ms - 1, 5));
    std::vector<recorded_contention> log;
    REQUIRE(acquire_write_lock(posix_fs(), clock, probe, dir.file("dead.jsonl"), recording(log)).ok());
    CHECK(log.at(0).reasons == std::vector<std::string>{"dead-pid", "too-old", "hold-exceeded"});
  }
}

TEST_CASE("a lock without pid or createdAt is removed only once its mtime is older than the grace") {
  temp_dir dir;
  fake_process_probe probe;
  const std::int64_t mtime = kNow - 100000;
  const std::string lock_path = lock_of(dir, "m.jsonl");

  SECTION("60 s acquire timeout: grace min(staleMs, 30 s)") {
    testing::write_text(lock_path, "");
    set_mtime_ms(lock_path, mtime);
    manual_clock clock(mtime + 30000);
    std::vector<recorded_contention> log;
    auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("m.jsonl"), recording(log, 60000));
    // Not removable during the whole wait: the clock passes mtime + 30 s only after 1 ms of it,
    // so the lock goes at the first attempt after that.
    REQUIRE(r.ok());
    REQUIRE(log.size() >= 2);
    CHECK(log.front().outcome == contention_outcome::waiting);
    CHECK(log.front().reasons == std::vector<std::string>{"missing-pid", "invalid-createdAt"});
    CHECK(log.back().outcome == contention_outcome::removed_stale);
    CHECK(log.back().waited_ms == 50);
  }
  SECTION("timeout 0: one attempt, no removal, owner unknown") {
    testing::write_text(lock_path, "{\"createdAt\":\"garbage\"}");
    set_mtime_ms(lock_path, mtime);
    manual_clock clock(mtime + 4000);
    std::vector<recorded_contention> log;
    auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("m.jsonl"), recording(log, 0));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == "session file locked (timeout 0ms): owner=unknown " + lock_path);
    CHECK(testing::exists(lock_path));
  }
  SECTION("acquire timeout under 30 s: grace 5 s") {
    testing::write_text(lock_path, "{");
    set_mtime_ms(lock_path, mtime);
    manual_clock clock(mtime + 5001);
    std::vector<recorded_contention> log;
    REQUIRE(acquire_write_lock(posix_fs(), clock, probe, dir.file("m.jsonl"), recording(log, 10000)).ok());
    CHECK(log.at(0).outcome == contention_outcome::removed_stale);
  }
  SECTION("staleMs below the grace wins") {
    testing::write_text(lock_path, "{}");
    set_mtime_ms(lock_path, mtime);
    manual_clock clock(mtime + 2001);
    std::vector<recorded_contention> log;
    auto o = recording(log, 60000);
    o.stale_ms = 2000;
    REQUIRE(acquire_write_lock(posix_fs(), clock, probe, dir.file("m.jsonl"), o).ok());
  }
  SECTION("a pid with a bad createdAt is not judged by mtime") {
    probe.set_process(900, 1);
    testing::write_text(lock_path, "{\"pid\": 901, \"createdAt\": \"never\"}");
    set_mtime_ms(lock_path, kNow);
    manual_clock clock(kNow);
    std::vector<recorded_contention> log;
    REQUIRE(acquire_write_lock(posix_fs(), clock, probe, dir.file("m.jsonl"), recording(log)).ok());
    CHECK(log.at(0).reasons == std::vector<std::string>{"dead-pid", "invalid-createdAt"});
  }
}

TEST_CASE("a stale lock whose bytes changed after it was read is not removed") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe inner;
  inner.set_process(778, 9);  // the new, live owner
  hooked_probe probe(inner);
  const std::string lock_path = lock_of(dir, "c.jsonl");
  testing::write_text(lock_path, payload_text(777, kNow - 1000, 5));  // dead owner
  const std::string replacement = payload_text(778, kNow, 9);
  bool swapped = false;
  probe.on_alive = [&](std::int64_t pid) {
    if (pid == 777 && !swapped) {
      swapped = true;
      testing::write_text(lock_path, replacement);  // another process took it after our read
    }
  };
  std::vector<recorded_contention> log;
  auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("c.jsonl"), recording(log, 0));
  REQUIRE_FALSE(r.ok());
  CHECK(swapped);
  CHECK(testing::read_text(lock_path) == replacement);
  CHECK(r.error().message() == fmt::format("session file locked (timeout 0ms): pid=778 alive=true ageMs=0 {}", lock_path));
  REQUIRE(log.size() == 2);
  CHECK(log[0].reasons == std::vector<std::string>{"dead-pid"});
  CHECK(log[0].outcome == contention_outcome::waiting);  // judged stale, but it changed: not removed
  CHECK(log[1].reasons.empty());
}

TEST_CASE("locks are reentrant per process: the file goes with the last hold") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  REQUIRE(::mkdir(dir.file("real").c_str(), 0700) == 0);
  REQUIRE(::symlink(dir.file("real").c_str(), dir.file("alias").c_str()) == 0);
  auto first = acquire_write_lock(posix_fs(), clock, probe, dir.file("real/s.jsonl"));
  REQUIRE(first.ok());
  clock.advance(10);
  auto second = acquire_write_lock(posix_fs(), clock, probe, dir.file("alias/s.jsonl"));  // same file, other spelling
  REQUIRE(second.ok());
  CHECK(second->lock_path() == first->lock_path());
  const std::string bytes = testing::read_text(first->lock_path());
  CHECK(bytes == payload_text(4242, kNow, 1000));  // not rewritten by the second hold

  auto held = held_write_locks();
  auto mine = std::find_if(held.begin(), held.end(), [&](auto& h) { return h.lock_path == first->lock_path(); });
  REQUIRE(mine != held.end());
  CHECK(mine->holds == 2);

  REQUIRE(second->release().ok());
  CHECK(testing::exists(first->lock_path()));
  CHECK(second->release().ok());  // twice is a no-op
  CHECK(testing::exists(first->lock_path()));
  write_lock moved = std::move(*first);
  CHECK_FALSE(first->held());
  REQUIRE(moved.release().ok());
  CHECK_FALSE(testing::exists(moved.lock_path()));
}

TEST_CASE("the destructor releases") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  std::string path;
  {
    auto lock = acquire_write_lock(posix_fs(), clock, probe, dir.file("d.jsonl"));
    REQUIRE(lock.ok());
    path = lock->lock_path();
    CHECK(testing::exists(path));
  }
  CHECK_FALSE(testing::exists(path));
}

TEST_CASE("release leaves a lock file that someone replaced") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  auto lock = acquire_write_lock(posix_fs(), clock, probe, dir.file("x.jsonl"));
  REQUIRE(lock.ok());
  const std::string path = lock->lock_path();
  const std::string ours = testing::read_text(path);

  SECTION("other bytes") {
    const std::string theirs = payload_text(31337, kNow, 1);
    testing::write_text(path, theirs);
    status st = lock->release();
    CHECK(st.code() == errc::locked);
    CHECK(st.message() == "write lock " + path + " was replaced by another owner while held; left in place");
    CHECK(testing::read_text(path) == theirs);
  }
  SECTION("same bytes, other inode") {
    testing::write_text(path + ".new", ours);
    REQUIRE(::rename((path + ".new").c_str(), path.c_str()) == 0);
    CHECK(lock->release().code() == errc::locked);
    CHECK(testing::read_text(path) == ours);
  }
  SECTION("removed") {
    REQUIRE(::unlink(path.c_str()) == 0);
    CHECK(lock->release().code() == errc::locked);
  }
  CHECK_FALSE(lock->held());
  auto held = held_write_locks();
  CHECK(std::none_of(held.begin(), held.end(), [&](auto& h) { return h.lock_path == path; }));
}

TEST_CASE("a self-pid lock not held in process is an orphan") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe(4242, 1000);
  const std::string lock_path = lock_of(dir, "o.jsonl");

  SECTION("same starttime") {
    testing::write_text(lock_path, payload_text(4242, kNow - 10, 1000));
    std::vector<recorded_contention> log;
    REQUIRE(acquire_write_lock(posix_fs(), clock, probe, dir.file("o.jsonl"), recording(log)).ok());
    CHECK(log.at(0).reasons == std::vector<std::string>{"orphan-self-pid"});
  }
  SECTION("other starttime: an earlier process with this pid (recycled)") {
    testing::write_text(lock_path, payload_text(4242, kNow - 10, 999));
    std::vector<recorded_contention> log;
    REQUIRE(acquire_write_lock(posix_fs(), clock, probe, dir.file("o.jsonl"), recording(log)).ok());
    CHECK(log.at(0).reasons == std::vector<std::string>{"recycled-pid"});
  }
}

TEST_CASE("clean_stale_locks removes the removable jsonl lock files in name order") {
  temp_dir dir;
  fake_process_probe probe(4242, 1000);
  probe.set_process(777, 5);
  manual_clock clock(kNow);
  auto put = [&](const std::string& name, const std::string& text, std::int64_t mtime) {
    testing::write_text(dir.file(name), text);
    set_mtime_ms(dir.file(name), mtime);
  };
  put("d-dead.jsonl.lock", payload_text(12345, kNow - 1000, 5), kNow);
  put("a-live.jsonl.lock", payload_text(777, kNow - 1000, 5), kNow);
  put("b-old-live.jsonl.lock", payload_text(777, kNow - 1800001, 5), kNow);
  put("c-empty-old.jsonl.lock", "", kNow - 30001);
  put("e-empty-fresh.jsonl.lock", "", kNow - 29000);
  put("f-self-orphan.jsonl.lock", payload_text(4242, kNow - 10, 1000), kNow);
  put("g-self-no-starttime.jsonl.lock", payload_text(4242, kNow - 10, std::nullopt), kNow);
  put("h-hold.jsonl.lock", payload_text(777, kNow - 5000, 5, 1000), kNow);
  put("z.txt.lock", payload_text(12345, kNow, 5), kNow);
  put("dead.jsonl", "", kNow);
  auto held = acquire_write_lock(posix_fs(), clock, probe, dir.file("held.jsonl"));
  REQUIRE(held.ok());
  CHECK(held->lock_path() == lock_of(dir, "held.jsonl"));

  auto sessions = posix_fs().realpath(dir.path());
  REQUIRE(sessions.ok());
  auto removed = clean_stale_locks(posix_fs(), clock, probe, *sessions);
  REQUIRE(removed.ok());
  REQUIRE(removed->size() == 3);
  CHECK((*removed)[0].lock_path == *sessions + "/c-empty-old.jsonl.lock");
  CHECK((*removed)[0].reasons == std::vector<std::string>{"missing-pid", "invalid-createdAt"});
  CHECK((*removed)[1].lock_path == *sessions + "/d-dead.jsonl.lock");
  CHECK((*removed)[1].reasons == std::vector<std::string>{"dead-pid"});
  CHECK((*removed)[2].lock_path == *sessions + "/f-self-orphan.jsonl.lock");
  CHECK((*removed)[2].reasons == std::vector<std::string>{"orphan-self-pid"});
  CHECK(testing::list_names(dir.path()) ==
        std::vector<std::string>{"a-live.jsonl.lock", "b-old-live.jsonl.lock", "dead.jsonl", "e-empty-fresh.jsonl.lock",
                                 "g-self-no-starttime.jsonl.lock", "h-hold.jsonl.lock", "held.jsonl.lock", "z.txt.lock"});

  auto none = clean_stale_locks(posix_fs(), clock, probe, dir.file("missing"));
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("release_all_held_locks removes every held lock and turns handles into no-ops") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  auto a = acquire_write_lock(posix_fs(), clock, probe, dir.file("a.jsonl"));
  auto a2 = acquire_write_lock(posix_fs(), clock, probe, dir.file("a.jsonl"));
  auto b = acquire_write_lock(posix_fs(), clock, probe, dir.file("b.jsonl"));
  REQUIRE((a.ok() && a2.ok() && b.ok()));
  const std::size_t before = held_write_locks().size();
  CHECK(release_all_held_locks() == before);
  CHECK(held_write_locks().empty());
  CHECK_FALSE(testing::exists(a->lock_path()));
  CHECK_FALSE(testing::exists(b->lock_path()));
  // A new holder of the same path is not disturbed by the old handles.
  auto again = acquire_write_lock(posix_fs(), clock, probe, dir.file("a.jsonl"));
  REQUIRE(again.ok());
  CHECK(a->release().ok());
  CHECK(a2->release().ok());
  CHECK(testing::exists(again->lock_path()));
  REQUIRE(again->release().ok());
  CHECK_FALSE(testing::exists(again->lock_path()));
}

TEST_CASE("a failed payload write leaves no lock behind") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  faulty_fs files(posix_fs());
  files.fail_nth(fs_op::write, 1, ENOSPC);
  auto r = acquire_write_lock(files, clock, probe, dir.file("f.jsonl"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::no_space);
  CHECK(r.error().message().find("f.jsonl.lock") != std::string::npos);
  CHECK(testing::list_names(dir.path()).empty());
  auto held = held_write_locks();
  CHECK(std::none_of(held.begin(), held.end(), [&](auto& h) { return h.lock_path == lock_of(dir, "f.jsonl"); }));
}

TEST_CASE("a lock path that is not a regular file is refused, not judged") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  REQUIRE(::symlink("/etc/hostname", lock_of(dir, "l.jsonl").c_str()) == 0);
  auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("l.jsonl"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::unsafe_path);
  auto missing = inspect_lock(posix_fs(), clock, probe, lock_of(dir, "none.jsonl"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == errc::not_found);
}

TEST_CASE("env overrides take SESSIONRT_ before OPENCLAW_ names and digits only or Infinity for the acquire timeout") {
  std::map<std::string, std::string> env;
  env_lookup lookup = [&env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  write_lock_options o;
  REQUIRE(apply_write_lock_env(o, lookup).ok());
  CHECK(o.acquire_timeout_ms == 60000);
  CHECK(o.stale_ms == 1800000);
  CHECK(o.max_hold_ms == 300000);

  env["OPENCLAW_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS"] = "Infinity";
  env["OPENCLAW_SESSION_WRITE_LOCK_STALE_MS"] = "1000";
  env["SESSIONRT_SESSION_WRITE_LOCK_STALE_MS"] = " 2500 ";
  env["SESSIONRT_SESSION_WRITE_LOCK_MAX_HOLD_MS"] = "";
  env["OPENCLAW_SESSION_WRITE_LOCK_MAX_HOLD_MS"] = "1020000";
  REQUIRE(apply_write_lock_env(o, lookup).ok());
  CHECK(o.acquire_timeout_ms == write_lock_options::infinite);
  CHECK(o.stale_ms == 2500);
  CHECK(o.max_hold_ms == 1020000);

  auto refused = [&](const std::string& name, const std::string& value, const std::string& text) {
    write_lock_options before;
    env.clear();
    env[name] = value;
    write_lock_options after = before;
    status st = apply_write_lock_env(after, lookup);
    CHECK(st.code() == errc::invalid_argument);
    CHECK(st.message().find(name) != std::string::npos);
    CHECK(st.message().find(text) != std::string::npos);
    CHECK(after.acquire_timeout_ms == before.acquire_timeout_ms);
    CHECK(after.stale_ms == before.stale_ms);
  };
  refused("SESSIONRT_SESSION_WRITE_LOCK_STALE_MS", "Infinity", "only the acquire timeout");
  refused("SESSIONRT_SESSION_WRITE_LOCK_STALE_MS", "10s", "'10s' is not a whole number");
  refused("OPENCLAW_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS", "-1", "not a whole number");
  refused("OPENCLAW_SESSION_WRITE_LOCK_MAX_HOLD_MS", "0", "positive");
  refused("SESSIONRT_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS", "9007199254740992", "over the limit");
}

TEST_CASE("an infinite acquire timeout keeps waiting with a backoff growing by 50 ms to a 1 s cap") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 5);
  const std::string lock_path = lock_of(dir, "i.jsonl");
  testing::write_text(lock_path, payload_text(777, kNow, 5, 100000000));
  std::vector<std::int64_t> waited;
  write_lock_options o;
  o.acquire_timeout_ms = write_lock_options::infinite;
  o.on_contended = [&](const lock_contention& c) {
    waited.push_back(c.waited_ms);
    if (c.attempt == 30) probe.remove_process(777);  // the owner dies after 30 attempts
  };
  auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("i.jsonl"), o);
  REQUIRE(r.ok());
  REQUIRE(waited.size() == 31);
  std::vector<std::int64_t> gaps;
  for (std::size_t i = 1; i < waited.size(); ++i) gaps.push_back(waited[i] - waited[i - 1]);
  CHECK(gaps[0] == 50);
  CHECK(gaps[1] == 100);
  CHECK(gaps[18] == 950);
  CHECK(gaps[19] == 1000);
  CHECK(gaps[29] == 1000);
}

TEST_CASE("the shared backoff: 50 ms first, growing by 50 ms per attempt, capped at 1 s, never past the timeout") {
  CHECK(lock_backoff::first_ms == 50);
  CHECK(lock_backoff::step_ms == 50);
  CHECK(lock_backoff::cap_ms == 1000);
  CHECK(lock_retry_delay_ms(1, 0, 60000) == 50);
  CHECK(lock_retry_delay_ms(2, 50, 60000) == 100);
  CHECK(lock_retry_delay_ms(3, 150, 60000) == 150);
  CHECK(lock_retry_delay_ms(19, 9500, 60000) == 950);
  CHECK(lock_retry_delay_ms(20, 10450, 60000) == 1000);
  CHECK(lock_retry_delay_ms(500, 20000, 60000) == 1000);  // the cap holds
  // Never past the timeout: the last wait is cut to end at it, then the acquire gives up.
  CHECK(lock_retry_delay_ms(4, 300, 400) == 100);
  CHECK(lock_retry_delay_ms(4, 399, 400) == 1);
  CHECK(lock_retry_delay_ms(5, 400, 400) == std::nullopt);
  CHECK(lock_retry_delay_ms(5, 450, 400) == std::nullopt);
  CHECK(lock_retry_delay_ms(1, 0, 0) == std::nullopt);  // timeout 0: one attempt
  // An infinite timeout never gives up.
  CHECK(lock_retry_delay_ms(1000000, std::int64_t{1} << 50, write_lock_options::infinite) == 1000);
}

TEST_CASE("the blocking acquire waits exactly the shared backoff and fails with the timeout error once") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 5);
  const std::string lock_path = lock_of(dir, "w.jsonl");
  testing::write_text(lock_path, payload_text(777, kNow - 5, 5, 100000000));
  std::vector<recorded_contention> log;
  auto r = acquire_write_lock(posix_fs(), clock, probe, dir.file("w.jsonl"), recording(log, 1000));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::locked);
  CHECK(r.error().message() ==
        fmt::format("session file locked (timeout 1000ms): pid=777 alive=true ageMs=1005 {}", lock_path));
  std::vector<std::int64_t> waited, attempts;
  for (const auto& c : log) {
    waited.push_back(c.waited_ms);
    attempts.push_back(c.attempt);
  }
  // The same waits the session actor schedules: lock_retry_delay_ms(attempt, waited, 1000).
  CHECK(waited == std::vector<std::int64_t>{0, 50, 150, 300, 500, 750, 1000});
  CHECK(attempts == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7});
  std::int64_t sum = 0;
  for (int attempt = 1; auto delay = lock_retry_delay_ms(attempt, sum, 1000); ++attempt) sum += *delay;
  CHECK(sum == 1000);
  CHECK(clock.now_ms() == kNow + 1000);
}

TEST_CASE("try_acquire_write_lock is one attempt that never waits: busy with the holder, or the lock") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 5);
  const std::string lock_path = lock_of(dir, "t.jsonl");
  const std::string planted = payload_text(777, kNow - 20, 5, 100000000);
  testing::write_text(lock_path, planted);
  std::vector<recorded_contention> log;

  auto busy = try_acquire_write_lock(posix_fs(), clock, probe, dir.file("t.jsonl"), recording(log, 60000), 3, 150);
  REQUIRE(busy.ok());
  REQUIRE(std::holds_alternative<lock_busy>(*busy));
  const lock_inspection& holder = std::get<lock_busy>(*busy).holder;
  CHECK(holder.lock_path == lock_path);
  CHECK(holder.pid == 777);
  CHECK(holder.pid_alive);
  CHECK(holder.age_ms == 20);
  CHECK(lock_timeout_error(60000, holder).message() ==
        fmt::format("session file locked (timeout 60000ms): pid=777 alive=true ageMs=20 {}", lock_path));
  CHECK(lock_timeout_error(60000, holder).code() == errc::locked);
  CHECK(clock.now_ms() == kNow);  // never slept
  CHECK(testing::read_text(lock_path) == planted);
  REQUIRE(log.size() == 1);
  CHECK(log[0].attempt == 3);  // as the caller numbers its attempts
  CHECK(log[0].waited_ms == 150);
  CHECK(log[0].outcome == contention_outcome::waiting);

  // The holder dies: the next attempt removes its lock and takes it, in the same call.
  probe.remove_process(777);
  log.clear();
  auto taken = try_acquire_write_lock(posix_fs(), clock, probe, dir.file("t.jsonl"), recording(log, 60000), 4, 250);
  REQUIRE(taken.ok());
  REQUIRE(std::holds_alternative<write_lock>(*taken));
  CHECK(std::get<write_lock>(*taken).held());
  CHECK(testing::read_text(lock_path) == payload_text(4242, kNow, 1000));
  REQUIRE(log.size() == 1);
  CHECK(log[0].outcome == contention_outcome::removed_stale);
  CHECK(clock.now_ms() == kNow);
}

TEST_CASE("try_acquire_write_lock: a stale lock that cannot be removed and a non-reentrant hold are final errors") {
  temp_dir dir;
  manual_clock clock(kNow);
  fake_process_probe probe;
  probe.set_process(777, 5);
  write_lock_options options;
  const std::string lock_path = lock_of(dir, "s.jsonl");
  const std::string planted = payload_text(777, kNow - options.stale_ms - 1, 5, std::nullopt);
  testing::write_text(lock_path, planted);
  std::vector<recorded_contention> log;
  auto r = try_acquire_write_lock(posix_fs(), clock, probe, dir.file("s.jsonl"), recording(log));
  REQUIRE_FALSE(r.ok());  // an error, not lock_busy: retrying cannot help
  CHECK(r.error().code() == errc::locked);
  CHECK(r.error().message() ==
        fmt::format("session file lock stale (too-old): pid=777 alive=true ageMs=1800001 {}", lock_path));
  REQUIRE(log.size() == 1);
  CHECK(log[0].outcome == contention_outcome::stale_error);
  CHECK(testing::read_text(lock_path) == planted);

  auto mine = try_acquire_write_lock(posix_fs(), clock, probe, dir.file("n.jsonl"));
  REQUIRE(mine.ok());
  REQUIRE(std::holds_alternative<write_lock>(*mine));
  write_lock_options unique;
  unique.reentrant = false;
  auto again = try_acquire_write_lock(posix_fs(), clock, probe, dir.file("n.jsonl"), unique);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code() == errc::locked);
  CHECK_THAT(again.error().message(), Catch::Contains("already held by this process"));
}
