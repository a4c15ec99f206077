// memory_fs: the same random calls on a real directory and on the memory fs give the same
// answers (success or the same error code, the same bytes, sizes and names), and the memory
// fs's own promises (virtual mtimes, descriptors that outlive their names) hold.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/durable_file.hpp"
#include "storage/fs.hpp"
#include "storage/memory_fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using storage::fs;

namespace {

// One call's outcome, comparable across the two fs's.
// An error's message names the errno (strerror) and the path, with the side's root as "<root>".
struct outcome {
  bool ok = false;
  errc code = errc::ok;
  std::string value;  // bytes read, a size, sorted names; or the error's message
  bool operator==(const outcome&) const = default;
};
outcome of(const status& s) { return {s.ok(), s.ok() ? errc::ok : s.code(), s.ok() ? "" : s.message()}; }
template <class T>
outcome of(const result<T>& r, std::string value) {
  return {r.ok(), r.ok() ? errc::ok : r.error().code(), r.ok() ? std::move(value) : r.error().message()};
}
std::string describe(const outcome& o) { return (o.ok ? "ok " : "error ") + o.value; }
outcome rooted(outcome o, const std::string& root) {
  for (std::size_t at; (at = o.value.find(root)) != std::string::npos;) o.value.replace(at, root.size(), "<root>");
  return o;
}

struct side {
  fs& f;
  std::string root;
  std::vector<int> fds;  // parallel to the other side's: slot i is the same open on both
  std::string path(const std::string& rel) const { return rel.empty() ? root : root + "/" + rel; }
};

class differ {
 public:
  differ(fs& real, std::string real_root, fs& mem, std::string mem_root, std::uint64_t seed)
      : a_{real, std::move(real_root), {}}, b_{mem, std::move(mem_root), {}}, rng_(seed) {}

