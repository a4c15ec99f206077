// End-to-end figures through the public API (runtime::send), the simulated model and
// storage.durability=batch; one JSON line per measurement on stdout, progress on stderr.
//   throughput  N sessions x M turns, one turn in flight per session: turns/s, ack latency
//               percentiles, bytes written per turn, peak RSS
//   paced       the same at half the measured rate: ack latency percentiles
//   memory      heap and RSS per live session actor just after its turn ("live"), once idle
//               past session.trimIdleMs ("idle": transcript closed, context dropped) and
//               per passivated session (exact with GLIBC_TUNABLES=glibc.malloc.tcache_count=0,
//               as bench/run.sh runs it: chunks in a thread's tcache count as in use)
//   slow model  (--model-latency-ms L) the same with a model that answers after L ms (real
//               time, simulated): turns/s against the bound min(maxConcurrent, in flight) / L,
//               the runtime's own added latency per turn (ack - L), /status latency on
//               another session meanwhile, peak RSS with every call in flight
// A turn = the user entry + the assistant entry appended + the row updated in the store.
// "store_bytes_per_turn": the sessions.json bytes written (its size at each store.flushed event).
// CPU (throughput): the process's user+sys time from the first send to the last ack, per turn
// ("cpu_us_per_turn"; the runtime's start and stop excluded), and over the turns between the
// 10% and 90% acks ("cpu_us_per_turn_mid": mostly later turns, little of the first turns' file
// creation, which on these disks costs ~1 ms of kernel time a session).
// Usage: runtime_bench [--sessions N] [--turns M] [--inflight K] [--quick] [--skip-paced] [--memory-sessions K]
//                      [--paced-rate R] [--config FILE] [--trace FILE] [--keep-caches]
//                      [--model-latency-ms L [--max-concurrent C]]
// (--sessions 0: the memory run only, in a process that ran nothing before it;
// --inflight: sessions in progress at once, default 1000; each runs its M turns back to back;
// --paced-rate: only the paced run, at R turns/s; --config: a sessionrt config file whose
// settings every run starts from, e.g. to compare storage.batchWindowMs; --trace: the paced
// run's turns as lines "sent_ms ack_ms session turn", to see when slow acks happen;
// --keep-caches: see settle_disk.)
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runtime/config.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;
using steady = std::chrono::steady_clock;

namespace {

struct args {
  int sessions = 1000;
  int turns = 100;
  int inflight = 1000;  // sessions in progress at once (a session runs all its turns, then the next starts)
  bool paced = true;
  double paced_rate = 0;  // > 0: only the paced run, at this rate
  int memory_sessions = 10000;
  std::string trace_file;  // --trace: the paced run's per-turn send times and ack latencies
  bool drop_caches = true;  // --keep-caches turns it off
  std::int64_t model_latency_ms = 0;  // > 0: only the slow-model run
  std::size_t max_concurrent = 1000;  // model.maxConcurrent of the slow-model run
};

// --config: the runtime settings every run starts from (a sessionrt config file).
actors::runtime_settings base_settings;

// sessions.json bytes written: at each store.flushed event, the file's size (it is written whole).
std::atomic<std::int64_t> store_bytes{0};

std::int64_t proc_status_kb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field)));
  return 0;
}
std::int64_t proc_io(const char* field) {
  std::ifstream in("/proc/self/io");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field) + 1));
  return 0;
}

// State dirs for the runs, removed with everything in them when the program ends (a 100,000
// session run leaves 100,000 transcripts). Not between runs: ext4 finishes a large deletion in
// the background, and that would stall the next run's fsyncs (a paced run's p99 went from
// ~100 ms to over 1 s); after the removal a sync() waits for that work.
std::vector<std::string>& state_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

std::string fresh_dir() {
  char tmpl[] = "/tmp/sessionrt-rtbench-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  state_dirs().push_back(tmpl);
  return tmpl;
}

void remove_state_dirs() {
  for (const auto& d : state_dirs()) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
  ::sync();
}

