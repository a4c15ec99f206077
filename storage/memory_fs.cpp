#include "storage/memory_fs.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_set>

namespace sessionrt::storage {

namespace {
// Hashed, so that a name is found in a directory of 100,000s of transcripts in one probe (a
// std::map's ~18 scattered nodes and compares were 3.5% of a simulated month); list_dir sorts.
struct name_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
}  // namespace

struct memory_fs::node {
  bool dir = false;
  mode_t perm = 0600;
  std::uint64_t ino = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  std::string data;                        // a regular file's bytes
  std::unordered_map<std::string, node_ptr, name_hash, std::equal_to<>> entries;  // a directory's names
};

namespace {
constexpr std::uint64_t kDev = 0x5e55;
// Buffers worth keeping: below this jemalloc's size classes reuse freed pages anyway.
constexpr std::size_t kLargeBuffer = std::size_t{1} << 20;
constexpr std::size_t kMaxSpareBuffer = std::size_t{64} << 20;
constexpr std::size_t kMaxSpares = 4;

// "/a/./b//c/../d" -> {"a", "b", "d"} (views into `path`); a relative path is taken from "/".
std::vector<std::string_view> components(const std::string& path) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    const std::size_t j = std::min(path.find('/', i), path.size());
    if (j > i) {
      std::string_view c(path.data() + i, j - i);
      if (c == "..") {
        if (!out.empty()) out.pop_back();
      } else if (c != ".") {
        out.push_back(c);
      }
    }
    i = j;
  }
  return out;
}

bool writable(int flags) { return (flags & O_ACCMODE) != O_RDONLY; }
}  // namespace

memory_fs::memory_fs(const clock& time) : time_(time) { root_ = make_node(true, 0755); }
memory_fs::~memory_fs() = default;

memory_fs::node_ptr memory_fs::make_node(bool dir, mode_t mode) {
  // The last reference to a node is dropped under mu_ (close, rename over, unlink) or while
  // this fs is destroyed, when spare_ still lives (it is declared before root_ and fds_).
  node_ptr n(new node, [this](node* gone) {
    recycle(std::move(gone->data));
    delete gone;
  });
  n->dir = dir;
  n->perm = mode & 07777;
  n->ino = next_ino_++;
  touch(*n);
  return n;
}

void memory_fs::touch(node& n) { n.mtime_ns = n.ctime_ns = now_ns(); }
std::int64_t memory_fs::now_ns() const { return time_.now_ms() * 1'000'000; }

result<memory_fs::lookup> memory_fs::find(const std::string& path, const char* op, const std::string& shown) const {
  if (path.empty()) return errno_status(ENOENT, op, shown);
  const auto parts = components(path);
  lookup out;
  if (parts.empty()) {
    out.found = root_;
    return out;
  }
  const node_ptr* dir = &root_;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    auto it = (*dir)->entries.find(parts[i]);
    if (it == (*dir)->entries.end()) return errno_status(ENOENT, op, shown);
    if (!it->second->dir) return errno_status(ENOTDIR, op, shown);
    dir = &it->second;
  }
  out.parent = *dir;
  out.name = std::string(parts.back());
  if (auto it = out.parent->entries.find(out.name); it != out.parent->entries.end()) out.found = it->second;
  return out;
}

result<memory_fs::lookup> memory_fs::existing(const std::string& path, const char* op) const {
  auto l = find(path, op, path);
  if (l.ok() && !l->found) return errno_status(ENOENT, op, path);
  return l;
}

file_info memory_fs::info_of(const node& n) const {
  file_info i;
  i.size = n.dir ? 4096 : n.data.size();
  i.dev = kDev;
  i.ino = n.ino;
  i.mtime_ns = n.mtime_ns;
  i.ctime_ns = n.ctime_ns;
  i.mode = (n.dir ? S_IFDIR : S_IFREG) | n.perm;
  return i;
}

result<memory_fs::open_file*> memory_fs::descriptor(int fd, const char* op) {
  auto it = fds_.find(fd);
  if (it == fds_.end()) return errno_status(EBADF, op, "");
  return &it->second;
}

