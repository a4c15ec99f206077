// The commit log actor's (settle) on CAF's test coordinator: answered at once when nothing is
// pending, and otherwise only once every record that arrived before it is answered and the
// fdatasync (or checkpoint) a worker runs for them returned. runtime::settle() asks it, so a
// test or the simulator that cuts the power after settling finds what a later cut would
// (a record sent while a model call waits acknowledges no turn: nothing else waits for it).
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/commit_log/commit_log_actor.hpp"
#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;
namespace cl = sessionrt::storage::commit_log;

namespace {

const std::string kState = "/state";
const std::string kSessions = "/state/agents/main/sessions";

// Counts the fdatasyncs that returned (a sync worker runs them: a new file's, the log's).
class counting_fs final : public storage::forwarding_fs {
 public:
  explicit counting_fs(storage::fs& inner) : storage::forwarding_fs(inner) {}
  int fdatasyncs = 0;
  status fdatasync(int fd) override {
    status st = forwarding_fs::fdatasync(fd);
    ++fdatasyncs;
    return st;
  }
};

// What the log and the test's fs looked like when an answer arrived.
struct seen {
  int fdatasyncs = -1;
  std::size_t logs = 0;
};

caf::behavior client(caf::event_based_actor* self, caf::actor log, std::shared_ptr<std::size_t> answered) {
  return {
      [self, log](log_append_atom, commit_log_append& a) { self->send(log, log_append_atom::value, std::move(a)); },
      [answered](synced_atom, std::uint64_t, std::uint64_t, const std::string& error) {
        CHECK(error.empty());
        ++*answered;
      },
  };
}

struct harness {
  manual_clock clk{1'000'000};
  storage::memory_fs mem{clk};
  storage::power_loss_fs power{mem, 3, /*forward_syncs=*/false};
  counting_fs files{power};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  caf::actor log, sender;
  std::shared_ptr<std::size_t> answered = std::make_shared<std::size_t>(0);
  storage::shared_fd_ptr fd;
  std::uint64_t ino = 0;
  std::string text;

