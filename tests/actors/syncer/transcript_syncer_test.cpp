// The group-commit syncer on CAF's test coordinator (one actor step at a time, no threads),
// running its rounds itself:
// a request holds its file open even after the owner let go of it (so a session may close or
// trim its transcript while a sync is in flight), the answer names the file by its shared_fd
// id (fd numbers are reused once closed), the file closes when the round is done, and a round
// makes every filesystem it touches durable (syncfs covers only its own). And with real
// threads and two sync workers: a round starts while an earlier one still waits on the disk.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/syncer/transcript_syncer.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

struct answer {
  std::uint64_t file;
  std::uint64_t seq;
  std::string error;
};

// Forwards (sync, file, seq) to the syncer as its own request and records the answers.
// (The unused int: CAF 0.17 mishandles spawning a function that takes no arguments.)
caf::behavior requester(caf::event_based_actor* self, int, caf::actor syncer,
                        std::shared_ptr<std::vector<answer>> answers) {
  return {
      [self, syncer](sync_atom, storage::shared_fd_ptr& file, std::uint64_t seq) {
        self->send(syncer, sync_atom::value, std::move(file), seq, std::string());
      },
      [answers](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) {
        answers->push_back({file, seq, error});
      },
  };
}

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

struct harness {
  testing::temp_dir dir;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  caf::actor syncer, client;
  std::shared_ptr<std::vector<answer>> answers = std::make_shared<std::vector<answer>>();

  harness() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    syncer = caf::actor_cast<caf::actor>(sys->spawn(transcript_syncer, &storage::posix_fs(), std::int64_t{0}, 0, true));
    client = sys->spawn(requester, 0, syncer, answers);
    sched->run();
  }
  ~harness() {
    caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(syncer, caf::exit_reason::user_shutdown);
    sched->run();
  }
  storage::shared_fd_ptr open_file(const std::string& name) {
    auto fd = storage::posix_fs().open(dir.file(name), O_RDWR | O_CREAT, 0600);
    REQUIRE(fd.ok());
    REQUIRE(::write(*fd, "line\n", 5) == 5);
    return std::make_shared<const storage::shared_fd>(storage::posix_fs(), *fd);
  }
};

}  // namespace

TEST_CASE("syncer: a request keeps its file open after the owner let go, and the answer names the file by id") {
  harness h;
  auto file = h.open_file("a.jsonl");
  const int fd = file->fd();
  const std::uint64_t id = file->id();
  caf::anon_send(h.client, sync_atom::value, file, std::uint64_t{3});
  file.reset();  // the session closed (or trimmed) its transcript meanwhile
  h.sched->run_once();  // the client forwards the request: the syncer's mailbox holds the file now
  CHECK(is_open(fd));
  h.sched->run();  // the round runs and answers
  REQUIRE(h.answers->size() == 1);
  CHECK(h.answers->at(0).file == id);
  CHECK(h.answers->at(0).seq == 3);
  CHECK(h.answers->at(0).error.empty());
  CHECK_FALSE(is_open(fd));  // the round was the last holder
}

TEST_CASE("syncer: files in one round are answered each under its own id, the owner's fd stays open") {
  harness h;
  std::vector<storage::shared_fd_ptr> files;
  for (int i = 0; i < 5; ++i) files.push_back(h.open_file("f" + std::to_string(i) + ".jsonl"));  // 5: syncfs
  for (std::size_t i = 0; i < files.size(); ++i)
    caf::anon_send(h.client, sync_atom::value, files[i], std::uint64_t{10 + i});
  h.sched->run();
  REQUIRE(h.answers->size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    CHECK(h.answers->at(i).file == files[i]->id());
    CHECK(h.answers->at(i).seq == 10 + i);
    CHECK(h.answers->at(i).error.empty());
    CHECK(is_open(files[i]->fd()));  // still held by its owner
  }
  CHECK(files[0]->id() != files[1]->id());
}

namespace {

// Reports files whose name holds "other" on a second filesystem, and counts the syncs made.
class two_devices final : public storage::forwarding_fs {
 public:
  two_devices() : storage::forwarding_fs(storage::posix_fs()) {}
  std::set<int> other;  // fds "on the other filesystem"
  std::vector<std::uint64_t> syncfs_devices;
  int fdatasyncs = 0;
  int fstats = 0;
  result<storage::file_info> fstat(int fd) override {
    ++fstats;
    auto info = forwarding_fs::fstat(fd);
    if (info.ok()) info->dev = other.count(fd) ? 2 : 1;
    return info;
  }
  status syncfs(int fd) override {
    syncfs_devices.push_back(other.count(fd) ? 2 : 1);
    return forwarding_fs::syncfs(fd);
  }
  status fdatasync(int fd) override {
    ++fdatasyncs;
    return forwarding_fs::fdatasync(fd);
  }
};

}  // namespace