std::uint64_t memory_fs::bytes_held() const {
  std::lock_guard<std::mutex> g(mu_);
  std::uint64_t total = 0;
  std::unordered_set<const node*> seen;
  std::vector<const node*> todo{root_.get()};
  while (!todo.empty()) {
    const node* d = todo.back();
    todo.pop_back();
    for (const auto& [name, n] : d->entries) {
      if (n->dir)
        todo.push_back(n.get());
      else if (seen.insert(n.get()).second)
        total += n->data.size();
    }
  }
  return total;
}

result<int> memory_fs::open(const std::string& path, int flags, mode_t mode) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = find(path, "open", path);
  if (!l.ok()) return l.error();
  node_ptr n = l->found;
  if (n) {
    if ((flags & O_CREAT) && (flags & O_EXCL)) return errno_status(EEXIST, "open", path);
    if (n->dir && (writable(flags) || (flags & O_TRUNC))) return errno_status(EISDIR, "open", path);
    if (!n->dir && (flags & O_DIRECTORY)) return errno_status(ENOTDIR, "open", path);
    if ((flags & O_TRUNC) && writable(flags) && !n->data.empty()) {
      n->data.clear();
      touch(*n);
    }
  } else {
    if (!(flags & O_CREAT) || !l->parent) return errno_status(ENOENT, "open", path);
    if (flags & O_DIRECTORY) return errno_status(EINVAL, "open", path);
    n = make_node(false, mode);
    l->parent->entries.emplace(l->name, n);
    touch(*l->parent);
  }
  const int fd = next_fd_++;
  fds_.emplace(fd, open_file{std::move(n), flags, 0});
  return fd;
}

status memory_fs::close(int fd) {
  std::lock_guard<std::mutex> g(mu_);
  if (fds_.erase(fd) == 0) return errno_status(EBADF, "close", "");
  return {};
}

void memory_fs::recycle(std::string&& bytes) {
  const std::size_t cap = bytes.capacity();
  if (cap < kLargeBuffer || cap > kMaxSpareBuffer) return;  // freed with the node
  std::string kept = std::move(bytes);
  kept.clear();
  const auto at = std::lower_bound(spare_.begin(), spare_.end(), cap,
                                   [](const std::string& b, std::size_t c) { return b.capacity() < c; });
  spare_.insert(at, std::move(kept));
  if (spare_.size() > kMaxSpares) spare_.erase(spare_.begin());  // the smallest goes
}

// Small files grow as std::string grows them (doubling). A large one takes the smallest spare
// buffer that fits, or a fresh one with headroom; the buffer it leaves is kept in turn.
void memory_fs::make_room(std::string& bytes, std::uint64_t size) {
  if (size <= bytes.capacity() || size < kLargeBuffer) return;
  const auto fits = std::lower_bound(spare_.begin(), spare_.end(), size,
                                     [](const std::string& b, std::uint64_t s) { return b.capacity() < s; });
  std::string next;
  if (fits != spare_.end()) {
    next = std::move(*fits);
    spare_.erase(fits);
    ++large_buffers_.reused;
  } else {
    next.reserve(std::max<std::uint64_t>(size + size / 8, 2 * std::uint64_t{bytes.capacity()}));
    ++large_buffers_.fresh;
  }
  next.assign(bytes);
  bytes.swap(next);
  recycle(std::move(next));
}

memory_fs::buffer_counts memory_fs::large_buffers() const {
  std::lock_guard<std::mutex> g(mu_);
  return large_buffers_;
}

// write, pwrite and write_gather: the file grows once for all the pieces; a gap past the end
// reads as zeros, as on a real file.
std::uint64_t memory_fs::write_at(node& file, std::uint64_t offset, std::span<const std::string_view> pieces) {
  std::size_t total = 0;
  for (std::string_view p : pieces) total += p.size();
  if (total == 0) return offset;
  std::string& bytes = file.data;
  make_room(bytes, offset + total);
  if (offset > bytes.size()) bytes.resize(offset, '\0');
  for (std::string_view p : pieces) {
    const std::size_t overlap = std::min<std::size_t>(p.size(), bytes.size() - offset);
    bytes.replace(offset, overlap, p.data(), p.size());
    offset += p.size();
  }
  touch(file);
  return offset;
}