  void step(int i) {
    const int op = pick(12);
    const std::string p = rel_path(), q = rel_path();
    outcome x, y;
    std::string what;
    switch (op) {
      case 0: {  // open
        static const int kFlags[] = {O_RDONLY,
                                     O_WRONLY | O_CREAT,
                                     O_WRONLY | O_CREAT | O_EXCL,
                                     O_RDWR | O_CREAT | O_APPEND,
                                     O_WRONLY | O_TRUNC,
                                     O_RDWR | O_CREAT | O_TRUNC,
                                     O_RDONLY | O_DIRECTORY,
                                     O_WRONLY | O_APPEND | O_NOFOLLOW};
        const int flags = kFlags[pick(8)];
        what = "open " + p + " flags " + std::to_string(flags);
        auto fa = a_.f.open(a_.path(p), flags, 0640);
        auto fb = b_.f.open(b_.path(p), flags, 0640);
        x = of(fa, "");
        y = of(fb, "");
        if (fa.ok() && fb.ok()) {
          a_.fds.push_back(*fa);
          b_.fds.push_back(*fb);
        } else {
          if (fa.ok()) (void)a_.f.close(*fa);
          if (fb.ok()) (void)b_.f.close(*fb);
        }
        break;
      }
      case 1: {  // write
        if (a_.fds.empty()) return;
        const std::size_t k = pick(a_.fds.size());
        const std::string text(1 + pick(40), static_cast<char>('a' + pick(26)));
        if (pick(2)) {
          what = "write " + std::to_string(text.size());
          x = of(storage::write_all(a_.f, a_.fds[k], text.data(), text.size()));
          y = of(storage::write_all(b_.f, b_.fds[k], text.data(), text.size()));
          break;
        }
        // The same bytes gathered from pieces (some empty), after a size hint now and then
        // (which changes nothing visible): posix_fs's writev against memory_fs's own.
        std::vector<std::string_view> pieces;
        for (std::size_t at = 0; at < text.size();) {
          const std::size_t n = std::min(text.size() - at, pick(8));
          pieces.push_back(std::string_view(text).substr(at, n));
          at += n;
        }
        if (pick(3) == 0) {
          a_.f.size_hint(a_.fds[k], pick(1 << 21));
          b_.f.size_hint(b_.fds[k], pick(1 << 21));
        }
        what = "write_gather " + std::to_string(text.size()) + " in " + std::to_string(pieces.size());
        x = of(a_.f.write_gather(a_.fds[k], pieces));
        y = of(b_.f.write_gather(b_.fds[k], pieces));
        break;
      }
      case 2: {  // pread
        if (a_.fds.empty()) return;
        const std::size_t k = pick(a_.fds.size());
        const std::uint64_t off = pick(60);
        what = "pread at " + std::to_string(off);
        auto ra = storage::pread_all(a_.f, a_.fds[k], 50, off);
        auto rb = storage::pread_all(b_.f, b_.fds[k], 50, off);
        x = of(ra, ra.ok() ? *ra : "");
        y = of(rb, rb.ok() ? *rb : "");
        break;
      }
      case 3: {  // ftruncate + fstat
        if (a_.fds.empty()) return;
        const std::size_t k = pick(a_.fds.size());
        const std::uint64_t len = pick(30);
        what = "ftruncate " + std::to_string(len);
        x = of(a_.f.ftruncate(a_.fds[k], len));
        y = of(b_.f.ftruncate(b_.fds[k], len));
        if (x == y) {
          auto sa = a_.f.fstat(a_.fds[k]);
          auto sb = b_.f.fstat(b_.fds[k]);
          x = of(sa, sa.ok() && sa->is_regular() ? std::to_string(sa->size) : "dir");
          y = of(sb, sb.ok() && sb->is_regular() ? std::to_string(sb->size) : "dir");
        }
        break;
      }
      case 4: {  // close
        if (a_.fds.empty()) return;
        const std::size_t k = pick(a_.fds.size());
        what = "close";
        x = of(a_.f.close(a_.fds[k]));
        y = of(b_.f.close(b_.fds[k]));
        a_.fds.erase(a_.fds.begin() + static_cast<std::ptrdiff_t>(k));
        b_.fds.erase(b_.fds.begin() + static_cast<std::ptrdiff_t>(k));
        break;
      }
      case 5:
      case 6: {  // rename / link of files (storage/ never moves directories)
        auto src = a_.f.lstat(a_.path(p));
        if (src.ok() && src->is_dir()) return;
        const bool link = op == 6;
        what = std::string(link ? "link " : "rename ") + p + " -> " + q;
        x = of(link ? a_.f.link(a_.path(p), a_.path(q)) : a_.f.rename(a_.path(p), a_.path(q)));
        y = of(link ? b_.f.link(b_.path(p), b_.path(q)) : b_.f.rename(b_.path(p), b_.path(q)));
        break;
      }
      case 7:
        what = "unlink " + p;
        x = of(a_.f.unlink(a_.path(p)));
        y = of(b_.f.unlink(b_.path(p)));
        break;
      case 8:
        what = "mkdir " + p;
        x = of(a_.f.mkdir(a_.path(p), 0750));
        y = of(b_.f.mkdir(b_.path(p), 0750));
        break;
      case 9: {  // stat: kind, size of files, permissions
        what = "stat " + p;
        auto sa = a_.f.stat(a_.path(p));
        auto sb = b_.f.stat(b_.path(p));
        x = of(sa, sa.ok() ? summary(*sa) : "");
        y = of(sb, sb.ok() ? summary(*sb) : "");
        break;
      }
      case 10: {  // list_dir, sorted (neither promises an order)
        const std::string d = pick(2) ? "" : "d";
        what = "list_dir " + d;
        auto la = a_.f.list_dir(a_.path(d));
        auto lb = b_.f.list_dir(b_.path(d));
        x = of(la, la.ok() ? joined(*la) : "");
        y = of(lb, lb.ok() ? joined(*lb) : "");
        break;
      }
      default: {
        const mode_t mode = pick(2) ? 0600 : 0644;
        what = "chmod " + p;
        x = of(a_.f.chmod(a_.path(p), mode));
        y = of(b_.f.chmod(b_.path(p), mode));
        break;
      }
    }
    x = rooted(std::move(x), a_.root);
    y = rooted(std::move(y), b_.root);
    INFO("step " << i << ": " << what << ": real " << describe(x) << ", memory " << describe(y));
    REQUIRE(x == y);
    if (x.ok) ++succeeded_;
    else ++failed_;
  }

  void close_all() {
    for (int fd : a_.fds) (void)a_.f.close(fd);
    for (int fd : b_.fds) (void)b_.f.close(fd);
  }
  int succeeded_ = 0, failed_ = 0;

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  std::string rel_path() {
    static const char* kDirs[] = {"", "", "d/", "d/", "d/e/", "missing/"};
    static const char* kNames[] = {"a", "b.jsonl", "c.tmp", "d", "e"};
    return std::string(kDirs[pick(6)]) + kNames[pick(5)];
  }
  static std::string summary(const storage::file_info& i) {
    return std::string(i.is_dir() ? "dir" : "file " + std::to_string(i.size)) + " perm " + std::to_string(i.mode & 0777);
  }
  static std::string joined(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    std::string out;
    for (const auto& n : names) out += n + ",";
    return out;
  }
  side a_, b_;
  std::mt19937_64 rng_;
};

}  // namespace

TEST_CASE("memory_fs answers random calls as the real filesystem does") {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    testing::temp_dir dir;
    manual_clock clk(1'000);
    storage::memory_fs mem(clk);
    REQUIRE(mem.mkdir("/state", 0700).ok());
    differ d(storage::posix_fs(), dir.path(), mem, "/state", seed);
    for (int i = 0; i < 400; ++i) d.step(i);
    d.close_all();
    // Both kinds of answer occurred: the comparison was not only of errors (or only of successes).
    INFO("seed " << seed << ": " << d.succeeded_ << " calls succeeded, " << d.failed_ << " failed");
    CHECK(d.succeeded_ > 30);
    CHECK(d.failed_ > 20);
  }
}

