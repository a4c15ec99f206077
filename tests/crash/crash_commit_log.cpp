// Child process of the commit log crash test: replays what the state dir's commit log holds
// (as a runtime's start does), says so, then runs the commit log actor (durability batch) with
// a small checkpoint size, so that checkpoints come every few dozen appends, and 6 writers,
// each appending user messages to its transcript through the page cache and sending the bytes
// not yet acknowledged to the log, one append in flight each (as sessions do). It prints:
//   replayed <records> <rewritten>   the replay is done (before any append)
//   ok <text>                        an append acknowledged (durable in the log)
//   fail <error>                     an append the log refused (the test fails on it)
// until killed.
//   crash_commit_log STATE_DIR CHECKPOINT_BYTES
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "actors/caf_types.hpp"
#include "actors/commit_log/commit_log_actor.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/durable_file.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_open.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr int kWriters = 6;
std::mutex out_mu;

void say(const std::string& line) {
  std::lock_guard<std::mutex> g(out_mu);
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

struct writer_state {
  std::unique_ptr<storage::transcript_file> file;
  std::uint64_t inode = 0, acked_end = 0;
  bool new_file = false, opened = false;
  std::string text;  // the append in flight
  long n = 0;
};

// One writer: appends a message, flushes it, sends what is not acknowledged yet, and appends
// the next once the log answered.
caf::behavior writer(caf::stateful_actor<writer_state>* self, int id, std::string path, caf::actor log) {
  auto& st = self->state;
  header_fields h;
  h.id = "w" + std::to_string(id);
  h.timestamp_ms = storage::real_clock().now_ms();
  h.cwd = "/crash";
  storage::transcript_options to;
  to.mode = storage::durability::batch;
  auto opened = storage::open_or_create_transcript(storage::posix_fs(), storage::real_clock(), path, h, to);
  if (!opened.ok()) {
    say("fail opening " + path + ": " + opened.error().message());
    std::_Exit(3);
  }
  st.file = std::move(opened->file);
  st.new_file = opened->created;
  st.opened = !opened->created;
  st.inode = storage::posix_fs().fstat(st.file->fd())->ino;
  st.acked_end = st.new_file ? 0 : st.file->reader().data_end();
  const std::string pad(600, 'p');
  auto next = [self, id, log, pad] {
    auto& st = self->state;
    st.text = "w" + std::to_string(id) + " p" + std::to_string(::getpid()) + " n" + std::to_string(st.n++);
    if (!st.file->append_message(user_message(st.text + " " + pad, 0)).ok() || !st.file->flush().ok()) {
      say("fail appending " + st.text);
      std::_Exit(3);
    }
    const std::uint64_t end = st.file->reader().data_end();
    commit_log_append a;
    a.file = st.file->shared_fd();
    a.path = st.file->path();
    a.inode = st.inode;
    a.offset = st.acked_end;
    a.bytes = *storage::pread_all(storage::posix_fs(), st.file->fd(), end - st.acked_end, st.acked_end);
    a.seq = st.file->written_seq();
    a.new_file = st.new_file;
    a.sync_file = st.opened;
    self->send(caf::actor_cast<commit_log_actor>(log), log_append_atom::value, std::move(a));
  };
  self->send(self, tick_atom::value);
  return {
      [next](tick_atom) { next(); },
      [self, next](synced_atom, std::uint64_t, std::uint64_t seq, const std::string& error) {
        auto& st = self->state;
        if (!error.empty()) {
          say("fail " + error);
          std::_Exit(3);
        }
        st.file->note_synced(seq, true);
        st.acked_end = st.file->reader().data_end();
        st.new_file = st.opened = false;
        say("ok " + st.text);
        next();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: crash_commit_log STATE_DIR CHECKPOINT_BYTES\n");
    return 2;
  }
  const std::string state = argv[1];
  storage::fs& files = storage::posix_fs();
  const std::string sessions = state + "/agents/main/sessions";
  if (!storage::ensure_dir(files, sessions).ok()) return 2;
  auto rec = storage::commit_log::recover_logs(files, state);
  if (!rec.ok()) {
    say("fail replaying: " + rec.error().message());
    return 3;
  }
  say("replayed " + std::to_string(rec->report.records) + " " + std::to_string(rec->report.rewritten));
  auto made = storage::commit_log::create_log(files, storage::real_clock(), storage::commit_log::log_dir(state),
                                              rec->next_number, rec->state_id);
  if (!made.ok()) {
    say("fail starting the log: " + made.error().message());
    return 3;
  }
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys(cfg);
  commit_log_config lc;
  lc.files = &files;
  lc.time = &storage::real_clock();
  lc.state_dir = state;
  lc.state_id = rec->state_id;
  lc.first = *made;
  lc.checkpoint_bytes = std::strtoull(argv[2], nullptr, 10);
  auto log = caf::actor_cast<caf::actor>(sys.spawn<caf::detached>(commit_log, lc));
  for (int i = 0; i < kWriters; ++i)
    sys.spawn<caf::detached>(writer, i, sessions + "/w" + std::to_string(i) + ".jsonl", log);
  for (;;) ::pause();  // until killed
}
