// The commit log actor on CAF's test coordinator (one actor step at a time; it syncs and
// checkpoints itself, or with workers on the scheduler): a round of appends is one write and
// one fdatasync of the log; answers name the file by id, keep arrival order, and come only
// after the log (and a new transcript's data and name) are durable; a failed write or sync
// fails just the records it concerns and the log goes on (a new file after a failed sync); a
// checkpoint makes the transcripts durable and removes the old log; after a power loss the
// log replays every answered append.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/commit_log/commit_log_actor.hpp"
#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/durable_file.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;
namespace cl = sessionrt::storage::commit_log;

namespace {

const std::string kState = "/state";
const std::string kSessions = "/state/agents/main/sessions";

struct answer {
  std::uint64_t file;
  std::uint64_t seq;
  std::string error;
  bool from_log = false;  // sent by the log actor (not by a sync worker)
};

// Forwards appends to the log as its own and records the answers.
caf::behavior requester(caf::event_based_actor* self, int, caf::actor log, std::shared_ptr<std::vector<answer>> answers) {
  return {
      [self, log](log_append_atom, commit_log_append& a) { self->send(log, log_append_atom::value, std::move(a)); },
      [self, log, answers](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) {
        answers->push_back({file, seq, error, caf::actor_cast<caf::actor_addr>(self->current_sender()) == log.address()});
      },
  };
}

// Counts the syncs by kind and by path.
class counting_fs final : public storage::forwarding_fs {
 public:
  explicit counting_fs(storage::fs& inner) : storage::forwarding_fs(inner) {}
  int fdatasyncs = 0, fsyncs = 0, syncfs_calls = 0, writes = 0;
  std::function<void()> on_syncfs;  // called before each syncfs (a test cuts the power there)
  result<std::size_t> write(int fd, const char* d, std::size_t n) override {
    ++writes;
    return forwarding_fs::write(fd, d, n);
  }
  result<std::size_t> pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) override {  // the log's
    ++writes;
    return forwarding_fs::pwrite(fd, d, n, o);
  }
  status fdatasync(int fd) override {
    ++fdatasyncs;
    return forwarding_fs::fdatasync(fd);
  }
  status fsync(int fd) override {
    ++fsyncs;
    return forwarding_fs::fsync(fd);
  }
  status syncfs(int fd) override {
    ++syncfs_calls;
    if (on_syncfs) on_syncfs();
    return forwarding_fs::syncfs(fd);
  }
};

struct harness {
  manual_clock clk{1'000'000};
  storage::memory_fs mem{clk};
  storage::power_loss_fs power{mem, 3, /*forward_syncs=*/false};
  storage::faulty_fs faulty{power};
  counting_fs files{faulty};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  caf::actor log, client;
  std::shared_ptr<std::vector<answer>> answers = std::make_shared<std::vector<answer>>();
  std::string state_id;