result<memory_fs::open_file*> memory_fs::writable_descriptor(int fd) {
  auto f = descriptor(fd, "write");
  if (!f.ok()) return f.error();
  if (!writable((*f)->flags) || (*f)->file->dir) return errno_status(EBADF, "write", "");
  return *f;
}

result<std::size_t> memory_fs::write(int fd, const char* data, std::size_t n) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = writable_descriptor(fd);
  if (!f.ok()) return f.error();
  open_file& of = **f;
  if (of.flags & O_APPEND) of.offset = of.file->data.size();
  const std::string_view piece(data, n);
  of.offset = write_at(*of.file, of.offset, {&piece, 1});
  return n;
}

status memory_fs::write_gather(int fd, std::span<const std::string_view> pieces) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = writable_descriptor(fd);
  if (!f.ok()) return f.error();
  open_file& of = **f;
  if (of.flags & O_APPEND) of.offset = of.file->data.size();
  of.offset = write_at(*of.file, of.offset, pieces);
  return {};
}

void memory_fs::size_hint(int fd, std::uint64_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = writable_descriptor(fd);
  if (f.ok()) make_room((*f)->file->data, bytes);
}

result<std::size_t> memory_fs::pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = writable_descriptor(fd);
  if (!f.ok()) return f.error();
  const std::string_view piece(data, n);
  (void)write_at(*(*f)->file, offset, {&piece, 1});
  return n;
}

status memory_fs::fallocate(int fd, std::uint64_t offset, std::uint64_t length) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = descriptor(fd, "fallocate");
  if (!f.ok()) return f.error();
  open_file& of = **f;
  if (!writable(of.flags) || of.file->dir) return errno_status(EBADF, "fallocate", "");
  if (offset + length > of.file->data.size()) {
    make_room(of.file->data, offset + length);
    of.file->data.resize(offset + length, '\0');
    touch(*of.file);
  }
  return {};
}

result<std::size_t> memory_fs::pread(int fd, char* buf, std::size_t n, std::uint64_t offset) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = descriptor(fd, "read");
  if (!f.ok()) return f.error();
  const open_file& of = **f;
  if ((of.flags & O_ACCMODE) == O_WRONLY) return errno_status(EBADF, "read", "");
  if (of.file->dir) return errno_status(EISDIR, "read", "");
  const std::string& bytes = of.file->data;
  if (offset >= bytes.size()) return std::size_t{0};
  const std::size_t got = std::min<std::size_t>(n, bytes.size() - offset);
  std::memcpy(buf, bytes.data() + offset, got);
  return got;
}

// Nothing to make durable (power_loss_fs above decides that); only the descriptor is checked.
status memory_fs::fsync(int fd) { return known_fd(fd, "fsync"); }
status memory_fs::fdatasync(int fd) { return known_fd(fd, "fdatasync"); }
status memory_fs::syncfs(int fd) { return known_fd(fd, "syncfs"); }

status memory_fs::known_fd(int fd, const char* op) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = descriptor(fd, op);
  return f.ok() ? status() : f.error();
}

status memory_fs::ftruncate(int fd, std::uint64_t length) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = descriptor(fd, "ftruncate");
  if (!f.ok()) return f.error();
  if (!writable((*f)->flags) || (*f)->file->dir) return errno_status(EINVAL, "ftruncate", "");
  make_room((*f)->file->data, length);
  (*f)->file->data.resize(length, '\0');
  touch(*(*f)->file);
  return {};
}

result<file_info> memory_fs::fstat(int fd) {
  std::lock_guard<std::mutex> g(mu_);
  auto f = descriptor(fd, "fstat");
  if (!f.ok()) return f.error();
  return info_of(*(*f)->file);
}

result<file_info> memory_fs::stat(const std::string& path) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = existing(path, "stat");
  if (!l.ok()) return l.error();
  return info_of(*l->found);
}

result<file_info> memory_fs::lstat(const std::string& path) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = existing(path, "lstat");  // no symlinks: as stat
  if (!l.ok()) return l.error();
  return info_of(*l->found);
}

