// The disk's own floor under the runtime's group commit, to read runtime_bench's figures against:
// one file per session, one append of B bytes per turn, then either floor (--floor, default both,
// one after the other at each shape):
//   per-file    syncfs(2) calls in a loop while appends wait (the group commit before the commit
//               log: storage/group_sync over many files). A turn is acknowledged when a syncfs
//               that started after its write returns.
//   shared-log  each turn also appends a record (its bytes and a 40-byte header) to one log
//               file; a sync thread writes the records that waited with one write and
//               fdatasyncs the log (actors/commit_log). A session's new file is synced with the
//               round that carries its first record (fdatasync each, syncfs from 4, then the
//               directory). Past 64 MiB a new log takes the records and a checkpoint thread
//               syncfs's the transcripts and drops the old log, as the runtime does. As the
//               runtime (log format version 3), the log is allocated ahead in chunks
//               (--prealloc-mib, default 4; 0: it grows by its appends) and written with pwrite,
//               and a dropped log is kept (up to --recycle files, default 2; 0: removed) and
//               written again from byte 0 as a later log, so its fdatasyncs change no size.
// Up to `--rounds` syncs run at once (default 2 for per-file, as the old syncer; 1 for the
// shared log, as the commit log actor). No actors, no JSON, no store, no model: what the kernel
// and the disk cost alone. One JSON line per run on stdout, progress on stderr.
//   max    closed loop as runtime_bench's throughput run: K sessions in flight, each running its
//          M turns back to back (the next written when the previous is acked), then the next
//          session starts. With --create a session's first turn creates its transcript and its
//          lock file (O_CREAT|O_EXCL), as a runtime session's first turn does; without, the
//          files exist before the clock starts.
//   paced  open loop at R turns/s spread over the sessions' files, for S s (with --create the first
//          turn of each creates its files, as in runtime_bench's paced run)
// Usage: disk_floor [--sessions N] [--turns M] [--inflight K] [--create] [--bytes B] [--rate R]...
//                   [--seconds S] [--rounds K] [--log-rounds K] [--checkpoint-mib M]
//                   [--prealloc-mib M] [--recycle N] [--floor per-file|shared-log|both] [--dir D]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace {

using steady = std::chrono::steady_clock;

struct args {
  int sessions = 1000;
  int turns = 100;
  int inflight = 0;  // 0: all sessions at once
  bool create = false;
  int bytes = 1000;  // about what a runtime_bench turn appends (its transcript_bytes_per_turn)
  std::vector<double> rates;
  double seconds = 5;
  std::string dir = "/tmp";
  int rounds = 2;      // per-file: syncfs calls in flight at once, as the old syncer
  int log_rounds = 1;  // shared-log: log fdatasyncs in flight at once (actors/commit_log kLogSyncsInFlight)
  bool per_file = true, shared_log = true;
  std::size_t checkpoint_bytes = 64u << 20;  // actors/commit_log kCheckpointBytes; 0: never
  std::size_t prealloc_bytes = 4u << 20;     // actors/commit_log kLogPreallocateBytes; 0: none
  std::size_t recycle = 2;                   // actors/commit_log kLogsRecycled; 0: none
};

constexpr std::size_t kRecordHeader = 40;               // a log record's framing + fields, about

[[noreturn]] void die(const std::string& what) {
  std::cerr << "disk_floor: " << what << ": " << std::strerror(errno) << "\n";
  std::_Exit(1);
}