  explicit harness(int parallel_syncs = 0, std::uint64_t checkpoint_bytes = kCheckpointBytes) {
    REQUIRE(storage::ensure_dir(files, kSessions).ok());
    REQUIRE(storage::fsync_dir(files, "/state/agents/main").ok());
    auto rec = cl::recover_logs(files, kState);
    REQUIRE(rec.ok());
    state_id = rec->state_id;
    auto made = cl::create_log(files, clk, cl::log_dir(kState), rec->next_number, state_id);
    REQUIRE(made.ok());
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    commit_log_config lc;
    lc.files = &files;
    lc.time = &clk;
    lc.state_dir = kState;
    lc.state_id = state_id;
    lc.first = *made;
    lc.parallel_syncs = parallel_syncs;
    lc.files_block = false;
    lc.self_scheduling = false;
    lc.checkpoint_bytes = checkpoint_bytes;
    log = caf::actor_cast<caf::actor>(sys->spawn(commit_log, lc));
    client = sys->spawn(requester, 0, log, answers);
    sched->run();
    files.fdatasyncs = files.fsyncs = files.syncfs_calls = files.writes = 0;
  }
  ~harness() {
    caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(log, caf::exit_reason::user_shutdown);
    sched->run();
  }
  // A transcript written through the page cache; `created` says it is new (never synced).
  struct transcript {
    storage::shared_fd_ptr fd;
    std::string path;
    std::uint64_t ino = 0;
    std::string text;
    std::uint64_t acked = 0;
  };
  transcript open(const std::string& name) {
    transcript t;
    t.path = kSessions + "/" + name;
    auto fd = files.open(t.path, O_RDWR | O_CREAT | O_APPEND, 0600);
    REQUIRE(fd.ok());
    t.fd = std::make_shared<const storage::shared_fd>(files, *fd);
    t.ino = files.fstat(*fd)->ino;
    return t;
  }
  // Appends `line` to `t` and sends everything past its acknowledged end (as a session does).
  void append(transcript& t, const std::string& line, std::uint64_t seq, bool new_file = false) {
    REQUIRE(storage::write_all(files, t.fd->fd(), line.data(), line.size()).ok());
    t.text += line;
    commit_log_append a;
    a.file = t.fd;
    a.path = t.path;
    a.inode = t.ino;
    a.offset = t.acked;
    a.bytes = t.text.substr(t.acked);
    a.seq = seq;
    a.new_file = new_file;
    caf::anon_send(client, log_append_atom::value, std::move(a));
  }
  // The records of every log in the dir, as (path, offset, bytes).
  std::vector<cl::transcript_append> logged() {
    std::vector<cl::transcript_append> out;
    const std::vector<std::uint64_t> numbers = *cl::list_logs(mem, cl::log_dir(kState));
    for (auto n : numbers) {
      auto fd = mem.open(cl::log_path(cl::log_dir(kState), n), O_RDONLY, 0);
      REQUIRE(fd.ok());
      cl::log_reader r(mem, *fd, "log");
      std::string rec;
      while (r.next(rec)) {
        auto d = cl::decode(rec);
        REQUIRE(d.ok());
        if (auto* a = std::get_if<cl::transcript_append>(&*d)) out.push_back(*a);
      }
      (void)mem.close(*fd);
    }
    return out;
  }
  std::size_t logs() { return cl::list_logs(mem, cl::log_dir(kState))->size(); }
};

}  // namespace

TEST_CASE("commit log actor: a round of appends is one write and one fdatasync, answered by file id in order") {
  harness h;
  auto a = h.open("a.jsonl"), b = h.open("b.jsonl");
  h.append(a, "{\"a\":1}\n", 1);
  h.append(b, "{\"b\":1}\n", 1);
  h.append(a, "{\"a\":2}\n", 2);
  h.sched->run();
  REQUIRE(h.answers->size() == 3);
  CHECK(h.answers->at(0).file == a.fd->id());
  CHECK(h.answers->at(0).seq == 1);
  CHECK(h.answers->at(1).file == b.fd->id());
  CHECK(h.answers->at(2).seq == 2);
  for (const auto& x : *h.answers) CHECK(x.error.empty());
  CHECK(h.files.writes == 3 + 1);    // three transcript appends, one log write
  CHECK(h.files.fdatasyncs == 1);    // the log, once
  CHECK(h.files.fsyncs == 0);        // no new file, no directory
  auto recs = h.logged();
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].path == "agents/main/sessions/a.jsonl");  // relative to the state dir
  CHECK(recs[0].inode == a.ino);
  CHECK(recs[2].offset == 0);
  CHECK(recs[2].bytes == "{\"a\":1}\n{\"a\":2}\n");  // everything not acknowledged when it was sent
}

TEST_CASE("commit log actor: a transcript closes once its record is answered, and the checkpoint syncs its filesystem") {
  harness h;
  auto a = h.open("a.jsonl");
  h.append(a, "x\n", 1, /*new_file=*/true);
  h.sched->run();
  a.acked = a.text.size();
  h.append(a, "y\n", 2);
  const std::uint64_t id = a.fd->id();
  std::weak_ptr<const storage::shared_fd> watch = a.fd;
  a.fd.reset();  // the session passivated meanwhile: its request still holds the file
  CHECK_FALSE(watch.expired());
  h.sched->run();
  REQUIRE(h.answers->size() == 2);
  CHECK(h.answers->at(1).file == id);
  CHECK(watch.expired());  // not kept for the checkpoint: it is on the log's filesystem
  CHECK(h.files.syncfs_calls == 0);
  h.sys->spawn([&, log = h.log](caf::event_based_actor* self) {
    self->request(log, caf::infinite, checkpoint_atom::value).then([](const std::string& err) { CHECK(err.empty()); });
  });
  h.sched->run();
  CHECK(h.files.syncfs_calls == 1);  // one syncfs for every transcript written since the log began
  CHECK(h.logs() == 0);              // the log went with the checkpoint
  REQUIRE(h.power.power_loss().ok());
  CHECK(*storage::read_file(h.mem, a.path, 100) == "x\ny\n");
}