// Before each measured run: sync, then (when allowed: root) drop the kernel's clean caches.
// On ext4 without a journal (as on these machines) a file create skips every free inode that
// was deleted in the last 12 hours and whose inode table block is still cached, and checks
// each one: after a run that deleted 100,000 transcripts, creating a file cost ~1 ms of CPU
// instead of ~40 us, and that depended on what ran before. Dropping the caches makes each run
// start from the same state. Returns whether the caches were dropped.
bool settle_disk(bool drop) {
  ::sync();
  if (!drop) return false;
  std::ofstream out("/proc/sys/vm/drop_caches");
  out << "3\n";
  out.flush();
  static bool warned = false;
  if (!out && !warned) {
    warned = true;
    std::cerr << "[runtime_bench] cannot drop the kernel caches (not root?): file creation costs may depend on "
                 "earlier runs\n";
  }
  return static_cast<bool>(out);
}

std::unique_ptr<runtime::runtime> start(const std::string& dir, sessionrt::clock* time, bool virtual_time,
                                        std::size_t max_live, std::int64_t latency_ms = 0,
                                        std::size_t max_concurrent = 0) {
  runtime::runtime_options o;
  o.settings = base_settings;
  o.settings.state_dir = dir;
  o.settings.session.reset.timezone = "UTC";
  actors::reset_config off;  // a benchmark must not roll sessions over at 04:00
  off.mode = actors::reset_mode::none;
  o.settings.session.reset.reset = off;
  o.settings.session.max_live_sessions = max_live;
  runtime::simulated_model_options mo;
  mo.latency.ms = latency_ms;
  if (max_concurrent) o.settings.model.max_concurrent = max_concurrent;
  o.runner = std::make_shared<runtime::simulated_model>(*time, mo);
  o.time = time;
  o.virtual_time = virtual_time;
  event_filter flushes;
  flushes.types = {"store.flushed"};
  o.subscriptions.push_back({flushes, [](const lifecycle_event& e) {
                               std::error_code ec;
                               const auto* path = e.data.if_contains("path");
                               if (!path || !path->is_string()) return;
                               const auto n = std::filesystem::file_size(std::string(path->as_string()), ec);
                               if (!ec) store_bytes += static_cast<std::int64_t>(n);
                             }});
  auto rt = runtime::runtime::start(o);
  if (!rt.ok()) throw std::runtime_error(rt.error().to_string());
  return std::move(*rt);
}

chat_event turn_event(int session, int turn) {
  chat_event ev;
  ev.channel = "bench";
  ev.peer_kind = "direct";
  ev.peer_id = std::to_string(session);
  ev.session_key = fmt::format("agent:main:bench:direct:{}", session);
  ev.text = fmt::format("Turn {} of session {}: please keep the running summary of the plan short and precise.",
                        turn, session);
  return ev;
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// The acks of every turn but each session's first (which creates the session: its transcript
// file, the directory fsync that makes the name durable, a new sessions.json row).
std::vector<double> later_turns(const std::vector<double>& latency_ms, int turns) {
  std::vector<double> out;
  for (std::size_t i = 0; i < latency_ms.size(); ++i)
    if (i % static_cast<std::size_t>(turns) != 0) out.push_back(latency_ms[i]);
  return out;
}

// Bytes in the transcripts (*.jsonl) under `dir`: what the turns appended, for disk_floor.
std::int64_t transcript_bytes(const std::string& dir) {
  std::int64_t sum = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".jsonl") sum += static_cast<std::int64_t>(e.file_size(ec));
  return sum;
}

// Every session runs its turns back to back (the next is sent when the previous is acked);
// `interval_us` > 0 paces the first turns of all sessions and every later turn to a rate.
struct run_result {
  double seconds = 0;
  double cpu_us_per_turn = 0;      // user+sys from the first send to the last ack, per turn
  double cpu_us_per_turn_mid = 0;  // the same between the 10% and the 90% acks
  std::vector<double> latency_ms;
  std::vector<double> sent_ms;  // when each turn was sent, from the run's start
  std::int64_t failures = 0;
};

double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

