#include <dirent.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "storage/fs.hpp"
#include "storage/gather_cursor.hpp"

namespace sessionrt::storage {
namespace {

file_info to_info(const struct ::stat& st) {
  file_info i;
  i.size = static_cast<std::uint64_t>(st.st_size);
  i.dev = st.st_dev;
  i.ino = st.st_ino;
  i.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  i.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  i.mode = st.st_mode;
  return i;
}

status fd_status(int rc, const char* op) {
  if (rc == 0) return {};
  return errno_status(errno, op, "");
}

class posix_fs_impl final : public fs {
 public:
  result<int> open(const std::string& path, int flags, mode_t mode) override {
    int fd;
    do fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return errno_status(errno, "open", path);
    return fd;
  }
  status close(int fd) override { return fd_status(::close(fd), "close"); }
  result<std::size_t> write(int fd, const char* data, std::size_t n) override {
    ssize_t w;
    do w = ::write(fd, data, n);
    while (w < 0 && errno == EINTR);
    if (w < 0) return errno_status(errno, "write", "");
    return static_cast<std::size_t>(w);
  }
  // writev, IOV_MAX pieces at a time, resumed where a short write stopped.
  status write_gather(int fd, std::span<const std::string_view> pieces) override {
    gather_cursor at;
    struct ::iovec iov[IOV_MAX];
    while (!at.done(pieces)) {
      int n = 0;
      for (std::size_t i = at.next; i < pieces.size() && n < IOV_MAX; ++i) {
        const std::string_view p = i == at.next ? at.rest(pieces) : pieces[i];
        iov[n++] = {const_cast<char*>(p.data()), p.size()};
      }
      ssize_t w;
      do w = ::writev(fd, iov, n);
      while (w < 0 && errno == EINTR);
      if (w < 0) return errno_status(errno, "write", "");
      if (!at.advance(pieces, static_cast<std::size_t>(w))) return status(errc::io_error, "write: wrote 0 bytes");
    }
    return {};
  }
  result<std::size_t> pread(int fd, char* buf, std::size_t n, std::uint64_t offset) override {
    ssize_t r;
    do r = ::pread(fd, buf, n, static_cast<off_t>(offset));
    while (r < 0 && errno == EINTR);
    if (r < 0) return errno_status(errno, "read", "");
    return static_cast<std::size_t>(r);
  }
  result<std::size_t> pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) override {
    ssize_t w;
    do w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    while (w < 0 && errno == EINTR);
    if (w < 0) return errno_status(errno, "write", "");
    return static_cast<std::size_t>(w);
  }
  status fallocate(int fd, std::uint64_t offset, std::uint64_t length) override {
    int rc;
    do rc = ::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(length));
    while (rc != 0 && errno == EINTR);
    return fd_status(rc, "fallocate");
  }
  status fsync(int fd) override { return fd_status(::fsync(fd), "fsync"); }
  status fdatasync(int fd) override { return fd_status(::fdatasync(fd), "fdatasync"); }
  status syncfs(int fd) override { return fd_status(::syncfs(fd), "syncfs"); }
  status ftruncate(int fd, std::uint64_t length) override {
    return fd_status(::ftruncate(fd, static_cast<off_t>(length)), "ftruncate");
  }
  result<file_info> fstat(int fd) override {
    struct ::stat st;
    if (::fstat(fd, &st) != 0) return errno_status(errno, "fstat", "");
    return to_info(st);
  }
  result<file_info> stat(const std::string& path) override {
    struct ::stat st;
    if (::stat(path.c_str(), &st) != 0) return errno_status(errno, "stat", path);
    return to_info(st);
  }
  result<file_info> lstat(const std::string& path) override {
    struct ::stat st;
    if (::lstat(path.c_str(), &st) != 0) return errno_status(errno, "lstat", path);
    return to_info(st);
  }
  status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return errno_status(errno, "rename", from + " -> " + to);
    return {};
  }
  status link(const std::string& from, const std::string& to) override {
    if (::link(from.c_str(), to.c_str()) != 0) return errno_status(errno, "link", from + " -> " + to);
    return {};
  }
  status unlink(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return errno_status(errno, "unlink", path);
    return {};
  }
  status mkdir(const std::string& path, mode_t mode) override {
    if (::mkdir(path.c_str(), mode) != 0) return errno_status(errno, "mkdir", path);
    return {};
  }
  status chmod(const std::string& path, mode_t mode) override {
    if (::chmod(path.c_str(), mode) != 0) return errno_status(errno, "chmod", path);
    return {};
  }
  result<std::vector<std::string>> list_dir(const std::string& path) override {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(path.c_str()), ::closedir);
    if (!d) return errno_status(errno, "opendir", path);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(d.get())) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      names.emplace_back(e->d_name);
    }
    if (errno != 0) return errno_status(errno, "readdir", path);
    return names;
  }
  result<std::string> realpath(const std::string& path) override {
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf)) return errno_status(errno, "realpath", path);
    return std::string(buf);
  }
};

}  // namespace

fs& posix_fs() {
  static posix_fs_impl instance;
  return instance;
}

status errno_status(int err, const std::string& op, const std::string& path) {
  errc code = errc::io_error;
  switch (err) {
    case ENOSPC:
    case EDQUOT: code = errc::no_space; break;
    case ENOENT: code = errc::not_found; break;
    case EEXIST: code = errc::already_exists; break;
    case ELOOP: code = errc::unsafe_path; break;
    case EINVAL: code = errc::invalid_argument; break;
    default: break;
  }
  std::string msg = op;
  if (!path.empty()) msg += " " + path;
  msg += ": ";
  msg += std::strerror(err);
  return status(code, std::move(msg));
}

status write_all(fs& f, int fd, const char* data, std::size_t n) {
  while (n > 0) {
    auto w = f.write(fd, data, n);
    if (!w.ok()) return w.error();
    if (*w == 0) return status(errc::io_error, "write: wrote 0 bytes");
    data += *w;
    n -= *w;
  }
  return {};
}

status fs::write_gather(int fd, std::span<const std::string_view> pieces) {
  if (pieces.size() == 1) return write_all(*this, fd, pieces[0].data(), pieces[0].size());
  std::string joined;
  std::size_t total = 0;
  for (std::string_view p : pieces) total += p.size();
  joined.reserve(total);
  for (std::string_view p : pieces) joined += p;
  return write_all(*this, fd, joined.data(), joined.size());
}

status pwrite_all(fs& f, int fd, const char* data, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    auto w = f.pwrite(fd, data, n, offset);
    if (!w.ok()) return w.error();
    if (*w == 0) return status(errc::io_error, "write: wrote 0 bytes");
    data += *w;
    n -= *w;
    offset += *w;
  }
  return {};
}

result<std::string> pread_all(fs& f, int fd, std::size_t n, std::uint64_t offset) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    auto r = f.pread(fd, out.data() + got, n - got, offset + got);
    if (!r.ok()) return r.error();
    if (*r == 0) break;
    got += *r;
  }
  out.resize(got);
  return out;
}

}  // namespace sessionrt::storage