TEST_CASE("commit log actor: a new transcript's data and name are durable before its answer") {
  harness h;
  auto a = h.open("new.jsonl");
  h.append(a, "{\"type\":\"session\"}\n", 1, /*new_file=*/true);
  h.sched->run();
  REQUIRE(h.answers->size() == 1);
  CHECK(h.answers->at(0).error.empty());
  CHECK(h.files.fdatasyncs == 2);  // the new file, the log
  CHECK(h.files.fsyncs == 1);      // its directory
  // A power loss now keeps the file with its bytes: nothing to replay.
  REQUIRE(h.power.power_loss().ok());
  CHECK(*storage::read_file(h.mem, a.path, 1000) == "{\"type\":\"session\"}\n");
}

TEST_CASE("commit log actor: after a power loss the log replays every answered append") {
  harness h;
  std::vector<harness::transcript> ts;
  for (int i = 0; i < 6; ++i) ts.push_back(h.open("t" + std::to_string(i) + ".jsonl"));
  for (int round = 1; round <= 4; ++round) {
    for (auto& t : ts) h.append(t, "{\"round\":" + std::to_string(round) + "}\n", round, /*new_file=*/round == 1);
    h.sched->run();
    for (auto& t : ts) t.acked = t.text.size();  // answered (checked below)
  }
  REQUIRE(h.answers->size() == 24);
  for (const auto& x : *h.answers) CHECK(x.error.empty());
  // One more append, not answered: the power goes before its round runs.
  h.append(ts[0], "{\"lost\":true}\n", 5);
  auto lost = h.power.power_loss();
  REQUIRE(lost.ok());
  CHECK(lost->files_torn >= 6);
  auto rec = cl::recover_logs(h.mem, kState);
  REQUIRE(rec.ok());
  CHECK(rec->report.rewritten > 0);
  for (auto& t : ts) {
    const std::string back = *storage::read_file(h.mem, t.path, 1 << 20);
    CHECK(back.substr(0, t.acked) == t.text.substr(0, t.acked));
  }
  CHECK(h.logs() == 0);
}

TEST_CASE("commit log actor: a failed write fails its round with the log's name, and the next round goes on") {
  harness h;
  auto a = h.open("a.jsonl");
  h.append(a, "one\n", 1);
  h.sched->run();
  a.acked = a.text.size();
  h.faulty.space_left(10);  // the next log write runs out of space
  // (the transcript append itself goes to the page cache through the same fs: let it pass)
  REQUIRE(storage::write_all(h.mem, a.fd->fd(), "two\n", 4).ok());
  a.text += "two\n";
  {
    commit_log_append r;
    r.file = a.fd;
    r.path = a.path;
    r.inode = a.ino;
    r.offset = a.acked;
    r.bytes = a.text.substr(a.acked);
    r.seq = 2;
    caf::anon_send(h.client, log_append_atom::value, std::move(r));
  }
  h.sched->run();
  REQUIRE(h.answers->size() == 2);
  CHECK(h.answers->at(1).seq == 2);
  CHECK(h.answers->at(1).error.find("No space") != std::string::npos);
  CHECK(h.answers->at(1).error.find("commit-log") != std::string::npos);
  h.faulty.clear();
  // The session's next record carries the failed bytes again.
  h.append(a, "three\n", 3);
  h.sched->run();
  REQUIRE(h.answers->size() == 3);
  CHECK(h.answers->at(2).error.empty());
  auto recs = h.logged();
  REQUIRE(recs.size() == 2);  // the failed record is not in the log (cut back), the next is whole
  CHECK(recs[1].offset == 4);
  CHECK(recs[1].bytes == "two\nthree\n");
}

TEST_CASE("commit log actor: a failed fdatasync fails that log's records and a new log takes the writes") {
  harness h;
  auto a = h.open("a.jsonl");
  h.faulty.fail_nth(storage::fs_op::fdatasync, 1, EIO);
  h.append(a, "one\n", 1);
  h.sched->run();
  REQUIRE(h.answers->size() == 1);
  CHECK(h.answers->at(0).error.find("syncing commit log") != std::string::npos);
  h.append(a, "two\n", 2);
  h.sched->run();
  REQUIRE(h.answers->size() == 2);
  CHECK(h.answers->at(1).error.empty());
  // The failed log went with a checkpoint once its records were answered; the new one holds
  // the whole unacknowledged tail.
  auto numbers = *cl::list_logs(h.mem, cl::log_dir(kState));
  REQUIRE(numbers.size() == 1);
  CHECK(numbers[0] == 2);
  auto recs = h.logged();
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].bytes == "one\ntwo\n");
}

