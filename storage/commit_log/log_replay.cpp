#include "storage/commit_log/log_replay.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/durable_file.hpp"
#include "storage/group_sync.hpp"
#include "storage/shared_fd.hpp"

namespace sessionrt::storage::commit_log {
namespace {

constexpr std::size_t kOpenFilesMax = 256;

// One log open for reading (closed on destruction).
struct open_log {
  fs& f;
  int fd = -1;
  ~open_log() {
    if (fd >= 0) (void)f.close(fd);
  }
};

status check_header(fs& f, const std::string& path, const std::string& state_dir, const std::string& state_id) {
  auto fd = f.open(path, O_RDONLY | O_CLOEXEC);
  if (!fd.ok()) return fd.error().with_context("replaying the commit log");
  open_log log{f, *fd};
  log_reader r(f, log.fd, path, log_number_of(path));
  std::string payload;
  if (!r.next(payload)) return {};  // no whole header: a log cut while it was being started
  auto rec = decode(payload);
  const auto* h = rec.ok() ? std::get_if<log_header>(&*rec) : nullptr;
  if (!h) return status(errc::corrupt, fmt::format("commit log {} does not start with a log header", path));
  if (h->format_version > kFormatVersion)
    return status(errc::unsupported,
                  fmt::format("commit log {} has format version {}; this sessionrt reads version {} and older: run a newer "
                              "sessionrt on {}",
                              path, h->format_version, kFormatVersion, state_dir));
  if (auto named = log_number_of(path); named && h->format_version >= 3 && h->log_number != *named)
    return status(errc::corrupt, fmt::format("commit log {} holds log number {} in its header; move it out of {} to start",
                                             path, h->log_number, path_dirname(path)));
  if (h->state_id != state_id)
    return status(errc::corrupt,
                  fmt::format("commit log {} belongs to the state dir with identity {}, not to {} (identity {}, in {}); "
                              "move the log out of {} to start",
                              path, h->state_id, state_dir, state_id, state_id_path(state_dir), path_dirname(path)));
  return {};
}

bool unsafe_relative(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  return p == ".." || p.rfind("../", 0) == 0 || p.find("/../") != std::string::npos ||
         (p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0);
}

class replayer {
 public:
  replayer(fs& f, const std::string& state_dir, replay_report& rep) : f_(f), state_dir_(state_dir), rep_(rep) {}

  status apply(const transcript_append& a);
  status sync_all();

 private:
  struct file {
    shared_fd_ptr fd;
    std::uint64_t size = 0;
  };
  result<file*> open_file(const std::string& path, std::uint64_t inode, bool& skip);
  void touched(const std::string& path, const shared_fd_ptr& fd);