TEST_CASE("syncer: a round syncs every filesystem it touches, not only the first file's") {
  harness h;
  two_devices fs;
  caf::anon_send_exit(h.syncer, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(h.client, caf::exit_reason::user_shutdown);
  h.sched->run();
  h.syncer = caf::actor_cast<caf::actor>(h.sys->spawn(transcript_syncer, static_cast<storage::fs*>(&fs), std::int64_t{0}, 0, true));
  h.client = h.sys->spawn(requester, 0, h.syncer, h.answers);
  h.sched->run();
  std::vector<storage::shared_fd_ptr> files;
  for (int i = 0; i < 6; ++i) files.push_back(h.open_file("f" + std::to_string(i) + ".jsonl"));
  for (int i = 0; i < 5; ++i) fs.other.insert(files[static_cast<std::size_t>(i)]->fd());  // 5 there, 1 here
  for (std::size_t i = 0; i < files.size(); ++i)
    caf::anon_send(h.client, sync_atom::value, files[i], std::uint64_t{1 + i});
  h.sched->run();
  REQUIRE(h.answers->size() == files.size());
  for (const auto& a : *h.answers) CHECK(a.error.empty());
  CHECK(fs.syncfs_devices == std::vector<std::uint64_t>{2});  // the 5 files: one syncfs of theirs
  CHECK(fs.fdatasyncs == 1);                                   // the lone file on the first one
  CHECK(fs.fstats == 6);
  // A second round of the same files: grouped the same way, without asking for their devices again.
  for (std::size_t i = 0; i < files.size(); ++i)
    caf::anon_send(h.client, sync_atom::value, files[i], std::uint64_t{10 + i});
  h.sched->run();
  REQUIRE(h.answers->size() == 2 * files.size());
  CHECK(fs.syncfs_devices == std::vector<std::uint64_t>{2, 2});
  CHECK(fs.fdatasyncs == 2);
  CHECK(fs.fstats == 6);
}

TEST_CASE("syncer: with files that do not block, its workers run on the scheduler and answer within its run") {
  harness h;
  caf::anon_send_exit(h.syncer, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(h.client, caf::exit_reason::user_shutdown);
  h.sched->run();
  // Two workers, not detached: the test coordinator alone runs every round to its answer
  // (detached ones would answer from threads of their own, after run() returned).
  h.syncer = caf::actor_cast<caf::actor>(h.sys->spawn(transcript_syncer, &storage::posix_fs(), std::int64_t{0}, 2, false));
  h.client = h.sys->spawn(requester, 0, h.syncer, h.answers);
  h.sched->run();
  std::vector<storage::shared_fd_ptr> files;
  for (int i = 0; i < 3; ++i) files.push_back(h.open_file("w" + std::to_string(i) + ".jsonl"));
  for (std::size_t i = 0; i < files.size(); ++i)
    caf::anon_send(h.client, sync_atom::value, files[i], std::uint64_t{20 + i});
  h.sched->run();
  REQUIRE(h.answers->size() == files.size());
  std::set<std::uint64_t> seqs;
  for (const auto& a : *h.answers) {
    CHECK(a.error.empty());
    seqs.insert(a.seq);
  }
  CHECK(seqs == std::set<std::uint64_t>{20, 21, 22});
}

namespace {

// fdatasync of one chosen fd blocks until the test releases it, and says when it started.
class held_sync final : public storage::forwarding_fs {
 public:
  held_sync() : storage::forwarding_fs(storage::posix_fs()) {}
  int held_fd = -1;
  std::promise<void> entered, release;
  status fdatasync(int fd) override {
    if (fd == held_fd) {
      entered.set_value();
      release.get_future().wait();
    }
    return forwarding_fs::fdatasync(fd);
  }
};

}  // namespace

TEST_CASE("syncer: with two rounds in flight a request is synced while an earlier round still waits on the disk") {
  testing::temp_dir dir;
  held_sync fs;
  auto open_file = [&](const std::string& name) {
    auto fd = storage::posix_fs().open(dir.file(name), O_RDWR | O_CREAT, 0600);
    REQUIRE(fd.ok());
    REQUIRE(::write(*fd, "line\n", 5) == 5);
    return std::make_shared<const storage::shared_fd>(storage::posix_fs(), *fd);
  };
  auto slow = open_file("slow.jsonl");
  auto quick = open_file("quick.jsonl");
  fs.held_fd = slow->fd();
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys(cfg);  // real threads: the workers block in fdatasync
  auto syncer = sys.spawn(transcript_syncer, static_cast<storage::fs*>(&fs), std::int64_t{0}, 2, true);
  // Whatever fails below, the held worker is let go and the syncer (its linked workers with it)
  // stops before the system waits for its actors.
  std::once_flag released;
  auto release = [&] { std::call_once(released, [&] { fs.release.set_value(); }); };
  struct on_exit {
    std::function<void()> fn;
    ~on_exit() { fn(); }
  } guard{[&] {
    release();
    caf::anon_send_exit(syncer, caf::exit_reason::user_shutdown);
  }};
  {
    caf::scoped_actor self(sys);
    std::vector<answer> got;
    auto next_answer = [&] {
      bool timed_out = false;
      self->receive(
          [&](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) {
            got.push_back({file, seq, error});
          },
          caf::after(std::chrono::seconds(30)) >> [&] { timed_out = true; });
      return !timed_out;
    };
    self->send(syncer, sync_atom::value, slow, std::uint64_t{1}, std::string());
    fs.entered.get_future().wait();  // the first round is inside fdatasync of the slow file
    self->send(syncer, sync_atom::value, quick, std::uint64_t{2}, std::string());
    REQUIRE(next_answer());  // with one round at a time this would wait for the release below
    CHECK(got.at(0).file == quick->id());
    CHECK(got.at(0).error.empty());
    release();
    REQUIRE(next_answer());
    CHECK(got.at(1).file == slow->id());
    CHECK(got.at(1).seq == 1);
    CHECK(got.at(1).error.empty());
  }
}