run_result drive(runtime::runtime& rt, int sessions, int turns, double turns_per_s_limit, int inflight = 0) {
  run_result r;
  const std::int64_t total = static_cast<std::int64_t>(sessions) * turns;
  const std::int64_t mark_lo = total / 10, mark_hi = total - total / 10;
  std::atomic<double> cpu_lo{0}, cpu_hi{0};
  const double cpu0 = cpu_seconds();
  r.latency_ms.assign(static_cast<std::size_t>(total), 0.0);
  r.sent_ms.assign(static_cast<std::size_t>(total), 0.0);
  std::atomic<std::int64_t> done{0}, failed{0}, issued{0};
  std::mutex mu;
  std::condition_variable cv;
  const auto t0 = steady::now();
  std::function<void(int, int)> send_turn;
  // Pacing: turn number `n` (in issue order) may start at t0 + n / rate.
  auto wait_slot = [&](std::int64_t n) {
    if (turns_per_s_limit <= 0) return;
    const auto at = t0 + std::chrono::microseconds(static_cast<std::int64_t>(1e6 * static_cast<double>(n) / turns_per_s_limit));
    std::this_thread::sleep_until(at);
  };
  std::mutex pace_mu;
  std::vector<std::pair<int, int>> deferred;  // paced: turns whose previous one was acked
  std::atomic<int> next_session{0};           // unpaced: the next session to start
  send_turn = [&](int s, int t) {
    const auto sent = steady::now();
    const std::int64_t slot = static_cast<std::int64_t>(s) * turns + t;
    rt.send(turn_event(s, t), [&, s, t, sent, slot](turn_outcome out) {
      r.latency_ms[static_cast<std::size_t>(slot)] =
          std::chrono::duration<double, std::milli>(steady::now() - sent).count();
      r.sent_ms[static_cast<std::size_t>(slot)] = std::chrono::duration<double, std::milli>(sent - t0).count();
      if (!out.st.ok()) ++failed;
      if (t + 1 < turns) {
        if (turns_per_s_limit > 0) {
          std::lock_guard<std::mutex> g(pace_mu);
          deferred.emplace_back(s, t + 1);
        } else {
          send_turn(s, t + 1);
        }
      } else if (turns_per_s_limit <= 0) {
        const int n = next_session++;  // this session is done: start another one
        if (n < sessions) send_turn(n, 0);
      }
      const std::int64_t now_done = ++done;
      if (now_done == mark_lo) cpu_lo = cpu_seconds();
      if (now_done == mark_hi) cpu_hi = cpu_seconds();
      if (now_done == total) {
        std::lock_guard<std::mutex> g(mu);
        cv.notify_all();
      }
    });
  };
  if (turns_per_s_limit <= 0) {
    const int first = inflight > 0 ? std::min(inflight, sessions) : sessions;
    next_session = first;
    for (int s = 0; s < first; ++s) send_turn(s, 0);
  } else {
    // One pacing thread issues every turn at its slot: first turns, then acked sessions' next.
    std::int64_t n = 0;
    for (int s = 0; s < sessions; ++s) {
      wait_slot(n++);
      send_turn(s, 0);
    }
    while (done.load() < total) {
      std::vector<std::pair<int, int>> batch;
      {
        std::lock_guard<std::mutex> g(pace_mu);
        batch.swap(deferred);
      }
      if (batch.empty()) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // the pacer's own tick, not synchronization
        continue;
      }
      for (auto& [s, t] : batch) {
        wait_slot(n++);
        send_turn(s, t);
      }
    }
  }
  {
    std::unique_lock<std::mutex> g(mu);
    cv.wait(g, [&] { return done.load() == total; });
  }
  r.seconds = std::chrono::duration<double>(steady::now() - t0).count();
  r.cpu_us_per_turn = (cpu_seconds() - cpu0) * 1e6 / static_cast<double>(total);
  if (mark_hi > mark_lo) r.cpu_us_per_turn_mid = (cpu_hi.load() - cpu_lo.load()) * 1e6 / static_cast<double>(mark_hi - mark_lo);
  r.failures = failed.load();
  (void)issued;
  return r;
}