double ms_since(steady::time_point t0, steady::time_point t) {
  return std::chrono::duration<double, std::milli>(t - t0).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// One transcript per session in a fresh directory, removed (and the removal synced) when this
// goes. A session's file is opened at its first turn (created then with `create`) and closed
// after its last, so 100,000 sessions need no more descriptors than the sessions in flight.
class session_files {
 public:
  session_files(const std::string& parent, int sessions, bool create) : create_(create) {
    std::string tmpl = parent + "/sessionrt-diskfloor-XXXXXX";
    if (!mkdtemp(tmpl.data())) die("mkdtemp under " + parent);
    dir_ = tmpl;
    dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd_ < 0) die("open " + dir_);
    fds_.assign(static_cast<std::size_t>(sessions), -1);
    if (!create_) {
      for (int i = 0; i < sessions; ++i) {
        const int fd = ::open(path(i).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) die("create " + path(i));
        ::close(fd);
      }
    }
    // As runtime_bench before each run: sync, then drop the kernel's clean caches (root only),
    // so that creates do not depend on what earlier runs deleted (see its settle_disk).
    ::sync();
    if (FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w")) {
      std::fputs("3\n", f);
      std::fclose(f);
    }
  }
  ~session_files() {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    ::close(dir_fd_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    ::sync();
  }
  int dir_fd() const { return dir_fd_; }
  const std::string& dir() const { return dir_; }

  // The session's descriptor, opened (or created, with its lock) at its first turn.
  int fd(int i) {
    int& fd = fds_[static_cast<std::size_t>(i)];
    if (fd >= 0) return fd;
    if (create_) {
      const std::string lock = path(i) + ".lock";
      const int lfd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (lfd < 0) die("create " + lock);
      const std::string payload = fmt::format(R"({{"pid":{},"createdAt":"2026-11-30T00:00:00.000Z"}})" "\n", ::getpid());
      if (::write(lfd, payload.data(), payload.size()) < 0) die("write " + lock);
      ::close(lfd);
    }
    fd = ::open(path(i).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | (create_ ? O_CREAT | O_EXCL : 0), 0600);
    if (fd < 0) die("open " + path(i));
    return fd;
  }
  void close(int i) {
    int& fd = fds_[static_cast<std::size_t>(i)];
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

 private:
  std::string path(int i) const { return fmt::format("{}/{}.jsonl", dir_, i); }

  bool create_;
  std::string dir_;
  int dir_fd_ = -1;
  std::vector<int> fds_;
};

// Dropped logs kept to be written again (the runtime's <n>.free files).
struct log_pool {
  std::mutex mu;
  std::vector<std::string> free;
  std::size_t keep = 0;
  int dropped = 0;
};

// One log file of the shared-log floor: closed and dropped (kept in the pool, or removed) when
// the last round writing it and the checkpoint that made its transcripts durable let go. A
// recycled file is renamed to its new name and written from byte 0.
struct log_file {
  std::string path;
  int fd = -1;
  std::size_t offset = 0, allocated = 0, chunk = 0;
  log_pool& pool;
  bool recycled = false;
  log_file(std::string p, std::size_t prealloc, log_pool& from) : path(std::move(p)), chunk(prealloc), pool(from) {
    std::string reuse;
    {
      std::lock_guard<std::mutex> g(pool.mu);
      if (!pool.free.empty()) {
        reuse = pool.free.back();
        pool.free.pop_back();
      }
    }
    if (!reuse.empty()) {
      if (::rename(reuse.c_str(), path.c_str()) != 0) die("rename " + reuse);
      fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      struct ::stat st {};
      if (fd < 0 || ::fstat(fd, &st) != 0) die("open " + path);
      allocated = static_cast<std::size_t>(st.st_size);
      recycled = true;
      return;
    }
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) die("create " + path);
  }
  void append(const std::string& records) {
    if (chunk > 0 && offset + records.size() > allocated) {
      const std::size_t want = (offset + records.size() + chunk - 1) / chunk * chunk;
      if (::fallocate(fd, 0, static_cast<off_t>(allocated), static_cast<off_t>(want - allocated)) == 0)
        allocated = want;
      else
        chunk = 0;
    }
    if (::pwrite(fd, records.data(), records.size(), static_cast<off_t>(offset)) != static_cast<ssize_t>(records.size()))
      die("write log");
    offset += records.size();
  }
  ~log_file() {
    ::close(fd);
    std::lock_guard<std::mutex> g(pool.mu);
    ++pool.dropped;
    if (pool.free.size() < pool.keep) {
      const std::string kept = path + ".free";
      if (::rename(path.c_str(), kept.c_str()) == 0) {
        pool.free.push_back(kept);
        return;
      }
    }
    ::unlink(path.c_str());
  }
};

// The appends (one thread: the driver's) and the sync loops.
class group_commit {
 public:
  group_commit(session_files& files, int bytes, int rounds_in_flight, bool shared_log, const args& a)
      : files_(files), line_(static_cast<std::size_t>(bytes), 'x'), shared_log_(shared_log),
        checkpoint_bytes_(a.checkpoint_bytes), prealloc_bytes_(a.prealloc_bytes) {
    pool_.keep = a.recycle;
    line_.back() = '\n';
    if (shared_log_) new_log();
    for (int i = 0; i < rounds_in_flight; ++i) syncers_.emplace_back([this] { sync_loop(); });
  }
  ~group_commit() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : syncers_) t.join();
    for (auto& t : checkpoints_) t.join();
    log_.reset();
    for (const auto& p : pool_.free) ::unlink(p.c_str());
  }

  // Appends one turn to session `i`; `started` is when the turn was issued (its latency's
  // origin); `last`: the session's last turn (its file is closed after the write).
  void write_turn(int i, steady::time_point started, bool first, bool last) {
    const int fd = files_.fd(i);
    if (::write(fd, line_.data(), line_.size()) != static_cast<ssize_t>(line_.size())) die("write");
    // A new file stays open until its round synced it (the session's handle rides with its record).
    const int new_fd = shared_log_ && first && creates_ ? ::dup(fd) : -1;
    if (last) files_.close(i);
    {
      std::lock_guard<std::mutex> g(mu_);
      pending_.push_back({i, started, first});
      if (shared_log_) {
        log_buf_.append(kRecordHeader, '\0');
        log_buf_ += line_;
        if (new_fd >= 0) new_files_.push_back(new_fd);
      }
    }
    cv_.notify_all();
  }
  void set_creates(bool on) { creates_ = on; }

  // Waits until some turns are acknowledged; returns their sessions (closed-loop driving).
  std::vector<int> wait_acked() {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return !acked_.empty(); });
    std::vector<int> out;
    out.swap(acked_);
    return out;
  }

  struct figures {
    std::vector<double> latency_ms;        // every turn
    std::vector<double> later_latency_ms;  // turns after each session's first
    std::vector<double> sync_ms;
  };
  // Waits until `n` turns in all are acknowledged, then returns the latencies and sync times.
  figures finish(std::size_t n) {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return latency_ms_.size() >= n; });
    return {latency_ms_, later_latency_ms_, sync_ms_};
  }

 private:
  struct turn {
    int session;
    steady::time_point started;
    bool first;
  };

  // A new log takes the records (under mu_ once the loops run).
  void new_log() {
    log_ = std::make_shared<log_file>(fmt::format("{}/commit-{}.log", files_.dir(), ++log_number_), prealloc_bytes_, pool_);
    recycled_ += log_->recycled;
  }

  void sync_loop() {
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      cv_.wait(g, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      std::vector<turn> round;
      round.swap(pending_);  // every append that returned before this sync starts
      std::string records;
      records.swap(log_buf_);
      std::vector<int> fresh;
      fresh.swap(new_files_);
      auto log = log_;
      g.unlock();
      const auto t0 = steady::now();
      if (!shared_log_) {
        if (::syncfs(files_.dir_fd()) != 0) die("syncfs");
      } else {
        log->append(records);
        if (!fresh.empty()) {  // new transcripts: their data and their names, as the commit log does
          if (fresh.size() >= 4) {
            if (::syncfs(files_.dir_fd()) != 0) die("syncfs");
          } else {
            for (int fd : fresh)
              if (::fdatasync(fd) != 0) die("fdatasync");
          }
          if (::fsync(files_.dir_fd()) != 0) die("fsync dir");
          for (int fd : fresh) ::close(fd);
        }
        if (::fdatasync(log->fd) != 0) die("fdatasync log");
      }
      const auto t1 = steady::now();
      g.lock();
      if (shared_log_) {
        log_bytes_ += records.size();
        if (checkpoint_bytes_ > 0 && log_bytes_ >= checkpoint_bytes_) {  // checkpoint: transcripts durable, old log gone
          log_bytes_ = 0;
          auto old = std::exchange(log_, nullptr);
          new_log();
          ++checkpoints_done_;
          checkpoints_.emplace_back([this, old]() mutable {
            if (::syncfs(files_.dir_fd()) != 0) die("syncfs");
            old.reset();
            if (::fsync(files_.dir_fd()) != 0) die("fsync dir");
          });
        }
      }
      sync_ms_.push_back(ms_since(t0, t1));
      for (const auto& t : round) {
        latency_ms_.push_back(ms_since(t.started, t1));
        if (!t.first) later_latency_ms_.push_back(latency_ms_.back());
        acked_.push_back(t.session);
      }
      cv_.notify_all();
    }
  }

  session_files& files_;
  std::string line_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<turn> pending_;
  std::vector<int> acked_;
  std::vector<double> latency_ms_, later_latency_ms_, sync_ms_;
  bool stop_ = false;
  std::vector<std::thread> syncers_;
  const bool shared_log_;
  const std::size_t checkpoint_bytes_;
  const std::size_t prealloc_bytes_;
  log_pool pool_;
  bool creates_ = false;
  std::string log_buf_;          // records waiting for the next round
  std::vector<int> new_files_;   // ... and the new transcripts among them (dup'd descriptors)
  std::shared_ptr<log_file> log_;
  std::size_t log_bytes_ = 0;
  int log_number_ = 0;
  std::vector<std::thread> checkpoints_;

 public:
  int checkpoints_done_ = 0;
  int recycled_ = 0;  // logs written into a dropped one
};

