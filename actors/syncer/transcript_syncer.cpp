#include "actors/syncer/transcript_syncer.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "storage/group_sync.hpp"

namespace sessionrt::actors {

using sync_round = std::shared_ptr<std::vector<sync_request>>;

}  // namespace sessionrt::actors

// A round is handed to a worker of this syncer only (in-process, never serialized).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::sync_round)

namespace sessionrt::actors {
namespace {

// Makes the round's files and directories durable (blocking) and answers each request. The
// round's handles are released before the answers go (the round is left empty): a file its
// owner closed meanwhile is closed by then, so an owner that got its answer finds it closed.
template <class Self>
void run_round(Self* self, storage::fs& files, std::vector<sync_request>& round) {
  std::vector<storage::shared_fd_ptr> files_of_round;
  std::vector<std::string> dirs_of_round;
  for (const auto& r : round) {
    files_of_round.push_back(r.file);
    dirs_of_round.push_back(r.dir);
  }
  auto synced = storage::sync_together(files, files_of_round, dirs_of_round);
  struct answer {
    caf::actor to;
    std::uint64_t file_id, seq;
    std::string error;
  };
  std::vector<answer> answers;
  answers.reserve(round.size());
  for (const auto& r : round) {
    std::string error = synced.files[r.file->id()];
    if (error.empty() && !r.dir.empty()) error = synced.dirs[r.dir];
    answers.push_back({r.requester, r.file->id(), r.seq, std::move(error)});
  }
  files_of_round.clear();
  round.clear();
  // (Typed actors send() only to typed handles: the answer goes as the sender.)
  for (auto& a : answers)
    caf::send_as(caf::actor_cast<caf::actor>(self), a.to, synced_atom::value, a.file_id, a.seq, std::move(a.error));
}

using sync_worker_actor = caf::typed_actor<caf::reacts_to<flush_atom, sync_round>>;

// A sync worker: runs the rounds the syncer hands it, one at a time, and says when it is idle.
sync_worker_actor::behavior_type sync_worker(sync_worker_actor::pointer self, storage::fs* files,
                                             transcript_syncer_actor syncer) {
  return {
      [self, files, syncer](flush_atom, sync_round& round) {
        run_round(self, *files, *round);
        round.reset();
        self->send(syncer, idle_atom::value);
      },
  };
}

using self_ptr = transcript_syncer_actor::stateful_pointer<syncer_state>;

// Starts the pending requests' round: on an idle worker, or here when there are no workers.
// With every worker busy the requests wait; the first worker to finish takes them.
void start_round(self_ptr self) {
  auto& st = self->state;
  if (st.pending.empty() || (st.workers > 0 && st.idle.empty())) return;
  auto round = std::make_shared<std::vector<sync_request>>(std::exchange(st.pending, {}));
  if (st.workers == 0) {
    run_round(self, *st.files, *round);
    return;
  }
  auto worker = caf::actor_cast<sync_worker_actor>(std::move(st.idle.back()));
  st.idle.pop_back();
  self->send(worker, flush_atom::value, std::move(round));
}

void on_sync(self_ptr self, storage::shared_fd_ptr file, std::uint64_t seq, std::string dir) {
  auto& st = self->state;
  if (!file) return;
  st.pending.push_back({std::move(file), seq, std::move(dir), caf::actor_cast<caf::actor>(self->current_sender())});
  if (st.round_scheduled) return;
  st.round_scheduled = true;
  if (st.window_ms > 0)
    self->delayed_send(self, std::chrono::milliseconds(st.window_ms), flush_atom::value);
  else
    self->send(self, flush_atom::value);  // queued behind every request already in the mailbox
}

void on_idle(self_ptr self) {
  self->state.idle.push_back(self->current_sender());
  // Requests that found every worker busy have waited long enough: their round starts now
  // (unless their window is still open).
  if (!self->state.round_scheduled) start_round(self);
}

}  // namespace

transcript_syncer_actor::behavior_type transcript_syncer(self_ptr self, storage::fs* files, std::int64_t window_ms,
                                                         int parallel_rounds, bool files_block) {
  auto& st = self->state;
  st.files = files;
  st.window_ms = window_ms;
  st.workers = std::max(0, parallel_rounds);
  const auto me = caf::actor_cast<transcript_syncer_actor>(self);
  for (int i = 0; i < st.workers; ++i)
    st.idle.push_back(caf::actor_cast<caf::strong_actor_ptr>(
        files_block ? self->spawn<caf::detached + caf::linked>(sync_worker, files, me)
                    : self->spawn<caf::linked>(sync_worker, files, me)));
  return {
      [self](sync_atom, storage::shared_fd_ptr& file, std::uint64_t seq, std::string& dir) {
        on_sync(self, std::move(file), seq, std::move(dir));
      },
      [self](flush_atom) {
        self->state.round_scheduled = false;
        start_round(self);
      },
      [self](idle_atom) { on_idle(self); },
  };
}

}  // namespace sessionrt::actors