double throughput(const args& a) {
  const std::string dir = fresh_dir();
  const bool dropped = settle_disk(a.drop_caches);
  auto rt = start(dir, &storage::real_clock(), false, 10000);
  const std::int64_t wchar0 = proc_io("wchar"), wbytes0 = proc_io("write_bytes");
  store_bytes = 0;
  std::cerr << fmt::format("[runtime_bench] {} sessions x {} turns, {} in flight\n", a.sessions, a.turns, a.inflight);
  run_result r = drive(*rt, a.sessions, a.turns, 0, a.inflight);
  const std::int64_t total = static_cast<std::int64_t>(a.sessions) * a.turns;
  (void)rt->stop();
  const double wchar = static_cast<double>(proc_io("wchar") - wchar0) / static_cast<double>(total);
  const double wbytes = static_cast<double>(proc_io("write_bytes") - wbytes0) / static_cast<double>(total);
  const double rate = static_cast<double>(total) / r.seconds;
  const double transcript = static_cast<double>(transcript_bytes(dir)) / static_cast<double>(total);
  std::cout << fmt::format(
                   R"({{"bench":"runtime_throughput","sessions":{},"turns_per_session":{},"inflight":{},"turns":{},"seconds":{:.3f},"turns_per_s":{:.0f},"ack_ms_p50":{:.3f},"ack_ms_p99":{:.3f},"ack_ms_max":{:.3f},"failures":{},"bytes_written_per_turn":{:.0f},"transcript_bytes_per_turn":{:.0f},"disk_bytes_per_turn":{:.0f},"peak_rss_mb":{:.1f},"caches_dropped":{},"cpu_us_per_turn":{:.1f},"cpu_us_per_turn_mid":{:.1f},"store_bytes_per_turn":{:.0f}}})",
                   a.sessions, a.turns, std::min(a.inflight, a.sessions), total, r.seconds, rate, percentile(r.latency_ms, 0.5),
                   percentile(r.latency_ms, 0.99), percentile(r.latency_ms, 1.0), r.failures, wchar, transcript, wbytes,
                   static_cast<double>(proc_status_kb("VmHWM:")) / 1024.0, dropped, r.cpu_us_per_turn, r.cpu_us_per_turn_mid,
                   static_cast<double>(store_bytes.load()) / static_cast<double>(total))
            << std::endl;
  return rate;
}

void paced(const args& a, double rate) {
  const std::string dir = fresh_dir();
  const bool dropped = settle_disk(a.drop_caches);
  auto rt = start(dir, &storage::real_clock(), false, 10000);
  std::cerr << fmt::format("[runtime_bench] paced at {:.0f} turns/s\n", rate);
  run_result r = drive(*rt, a.sessions, a.turns, rate);
  (void)rt->stop();
  const std::int64_t total = static_cast<std::int64_t>(a.sessions) * a.turns;
  auto later = later_turns(r.latency_ms, a.turns);
  if (!a.trace_file.empty()) {
    std::ofstream out(a.trace_file);
    for (std::size_t i = 0; i < r.latency_ms.size(); ++i)
      out << fmt::format("{:.3f} {:.3f} {} {}\n", r.sent_ms[i], r.latency_ms[i], i / static_cast<std::size_t>(a.turns),
                         i % static_cast<std::size_t>(a.turns));
  }
  std::cout << fmt::format(
                   R"({{"bench":"runtime_paced","sessions":{},"turns_per_session":{},"target_turns_per_s":{:.0f},"achieved_turns_per_s":{:.0f},"ack_ms_p50":{:.3f},"ack_ms_p99":{:.3f},"ack_ms_max":{:.3f},"later_turns_ack_ms_p50":{:.3f},"later_turns_ack_ms_p99":{:.3f},"failures":{},"caches_dropped":{}}})",
                   a.sessions, a.turns, rate, static_cast<double>(total) / r.seconds, percentile(r.latency_ms, 0.5),
                   percentile(r.latency_ms, 0.99), percentile(r.latency_ms, 1.0), percentile(later, 0.5),
                   percentile(later, 0.99), r.failures, dropped)
            << std::endl;
}