void report(const char* mode, bool shared_log, const args& a, int inflight, double target, std::size_t turns,
            double seconds, const group_commit::figures& r, int checkpoints, int recycled) {
  std::cout << fmt::format(
                   R"({{"bench":"disk_floor","floor":"{}","mode":"{}","sessions":{},"turns_per_session":{},"inflight":{},"creates":{},"rounds_in_flight":{},"bytes_per_turn":{},"turns":{},"target_turns_per_s":{:.0f},"turns_per_s":{:.0f},"ack_ms_p50":{:.3f},"ack_ms_p99":{:.3f},"ack_ms_max":{:.3f},"later_turns_ack_ms_p50":{:.3f},"later_turns_ack_ms_p99":{:.3f},"syncs":{},"sync_ms_p50":{:.3f},"sync_ms_p99":{:.3f},"checkpoints":{},"checkpoint_mib":{},"prealloc_mib":{},"recycle":{},"logs_recycled":{}}})",
                   shared_log ? "shared_log" : "per_file", mode, a.sessions, a.turns, inflight, a.create,
                   shared_log ? a.log_rounds : a.rounds, a.bytes, turns,
                   target, static_cast<double>(turns) / seconds, percentile(r.latency_ms, 0.5), percentile(r.latency_ms, 0.99),
                   percentile(r.latency_ms, 1.0), percentile(r.later_latency_ms, 0.5), percentile(r.later_latency_ms, 0.99),
                   r.sync_ms.size(), percentile(r.sync_ms, 0.5), percentile(r.sync_ms, 0.99), checkpoints,
                   shared_log ? a.checkpoint_bytes >> 20 : 0, shared_log ? a.prealloc_bytes >> 20 : 0,
                   shared_log ? a.recycle : 0, recycled)
            << std::endl;
}

