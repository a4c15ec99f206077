// The disk's own floor under the runtime's group commit, to read runtime_bench's figures against:
// N files, one append of B bytes per turn, a second thread calling syncfs(2) in a loop while
// appends wait (as storage/group_sync does for many files). A turn is acknowledged when a syncfs
// that started after its write returns; up to `--rounds` syncfs calls run at once (default 2, as
// the runtime's syncer). No actors, no JSON, no store, no model: what the kernel
// and the disk cost alone. One JSON line per run on stdout, progress on stderr.
//   max    closed loop, one turn in flight per file (as runtime_bench's throughput run)
//   paced  open loop at R turns/s spread over the files, for S seconds (as its paced run)
// Usage: disk_floor [--files N] [--turns M] [--bytes B] [--rate R]... [--seconds S] [--rounds K] [--dir D]
//   --rate may be given several times; with no --rate only the max run is made.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace {

using steady = std::chrono::steady_clock;

struct args {
  int files = 1000;
  int turns = 100;
  int bytes = 1000;  // about what a runtime_bench turn appends (its transcript_bytes_per_turn)
  std::vector<double> rates;
  double seconds = 5;
  std::string dir = "/tmp";
  int rounds = 2;  // sync rounds in flight at once, as the runtime's syncer (kSyncRoundsInFlight)
};

double ms_since(steady::time_point t0, steady::time_point t) {
  return std::chrono::duration<double, std::milli>(t - t0).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// N open files in a fresh directory, removed (and the removal synced) when this goes.
class file_set {
 public:
  file_set(const std::string& parent, int n) {
    std::string tmpl = parent + "/sessionrt-diskfloor-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed under " + parent + ": " + std::strerror(errno));
    dir_ = tmpl;
    for (int i = 0; i < n; ++i) {
      const std::string p = fmt::format("{}/{}.jsonl", dir_, i);
      const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) throw std::runtime_error("cannot create " + p + ": " + std::strerror(errno));
      fds_.push_back(fd);
    }
    ::sync();  // the creates are not what is measured
  }
  ~file_set() {
    for (int fd : fds_) ::close(fd);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    ::sync();
  }
  int fd(int i) const { return fds_[static_cast<std::size_t>(i)]; }

 private:
  std::string dir_;
  std::vector<int> fds_;
};

// The appends and the sync loop; `write_turn` and `acked` are called with the file's index.
class group_commit {
 public:
  group_commit(const file_set& files, int bytes, int rounds_in_flight)
      : files_(files), line_(static_cast<std::size_t>(bytes), 'x') {
    line_.back() = '\n';
    for (int i = 0; i < rounds_in_flight; ++i) syncers_.emplace_back([this] { sync_loop(); });
  }
  ~group_commit() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : syncers_) t.join();
  }

  // Appends one turn to file `i`; `started` is when the turn was issued (its latency's origin).
  void write_turn(int i, steady::time_point started) {
    if (::write(files_.fd(i), line_.data(), line_.size()) != static_cast<ssize_t>(line_.size()))
      throw std::runtime_error(std::string("write failed: ") + std::strerror(errno));
    {
      std::lock_guard<std::mutex> g(mu_);
      pending_.push_back({i, started});
    }
    cv_.notify_all();
  }

  // Waits until some turns are acknowledged; returns their files (closed-loop driving).
  std::vector<int> wait_acked() {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return !acked_.empty(); });
    std::vector<int> out;
    out.swap(acked_);
    return out;
  }

  // Waits until `n` turns in all are acknowledged, then returns the latencies and sync times.
  std::pair<std::vector<double>, std::vector<double>> finish(std::size_t n) {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return latency_ms_.size() >= n; });
    return {latency_ms_, sync_ms_};
  }

 private:
  struct turn {
    int file;
    steady::time_point started;
  };

  void sync_loop() {
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      cv_.wait(g, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      std::vector<turn> round;
      round.swap(pending_);  // every append that returned before this syncfs starts
      g.unlock();
      const auto t0 = steady::now();
      if (::syncfs(files_.fd(round.front().file)) != 0) {
        std::cerr << "disk_floor: syncfs failed: " << std::strerror(errno) << "\n";
        std::_Exit(1);
      }
      const auto t1 = steady::now();
      g.lock();
      sync_ms_.push_back(ms_since(t0, t1));
      for (const auto& t : round) {
        latency_ms_.push_back(ms_since(t.started, t1));
        acked_.push_back(t.file);
      }
      cv_.notify_all();
    }
  }

  const file_set& files_;
  std::string line_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<turn> pending_;
  std::vector<int> acked_;
  std::vector<double> latency_ms_, sync_ms_;
  bool stop_ = false;
  std::vector<std::thread> syncers_;
};

