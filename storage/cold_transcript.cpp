#include "storage/cold_transcript.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "messages/clock.hpp"
#include "messages/ids.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/zstd_codec.hpp"

namespace sessionrt::storage {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::int64_t mtime_ms_of(const file_info& info) { return info.mtime_ns / 1000000; }

// Closes its fd when it goes.
class fd_guard {
 public:
  fd_guard(fs& f, int fd) : f_(f), fd_(fd) {}
  ~fd_guard() { (void)close(); }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  int get() const { return fd_; }
  status close() {
    if (fd_ < 0) return {};
    return f_.close(std::exchange(fd_, -1));
  }

 private:
  fs& f_;
  int fd_;
};

std::string temp_beside(const std::string& path) {
  return fmt::format("{}.{}.{}.tmp", path, ::getpid(), new_uuid_v4());
}

bool exists(fs& f, const std::string& path, status& failed) {
  auto info = f.lstat(path);
  if (info.ok()) return true;
  if (info.error().code() != errc::not_found) failed = info.error();
  return false;
}

// Removes the leftover .zst beside a .jsonl (the .jsonl is the transcript), durably.
status remove_leftover(fs& f, const std::string& zst) {
  status gone = f.unlink(zst);
  if (!gone.ok() && gone.code() != errc::not_found) return gone.with_context("removing the leftover copy " + zst);
  return fsync_dir(f, path_dirname(zst));
}

// Links `tmp` (complete and fsync'd) to `target`, then removes `tmp` and fsyncs the dir.
// replace_leftover: a file at `target` is a leftover and goes first (once).
status link_into_place(fs& f, const std::string& tmp, const std::string& target, bool replace_leftover) {
  status linked = f.link(tmp, target);
  if (!linked.ok() && linked.code() == errc::already_exists && replace_leftover) {
    if (status gone = f.unlink(target); !gone.ok() && gone.code() != errc::not_found) return gone;
    linked = f.link(tmp, target);
  }
  if (!linked.ok()) return linked;
  if (status gone = f.unlink(tmp); !gone.ok()) return gone;
  return fsync_dir(f, path_dirname(target));
}

// A clock for the in-memory views (their files' times are never looked at).
const clock& view_clock() {
  static const manual_clock c(0);
  return c;
}

}  // namespace

std::string cold_path_of(std::string_view transcript_path) { return std::string(transcript_path) + ".zst"; }
bool is_cold_path(std::string_view path) { return ends_with(path, ".jsonl.zst"); }

const char* transcript_form_name(transcript_form form) noexcept {
  switch (form) {
    case transcript_form::missing: return "missing";
    case transcript_form::hot: return "hot";
    case transcript_form::cold: return "cold";
    case transcript_form::both: return "both";
  }
  return "?";
}

result<transcript_form> transcript_form_of(fs& f, const std::string& path) {
  status failed;
  const bool hot = exists(f, path, failed);
  if (!failed.ok()) return failed;
  const bool cold = exists(f, cold_path_of(path), failed);
  if (!failed.ok()) return failed;
  if (hot) return cold ? transcript_form::both : transcript_form::hot;
  return cold ? transcript_form::cold : transcript_form::missing;
}

bool transcript_exists(fs& f, const std::string& path) {
  return f.lstat(path).ok() || f.lstat(cold_path_of(path)).ok();
}

result<cold_move> compress_transcript(fs& f, const std::string& path, const compress_options& o) {
  cold_move m;
  const std::string zst = cold_path_of(path);
  auto in_fd = f.open(path, O_RDONLY | O_NOFOLLOW);
  if (!in_fd.ok()) {
    if (in_fd.error().code() != errc::not_found) return in_fd.error().with_context("compressing " + path);
    m.skipped = fmt::format("{} is gone", path_basename(path));
    return m;
  }
  fd_guard in(f, *in_fd);
  auto before = f.fstat(in.get());
  if (!before.ok()) return before.error().with_context("compressing " + path);
  if (!before->is_regular()) {
    m.skipped = fmt::format("{} is not a regular file", path_basename(path));
    return m;
  }
  if ((o.expect_size && before->size != *o.expect_size) || (o.expect_mtime_ms && mtime_ms_of(*before) != *o.expect_mtime_ms)) {
    m.skipped = fmt::format("{} changed after the plan was made; left alone", path_basename(path));
    return m;
  }
  const std::string tmp = temp_beside(zst);
  auto out_fd = f.open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  if (!out_fd.ok()) return out_fd.error().with_context("compressing " + path);
  fd_guard out(f, *out_fd);
  auto fail = [&](const status& st) {
    (void)out.close();
    (void)f.unlink(tmp);
    return st.with_context("compressing " + path);
  };
  auto counts = compress_fd(f, in.get(), before->size, out.get(), o.level);
  if (!counts.ok()) return fail(counts.error());
  if (status st = f.fsync(out.get()); !st.ok()) return fail(st);
  if (o.verify) {
    if (auto same = verify_fd(f, out.get(), in.get(), before->size); !same.ok()) return fail(same.error());
  }
  if (status st = out.close(); !st.ok()) return fail(st);
  if (status st = link_into_place(f, tmp, zst, true); !st.ok()) {
    (void)f.unlink(tmp);
    return st.with_context("compressing " + path);
  }
  // The lock keeps sessions out; a writer that ignores it must not lose what it appended.
  auto after = f.lstat(path);
  if (!after.ok() || after->ino != before->ino || after->size != before->size || mtime_ms_of(*after) != mtime_ms_of(*before)) {
    SRT_RETURN_IF_ERROR(remove_leftover(f, zst).with_context("compressing " + path));
    m.skipped = fmt::format("{} was written while it was compressed; kept as it is", path_basename(path));
    return m;
  }
  if (status st = f.unlink(path); !st.ok()) return st.with_context("compressing " + path + ": removing the original");
  SRT_RETURN_IF_ERROR(fsync_dir(f, path_dirname(path)).with_context("compressing " + path));
  m.done = true;
  m.raw_bytes = counts->raw_bytes;
  m.cold_bytes = counts->compressed_bytes;
  return m;
}