// A slow model: every call answers after `model_latency_ms`. Meanwhile a probe thread sends
// /status to a session of its own every 20 ms and times the answer.
void slow_model(const args& a) {
  const std::string dir = fresh_dir();
  const bool dropped = settle_disk(a.drop_caches);
  auto rt = start(dir, &storage::real_clock(), false, 10000, a.model_latency_ms, a.max_concurrent);
  std::cerr << fmt::format("[runtime_bench] slow model: {} ms a call, {} sessions x {} turns, {} in flight, "
                           "model.maxConcurrent {}\n",
                           a.model_latency_ms, a.sessions, a.turns, a.inflight, a.max_concurrent);
  std::atomic<bool> probing{true};
  std::vector<double> status_ms;
  std::thread probe([&] {
    chat_event ev;
    ev.channel = "bench";
    ev.peer_id = "status-probe";
    ev.session_key = "agent:main:bench:direct:status-probe";
    ev.text = "/status";
    while (probing.load()) {
      const auto t = steady::now();
      auto out = rt->send(ev).get();
      if (out.command == "/status") status_ms.push_back(std::chrono::duration<double, std::milli>(steady::now() - t).count());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the probe's pace, not synchronization
    }
  });
  std::atomic<std::int64_t> peak_rss_kb{0};
  run_result r = drive(*rt, a.sessions, a.turns, 0, a.inflight);
  peak_rss_kb = proc_status_kb("VmHWM:");
  probing = false;
  probe.join();
  const auto calls = rt->model_calls();
  (void)rt->stop();
  const std::int64_t total = static_cast<std::int64_t>(a.sessions) * a.turns;
  const double rate = static_cast<double>(total) / r.seconds;
  const double bound = static_cast<double>(std::min<std::size_t>(a.max_concurrent ? a.max_concurrent : a.inflight,
                                                                 static_cast<std::size_t>(std::min(a.inflight, a.sessions)))) *
                       1000.0 / static_cast<double>(a.model_latency_ms);
  std::vector<double> added;
  added.reserve(r.latency_ms.size());
  for (double ms : r.latency_ms) added.push_back(ms - static_cast<double>(a.model_latency_ms));
  // Each session's first turn also creates its transcript (and a directory fsync), 1,000 at once.
  auto later = later_turns(added, a.turns);
  std::cout << fmt::format(
                   R"({{"bench":"runtime_slow_model","model_latency_ms":{},"max_concurrent":{},"sessions":{},"turns_per_session":{},"inflight":{},"turns":{},"seconds":{:.3f},"turns_per_s":{:.1f},"bound_turns_per_s":{:.1f},"ratio_to_bound":{:.3f},"ack_ms_p50":{:.3f},"ack_ms_p99":{:.3f},"added_ms_p50":{:.3f},"added_ms_p99":{:.3f},"added_ms_max":{:.3f},"later_turns_added_ms_p50":{:.3f},"later_turns_added_ms_p99":{:.3f},"status_probes":{},"status_ms_p50":{:.3f},"status_ms_p99":{:.3f},"status_ms_max":{:.3f},"model_calls_peak":{},"failures":{},"peak_rss_mb":{:.1f},"caches_dropped":{}}})",
                   a.model_latency_ms, a.max_concurrent, a.sessions, a.turns, std::min(a.inflight, a.sessions), total,
                   r.seconds, rate, bound, rate / bound, percentile(r.latency_ms, 0.5), percentile(r.latency_ms, 0.99),
                   percentile(added, 0.5), percentile(added, 0.99), percentile(added, 1.0), percentile(later, 0.5),
                   percentile(later, 0.99), status_ms.size(),
                   percentile(status_ms, 0.5), percentile(status_ms, 0.99), percentile(status_ms, 1.0),
                   calls.peak_running, r.failures, static_cast<double>(peak_rss_kb.load()) / 1024.0, dropped)
            << std::endl;
}

std::int64_t heap_in_use() { return static_cast<std::int64_t>(mallinfo2().uordblks); }

