#include "actors/syncer/transcript_syncer.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "storage/group_sync.hpp"

namespace sessionrt::actors {

struct sync_request {
  storage::shared_fd_ptr file;
  std::uint64_t seq;
  std::string dir;  // a directory to fsync too (a new file in it), or ""
  caf::actor requester;
};
using sync_round = std::shared_ptr<std::vector<sync_request>>;

}  // namespace sessionrt::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::sync_round)

namespace sessionrt::actors {
namespace {

// Makes the round's files and directories durable (blocking) and answers each request. The
// round's handles are released by the caller: a file its owner closed meanwhile closes then.
void run_round(caf::event_based_actor* self, storage::fs& files, const std::vector<sync_request>& round) {
  std::vector<storage::shared_fd_ptr> files_of_round;
  std::vector<std::string> dirs_of_round;
  for (const auto& r : round) {
    files_of_round.push_back(r.file);
    dirs_of_round.push_back(r.dir);
  }
  auto synced = storage::sync_together(files, files_of_round, dirs_of_round);
  for (const auto& r : round) {
    std::string error = synced.files[r.file->id()];
    if (error.empty() && !r.dir.empty()) error = synced.dirs[r.dir];
    self->send(r.requester, synced_atom::value, r.file->id(), r.seq, error);
  }
}

// A sync worker: runs the rounds the syncer hands it, one at a time, and says when it is idle.
caf::behavior sync_worker(caf::event_based_actor* self, storage::fs* files, caf::actor syncer) {
  return {
      [self, files, syncer](flush_atom, sync_round& round) {
        run_round(self, *files, *round);
        round.reset();
        self->send(syncer, idle_atom::value, caf::actor_cast<caf::actor>(self));
      },
  };
}

struct syncer_state {
  std::vector<sync_request> pending;
  bool round_scheduled = false;  // a flush (the window's end) is on its way
  std::vector<caf::actor> idle;  // workers without a round
  int workers = 0;
};

// Starts the pending requests' round: on an idle worker, or here when there are no workers.
// With every worker busy the requests wait; the first worker to finish takes them.
void start_round(caf::event_based_actor* self, storage::fs& files, syncer_state& st) {
  if (st.pending.empty() || (st.workers > 0 && st.idle.empty())) return;
  auto round = std::make_shared<std::vector<sync_request>>(std::exchange(st.pending, {}));
  if (st.workers == 0) {
    run_round(self, files, *round);
    return;
  }
  caf::actor worker = std::move(st.idle.back());
  st.idle.pop_back();
  self->send(worker, flush_atom::value, std::move(round));
}

}  // namespace

caf::behavior transcript_syncer(caf::event_based_actor* self, storage::fs* files, std::int64_t window_ms,
                                int parallel_rounds) {
  auto st = std::make_shared<syncer_state>();
  st->workers = std::max(0, parallel_rounds);
  for (int i = 0; i < st->workers; ++i)
    st->idle.push_back(self->spawn<caf::detached + caf::linked>(sync_worker, files, caf::actor_cast<caf::actor>(self)));
  return {
      [self, st, window_ms](sync_atom, storage::shared_fd_ptr& file, std::uint64_t seq, std::string& dir) {
        if (!file) return;
        st->pending.push_back({std::move(file), seq, std::move(dir), caf::actor_cast<caf::actor>(self->current_sender())});
        if (!st->round_scheduled) {
          st->round_scheduled = true;
          if (window_ms > 0)
            self->delayed_send(self, std::chrono::milliseconds(window_ms), flush_atom::value);
          else
            self->send(self, flush_atom::value);  // queued behind every request already in the mailbox
        }
      },
      [self, st, files](flush_atom) {
        st->round_scheduled = false;
        start_round(self, *files, *st);
      },
      [self, st, files](idle_atom, caf::actor& worker) {
        st->idle.push_back(std::move(worker));
        // Requests that found every worker busy have waited long enough: their round starts
        // now (unless their window is still open).
        if (!st->round_scheduled) start_round(self, *files, *st);
      },
  };
}

}  // namespace sessionrt::actors