result<cold_move> restore_transcript(fs& f, const std::string& path, std::uint64_t max_bytes) {
  cold_move m;
  const std::string zst = cold_path_of(path);
  auto form = transcript_form_of(f, path);
  if (!form.ok()) return form.error().with_context("restoring " + path);
  switch (*form) {
    case transcript_form::missing: return status(errc::not_found, path + " does not exist, nor its compressed copy");
    case transcript_form::hot: return m;
    case transcript_form::both:
      SRT_RETURN_IF_ERROR(remove_leftover(f, zst));
      m.removed_leftover = true;
      return m;
    case transcript_form::cold: break;
  }
  auto in_fd = f.open(zst, O_RDONLY | O_NOFOLLOW);
  if (!in_fd.ok()) return in_fd.error().with_context("restoring " + path);
  fd_guard in(f, *in_fd);
  const std::string tmp = temp_beside(path);
  auto out_fd = f.open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  if (!out_fd.ok()) return out_fd.error().with_context("restoring " + path);
  fd_guard out(f, *out_fd);
  auto fail = [&](const status& st) {
    (void)out.close();
    (void)f.unlink(tmp);
    return st.with_context("restoring " + path + " from " + path_basename(zst));
  };
  auto counts = decompress_fd(f, in.get(), out.get(), max_bytes);
  if (!counts.ok()) return fail(counts.error());
  if (status st = f.fsync(out.get()); !st.ok()) return fail(st);
  if (status st = out.close(); !st.ok()) return fail(st);
  status linked = f.link(tmp, path);
  (void)f.unlink(tmp);
  // Someone restored it meanwhile: theirs is the transcript, the .zst a leftover all the same.
  if (!linked.ok() && linked.code() != errc::already_exists) return linked.with_context("restoring " + path);
  SRT_RETURN_IF_ERROR(fsync_dir(f, path_dirname(path)).with_context("restoring " + path));
  if (status gone = f.unlink(zst); !gone.ok() && gone.code() != errc::not_found)
    return gone.with_context("restoring " + path + ": removing the compressed copy");
  SRT_RETURN_IF_ERROR(fsync_dir(f, path_dirname(path)).with_context("restoring " + path));
  m.done = linked.ok();
  m.raw_bytes = counts->raw_bytes;
  m.cold_bytes = counts->compressed_bytes;
  return m;
}

result<std::string> read_transcript_bytes(fs& f, const std::string& path, std::size_t max_bytes) {
  if (!is_cold_path(path)) {
    auto hot = read_file(f, path, max_bytes);
    if (hot.ok() || hot.error().code() != errc::not_found) return hot;
  }
  const std::string zst = is_cold_path(path) ? path : cold_path_of(path);
  auto packed = read_file(f, zst, max_bytes);
  if (!packed.ok()) {
    if (packed.error().code() == errc::not_found) return status(errc::not_found, path + " does not exist");
    return packed.error();
  }
  auto text = decompress_stream(*packed, max_bytes);
  if (!text.ok()) return text.error().with_context(zst);
  return text;
}

result<std::string> read_transcript_head(fs& f, const std::string& path, std::size_t n) {
  std::string which = path;
  auto fd = f.open(path, O_RDONLY);
  const bool cold = is_cold_path(path) || (!fd.ok() && fd.error().code() == errc::not_found);
  if (cold && !is_cold_path(path)) {
    which = cold_path_of(path);
    fd = f.open(which, O_RDONLY);
    if (!fd.ok() && fd.error().code() == errc::not_found) return status(errc::not_found, path + " does not exist");
  }
  if (!fd.ok()) return fd.error();
  fd_guard g(f, *fd);
  auto head = cold ? decompress_fd_prefix(f, g.get(), n) : pread_all(f, g.get(), n, 0);
  if (!head.ok()) return head.error().with_context(which);
  return head;
}

result<std::unique_ptr<fs>> open_cold_view(fs& f, const std::string& path, const std::string& view_path,
                                           std::uint64_t max_bytes) {
  const std::string zst = is_cold_path(path) ? path : cold_path_of(path);
  auto in_fd = f.open(zst, O_RDONLY | O_NOFOLLOW);
  if (!in_fd.ok()) return in_fd.error();
  fd_guard in(f, *in_fd);
  auto view = std::make_unique<memory_fs>(view_clock());
  SRT_RETURN_IF_ERROR(ensure_dir(*view, path_dirname(view_path)));
  auto out_fd = view->open(view_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (!out_fd.ok()) return out_fd.error();
  fd_guard out(*view, *out_fd);
  auto counts = decompress_fd(f, in.get(), *view, out.get(), max_bytes);
  if (!counts.ok()) return counts.error().with_context(zst);
  SRT_RETURN_IF_ERROR(out.close());
  return std::unique_ptr<fs>(std::move(view));
}

status remove_transcript(fs& f, const std::string& path) {
  status hot = f.unlink(path);
  if (!hot.ok() && hot.code() != errc::not_found) return hot;
  status cold = f.unlink(cold_path_of(path));
  if (!cold.ok() && cold.code() != errc::not_found) return cold;
  if (!hot.ok() && !cold.ok()) return status(errc::not_found, path + " does not exist, nor its compressed copy");
  return {};
}

}  // namespace sessionrt::storage