void memory(const args& a) {
  const int k = a.memory_sessions;
  const std::string dir = fresh_dir();
  // Measured as a real-time runtime runs (virtual time here only to step past the idle
  // timeouts): its maintenance rebuilds its picture at each pass unless the config says.
  if (!base_settings.storage.keep_maintenance_picture) base_settings.storage.keep_maintenance_picture = false;
  manual_clock clk(storage::real_clock().now_ms());
  auto rt = start(dir, &clk, true, static_cast<std::size_t>(k) + 1);
  malloc_trim(0);
  const double rss0 = static_cast<double>(proc_status_kb("VmRSS:"));
  const double heap0 = static_cast<double>(heap_in_use());
  std::cerr << fmt::format("[runtime_bench] memory: {} sessions, one turn each\n", k);
  run_result r = drive(*rt, k, 1, 0);
  rt->settle();
  (void)rt->flush();  // every figure with the rows written (not waiting in the store as text)
  malloc_trim(0);
  const double rss_live = static_cast<double>(proc_status_kb("VmRSS:"));
  const double heap_live = static_cast<double>(heap_in_use());
  (void)rt->advance(rt->settings().session.trim_idle_ms + 1);  // idle: the sweep trims all
  rt->settle();
  (void)rt->flush();
  malloc_trim(0);
  const double rss_trimmed = static_cast<double>(proc_status_kb("VmRSS:"));
  const double heap_trimmed = static_cast<double>(heap_in_use());
  (void)rt->advance(rt->settings().session.passivate_idle_ms + 1);  // the idle sweep passivates all
  (void)rt->flush();
  malloc_trim(0);
  const double rss_passive = static_cast<double>(proc_status_kb("VmRSS:"));
  const double heap_passive = static_cast<double>(heap_in_use());
  const std::string stats = runtime::to_text(rt->stats());
  (void)rt->stop();
  std::cout << fmt::format(
                   R"({{"bench":"runtime_memory","sessions":{},"rss_start_mb":{:.1f},"rss_live_mb":{:.1f},"rss_trimmed_mb":{:.1f},"rss_passivated_mb":{:.1f},"rss_bytes_per_live_session":{:.0f},"rss_bytes_per_idle_session":{:.0f},"rss_bytes_per_passivated_session":{:.0f},"heap_bytes_per_live_session":{:.0f},"heap_bytes_per_idle_session":{:.0f},"heap_bytes_per_passivated_session":{:.0f},"keep_maintenance_picture":{},"router":"{}","failures":{}}})",
                   k, rss0 / 1024, rss_live / 1024, rss_trimmed / 1024, rss_passive / 1024, (rss_live - rss0) * 1024 / k,
                   (rss_trimmed - rss0) * 1024 / k, (rss_passive - rss0) * 1024 / k, (heap_live - heap0) / k,
                   (heap_trimmed - heap0) / k, (heap_passive - heap0) / k,
                   *base_settings.storage.keep_maintenance_picture, stats, r.failures)
            << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&] { return std::stoi(argv[++i]); };
    if (k == "--sessions") a.sessions = next();
    else if (k == "--turns") a.turns = next();
    else if (k == "--skip-paced") a.paced = false;
    else if (k == "--memory-sessions") a.memory_sessions = next();
    else if (k == "--inflight") a.inflight = next();
    else if (k == "--paced-rate" && i + 1 < argc) a.paced_rate = std::stod(argv[++i]);
    else if (k == "--trace" && i + 1 < argc) a.trace_file = argv[++i];
    else if (k == "--keep-caches") a.drop_caches = false;
    else if (k == "--model-latency-ms" && i + 1 < argc) a.model_latency_ms = std::stoll(argv[++i]);
    else if (k == "--max-concurrent" && i + 1 < argc) a.max_concurrent = static_cast<std::size_t>(std::stoll(argv[++i]));
    else if (k == "--config" && i + 1 < argc) {
      auto loaded = runtime::load_config_file(storage::posix_fs(), argv[++i], runtime::process_environment());
      if (!loaded.ok()) {
        std::cerr << "runtime_bench: " << loaded.error().message() << "\n";
        return 2;
      }
      for (const auto& w : loaded->warnings) std::cerr << "runtime_bench: " << w << "\n";
      base_settings = std::move(loaded->settings);
    }
    else if (k == "--quick") {
      a.sessions = 200;
      a.turns = 20;
      a.memory_sessions = 2000;
    } else {
      std::cerr << "usage: runtime_bench [--sessions N] [--turns M] [--inflight K] [--quick] [--skip-paced]\n"
                   "                     [--memory-sessions K] [--paced-rate R] [--config FILE] [--trace FILE]\n"
                   "                     [--keep-caches] [--model-latency-ms L [--max-concurrent C]]\n";
      return 2;
    }
  }
  if (a.model_latency_ms > 0) {
    slow_model(a);
  } else if (a.paced_rate > 0) {
    paced(a, a.paced_rate);
  } else {
    if (a.sessions > 0) {
      const double rate = throughput(a);
      if (a.paced) paced(a, rate / 2);
    }
    if (a.memory_sessions > 0) memory(a);
  }
  remove_state_dirs();
  return 0;
}