// `inflight` sessions at a time run their turns back to back; a finished one starts the next.
void run_max(const args& a, bool shared_log) {
  const int inflight = a.inflight > 0 ? std::min(a.inflight, a.sessions) : a.sessions;
  session_files files(a.dir, a.sessions, a.create);
  group_commit gc(files, a.bytes, shared_log ? a.log_rounds : a.rounds, shared_log, a);
  gc.set_creates(a.create);
  std::cerr << fmt::format("[disk_floor] {}: {} sessions x {} turns of {} B, {} in flight{}\n",
                           shared_log ? "shared log" : "per file", a.sessions, a.turns, a.bytes, inflight,
                           a.create ? ", files created by the first turn" : "");
  const std::size_t total = static_cast<std::size_t>(a.sessions) * static_cast<std::size_t>(a.turns);
  std::vector<int> done(static_cast<std::size_t>(a.sessions), 0);
  const auto t0 = steady::now();
  int next = 0;
  for (; next < inflight; ++next) gc.write_turn(next, steady::now(), true, a.turns == 1);
  std::size_t written = static_cast<std::size_t>(inflight);
  while (written < total) {
    for (int i : gc.wait_acked()) {
      int s = i;
      if (++done[static_cast<std::size_t>(i)] >= a.turns) {
        if (next >= a.sessions) continue;
        s = next++;  // this session is done: start another one
      }
      const int turn = done[static_cast<std::size_t>(s)];
      gc.write_turn(s, steady::now(), turn == 0, turn + 1 >= a.turns);
      ++written;
    }
  }
  auto r = gc.finish(total);
  report("max", shared_log, a, inflight, 0, total, std::chrono::duration<double>(steady::now() - t0).count(), r,
         gc.checkpoints_done_, gc.recycled_);
}