  fs& f_;
  const std::string& state_dir_;
  replay_report& rep_;
  std::unordered_map<std::string, file> open_;
  std::set<std::string> gone_;  // missing or another inode: every record of it is skipped
  // The files to make durable: per device the first kSyncfsFrom (that many mean one syncfs),
  // and those whose device is unknown.
  std::map<std::uint64_t, std::vector<shared_fd_ptr>> by_device_;
  std::vector<shared_fd_ptr> loose_;
  std::set<std::string> touched_;
  std::set<std::string> rewritten_;
};

result<replayer::file*> replayer::open_file(const std::string& path, std::uint64_t inode, bool& skip) {
  skip = false;
  if (auto it = open_.find(path); it != open_.end()) return &it->second;
  if (gone_.count(path)) {
    skip = true;
    return nullptr;
  }
  auto info = f_.lstat(path);
  if (!info.ok() && info.error().code() != errc::not_found) return info.error().with_context("replaying the commit log");
  if (!info.ok() || !info->is_regular() || info->ino != inode) {
    gone_.insert(path);
    skip = true;
    return nullptr;
  }
  if (open_.size() >= kOpenFilesMax) open_.clear();  // their handles stay in the sync lists as needed
  auto fd = f_.open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (!fd.ok()) return fd.error().with_context("replaying the commit log");
  auto shared = std::make_shared<const shared_fd>(f_, *fd);
  auto now = f_.fstat(*fd);
  if (!now.ok()) return now.error().with_context("replaying the commit log into " + path);
  if (now->ino != inode) {  // replaced between the lstat and the open
    gone_.insert(path);
    skip = true;
    return nullptr;
  }
  touched(path, shared);
  auto& slot = open_[path];
  slot.fd = std::move(shared);
  slot.size = now->size;
  return &slot;
}

void replayer::touched(const std::string& path, const shared_fd_ptr& fd) {
  if (!touched_.insert(path).second) return;
  auto dev = fd->device(f_);
  if (!dev.ok()) {
    loose_.push_back(fd);
    return;
  }
  auto& group = by_device_[*dev];
  if (group.size() < kSyncfsFrom) group.push_back(fd);
}

status replayer::apply(const transcript_append& a) {
  ++rep_.records;
  if (unsafe_relative(a.path)) {
    rep_.warnings.push_back(fmt::format("commit log record names {} (outside the state dir): skipped", a.path));
    ++rep_.missing;
    return {};
  }
  const std::string path = a.path.front() == '/' ? a.path : path_join(state_dir_, a.path);
  bool skip = false;
  auto opened = open_file(path, a.inode, skip);
  if (!opened.ok()) return opened.error();
  if (skip) {
    ++rep_.missing;
    return {};
  }
  file& fl = **opened;
  const std::uint64_t end = a.offset + a.bytes.size();
  if (fl.size < a.offset) {
    ++rep_.holes;
    rep_.warnings.push_back(fmt::format("{} ends at byte {}, before the commit log's record at byte {}: not replayed",
                                        path, fl.size, a.offset));
    return {};
  }
  // The part of the record the file holds already, compared.
  const std::uint64_t have = std::min<std::uint64_t>(fl.size, end) - a.offset;
  if (have > 0) {
    auto got = pread_all(f_, fl.fd->fd(), have, a.offset);
    if (!got.ok()) return got.error().with_context("replaying the commit log into " + path);
    if (got->size() == have && got->compare(0, have, a.bytes, 0, have) == 0 && fl.size >= end) {
      ++rep_.present;
      return {};
    }
  }
  // Cut where the record starts, then append it (the file may have held a torn version).
  if (fl.size != a.offset) {
    SRT_RETURN_IF_ERROR(f_.ftruncate(fl.fd->fd(), a.offset).with_context("replaying the commit log into " + path));
    fl.size = a.offset;
  }
  SRT_RETURN_IF_ERROR(write_all(f_, fl.fd->fd(), a.bytes.data(), a.bytes.size()).with_context("replaying the commit log into " + path));
  fl.size = end;
  ++rep_.rewritten;
  rep_.bytes_rewritten += a.bytes.size();
  if (rewritten_.insert(path).second) rep_.rewritten_paths.push_back(path);
  return {};
}

status replayer::sync_all() {
  std::vector<shared_fd_ptr> files = loose_;
  for (auto& [dev, group] : by_device_) files.insert(files.end(), group.begin(), group.end());
  auto synced = sync_together(f_, files, {});
  for (const auto& fd : files)
    if (const auto& err = synced.files[fd->id()]; !err.empty())
      return status(errc::io_error, "making the replayed transcripts durable: " + err);
  rep_.files_synced = touched_.size();
  open_.clear();
  return {};
}

}  // namespace

result<replay_report> replay_logs(fs& f, const std::string& state_dir, const std::string& state_id,
                                  const std::vector<std::string>& log_paths) {
  for (const auto& path : log_paths) SRT_RETURN_IF_ERROR(check_header(f, path, state_dir, state_id));
  replay_report rep;
  replayer apply(f, state_dir, rep);
  std::map<std::string, store_row_history> stores;  // absolute path -> its row records
  // A store's path as the runtime names it (records hold it relative to the state dir).
  auto store_of = [&](const std::string& p) -> std::string {
    if (unsafe_relative(p)) {
      rep.warnings.push_back(fmt::format("commit log row record names {} (outside the state dir): skipped", p));
      return {};
    }
    return p.front() == '/' ? p : path_join(state_dir, p);
  };
  for (const auto& path : log_paths) {
    auto fd = f.open(path, O_RDONLY | O_CLOEXEC);
    if (!fd.ok()) return fd.error().with_context("replaying the commit log");
    open_log log{f, *fd};
    ++rep.logs;
    log_reader r(f, log.fd, path, log_number_of(path));
    std::string payload;
    bool first = true;
    while (r.next(payload)) {
      auto rec = decode(payload);
      if (!rec.ok()) {
        rep.warnings.push_back(fmt::format("{}: {}; the rest of this log is not replayed", path, rec.error().message()));
        break;
      }
      if (first) {
        first = false;
        if (std::holds_alternative<log_header>(*rec)) continue;
      }
      if (const auto* a = std::get_if<transcript_append>(&*rec)) {
        SRT_RETURN_IF_ERROR(apply.apply(*a));
      } else if (auto* c = std::get_if<row_change>(&*rec)) {
        ++rep.row_changes;
        if (auto at = store_of(c->store); !at.empty()) stores[at].add(std::move(*c));
      } else if (const auto* w = std::get_if<store_written>(&*rec)) {
        if (auto at = store_of(w->store); !at.empty()) stores[at].add(*w);
      }
    }
    const log_stop& stop = r.stop();
    if (stop.how == log_end::io_error) return status(errc::io_error, "replaying the commit log: " + stop.reason);
    if (stop.how != log_end::end_of_file)
      rep.warnings.push_back(fmt::format("{} ({}); its records from byte {} on were never acknowledged and are not replayed",
                                         stop.reason, log_end_name(stop.how), stop.offset));
  }
  SRT_RETURN_IF_ERROR(apply.sync_all());
  for (auto& [path, history] : stores) {
    rep.rows_covered += history.covered();
    auto ops = history.pending();
    if (!ops.empty()) rep.rows[path] = std::move(ops);
  }
  return rep;
}

}  // namespace sessionrt::storage::commit_log