void report(const char* mode, const args& a, double target, std::size_t turns, double seconds,
            const std::pair<std::vector<double>, std::vector<double>>& r) {
  std::cout << fmt::format(
                   R"({{"bench":"disk_floor","mode":"{}","files":{},"rounds_in_flight":{},"bytes_per_turn":{},"turns":{},"target_turns_per_s":{:.0f},"turns_per_s":{:.0f},"ack_ms_p50":{:.3f},"ack_ms_p99":{:.3f},"ack_ms_max":{:.3f},"syncs":{},"sync_ms_p50":{:.3f},"sync_ms_p99":{:.3f}}})",
                   mode, a.files, a.rounds, a.bytes, turns, target, static_cast<double>(turns) / seconds, percentile(r.first, 0.5),
                   percentile(r.first, 0.99), percentile(r.first, 1.0), r.second.size(), percentile(r.second, 0.5),
                   percentile(r.second, 0.99))
            << std::endl;
}

// Every file runs its turns back to back: the next is written when the previous is acked.
void run_max(const args& a) {
  file_set files(a.dir, a.files);
  group_commit gc(files, a.bytes, a.rounds);
  std::cerr << fmt::format("[disk_floor] {} files x {} turns of {} B, one in flight per file\n", a.files, a.turns, a.bytes);
  const std::size_t total = static_cast<std::size_t>(a.files) * static_cast<std::size_t>(a.turns);
  std::vector<int> done(static_cast<std::size_t>(a.files), 0);
  const auto t0 = steady::now();
  for (int i = 0; i < a.files; ++i) gc.write_turn(i, steady::now());
  std::size_t written = static_cast<std::size_t>(a.files);
  while (written < total) {
    for (int i : gc.wait_acked()) {
      if (++done[static_cast<std::size_t>(i)] >= a.turns) continue;
      gc.write_turn(i, steady::now());
      ++written;
    }
  }
  auto r = gc.finish(total);
  report("max", a, 0, total, std::chrono::duration<double>(steady::now() - t0).count(), r);
}

// Turns issued at `rate` per second, file after file, whatever the acks do (open loop).
void run_paced(const args& a, double rate) {
  file_set files(a.dir, a.files);
  group_commit gc(files, a.bytes, a.rounds);
  const std::size_t total = static_cast<std::size_t>(rate * a.seconds);
  std::cerr << fmt::format("[disk_floor] {} files, {} B a turn, paced at {:.0f} turns/s for {:.0f} s\n", a.files, a.bytes,
                           rate, a.seconds);
  const auto t0 = steady::now();
  for (std::size_t n = 0; n < total; ++n) {
    const auto due = t0 + std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 * static_cast<double>(n) / rate));
    std::this_thread::sleep_until(due);  // the pacing itself, not synchronization
    gc.write_turn(static_cast<int>(n % static_cast<std::size_t>(a.files)), due);
  }
  auto r = gc.finish(total);
  report("paced", a, rate, total, std::chrono::duration<double>(steady::now() - t0).count(), r);
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  const char* usage =
      "usage: disk_floor [--files N] [--turns M] [--bytes B] [--rate R]... [--seconds S] [--rounds K] [--dir D]\n"
      "  the bare write + syncfs group commit the runtime's figures are bound by (see BENCHMARKS.md)\n"
      "  --files 1000 --turns 100: the closed-loop run; --rate R: also a paced run at R turns/s for\n"
      "  S seconds (default 5); --bytes: bytes appended a turn (default 1000); --rounds: syncfs calls\n"
      "  at once (default 2, as the runtime); --dir: where the files go (default /tmp)\n";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string k = argv[i];
      if (k == "--help" || k == "-h") {
        std::cout << usage;
        return 0;
      }
      if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
      const std::string v = argv[++i];
      if (k == "--files") a.files = std::stoi(v);
      else if (k == "--turns") a.turns = std::stoi(v);
      else if (k == "--bytes") a.bytes = std::stoi(v);
      else if (k == "--rate") a.rates.push_back(std::stod(v));
      else if (k == "--seconds") a.seconds = std::stod(v);
      else if (k == "--dir") a.dir = v;
      else if (k == "--rounds") a.rounds = std::stoi(v);
      else throw std::invalid_argument("unknown option " + k);
    }
    if (a.files < 1 || a.turns < 1 || a.bytes < 1 || a.seconds <= 0 || a.rounds < 1) throw std::invalid_argument("sizes must be positive");
    for (double r : a.rates)
      if (r <= 0) throw std::invalid_argument("--rate must be positive");
  } catch (const std::exception& e) {
    std::cerr << "disk_floor: " << e.what() << "\n" << usage;
    return 2;
  }
  try {
    run_max(a);
    for (double r : a.rates) run_paced(a, r);
  } catch (const std::exception& e) {
    std::cerr << "disk_floor: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
