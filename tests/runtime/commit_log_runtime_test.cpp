// The runtime with durability batch through its commit log (actors/commit_log), on a memory fs
// that can cut the power (storage/power_loss_fs) and fail the log's own calls: turns
// acknowledged before a power loss are back in their transcripts at the next start (the log
// replayed before anything is loaded); a log write that runs out of space, or a log sync that
// fails, fails that turn with an error naming the commit log and loses nothing acknowledged;
// a clean stop leaves no log behind; a log from another state dir stops the start.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/write_lock.hpp"
#include "tests/runtime/power_cut.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace cl = sessionrt::storage::commit_log;

namespace {

const std::string kState = "/state";
const std::string kSessions = "/state/agents/main/sessions";

// Fails the commit log's writes (ENOSPC) or syncs (EIO) while armed; everything else passes.
class log_faults final : public storage::forwarding_fs {
 public:
  explicit log_faults(storage::fs& inner) : storage::forwarding_fs(inner) {}
  std::atomic<int> fail_writes{0}, fail_syncs{0};
  result<int> open(const std::string& p, int flags, mode_t mode) override {
    auto fd = forwarding_fs::open(p, flags, mode);
    if (fd.ok()) {
      std::lock_guard<std::mutex> g(mu_);
      if (p.find("/commit-log/") != std::string::npos) logs_.insert(*fd);
      else logs_.erase(*fd);
    }
    return fd;
  }
  result<std::size_t> write(int fd, const char* d, std::size_t n) override {
    if (is_log(fd) && fail_writes > 0) {
      --fail_writes;
      return storage::errno_status(ENOSPC, "write", "");
    }
    return forwarding_fs::write(fd, d, n);
  }
  result<std::size_t> pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) override {  // the log's writes
    if (is_log(fd) && fail_writes > 0) {
      --fail_writes;
      return storage::errno_status(ENOSPC, "write", "");
    }
    return forwarding_fs::pwrite(fd, d, n, o);
  }
  status fdatasync(int fd) override {
    if (is_log(fd) && fail_syncs > 0) {
      --fail_syncs;
      return storage::errno_status(EIO, "fdatasync", "");
    }
    return forwarding_fs::fdatasync(fd);
  }

 private:
  bool is_log(int fd) {
    std::lock_guard<std::mutex> g(mu_);
    return logs_.count(fd) > 0;
  }
  std::mutex mu_;
  std::set<int> logs_;
};

struct harness {
  manual_clock clk{1'796'000'000'000};
  storage::memory_fs mem{clk};
  storage::power_loss_fs power{mem, 7, /*forward_syncs=*/false};
  log_faults faults{power};
  std::unique_ptr<runtime::runtime> rt;
  std::uint64_t checkpoint_bytes = 0;  // storage.commitLogCheckpointBytes when set

  status start() {
    runtime::runtime_options o;
    o.settings.state_dir = kState;
    if (checkpoint_bytes) o.settings.storage.commit_log_checkpoint_bytes = checkpoint_bytes;
    o.settings.session.reset.timezone = "UTC";
    o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
    o.runner = std::make_shared<runtime::simulated_model>(clk);
    o.time = &clk;
    o.virtual_time = true;
    o.files = &faults;
    o.files_block = false;
    auto started = runtime::runtime::start(o);
    if (!started.ok()) return started.error();
    rt = std::move(*started);
    return {};
  }
  ~harness() {
    if (rt) (void)rt->stop();
  }
  turn_outcome turn(const std::string& peer, const std::string& text) { return rt->send(testing::dm(peer, text)).get(); }
  // The process dies with the power: its locks go with it (the files stay, as after a reboot).
  void power_cut() {
    testing::power_cut(power, mem, rt, kSessions);
  }
  // The user texts in every transcript.
  std::set<std::string> texts() {
    std::set<std::string> out;
    const std::vector<std::string> names = *mem.list_dir(kSessions);
    for (const auto& name : names) {
      if (name.size() < 6 || name.compare(name.size() - 6, 6, ".jsonl") != 0) continue;
      const std::string text = *storage::read_file(mem, kSessions + "/" + name, 1 << 24);
      for (const auto& line : testing::split_lines(text)) {
        const auto at = line.find("\"content\":\"said ");
        if (at != std::string::npos) out.insert(line.substr(at + 11, line.find('"', at + 11) - at - 11));
      }
    }
    return out;
  }
};

}  // namespace

TEST_CASE("commit log: turns acknowledged before a power loss are back after the next start replays the log") {
  harness h;
  REQUIRE(h.start().ok());
  std::set<std::string> acked;
  for (int round = 0; round < 4; ++round)
    for (int peer = 0; peer < 3; ++peer) {
      const std::string text = "said " + std::to_string(peer) + "-" + std::to_string(round);
      auto out = h.turn("p" + std::to_string(peer), text);
      REQUIRE(out.st.ok());
      acked.insert(text);
    }
  h.power_cut();
  // The transcripts were never synced in place: the power loss tore them.
  std::size_t missing = 0;
  const auto before = h.texts();
  for (const auto& t : acked) missing += before.count(t) == 0;
  CHECK(missing > 0);
  REQUIRE(h.start().ok());
  const auto after = h.texts();
  for (const auto& t : acked) {
    INFO("acknowledged turn " << t);
    CHECK(after.count(t) == 1);
  }
  // And the sessions go on.
  CHECK(h.turn("p0", "said after").st.ok());
}