  harness(int parallel_syncs, std::uint64_t checkpoint_bytes = kCheckpointBytes) {
    REQUIRE(storage::ensure_dir(files, kSessions).ok());
    REQUIRE(storage::fsync_dir(files, "/state/agents/main").ok());
    auto rec = cl::recover_logs(files, kState);
    REQUIRE(rec.ok());
    auto made = cl::create_log(files, clk, cl::log_dir(kState), rec->next_number, rec->state_id);
    REQUIRE(made.ok());
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    commit_log_config lc;
    lc.files = &files;
    lc.time = &clk;
    lc.state_dir = kState;
    lc.state_id = rec->state_id;
    lc.first = *made;
    lc.parallel_syncs = parallel_syncs;
    lc.files_block = false;
    lc.self_scheduling = false;
    lc.checkpoint_bytes = checkpoint_bytes;
    log = caf::actor_cast<caf::actor>(sys->spawn(commit_log, lc));
    sender = sys->spawn(client, log, answered);
    sched->run();
    auto opened = files.open(kSessions + "/a.jsonl", O_RDWR | O_CREAT | O_APPEND, 0600);
    REQUIRE(opened.ok());
    fd = std::make_shared<const storage::shared_fd>(files, *opened);
    ino = files.fstat(*opened)->ino;
    files.fdatasyncs = 0;
  }
  ~harness() {
    fd.reset();
    caf::anon_send_exit(sender, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(log, caf::exit_reason::user_shutdown);
    sched->run();
  }
  // Appends `line` to the transcript and hands its record to the client (as a session does),
  // which forwards it to the log at its next step.
  void append(const std::string& line, std::uint64_t seq) {
    REQUIRE(storage::write_all(files, fd->fd(), line.data(), line.size()).ok());
    commit_log_append a;
    a.file = fd;
    a.path = kSessions + "/a.jsonl";
    a.inode = ino;
    a.offset = text.size();
    a.bytes = line;
    a.seq = seq;
    a.new_file = text.empty();  // created by this writer: the log makes its name durable too
    text += line;
    caf::anon_send(sender, log_append_atom::value, std::move(a));
  }
  std::size_t logs() { return cl::list_logs(mem, cl::log_dir(kState))->size(); }
  // Asks (settle) from an actor of its own (returned); `out` is filled in when the answer arrives.
  caf::actor ask_settle(std::shared_ptr<std::optional<seen>> out) {
    return sys->spawn([this, out, l = log](caf::event_based_actor* self) {
      self->request(l, caf::infinite, settle_atom::value).then([this, out](bool) {
        *out = seen{files.fdatasyncs, logs()};
      });
    });
  }
  // Runs every job but the log's sync workers' (they are the only other actors here).
  void run_all_but_workers(const caf::actor& asker) {
    const std::array<caf::resumable*, 3> mine{as_job(log), as_job(sender), as_job(asker)};
    sched->run_jobs_filtered([&mine](caf::resumable* job) { return std::find(mine.begin(), mine.end(), job) != mine.end(); });
  }
  static caf::resumable* as_job(const caf::actor& a) {
    return dynamic_cast<caf::resumable*>(caf::actor_cast<caf::abstract_actor*>(a));
  }
};

}  // namespace

TEST_CASE("commit log settle: answered at once when idle, after the sync in flight otherwise") {
  harness h(/*parallel_syncs=*/1);
  auto idle = std::make_shared<std::optional<seen>>();
  h.ask_settle(idle);
  h.sched->run();
  REQUIRE(idle->has_value());
  CHECK((*idle)->fdatasyncs == 0);

  // The record reaches the log first (the client's step), then the settle request: the log
  // writes the round and hands the fdatasync to its worker, and the request waits for it.
  h.append("{\"role\":\"user\"}\n", 1);
  REQUIRE(h.sched->try_run_once());  // the client forwards the record
  auto busy = std::make_shared<std::optional<seen>>();
  const caf::actor asker = h.ask_settle(busy);
  h.run_all_but_workers(asker);  // everything the log does before its worker syncs
  CHECK_FALSE(busy->has_value());  // the record is written, its sync not done: not settled
  CHECK(h.files.fdatasyncs == 0);
  CHECK(*h.answered == 0);
  h.sched->run();  // the worker syncs; the log answers the record, then the request
  REQUIRE(busy->has_value());
  CHECK((*busy)->fdatasyncs == 2);  // the worker's fdatasyncs (the new file, the log) had returned
  CHECK(*h.answered == 1);

  // Settled means durable: a power cut now keeps the record, replayed into the transcript.
  REQUIRE(h.power.power_loss().ok());
  auto rec = cl::recover_logs(h.mem, kState);
  REQUIRE(rec.ok());
  CHECK(*storage::read_file(h.mem, kSessions + "/a.jsonl", 1000) == "{\"role\":\"user\"}\n");
}

TEST_CASE("commit log settle: waits for the checkpoint a full log starts") {
  harness h(/*parallel_syncs=*/1, /*checkpoint_bytes=*/200);
  h.append(std::string(300, 'x') + "\n", 1);  // past the size: a new log, the old one checkpointed
  REQUIRE(h.sched->try_run_once());
  auto out = std::make_shared<std::optional<seen>>();
  h.ask_settle(out);
  h.sched->run();
  REQUIRE(out->has_value());
  CHECK((*out)->logs == 1);  // the checkpoint had removed the old log when settle was answered
  CHECK(*h.answered == 1);
}

TEST_CASE("commit log settle: with the actor syncing itself, answered after its rounds") {
  harness h(/*parallel_syncs=*/0);
  for (std::uint64_t i = 1; i <= 3; ++i) h.append("line " + std::to_string(i) + "\n", i);
  auto out = std::make_shared<std::optional<seen>>();
  h.ask_settle(out);
  h.sched->run();
  REQUIRE(out->has_value());
  CHECK((*out)->fdatasyncs >= 1);
  CHECK(*h.answered == 3);
}
