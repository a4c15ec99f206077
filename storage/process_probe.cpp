#include "storage/process_probe.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <mutex>
#include <string>
#include <string_view>

namespace sessionrt::storage {
namespace {

bool valid_pid(std::int64_t pid) { return pid > 0 && pid <= INT_MAX; }

// Reads a small /proc file whole; nullopt when it cannot be opened or read.
std::optional<std::string> read_proc_file(const std::string& path) {
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (1u << 20)) break;  // /proc/<pid>/status is a few KiB
  }
  ::close(fd);
  return text;
}

bool is_zombie(std::int64_t pid) {
  auto status = read_proc_file("/proc/" + std::to_string(pid) + "/status");
  if (!status) return false;
  std::string_view text(*status);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (line.substr(0, 6) == "State:") {
      std::size_t i = 6;
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      return i < line.size() && line[i] == 'Z';
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return false;
}

class real_probe final : public process_probe {
 public:
  std::int64_t self_pid() const override { return ::getpid(); }

  bool alive(std::int64_t pid) const override {
    if (!valid_pid(pid)) return false;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
    return !is_zombie(pid);
  }

  // Every lock this process takes records its own start time: read from /proc once per pid (a
  // forked child has its own).
  std::optional<std::int64_t> start_time(std::int64_t pid) const override {
    if (pid != ::getpid()) return read_start_time(pid);
    std::lock_guard<std::mutex> g(own_mutex_);
    if (own_pid_ != pid) {
      own_start_ = read_start_time(pid);
      own_pid_ = pid;
    }
    return own_start_;
  }

 private:
  static std::optional<std::int64_t> read_start_time(std::int64_t pid) {
    if (!valid_pid(pid)) return std::nullopt;
    auto stat = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return std::nullopt;
    // Field 2 (comm) is parenthesized and may hold spaces and ')': fields 3.. start after the
    // last ')'. Field 22 is the 20th field from there.
    std::size_t close = stat->rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::string_view rest = std::string_view(*stat).substr(close + 1);
    int field = 2;
    std::size_t i = 0;
    while (i < rest.size()) {
      while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) ++i;
      if (i >= rest.size()) break;
      std::size_t end = i;
      while (end < rest.size() && rest[end] != ' ' && rest[end] != '\n') ++end;
      if (++field == 22) {
        std::int64_t value = 0;
        auto [ptr, ec] = std::from_chars(rest.data() + i, rest.data() + end, value);
        if (ec != std::errc() || ptr != rest.data() + end || value < 0) return std::nullopt;
        return value;
      }
      i = end;
    }
    return std::nullopt;
  }

  mutable std::mutex own_mutex_;
  mutable std::int64_t own_pid_ = -1;
  mutable std::optional<std::int64_t> own_start_;
};

}  // namespace

process_probe& real_process_probe() {
  static real_probe instance;
  return instance;
}

fake_process_probe::fake_process_probe(std::int64_t self_pid, std::optional<std::int64_t> self_start_time)
    : self_pid_(self_pid) {
  processes_[self_pid] = {self_start_time, false};
}

void fake_process_probe::set_process(std::int64_t pid, std::optional<std::int64_t> start_time, bool zombie) {
  std::lock_guard<std::mutex> lock(mutex_);
  processes_[pid] = {start_time, zombie};
}

void fake_process_probe::remove_process(std::int64_t pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  processes_.erase(pid);
}

bool fake_process_probe::alive(std::int64_t pid) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = processes_.find(pid);
  return it != processes_.end() && !it->second.zombie;
}

std::optional<std::int64_t> fake_process_probe::start_time(std::int64_t pid) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = processes_.find(pid);
  if (it == processes_.end()) return std::nullopt;
  return it->second.start_time;
}

}  // namespace sessionrt::storage
