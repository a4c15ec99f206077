#include "storage/durable_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "messages/ids.hpp"

namespace sessionrt::storage {

std::string path_dirname(std::string_view path) {
  auto pos = path.find_last_of('/');
  if (pos == std::string_view::npos) return ".";
  if (pos == 0) return "/";
  return std::string(path.substr(0, pos));
}

std::string path_basename(std::string_view path) {
  auto pos = path.find_last_of('/');
  return std::string(pos == std::string_view::npos ? path : path.substr(pos + 1));
}

std::string path_join(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string out(dir);
  if (out.back() != '/') out += '/';
  out += name;
  return out;
}

status fsync_dir(fs& f, const std::string& dir) {
  auto fd = f.open(dir, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.error();
  status st = f.fsync(*fd);
  (void)f.close(*fd);
  return st.with_context("fsync directory " + dir);
}

status ensure_dir(fs& f, const std::string& path, mode_t mode) {
  auto info = f.stat(path);
  if (info.ok()) {
    if (!info->is_dir()) return status(errc::invalid_argument, path + " exists and is not a directory");
    return {};
  }
  if (info.error().code() != errc::not_found) return info.error();
  std::string parent = path_dirname(path);
  if (parent != path && parent != "." && parent != "/") SRT_RETURN_IF_ERROR(ensure_dir(f, parent, mode));
  status st = f.mkdir(path, mode);
  if (!st.ok() && st.code() != errc::already_exists) return st;
  return {};
}

namespace {
// Writes `data` to a fresh temp file beside `path`; returns the temp path.
result<std::string> write_temp(fs& f, const std::string& path, std::string_view data, const replace_options& opt) {
  const std::string dir = path_dirname(path);
  const std::string prefix = opt.temp_prefix.empty() ? path_basename(path) : opt.temp_prefix;
  const std::string tmp = path_join(dir, fmt::format("{}.{}.{}.tmp", prefix, ::getpid(), new_uuid_v4()));
  auto fd = f.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, opt.mode);
  if (!fd.ok()) return fd.error();
  status st = write_all(f, *fd, data.data(), data.size());
  if (st.ok() && opt.durable) st = f.fsync(*fd);
  status cst = f.close(*fd);
  if (st.ok()) st = cst;
  if (!st.ok()) {
    (void)f.unlink(tmp);
    return st;
  }
  return tmp;
}
}  // namespace

status create_file_exclusive(fs& f, const std::string& path, std::string_view data, const replace_options& opt) {
  auto tmp = write_temp(f, path, data, opt);
  if (!tmp.ok()) return tmp.error().with_context("creating " + path);
  status st = f.link(*tmp, path);
  (void)f.unlink(*tmp);
  if (!st.ok()) return st.with_context("creating " + path);
  if (opt.durable) return fsync_dir(f, path_dirname(path)).with_context("creating " + path);
  return {};
}

status replace_file_atomic(fs& f, const std::string& path, std::string_view data, const replace_options& opt) {
  return replace_file_atomic(
      f, path, [data](const piece_writer& write) { return write(data); }, opt);
}

status replace_file_atomic(fs& f, const std::string& path, const std::function<status(const piece_writer&)>& produce,
                           const replace_options& opt) {
  const std::string dir = path_dirname(path);
  const std::string prefix = opt.temp_prefix.empty() ? path_basename(path) : opt.temp_prefix;
  const std::string tmp = path_join(dir, fmt::format("{}.{}.{}.tmp", prefix, ::getpid(), new_uuid_v4()));
  const int access = opt.keep_fd ? O_RDWR : O_WRONLY;
  auto fd = f.open(tmp, access | O_CREAT | O_EXCL | O_NOFOLLOW, opt.mode);
  if (!fd.ok()) return fd.error().with_context("writing " + path);
  auto fail = [&](const status& st) {
    (void)f.close(*fd);
    (void)f.unlink(tmp);
    return st.with_context("writing " + path);
  };
  const piece_writer write(f, *fd);
  if (status st = produce(write); !st.ok()) return fail(st);
  if (opt.durable) {
    if (status st = f.fsync(*fd); !st.ok()) return fail(st);
  }
  if (!opt.keep_fd) {
    if (status st = f.close(*fd); !st.ok()) {
      (void)f.unlink(tmp);
      return st.with_context("writing " + path);
    }
  }
  if (status st = f.rename(tmp, path); !st.ok()) {
    if (opt.keep_fd) return fail(st);
    (void)f.unlink(tmp);
    return st.with_context("writing " + path);
  }
  if (opt.durable) {
    if (status st = fsync_dir(f, dir); !st.ok()) {
      if (opt.keep_fd) (void)f.close(*fd);
      return st.with_context("writing " + path);
    }
  }
  if (opt.keep_fd) *opt.keep_fd = *fd;
  return {};
}

result<std::string> read_file(fs& f, const std::string& path, std::size_t max_bytes) {
  auto fd = f.open(path, O_RDONLY);
  if (!fd.ok()) return fd.error();
  auto info = f.fstat(*fd);
  if (!info.ok()) {
    (void)f.close(*fd);
    return info.error().with_context(path);
  }
  if (info->size > max_bytes) {
    (void)f.close(*fd);
    return status(errc::limit_exceeded,
                  fmt::format("{} is {} bytes, over the limit of {} bytes", path, info->size, max_bytes));
  }
  auto data = pread_all(f, *fd, static_cast<std::size_t>(info->size), 0);
  (void)f.close(*fd);
  if (!data.ok()) return data.error().with_context(path);
  return std::move(*data);
}

status copy_file(fs& f, const std::string& from, const std::string& to, mode_t mode, bool durable) {
  auto data = read_file(f, from, std::size_t(1) << 40);
  if (!data.ok()) return data.error();
  auto fd = f.open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  if (!fd.ok()) return fd.error();
  status st = write_all(f, *fd, data->data(), data->size());
  if (st.ok() && durable) st = f.fsync(*fd);
  status cst = f.close(*fd);
  if (st.ok()) st = cst;
  if (!st.ok()) (void)f.unlink(to);
  return st.with_context("copying " + from + " to " + to);
}

}  // namespace sessionrt::storage