TEST_CASE("memory_fs: mtimes are the clock's, an open descriptor outlives its name, bytes_held counts files once") {
  manual_clock clk(5'000);
  storage::memory_fs mem(clk);
  REQUIRE(mem.mkdir("/s", 0700).ok());
  auto fd = mem.open("/s/t.jsonl", O_RDWR | O_CREAT | O_APPEND, 0600);
  REQUIRE(fd.ok());
  REQUIRE(storage::write_all(mem, *fd, "hello\n", 6).ok());
  CHECK(mem.stat("/s/t.jsonl")->mtime_ns == 5'000'000'000);
  clk.advance(2'000);
  REQUIRE(storage::write_all(mem, *fd, "world\n", 6).ok());
  CHECK(mem.fstat(*fd)->mtime_ns == 7'000'000'000);
  REQUIRE(mem.link("/s/t.jsonl", "/s/t.bak").ok());
  CHECK(mem.bytes_held() == 12);
  REQUIRE(mem.unlink("/s/t.jsonl").ok());
  REQUIRE(mem.unlink("/s/t.bak").ok());
  CHECK(mem.bytes_held() == 0);
  CHECK(*storage::pread_all(mem, *fd, 100, 0) == "hello\nworld\n");
  CHECK(mem.stat("/s/t.jsonl").error().code() == errc::not_found);
  CHECK(mem.close(*fd).ok());
  CHECK(!mem.close(*fd).ok());
  CHECK(*mem.realpath("/s/./x/../") == "/s");
}

TEST_CASE("memory_fs carries storage's atomic whole-file writes") {
  manual_clock clk(0);
  storage::memory_fs mem(clk);
  REQUIRE(mem.mkdir("/s", 0700).ok());
  REQUIRE(storage::replace_file_atomic(mem, "/s/sessions.json", "{\"a\":1}").ok());
  REQUIRE(storage::replace_file_atomic(mem, "/s/sessions.json", "{}").ok());
  CHECK(*storage::read_file(mem, "/s/sessions.json", 1 << 20) == "{}");
  CHECK(mem.list_dir("/s")->size() == 1);  // the temp file was renamed over, not left behind
  CHECK(storage::create_file_exclusive(mem, "/s/sessions.json", "x").code() == errc::already_exists);
  REQUIRE(storage::create_file_exclusive(mem, "/s/new.json", "x").ok());
  CHECK(*storage::read_file(mem, "/s/new.json", 1 << 20) == "x");
  CHECK(mem.list_dir("/s")->size() == 2);
}

TEST_CASE("memory_fs: a large file rewritten whole takes the buffer of the file it replaced, never its bytes") {
  manual_clock clk(0);
  storage::memory_fs mem(clk);
  REQUIRE(mem.mkdir("/s", 0700).ok());
  // sessions.json's life in a simulation: rewritten whole (temp file + rename), a little larger
  // each time; the reader keeps the old file open until the next one is in place.
  std::optional<int> held;
  for (int i = 0; i < 20; ++i) {
    const std::string text((std::size_t{2} << 20) + std::size_t(i) * 1000, char('a' + i));
    int fd = -1;
    storage::replace_options o;
    o.keep_fd = &fd;
    REQUIRE(storage::replace_file_atomic(mem, "/s/sessions.json", text, o).ok());
    if (held) REQUIRE(mem.close(*held).ok());
    held = fd;
    CHECK(*storage::read_file(mem, "/s/sessions.json", 16 << 20) == text);
  }
  REQUIRE(mem.close(*held).ok());
  const auto counts = mem.large_buffers();
  INFO("fresh " << counts.fresh << ", reused " << counts.reused);
  CHECK(counts.fresh <= 3);
  CHECK(counts.reused >= 17);

  // A reused buffer's old bytes never show: a gap, a fallocate and an ftruncate read as zeros.
  REQUIRE(mem.unlink("/s/sessions.json").ok());
  auto fd = mem.open("/s/gap", O_RDWR | O_CREAT, 0600);
  REQUIRE(fd.ok());
  REQUIRE(mem.pwrite(*fd, "z", 1, 1 << 20).ok());
  REQUIRE(mem.fallocate(*fd, 0, (1 << 20) + 4096).ok());
  REQUIRE(mem.ftruncate(*fd, (2 << 20) + 8192).ok());
  const std::string all = *storage::pread_all(mem, *fd, 4 << 20, 0);
  REQUIRE(all.size() == (2u << 20) + 8192);
  CHECK(all[1 << 20] == 'z');
  CHECK(std::count(all.begin(), all.end(), '\0') == std::ptrdiff_t(all.size()) - 1);
  CHECK(mem.large_buffers().reused > counts.reused);  // the gap did take a kept buffer
  REQUIRE(mem.close(*fd).ok());
}