status memory_fs::rename(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> g(mu_);
  const std::string both = from + " -> " + to;
  auto src = find(from, "rename", both);
  if (!src.ok()) return src.error();
  auto dst = find(to, "rename", both);
  if (!dst.ok()) return dst.error();
  if (!src->found || !src->parent) return errno_status(ENOENT, "rename", both);
  if (!dst->parent) return errno_status(EBUSY, "rename", both);
  if (src->found == dst->found) return {};
  // One path inside the other, as Linux's rename sees it (its "trap"): a directory may not move
  // under itself, nor be replaced by something inside it.
  const auto from_parts = components(from), to_parts = components(to);
  const auto inside = [](const std::vector<std::string_view>& outer, const std::vector<std::string_view>& inner) {
    return outer.size() < inner.size() && std::equal(outer.begin(), outer.end(), inner.begin());
  };
  if (inside(from_parts, to_parts)) return errno_status(EINVAL, "rename", both);
  if (inside(to_parts, from_parts)) return errno_status(ENOTEMPTY, "rename", both);
  if (const node_ptr& old = dst->found) {
    if (old->dir && !src->found->dir) return errno_status(EISDIR, "rename", both);
    if (!old->dir && src->found->dir) return errno_status(ENOTDIR, "rename", both);
    if (old->dir && !old->entries.empty()) return errno_status(ENOTEMPTY, "rename", both);
  }
  node_ptr moving = src->found;
  src->parent->entries.erase(src->name);
  dst->parent->entries[dst->name] = moving;
  moving->ctime_ns = now_ns();
  touch(*src->parent);
  touch(*dst->parent);
  return {};
}

status memory_fs::link(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> g(mu_);
  const std::string both = from + " -> " + to;
  auto src = find(from, "link", both);
  if (!src.ok()) return src.error();
  if (!src->found) return errno_status(ENOENT, "link", both);
  auto dst = find(to, "link", both);
  if (!dst.ok()) return dst.error();
  if (dst->found || !dst->parent) return errno_status(EEXIST, "link", both);
  if (src->found->dir) return errno_status(EPERM, "link", both);
  dst->parent->entries.emplace(dst->name, src->found);
  src->found->ctime_ns = now_ns();
  touch(*dst->parent);
  return {};
}

status memory_fs::unlink(const std::string& path) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = existing(path, "unlink");
  if (!l.ok()) return l.error();
  if (l->found->dir) return errno_status(EISDIR, "unlink", path);
  l->parent->entries.erase(l->name);
  touch(*l->parent);
  return {};
}

status memory_fs::mkdir(const std::string& path, mode_t mode) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = find(path, "mkdir", path);
  if (!l.ok()) return l.error();
  if (l->found) return errno_status(EEXIST, "mkdir", path);
  l->parent->entries.emplace(l->name, make_node(true, mode));
  touch(*l->parent);
  return {};
}

status memory_fs::chmod(const std::string& path, mode_t mode) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = existing(path, "chmod");
  if (!l.ok()) return l.error();
  l->found->perm = mode & 07777;
  l->found->ctime_ns = now_ns();
  return {};
}

std::uint64_t memory_fs::bytes_in_dir(const std::string& dir) const {
  std::lock_guard<std::mutex> g(mu_);
  auto l = existing(dir, "opendir");
  if (!l.ok() || !l->found->dir) return 0;
  std::uint64_t total = 0;
  for (const auto& [name, n] : l->found->entries)
    if (!n->dir) total += n->data.size();
  return total;
}

result<std::vector<std::string>> memory_fs::list_dir(const std::string& path) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = existing(path, "opendir");
  if (!l.ok()) return l.error();
  if (!l->found->dir) return errno_status(ENOTDIR, "opendir", path);
  std::vector<std::string> names;
  names.reserve(l->found->entries.size());
  for (const auto& [name, n] : l->found->entries) names.push_back(name);
  std::sort(names.begin(), names.end());  // as the ordered map gave them: simulations replay byte for byte
  return names;
}

result<std::string> memory_fs::realpath(const std::string& path) {
  std::lock_guard<std::mutex> g(mu_);
  auto l = existing(path, "realpath");
  if (!l.ok()) return l.error();
  std::string out;
  for (std::string_view c : components(path)) {
    out += '/';
    out += c;
  }
  return out.empty() ? std::string("/") : out;
}

}  // namespace sessionrt::storage