TEST_CASE("commit log actor: past its size a log is checkpointed: transcripts durable, the old log removed") {
  harness h(0, /*checkpoint_bytes=*/200);
  auto a = h.open("a.jsonl");
  h.append(a, std::string(300, 'x') + "\n", 1, /*new_file=*/true);
  h.sched->run();
  REQUIRE(h.answers->size() == 1);
  CHECK(h.answers->at(0).error.empty());
  auto numbers = *cl::list_logs(h.mem, cl::log_dir(kState));
  CHECK(numbers == std::vector<std::uint64_t>{2});
  CHECK(h.logged().empty());
  // The checkpoint synced the transcript: a power loss keeps it whole.
  REQUIRE(h.power.power_loss().ok());
  CHECK(storage::read_file(h.mem, a.path, 1000)->size() == 301);
}

TEST_CASE("commit log actor: with sync workers on the scheduler, answers still come in order") {
  harness h(2);
  std::vector<harness::transcript> ts;
  for (int i = 0; i < 4; ++i) ts.push_back(h.open("w" + std::to_string(i) + ".jsonl"));
  for (std::size_t i = 0; i < ts.size(); ++i) {
    h.append(ts[i], "line\n", 10 + i);
    h.sched->run_once();  // the requester forwards it; rounds interleave with syncs
  }
  h.sched->run();
  REQUIRE(h.answers->size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(h.answers->at(i).seq == 10 + i);
    CHECK(h.answers->at(i).error.empty());
  }
}

TEST_CASE("commit log actor: the sync worker answers the records of its job itself") {
  harness h(1);
  auto a = h.open("a.jsonl");
  h.append(a, "one\n", 1);
  h.sched->run();
  h.append(a, "two\n", 2);
  h.sched->run();
  REQUIRE(h.answers->size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(h.answers->at(i).seq == i + 1);
    CHECK(h.answers->at(i).error.empty());
    CHECK_FALSE(h.answers->at(i).from_log);  // one hop: worker -> session, not worker -> log -> session
  }
  CHECK(h.files.fdatasyncs == 2);
}

TEST_CASE("commit log actor: after the final checkpoint appends are refused") {
  harness h;
  auto a = h.open("a.jsonl");
  h.append(a, "one\n", 1);
  std::string result = "unset";
  h.sys->spawn([&, log = h.log](caf::event_based_actor* self) {
    self->request(log, caf::infinite, checkpoint_atom::value).then([&](const std::string& err) { result = err; });
  });
  h.sched->run();
  CHECK(result.empty());
  REQUIRE(h.answers->size() == 1);
  CHECK(h.answers->at(0).error.empty());  // durable in its transcript now
  CHECK(h.logs() == 0);
  h.append(a, "two\n", 2);
  h.sched->run();
  REQUIRE(h.answers->size() == 2);
  CHECK(h.answers->at(1).error.find("closed") != std::string::npos);
}

TEST_CASE("commit log actor: a power cut inside a checkpoint loses no answered append") {
  harness h(0, /*checkpoint_bytes=*/1500);
  std::vector<harness::transcript> ts;
  for (int i = 0; i < 3; ++i) ts.push_back(h.open("c" + std::to_string(i) + ".jsonl"));
  // The checkpoint's syncfs never happens: the power goes just before it.
  h.files.on_syncfs = [&] { h.power.kill(); };
  std::size_t answered = 0;
  for (int round = 1; round <= 6 && !h.power.dead(); ++round) {
    for (auto& t : ts) h.append(t, std::string(200, 'a' + round) + "\n", round, round == 1);
    h.sched->run();
    for (; answered < h.answers->size(); ++answered)
      if (h.answers->at(answered).error.empty())
        for (auto& t : ts)
          if (t.fd->id() == h.answers->at(answered).file) t.acked = std::max<std::uint64_t>(t.acked, 201 * h.answers->at(answered).seq);
  }
  REQUIRE(h.power.dead());  // a checkpoint started
  CHECK(h.logs() == 2);     // the retired log was not removed, the new one was begun
  REQUIRE(h.power.power_loss().ok());
  auto rec = cl::recover_logs(h.mem, kState);
  REQUIRE(rec.ok());
  for (auto& t : ts) {
    REQUIRE(t.acked > 0);
    CHECK(storage::read_file(h.mem, t.path, 1 << 20)->substr(0, t.acked) == t.text.substr(0, t.acked));
  }
}