// Turns issued at `rate` per second, session after session, whatever the acks do (open loop).
void run_paced(const args& a, double rate, bool shared_log) {
  session_files files(a.dir, a.sessions, a.create);
  group_commit gc(files, a.bytes, shared_log ? a.log_rounds : a.rounds, shared_log, a);
  gc.set_creates(a.create);
  const std::size_t total = static_cast<std::size_t>(rate * a.seconds);
  std::cerr << fmt::format("[disk_floor] {}: {} sessions, {} B a turn, paced at {:.0f} turns/s for {:.0f} s\n",
                           shared_log ? "shared log" : "per file", a.sessions, a.bytes, rate, a.seconds);
  const auto t0 = steady::now();
  for (std::size_t n = 0; n < total; ++n) {
    const auto due = t0 + std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 * static_cast<double>(n) / rate));
    std::this_thread::sleep_until(due);  // the pacing itself, not synchronization
    gc.write_turn(static_cast<int>(n % static_cast<std::size_t>(a.sessions)), due,
                  n < static_cast<std::size_t>(a.sessions), false);
  }
  auto r = gc.finish(total);
  report("paced", shared_log, a, a.sessions, rate, total, std::chrono::duration<double>(steady::now() - t0).count(), r,
         gc.checkpoints_done_, gc.recycled_);
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  const char* usage =
      "usage: disk_floor [--sessions N] [--turns M] [--inflight K] [--create] [--bytes B] [--rate R]...\n"
      "                  [--seconds S] [--rounds K] [--log-rounds K] [--checkpoint-mib M]\n"
      "                  [--prealloc-mib M] [--recycle N] [--floor per-file|shared-log|both] [--dir D]\n"
      "  the bare group commit the runtime's figures are bound by (see BENCHMARKS.md): per file (syncfs)\n"
      "  and through one shared log (fdatasync), --floor picks (default both)\n"
      "  closed loop: N sessions (default 1000) x M turns (default 100), K in flight (default all);\n"
      "  --create: a session's first turn creates its file and lock (else they exist beforehand);\n"
      "  --rate R: also a paced run at R turns/s over the N sessions for S seconds (default 5);\n"
      "  --bytes: bytes appended a turn (default 1000); --rounds: syncfs calls at once (default 2);\n"
      "  --log-rounds: log fdatasyncs at once (default 1, as the runtime); --checkpoint-mib: log size\n"
      "  that starts a checkpoint (default 64, as the runtime; 0: never); --prealloc-mib: the log's\n"
      "  allocation chunk (default 4, as the runtime; 0: it grows); --recycle: dropped logs kept and\n"
      "  written again (default 2, as the runtime; 0: removed); --dir: where the files go (default /tmp)\n";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string k = argv[i];
      if (k == "--help" || k == "-h") {
        std::cout << usage;
        return 0;
      }
      if (k == "--create") {
        a.create = true;
        continue;
      }
      if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
      const std::string v = argv[++i];
      if (k == "--sessions") a.sessions = std::stoi(v);
      else if (k == "--turns") a.turns = std::stoi(v);
      else if (k == "--inflight") a.inflight = std::stoi(v);
      else if (k == "--bytes") a.bytes = std::stoi(v);
      else if (k == "--rate") a.rates.push_back(std::stod(v));
      else if (k == "--seconds") a.seconds = std::stod(v);
      else if (k == "--dir") a.dir = v;
      else if (k == "--rounds") a.rounds = std::stoi(v);
      else if (k == "--log-rounds") a.log_rounds = std::stoi(v);
      else if (k == "--checkpoint-mib") a.checkpoint_bytes = std::stoull(v) << 20;
      else if (k == "--prealloc-mib") a.prealloc_bytes = std::stoull(v) << 20;
      else if (k == "--recycle") a.recycle = std::stoull(v);
      else if (k == "--floor") {
        if (v != "per-file" && v != "shared-log" && v != "both") throw std::invalid_argument("--floor per-file|shared-log|both");
        a.per_file = v != "shared-log";
        a.shared_log = v != "per-file";
      }
      else throw std::invalid_argument("unknown option " + k);
    }
    if (a.sessions < 1 || a.turns < 1 || a.bytes < 1 || a.seconds <= 0 || a.rounds < 1 || a.log_rounds < 1 ||
        a.inflight < 0)
      throw std::invalid_argument("sizes must be positive");
    for (double r : a.rates)
      if (r <= 0) throw std::invalid_argument("--rate must be positive");
  } catch (const std::exception& e) {
    std::cerr << "disk_floor: " << e.what() << "\n" << usage;
    return 2;
  }
  for (bool shared : {false, true}) {
    if (shared ? !a.shared_log : !a.per_file) continue;
    run_max(a, shared);
    for (double r : a.rates) run_paced(a, r, shared);
  }
  return 0;
}
