#include "actors/syncer/transcript_syncer.hpp"

#include "storage/durable_file.hpp"

#include <chrono>
#include <unordered_map>
#include <vector>

namespace sessionrt::actors {
namespace {

struct sync_request {
  storage::shared_fd_ptr file;
  std::uint64_t seq;
  std::string dir;  // a directory to fsync too (a new file in it), or ""
  caf::actor requester;
};

// From this many distinct files of one filesystem in a round on, that filesystem gets one syncfs.
constexpr std::size_t kSyncfsFrom = 4;

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
        std::unordered_map<std::uint64_t, std::string> result;  // file id -> "" or the error
        // The round's distinct files by filesystem: syncfs makes only its own one durable.
        std::unordered_map<std::uint64_t, std::vector<const sync_request*>> by_device;
        std::vector<const sync_request*> unknown_device;  // fstat failed: fdatasync alone
        for (const auto& r : round) {
          if (!result.emplace(r.file->id(), std::string()).second) continue;
          auto info = files->fstat(r.file->fd());
          if (info.ok())
            by_device[info->dev].push_back(&r);
          else
            unknown_device.push_back(&r);
        }
        auto each = [&](const std::vector<const sync_request*>& group) {
          for (const auto* r : group) {
            status s = files->fdatasync(r->file->fd());
            result[r->file->id()] = s.ok() ? std::string() : s.message();
          }
        };
        for (const auto& [dev, group] : by_device) {
          if (group.size() < kSyncfsFrom) {
            each(group);
            continue;
          }
          // Many files on one filesystem: one syncfs is one journal commit for all of them,
          // where fdatasync one by one would commit the journal once per file.
          status s = files->syncfs(group.front()->file->fd());
          for (const auto* r : group) result[r->file->id()] = s.ok() ? std::string() : s.message();
        }
        each(unknown_device);
        // New files: their names become durable with one fsync per directory per round.
        std::unordered_map<std::string, std::string> dirs;
        for (const auto& r : round)
          if (!r.dir.empty() && !dirs.count(r.dir)) {
            status s = storage::fsync_dir(*files, r.dir);
            dirs[r.dir] = s.ok() ? std::string() : s.message();
          }
        for (auto& r : round) {
          std::string error = result[r.file->id()];
          if (error.empty() && !r.dir.empty()) error = dirs[r.dir];
          self->send(r.requester, synced_atom::value, r.file->id(), r.seq, error);
        }
        // The round's handles go here: a file its owner closed meanwhile closes now.
      },
  };
}

}  // namespace sessionrt::actors