TEST_CASE("commit log: a log write out of space fails the turn with the log's error and loses nothing acknowledged") {
  harness h;
  REQUIRE(h.start().ok());
  REQUIRE(h.turn("p1", "said first").st.ok());
  h.faults.fail_writes = 1;
  auto failed = h.turn("p1", "said refused");
  CHECK_FALSE(failed.st.ok());
  CHECK_THAT(failed.st.message(), Catch::Contains("commit log"));
  CHECK_THAT(failed.st.message(), Catch::Contains("No space left"));
  REQUIRE(h.turn("p1", "said third").st.ok());
  h.power_cut();
  REQUIRE(h.start().ok());
  const auto after = h.texts();
  CHECK(after.count("said first") == 1);
  CHECK(after.count("said third") == 1);
  // The refused turn's lines were in the page cache; the next turn's record carried them.
  CHECK(after.count("said refused") == 1);
}

TEST_CASE("commit log: a failed log sync fails the turn, a new log takes over, nothing acknowledged is lost") {
  harness h;
  REQUIRE(h.start().ok());
  REQUIRE(h.turn("p2", "said first").st.ok());
  h.faults.fail_syncs = 1;
  auto failed = h.turn("p2", "said unsynced");
  CHECK_FALSE(failed.st.ok());
  CHECK_THAT(failed.st.message(), Catch::Contains("syncing commit log"));
  REQUIRE(h.turn("p2", "said third").st.ok());
  // The failed log holds rows: it goes with a checkpoint once sessions.json holds them.
  REQUIRE(h.rt->flush().ok());
  h.rt->settle();
  auto logs = cl::list_logs(h.mem, cl::log_dir(kState));
  REQUIRE(logs.ok());
  CHECK(logs->size() == 1);  // the failed one went with a checkpoint; the next one is written
  h.power_cut();
  REQUIRE(h.start().ok());
  const auto after = h.texts();
  CHECK(after.count("said first") == 1);
  CHECK(after.count("said third") == 1);
}

TEST_CASE("commit log: a clean stop leaves no log, and a log from another state dir stops the start") {
  harness h;
  REQUIRE(h.start().ok());
  REQUIRE(h.turn("p3", "said once").st.ok());
  REQUIRE(h.rt->stop().ok());
  h.rt.reset();
  CHECK(cl::list_logs(h.mem, cl::log_dir(kState))->empty());
  // A log another state dir wrote, put here.
  auto foreign = cl::create_log(h.mem, h.clk, cl::log_dir(kState), 7, "11111111-2222-4333-8444-555555555555");
  REQUIRE(foreign.ok());
  REQUIRE(h.mem.close(foreign->fd).ok());
  status st = h.start();
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("11111111-2222-4333-8444-555555555555"));
  const std::string ours = storage::read_file(h.mem, cl::state_id_path(kState), 100)->substr(0, 36);
  CHECK_THAT(st.message(), Catch::Contains(ours));
  CHECK_THAT(st.message(), Catch::Contains("move the log out"));
}

TEST_CASE("commit log: storage.commitLogCheckpointBytes rotates the log at that size, dropped logs are recycled") {
  harness h;
  h.checkpoint_bytes = 64 << 10;
  REQUIRE(h.start().ok());
  std::set<std::string> acked;
  for (int i = 0; i < 80; ++i) {
    const std::string text = "said " + std::to_string(i % 5) + "-" + std::to_string(i);
    REQUIRE(h.turn("p" + std::to_string(i % 5), text).st.ok());
    acked.insert(text);
  }
  REQUIRE(h.rt->flush().ok());
  h.rt->settle();
  auto logs = cl::list_logs(h.mem, cl::log_dir(kState));
  REQUIRE(logs.ok());
  REQUIRE(logs->size() == 1);
  CHECK(logs->back() > 1);  // rotated at 64 KiB (the default, 64 MiB, would not have)
  const std::vector<std::string> names = *h.mem.list_dir(cl::log_dir(kState));
  std::size_t free_files = 0;
  for (const auto& n : names) free_files += n.find(".free") != std::string::npos;
  CHECK(free_files >= 1);  // checkpointed logs kept for reuse ...
  CHECK(free_files <= 2);  // ... two at most
  // Logs written into recycled files replay as well as new ones.
  h.power_cut();
  REQUIRE(h.start().ok());
  const auto after = h.texts();
  for (const auto& t : acked) {
    INFO("acknowledged turn " << t);
    CHECK(after.count(t) == 1);
  }
}
