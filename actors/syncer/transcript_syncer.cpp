#include "actors/syncer/transcript_syncer.hpp"

#include "storage/group_sync.hpp"

#include <chrono>
#include <vector>

namespace sessionrt::actors {
namespace {

struct sync_request {
  storage::shared_fd_ptr file;
  std::uint64_t seq;
  std::string dir;  // a directory to fsync too (a new file in it), or ""
  caf::actor requester;
};

struct syncer_state {
  std::vector<sync_request> pending;
  bool round_scheduled = false;
};

}  // namespace

caf::behavior transcript_syncer(caf::event_based_actor* self, storage::fs* files, std::int64_t window_ms) {
  auto st = std::make_shared<syncer_state>();
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
        auto round = std::move(st->pending);
        st->pending.clear();
        std::vector<storage::shared_fd_ptr> files_of_round;
        std::vector<std::string> dirs_of_round;
        for (const auto& r : round) {
          files_of_round.push_back(r.file);
          dirs_of_round.push_back(r.dir);
        }
        auto synced = storage::sync_together(*files, files_of_round, dirs_of_round);
        for (auto& r : round) {
          std::string error = synced.files[r.file->id()];
          if (error.empty() && !r.dir.empty()) error = synced.dirs[r.dir];
          self->send(r.requester, synced_atom::value, r.file->id(), r.seq, error);
        }
        // The round's handles go here: a file its owner closed meanwhile closes now.
      },
  };
}

}  // namespace sessionrt::actors
