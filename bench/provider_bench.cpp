// provider_bench: concurrent streaming turns through runtime::send and the built-in provider
// runner (runtime/providers) against tests/providers/fake_provider.mjs (model slow:C:MS: C text
// deltas MS ms apart, written by the server's one global ticker), compared in the same run with
//   - the floor: a minimal epoll client in this process reading the same byte streams from the
//     same server with no parsing at all (the machine's limit for this work), whose per-stream
//     time from connect() to the first response byte is also the baseline for end-to-end time
//     to first delta;
//   - pi-ai (tests/providers/piai_stream.mjs --bench N) streaming the same N from the same server,
//     run after sessionrt's phase so the two never share the CPU.
// Then a probe at --max-streams-probe P (a comma list climbs a ladder): the floor and sessionrt
// at P streams, to see how many concurrent streams the 2 cores hold and who saturates first.
//
// What is measured (BENCHMARKS.md "Provider streaming" says the same):
//   CPU per chunk   getrusage(RUSAGE_SELF) user+sys from the first send() to the last turn's
//                   completion, divided by the text deltas the runner handed on (model_request::
//                   on_text calls, counted by a wrapper around the runner; reply.delta events
//                   are counted too). pi-ai: process.cpuUsage() over its streams / text_delta
//                   events. The server is another process: not counted on either side.
//   added TTFD      per turn, from the kernel's receive timestamp of the first response byte on
//                   the turn's socket to the reply.delta subscriber seeing the first text. The
//                   bench interposes libcurl's send()/recv() (it defines them; the executable's
//                   definitions win over libc's): send() of a request carrying "bench-turn-N"
//                   tags the socket with turn N and turns SO_TIMESTAMPNS on; curl's first recv()
//                   on it first peeks one byte with recvmsg(MSG_PEEK) to read the kernel's
//                   timestamp (SCM_TIMESTAMPNS, when the bytes reached the socket), and notes the
//                   time of that recv() (when curl looked). All times CLOCK_REALTIME.
//   memory          RSS sampled every 20 ms: (the highest RSS while the runner had >= 98% of its
//                   peak calls in flight - RSS before the sends) / peak calls in flight.
// Usage: provider_bench [--streams N] [--chunks C] [--interval-ms MS] [--api A] [--no-piai]
//                       [--max-streams-probe P[,P2...]] (0: no probe) [--probe-chunks C] [--probe-interval-ms MS]
//                       [--window W]
// (--probe-chunks / --probe-interval-ms: the probe's stream shape, by default the same as the
// main run's; e.g. 30 chunks 200 ms apart keep the streams 6 s long at a tenth of the chunk rate,
// to see how many concurrent streams are held when the chunks per second fit the machine.)
// Prints a table and, last, one JSON line. Every wait is bounded; the process ends by itself.
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "runtime/model_setup.hpp"
#include "runtime/runtime.hpp"

using namespace sessionrt;
namespace bj = boost::json;

// ---------------------------------------------------------------------------------------------
// Instrumentation of libcurl's socket I/O (see the header). Only sockets whose request carried a
// turn marker are looked at, and only until their first read.
// ---------------------------------------------------------------------------------------------
namespace tap {
constexpr int kMaxFd = 1 << 17;
std::atomic<bool> enabled{false};
std::atomic<int> fd_turn[kMaxFd];      // turn index + 1 waiting for its first read; 0 = none
std::atomic<int> turns{0};             // size of the arrays below
std::unique_ptr<std::atomic<std::int64_t>[]> rx_kernel_ns;  // SCM_TIMESTAMPNS of the first byte
std::unique_ptr<std::atomic<std::int64_t>[]> rx_read_ns;    // when curl's first read returned bytes
std::unique_ptr<std::atomic<std::int64_t>[]> tx_ns;         // when curl sent the turn's request
std::atomic<std::int64_t> no_timestamp{0};

std::int64_t real_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int marker_in(const char* p, std::size_t n) {
  static constexpr char kTag[] = "bench-turn-";
  const void* m = ::memmem(p, n, kTag, sizeof kTag - 1);
  if (!m) return -1;
  const char* d = static_cast<const char*>(m) + sizeof kTag - 1;
  int v = 0, digits = 0;
  while (d < p + n && *d >= '0' && *d <= '9' && digits < 9) v = v * 10 + (*d++ - '0'), ++digits;
  return digits ? v : -1;
}

void on_send(int fd, const void* buf, std::size_t len) {
  if (!enabled.load(std::memory_order_relaxed) || fd < 0 || fd >= kMaxFd) return;
  const char* p = static_cast<const char*>(buf);
  const bool request_start = len >= 5 && std::memcmp(p, "POST ", 5) == 0;
  const int t = marker_in(p, len);
  if (t >= 0 && t < turns.load(std::memory_order_relaxed)) {
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    fd_turn[fd].store(t + 1, std::memory_order_relaxed);
    tx_ns[t].store(real_ns(), std::memory_order_relaxed);
  } else if (request_start) {
    fd_turn[fd].store(0, std::memory_order_relaxed);  // a reused connection, another request
  }
}

void before_recv(int fd) {
  if (!enabled.load(std::memory_order_relaxed) || fd < 0 || fd >= kMaxFd) return;
  const int t = fd_turn[fd].load(std::memory_order_relaxed);
  if (t <= 0) return;
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) + 64];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t got = ::recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT);
  if (got <= 0) return;  // nothing yet: look again at the next read
  const std::int64_t now = real_ns();
  std::int64_t kernel = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      kernel = static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }
  // A stamp that is not of CLOCK_REALTIME, or from the future, is not used.
  if (kernel <= 0 || kernel > now || now - kernel > 60'000'000'000LL) {
    kernel = 0;
    no_timestamp.fetch_add(1, std::memory_order_relaxed);
  }
  rx_kernel_ns[t - 1].store(kernel, std::memory_order_relaxed);
  rx_read_ns[t - 1].store(now, std::memory_order_relaxed);
  fd_turn[fd].store(0, std::memory_order_relaxed);
}

void arm(int n) {
  enabled.store(false);
  for (auto& f : fd_turn) f.store(0, std::memory_order_relaxed);
  rx_kernel_ns.reset(new std::atomic<std::int64_t>[static_cast<std::size_t>(n)]);
  rx_read_ns.reset(new std::atomic<std::int64_t>[static_cast<std::size_t>(n)]);
  tx_ns.reset(new std::atomic<std::int64_t>[static_cast<std::size_t>(n)]);
  for (int i = 0; i < n; ++i) rx_kernel_ns[i].store(0), rx_read_ns[i].store(0), tx_ns[i].store(0);
  no_timestamp.store(0);
  turns.store(n);
  enabled.store(true);
}
}  // namespace tap

extern "C" ssize_t send(int fd, const void* buf, std::size_t len, int flags) {
  tap::on_send(fd, buf, len);
  return ::syscall(SYS_sendto, fd, buf, len, flags, nullptr, 0);
}
extern "C" ssize_t recv(int fd, void* buf, std::size_t len, int flags) {
  tap::before_recv(fd);
  return ::syscall(SYS_recvfrom, fd, buf, len, flags, nullptr, nullptr);
}

namespace {

using tap::real_ns;

std::int64_t mono_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct cpu_times {
  double user = 0, sys = 0;
  double total() const { return user + sys; }
};
cpu_times self_cpu() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return {static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6,
          static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6};
}
cpu_times operator-(cpu_times a, cpu_times b) { return {a.user - b.user, a.sys - b.sys}; }

// utime + stime of another process, in seconds.
double proc_cpu_s(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = s.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(s.substr(close + 2));
  std::string f;
  std::vector<std::string> fields;
  while (rest >> f) fields.push_back(f);
  // fields[0] is field 3 (state); utime is field 14, stime 15.
  if (fields.size() < 13) return 0;
  return (std::stod(fields[11]) + std::stod(fields[12])) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::int64_t rss_kb() {
  std::ifstream in("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

// CPU of each thread of this process (utime + stime), by thread id, with its name.
struct thread_cpu {
  std::string name;
  double cpu_s = 0;
};
std::unordered_map<int, thread_cpu> threads_cpu() {
  std::unordered_map<int, thread_cpu> out;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(e.path() / "stat");
    std::string st((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto open = st.find('('), close = st.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(st.substr(close + 2));
    std::vector<std::string> f;
    for (std::string x; rest >> x;) f.push_back(x);
    if (f.size() < 13) continue;
    out[std::stoi(e.path().filename().string())] =
        thread_cpu{st.substr(open + 1, close - open - 1), (std::stod(f[11]) + std::stod(f[12])) / tick};
  }
  return out;
}
// The busiest threads between two snapshots: "name:seconds", most first.
std::vector<std::pair<std::string, double>> busiest(const std::unordered_map<int, thread_cpu>& before,
                                                     const std::unordered_map<int, thread_cpu>& after, std::size_t top) {
  std::vector<std::pair<std::string, double>> v;
  for (const auto& [tid, t] : after) {
    const auto it = before.find(tid);
    const double d = t.cpu_s - (it == before.end() ? 0.0 : it->second.cpu_s);
    if (d > 0) v.emplace_back(fmt::format("{}[{}]", t.name, tid), d);
  }
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > top) v.resize(top);
  return v;
}

double load1() {
  double l[3] = {0, 0, 0};
  ::getloadavg(l, 3);
  return l[0];
}

struct pcts {
  double p50 = -1, p99 = -1, max = -1;
  std::size_t n = 0;
};
pcts percentiles(std::vector<double> v) {
  pcts p;
  p.n = v.size();
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q / 100.0 * static_cast<double>(v.size())))]; };
  p.p50 = at(50);
  p.p99 = at(99);
  p.max = v.back();
  return p;
}
bj::object to_json(const pcts& p) {
  auto r = [](double x) { return std::round(x * 1000) / 1000; };
  return {{"p50", r(p.p50)}, {"p99", r(p.p99)}, {"max", r(p.max)}, {"n", p.n}};
}
std::string fmt_p(const pcts& p, int prec = 2) {
  if (p.n == 0) return "-";
  return fmt::format("{:.{}f} / {:.{}f} / {:.{}f}", p.p50, prec, p.p99, prec, p.max, prec);
}

// ---------------------------------------------------------------------------------------------
// The fake provider server, a child process.
// ---------------------------------------------------------------------------------------------
class server_process {
 public:
  server_process() {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      const std::string script = std::string(SESSIONRT_SOURCE_DIR) + "/tests/providers/fake_provider.mjs";
      std::vector<std::string> args{"node", script, "--port", "0", "--log-max", "50", "--lifetime-s", "1800"};
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("node", argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    const std::int64_t deadline = mono_ns() + 20'000'000'000LL;
    char c;
    while (mono_ns() < deadline) {
      pollfd pfd{out[0], POLLIN, 0};
      if (::poll(&pfd, 1, 200) <= 0) continue;
      if (::read(out[0], &c, 1) != 1 || c == '\n') break;
      line += c;
    }
    ::close(out[0]);
    boost::system::error_code ec;
    auto v = bj::parse(line, ec);
    if (ec || !v.is_object() || !v.as_object().contains("port"))
      throw std::runtime_error("fake_provider.mjs did not start (is node on PATH?): " + line);
    port_ = static_cast<int>(v.as_object().at("port").to_number<std::int64_t>());
  }
  ~server_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      for (int i = 0; i < 100; ++i) {
        int st = 0;
        if (::waitpid(pid_, &st, WNOHANG) == pid_) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  double cpu_s() const { return proc_cpu_s(pid_); }
  std::string base_url(const std::string& api) const {
    const std::string origin = "http://127.0.0.1:" + std::to_string(port_);
    if (api == "anthropic-messages") return origin;
    if (api == "google-generative-ai") return origin + "/v1beta";
    return origin + "/v1";
  }
  // One control request (blocking, 10 s limit); the JSON body or null.
  bj::value control(const std::string& method, const std::string& path) const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return nullptr;
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string resp;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      if (::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
        char buf[8192];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0) resp.append(buf, static_cast<std::size_t>(n));
      }
    }
    ::close(fd);
    const auto body = resp.find("\r\n\r\n");
    if (body == std::string::npos) return nullptr;
    boost::system::error_code ec;
    auto v = bj::parse(resp.substr(body + 4), ec);
    return ec ? bj::value() : v;
  }
  void reset() const { (void)control("POST", "/__reset"); }
  bj::value stats() const { return control("GET", "/__stats"); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

double jnum(const bj::value& v, std::initializer_list<const char*> path) {
  const bj::value* cur = &v;
  for (const char* k : path) {
    const auto* o = cur->if_object();
    if (!o || !o->contains(k)) return -1;
    cur = &o->at(k);
  }
  return cur->is_number() ? cur->to_number<double>() : -1;
}

// The machine's loopback during a phase: packets the per-CPU backlog dropped
// (/proc/net/softnet_stat, net.core.netdev_max_backlog), TCP retransmissions, listen-queue
// overflows. Drops on loopback become retransmissions after a timeout (>= 200 ms; 1 s for a SYN).
struct net_counters {
  std::int64_t backlog_drops = 0, retrans = 0, listen_overflows = 0;
};
net_counters read_net() {
  net_counters n;
  {
    std::ifstream in("/proc/net/softnet_stat");
    std::string processed, dropped, rest;
    while (in >> processed >> dropped && std::getline(in, rest)) n.backlog_drops += std::stoll(dropped, nullptr, 16);
  }
  // "Tcp: <names>" then "Tcp: <values>"; "TcpExt: ..." likewise in /proc/net/netstat.
  auto field = [](const char* file, const std::string& prefix, const std::string& name) -> std::int64_t {
    std::ifstream in(file);
    std::string names, values;
    while (std::getline(in, names)) {
      if (names.rfind(prefix, 0) != 0 || !std::getline(in, values)) continue;
      std::istringstream ns(names), vs(values);
      std::string n, v;
      while (ns >> n && vs >> v)
        if (n == name) return std::stoll(v);
    }
    return 0;
  };
  n.retrans = field("/proc/net/snmp", "Tcp:", "RetransSegs");
  n.listen_overflows = field("/proc/net/netstat", "TcpExt:", "ListenOverflows");
  return n;
}

struct phase_mark {
  double server_cpu = 0;
  net_counters net;
};

// What the server says about a phase: did it keep up?
struct server_view {
  net_counters net;  // during the phase
  double cpu_s = 0;
  double eld_p50 = -1, eld_p99 = -1, eld_max = -1;  // event-loop delay, ms
  double writes = -1, catch_up = -1, max_behind = -1, first_write_max = -1, max_active = -1;
  double completed = -1, client_closed = -1;
  bj::value raw;
};
phase_mark mark(const server_process& srv) { return {srv.cpu_s(), read_net()}; }

server_view read_server(const server_process& srv, const phase_mark& before) {
  server_view v;
  v.cpu_s = srv.cpu_s() - before.server_cpu;
  const net_counters now = read_net();
  v.net.backlog_drops = now.backlog_drops - before.net.backlog_drops;
  v.net.retrans = now.retrans - before.net.retrans;
  v.net.listen_overflows = now.listen_overflows - before.net.listen_overflows;
  v.raw = srv.stats();
  v.eld_p50 = jnum(v.raw, {"eventLoopDelayMs", "p50"});
  v.eld_p99 = jnum(v.raw, {"eventLoopDelayMs", "p99"});
  v.eld_max = jnum(v.raw, {"eventLoopDelayMs", "max"});
  v.writes = jnum(v.raw, {"slow", "writes"});
  v.catch_up = jnum(v.raw, {"slow", "catchUpWrites"});
  v.max_behind = jnum(v.raw, {"slow", "maxBehindGroups"});
  v.first_write_max = jnum(v.raw, {"slow", "firstWriteMsMax"});
  v.max_active = jnum(v.raw, {"slow", "maxActive"});
  v.completed = jnum(v.raw, {"streamsCompleted"});
  v.client_closed = jnum(v.raw, {"clientClosedBeforeEnd"});
  return v;
}
bj::object to_json(const server_view& v) {
  return {{"cpu_s", std::round(v.cpu_s * 100) / 100},
          {"event_loop_delay_ms", bj::object{{"p50", v.eld_p50}, {"p99", v.eld_p99}, {"max", v.eld_max}}},
          {"writes", v.writes},
          {"catch_up_writes", v.catch_up},
          {"max_behind_groups", v.max_behind},
          {"first_write_ms_max", v.first_write_max},
          {"max_active", v.max_active},
          {"streams_completed", v.completed},
          {"client_closed_before_end", v.client_closed},
          {"loopback_backlog_drops", v.net.backlog_drops},
          {"tcp_retransmits", v.net.retrans},
          {"listen_overflows", v.net.listen_overflows}};
}

// ---------------------------------------------------------------------------------------------
// The floor: a minimal epoll client reading the same streams, no parsing.
// ---------------------------------------------------------------------------------------------
std::string raw_request(const std::string& api, const std::string& model, int port) {
  const std::string text = "Stream the benchmark text, please";
  std::string path, headers, body;
  if (api == "openai-completions") {
    path = "/v1/chat/completions";
    headers = "Authorization: Bearer test-key\r\n";
    body = bj::serialize(bj::object{{"model", model}, {"stream", true}, {"stream_options", bj::object{{"include_usage", true}}},
                                    {"messages", bj::array{bj::object{{"role", "user"}, {"content", text}}}}});
  } else if (api == "openai-responses") {
    path = "/v1/responses";
    headers = "Authorization: Bearer test-key\r\n";
    body = bj::serialize(bj::object{{"model", model}, {"stream", true},
                                    {"input", bj::array{bj::object{{"role", "user"}, {"content", text}}}}});
  } else if (api == "anthropic-messages") {
    path = "/v1/messages";
    headers = "x-api-key: test-key\r\nanthropic-version: 2023-06-01\r\n";
    body = bj::serialize(bj::object{{"model", model}, {"max_tokens", 1024}, {"stream", true},
                                    {"messages", bj::array{bj::object{{"role", "user"}, {"content", text}}}}});
  } else {
    path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse";
    headers = "x-goog-api-key: test-key\r\n";
    body = bj::serialize(bj::object{
        {"contents", bj::array{bj::object{{"role", "user"}, {"parts", bj::array{bj::object{{"text", text}}}}}}}});
  }
  return fmt::format("POST {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n{}Content-Length: {}\r\n"
                     "Connection: close\r\n\r\n{}",
                     path, port, headers, body.size(), body);
}

struct raw_result {
  int n = 0, ok = 0, failed = 0;
  std::string first_error;
  double wall_s = 0;
  cpu_times cpu;
  std::int64_t bytes = 0;
  std::vector<double> ttfb_ms;  // connect() -> first response byte
  std::vector<double> duration_ms;  // first response byte -> the end of the stream
  std::int64_t max_open = 0;
  bool timed_out = false;
};

// n streams, at most `window` of them waiting for their first byte at once; bounded by deadline_s.
raw_result run_raw(int port, const std::string& request, int n, int window, double deadline_s) {
  struct conn {
    int fd = -1;
    std::int64_t start = 0, first = 0, last = 0, bytes = 0;
    char tail[5] = {};
    bool status_ok = false, sent = false, done = false;
  };
  raw_result r;
  r.n = n;
  std::vector<conn> cs(static_cast<std::size_t>(n));
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<char> buf(1 << 16);
  std::vector<epoll_event> evs(1024);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int started = 0, finished = 0, waiting_first = 0;
  std::int64_t open = 0;
  const cpu_times c0 = self_cpu();
  const std::int64_t t0 = mono_ns();
  const std::int64_t deadline = t0 + static_cast<std::int64_t>(deadline_s * 1e9);
  auto fail = [&](conn& c, const std::string& why) {
    if (r.first_error.empty()) r.first_error = why;
    if (c.first == 0) --waiting_first;
    ::close(c.fd);
    --open;
    c.done = true;
    ++r.failed;
    ++finished;
  };
  while (finished < n) {
    while (started < n && waiting_first < window) {
      conn& c = cs[static_cast<std::size_t>(started)];
      c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      c.start = mono_ns();
      ++waiting_first;
      if (c.fd < 0) {
        r.first_error = std::string("socket: ") + std::strerror(errno);
        --waiting_first;
        ++r.failed, ++finished, ++started;
        continue;
      }
      ++open;
      r.max_open = std::max(r.max_open, open);
      int one = 1;
      ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (::connect(c.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
        fail(c, std::string("connect: ") + std::strerror(errno));
        ++started;
        continue;
      }
      epoll_event ev{};
      ev.events = EPOLLOUT | EPOLLIN;
      ev.data.u32 = static_cast<std::uint32_t>(started);
      ::epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
      ++started;
    }
    const std::int64_t now = mono_ns();
    if (now > deadline) {
      r.timed_out = true;
      for (auto& c : cs)
        if (!c.done && c.fd >= 0) fail(c, "deadline");
      r.failed += n - started;
      break;
    }
    const int k = ::epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), 100);
    for (int e = 0; e < k; ++e) {
      conn& c = cs[evs[static_cast<std::size_t>(e)].data.u32];
      if (c.done) continue;
      if (!c.sent) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          fail(c, std::string("connect: ") + std::strerror(err));
          continue;
        }
        if (::write(c.fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
          fail(c, "short write");
          continue;
        }
        c.sent = true;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = evs[static_cast<std::size_t>(e)].data.u32;
        ::epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
        continue;
      }
      for (;;) {
        const ssize_t got = ::read(c.fd, buf.data(), buf.size());
        if (got > 0) {
          if (c.first == 0) {
            c.first = mono_ns();
            --waiting_first;
            c.status_ok = got >= 12 && std::memcmp(buf.data(), "HTTP/1.1 200", 12) == 0;
          }
          c.bytes += got;
          c.last = mono_ns();
          const std::size_t g = static_cast<std::size_t>(got);
          if (g >= 5) {
            std::memcpy(c.tail, buf.data() + g - 5, 5);
          } else {
            std::memmove(c.tail, c.tail + g, 5 - g);
            std::memcpy(c.tail + 5 - g, buf.data(), g);
          }
          // Less than the buffer: the socket is empty now (level-triggered epoll reports it
          // again when more comes), so no second read() just to see EAGAIN.
          if (g < buf.size()) break;
          continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (got < 0) {
          fail(c, std::string("read: ") + std::strerror(errno));
          break;
        }
        // EOF: the server ended the response (Connection: close).
        const bool complete = c.status_ok && std::memcmp(c.tail, "0\r\n\r\n", 5) == 0;
        if (!complete) {
          fail(c, c.status_ok ? "body ended before its last chunk" : "status is not 200");
          break;
        }
        ::close(c.fd);
        --open;
        c.done = true;
        ++r.ok;
        ++finished;
        r.bytes += c.bytes;
        r.ttfb_ms.push_back(static_cast<double>(c.first - c.start) / 1e6);
        r.duration_ms.push_back(static_cast<double>(c.last - c.first) / 1e6);
        break;
      }
    }
  }
  r.wall_s = static_cast<double>(mono_ns() - t0) / 1e9;
  r.cpu = self_cpu() - c0;
  ::close(ep);
  return r;
}

// ---------------------------------------------------------------------------------------------
// sessionrt: runtime::send with the built-in runner.
// ---------------------------------------------------------------------------------------------
struct turn_marks {
  explicit turn_marks(int n)
      : runner_first_ns(new std::atomic<std::int64_t>[static_cast<std::size_t>(n)]) {
    reset(n);
  }
  void reset(int n) {
    for (int i = 0; i < n; ++i) runner_first_ns[i].store(0);
    runner_deltas.store(0);
    runner_bytes.store(0);
  }
  std::unique_ptr<std::atomic<std::int64_t>[]> runner_first_ns;  // the runner's first on_text
  std::atomic<std::int64_t> runner_deltas{0}, runner_bytes{0};
};

int marker_of(const model_request& r) {
  if (r.messages.empty()) return -1;
  const auto* m = r.messages.back().if_object();
  if (!m || !m->contains("content")) return -1;
  const auto& c = m->at("content");
  if (c.is_string()) return tap::marker_in(c.get_string().data(), c.get_string().size());
  if (const auto* arr = c.if_array())
    for (const auto& b : *arr)
      if (const auto* bo = b.if_object(); bo && bo->contains("text") && bo->at("text").is_string()) {
        const auto& s = bo->at("text").get_string();
        if (int t = tap::marker_in(s.data(), s.size()); t >= 0) return t;
      }
  return -1;
}

// Delegates to the provider runner; counts the deltas it hands on and notes each turn's first.
class counting_runner final : public async_model_runner {
 public:
  counting_runner(std::shared_ptr<providers::provider_runner> inner, std::shared_ptr<turn_marks> marks, int n)
      : inner_(std::move(inner)), marks_(std::move(marks)), n_(n) {}
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation> cancel) override {
    if (!request->on_text) return inner_->start(std::move(request), std::move(done), std::move(cancel));
    const int t = marker_of(*request);
    auto r = std::make_shared<model_request>(*request);
    r->on_text = [text = request->on_text, marks = marks_, t, n = n_](std::string_view piece) {
      marks->runner_deltas.fetch_add(1, std::memory_order_relaxed);
      marks->runner_bytes.fetch_add(static_cast<std::int64_t>(piece.size()), std::memory_order_relaxed);
      if (t >= 0 && t < n && marks->runner_first_ns[t].load(std::memory_order_relaxed) == 0)
        marks->runner_first_ns[t].store(real_ns(), std::memory_order_relaxed);
      text(piece);
    };
    inner_->start(std::move(r), std::move(done), std::move(cancel));
  }
  bool supports_steering() const override { return inner_->supports_steering(); }

 private:
  std::shared_ptr<providers::provider_runner> inner_;
  std::shared_ptr<turn_marks> marks_;
  int n_;
};

std::string expected_reply(int chunks) {
  static const char* const words[] = {"héllo", "👋", "wörld", "—", "ünïcode", "✓", "naïve", "café"};
  std::string s;
  for (int i = 0; i < chunks; ++i) s += fmt::format("{}{} ", words[i % 8], i);
  return s;
}
std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

struct ours_result {
  int n = 0, ok = 0, full = 0, failed = 0;
  std::string first_error;
  bool timed_out = false;
  std::size_t live_cap = 0;
  double wall_s = 0, start_s = 0;  // start_s: sending the N turns (send() calls)
  cpu_times cpu;
  std::int64_t runner_deltas = 0, runner_bytes = 0, event_deltas = 0, event_bytes = 0;
  std::size_t peak_in_flight = 0;
  std::int64_t rss_before_kb = 0, rss_plateau_kb = 0, rss_peak_kb = 0, plateau_samples = 0;
  double pace_s = 0;                   // the sends spread over this long (0: all at once)
  std::vector<double> e2e_ms;          // send() -> subscriber's first reply.delta
  std::vector<double> duration_ms;     // first response byte in the socket -> the turn's completion
  std::int64_t heap_plateau_kb = -1, heap_after_kb = -1;  // malloc'ed bytes in use (mallinfo2)
  double mallinfo_ms_max = 0;          // what one mallinfo2() took (it locks the arenas)
  double sampler_cpu_s = 0;            // the sampler thread's CPU, taken out of `cpu`
  std::vector<double> added_kernel_ms; // first byte in the socket (kernel stamp) -> subscriber's first delta
  std::vector<double> added_read_ms;   // curl's first recv() -> subscriber's first delta
  std::vector<double> rx_to_runner_ms; // kernel stamp -> the runner's first on_text
  std::vector<double> runner_to_sub_ms;  // the runner's first on_text -> subscriber
  std::vector<double> socket_wait_ms;  // kernel stamp -> curl's recv() (the loop's delay in reading)
  std::vector<double> send_to_tx_ms;   // send() -> the request written to the socket
  std::vector<double> tx_to_rx_ms;     // request written -> first response byte in the socket (server)
  std::int64_t no_kernel_stamp = 0;
  providers::provider_runner::counters counters;
  server_view server;  // the server's figures for this round
  std::vector<std::pair<std::string, double>> busiest_threads;  // CPU seconds of the busiest threads
  double heap_kb_per_stream() const {
    return peak_in_flight && heap_plateau_kb >= 0 && heap_after_kb >= 0
               ? static_cast<double>(heap_plateau_kb - heap_after_kb) / static_cast<double>(peak_in_flight)
               : -1;
  }
  double kb_per_stream() const {
    return peak_in_flight ? static_cast<double>(rss_plateau_kb - rss_before_kb) / static_cast<double>(peak_in_flight) : -1;
  }
};

// Round 1: each of the n turns is its session's first (the session and its transcript are
// created); round 2 (rounds = 2): a second turn in each of the same sessions, all live.
std::vector<ours_result> run_ours(const server_process& srv, const std::string& api, const std::string& model, int chunks,
                                  int n, std::size_t live_cap, double deadline_s, const std::vector<double>& paces) {
  const int rounds = static_cast<int>(paces.size());
  std::vector<ours_result> results;
  char tmpl[] = "/tmp/sessionrt-provbench-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  const std::string dir = tmpl;

  actors::runtime_settings s;
  s.state_dir = dir;
  s.session.reset.timezone = "UTC";
  s.session.max_live_sessions = live_cap;
  s.routing.session.direct_message_scope = actors::dm_scope::per_peer;  // each peer its own session
  s.model.max_concurrent = 0;
  actors::provider_config p;
  p.id = "fake";
  p.api = api;
  p.base_url = srv.base_url(api);
  p.api_key = "test-key";
  p.api_key_source = "literal";
  p.timeout_seconds = 300;
  actors::provider_model m;
  m.id = model;
  m.context_window = 200000;
  m.max_tokens = 1024;
  p.models.push_back(m);
  s.models.providers.push_back(p);
  s.models.defaults.primary = "fake/" + model;

  auto setup = runtime::runner_for_config(s);
  if (!setup.ok() || !setup->runner) throw std::runtime_error("runner_for_config: " + setup.error().message());
  auto runner = setup->runner;
  auto marks = std::make_shared<turn_marks>(n);
  auto counting = std::make_shared<counting_runner>(runner, marks, n);

  struct shared_state {
    std::mutex mu;
    std::condition_variable cv;
    std::unordered_map<std::string, std::int64_t> first_delta_ns;  // session key -> subscriber's first text
    std::atomic<std::int64_t> deltas{0}, bytes{0};
    std::vector<std::int64_t> sent_ns, done_ns;
    std::vector<turn_outcome> outcomes;
    int done = 0;
  };
  auto st = std::make_shared<shared_state>();
  st->sent_ns.assign(static_cast<std::size_t>(n), 0);
  st->done_ns.assign(static_cast<std::size_t>(n), 0);
  st->outcomes.resize(static_cast<std::size_t>(n));
  st->first_delta_ns.reserve(static_cast<std::size_t>(n) * 2);

  runtime::runtime_options o;
  o.settings = s;
  o.async_runner = counting;
  o.subscriptions.push_back({{{"reply.delta"}, "", ""}, [st](const lifecycle_event& e) {
                               const std::int64_t now = real_ns();
                               const auto* t = e.data.if_contains("text");
                               if (!t || !t->is_string() || t->get_string().empty()) return;
                               st->deltas.fetch_add(1, std::memory_order_relaxed);
                               st->bytes.fetch_add(static_cast<std::int64_t>(t->get_string().size()), std::memory_order_relaxed);
                               const auto* idx = e.data.if_contains("index");
                               if (idx && idx->is_int64() && idx->get_int64() != 0) return;
                               std::lock_guard g(st->mu);
                               st->first_delta_ns.try_emplace(e.session_key, now);
                             }});
  auto started = runtime::runtime::start(o);
  if (!started.ok()) throw std::runtime_error("runtime start: " + started.error().message());
  std::unique_ptr<runtime::runtime> rt = std::move(*started);

  // A warm-up turn (a session of its own, not counted) so that RSS "before" has the loaded code,
  // the allocator's arenas and the HTTP loop's first connection.
  {
    chat_event ev;
    ev.channel = "telegram";
    ev.peer_id = "warmup";
    ev.text = "bench-warmup";
    auto f = rt->send(ev);
    if (f.wait_for(std::chrono::seconds(static_cast<int>(deadline_s))) != std::future_status::ready)
      throw std::runtime_error("the warm-up turn did not finish");
    auto out = f.get();
    if (!out.st.ok()) throw std::runtime_error("the warm-up turn failed: " + out.st.message());
  }
  providers::provider_runner::counters prev = runner->stats();
  for (int round = 1; round <= rounds; ++round) {
  ours_result r;
  r.n = n;
  r.live_cap = live_cap;
  r.pace_s = paces[static_cast<std::size_t>(round - 1)];
  std::this_thread::sleep_for(std::chrono::milliseconds(round == 1 ? 300 : 1000));
  tap::arm(n);
  marks->reset(n);
  st->deltas.store(0);
  st->bytes.store(0);
  {
    std::lock_guard g(st->mu);
    st->first_delta_ns.clear();
    st->sent_ns.assign(static_cast<std::size_t>(n), 0);
    st->done_ns.assign(static_cast<std::size_t>(n), 0);
    st->outcomes.assign(static_cast<std::size_t>(n), turn_outcome{});
    st->done = 0;
  }
  srv.reset();
  const phase_mark server_before = mark(srv);
  r.rss_before_kb = rss_kb();

  // The sampler: RSS and calls in flight every 20 ms.
  std::atomic<bool> sampling{true};
  // On the plateau (all calls in flight) it also asks malloc what is in use, at most once a second:
  // mallinfo2 walks every arena's free lists under the arena's lock (tens of ms with thousands of
  // streams). The sampler's own CPU is taken out of the round's CPU.
  struct sample {
    std::int64_t rss;
    std::size_t in_flight;
    std::int64_t heap_kb;  // -1: not sampled
  };
  std::vector<sample> samples;
  auto heap_kb = [] {
    const struct mallinfo2 mi = ::mallinfo2();
    return static_cast<std::int64_t>((mi.uordblks + mi.hblkhd) / 1024);
  };
  const double plateau_at = 0.98 * static_cast<double>(std::min(static_cast<std::size_t>(n), live_cap));
  double sampler_cpu_s = 0;
  std::thread sampler([&] {
    timespec c0{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    std::int64_t last_heap = 0;
    while (sampling.load()) {
      const std::size_t in_flight = runner->loop().in_flight();
      std::int64_t heap = -1;
      if (static_cast<double>(in_flight) >= plateau_at && mono_ns() - last_heap > 1'000'000'000) {
        const std::int64_t h0 = mono_ns();
        heap = heap_kb();
        last_heap = mono_ns();
        r.mallinfo_ms_max = std::max(r.mallinfo_ms_max, static_cast<double>(last_heap - h0) / 1e6);
      }
      samples.push_back({rss_kb(), in_flight, heap});
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    timespec c1{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    sampler_cpu_s = static_cast<double>(c1.tv_sec - c0.tv_sec) + static_cast<double>(c1.tv_nsec - c0.tv_nsec) / 1e9;
  });

  const auto threads0 = threads_cpu();
  const cpu_times c0 = self_cpu();
  const std::int64_t t0 = mono_ns();
  for (int i = 0; i < n; ++i) {
    if (r.pace_s > 0) {
      const std::int64_t at = t0 + static_cast<std::int64_t>(r.pace_s * 1e9 * i / n);
      if (const std::int64_t wait = at - mono_ns(); wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    }
    chat_event ev;
    ev.channel = "telegram";
    ev.peer_id = fmt::format("bench-{}", i);
    ev.text = fmt::format("bench-turn-{:06d}: stream the benchmark text, please (round {})", i, round);
    st->sent_ns[static_cast<std::size_t>(i)] = real_ns();
    rt->send(std::move(ev), [st, i](turn_outcome out) {
      const std::int64_t now = real_ns();
      std::lock_guard g(st->mu);
      st->done_ns[static_cast<std::size_t>(i)] = now;
      st->outcomes[static_cast<std::size_t>(i)] = std::move(out);
      if (++st->done == static_cast<int>(st->outcomes.size())) st->cv.notify_all();
    });
  }
  r.start_s = static_cast<double>(mono_ns() - t0) / 1e9;
  {
    std::unique_lock g(st->mu);
    r.timed_out = !st->cv.wait_for(g, std::chrono::milliseconds(static_cast<std::int64_t>(deadline_s * 1000)),
                                   [&] { return st->done == n; });
  }
  r.wall_s = static_cast<double>(mono_ns() - t0) / 1e9;
  r.cpu = self_cpu() - c0;
  r.busiest_threads = busiest(threads0, threads_cpu(), 4);
  sampling.store(false);
  sampler.join();
  r.sampler_cpu_s = sampler_cpu_s;
  r.cpu.user -= sampler_cpu_s;  // the bench's own sampling, not sessionrt's work (user + sys of one thread)
  {
    const auto now = runner->stats();
    r.counters = now;
    r.counters.calls -= prev.calls;
    r.counters.http_requests -= prev.http_requests;
    r.counters.retries -= prev.retries;
    r.counters.fallbacks -= prev.fallbacks;
    r.counters.tool_calls -= prev.tool_calls;
    r.counters.failures -= prev.failures;
    prev = now;
  }
  r.runner_deltas = marks->runner_deltas.load();
  r.runner_bytes = marks->runner_bytes.load();
  // The last deltas may still be on the event bus: give it a moment (bounded).
  for (int i = 0; i < 100 && st->deltas.load() < r.runner_deltas; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  r.event_deltas = st->deltas.load();
  r.event_bytes = st->bytes.load();
  r.server = read_server(srv, server_before);

  for (const auto& smp : samples) {
    r.peak_in_flight = std::max(r.peak_in_flight, smp.in_flight);
    r.rss_peak_kb = std::max(r.rss_peak_kb, smp.rss);
  }
  for (const auto& smp : samples)
    if (r.peak_in_flight > 0 && static_cast<double>(smp.in_flight) >= 0.98 * static_cast<double>(r.peak_in_flight)) {
      r.rss_plateau_kb = std::max(r.rss_plateau_kb, smp.rss);
      if (smp.heap_kb >= 0) r.heap_plateau_kb = std::max(r.heap_plateau_kb, smp.heap_kb);
      ++r.plateau_samples;
    }
  // What the finished calls gave back: the heap once the round settled.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  r.heap_after_kb = heap_kb();

  const std::string want = trim_end(expected_reply(chunks));
  {
    std::lock_guard g(st->mu);
    for (int i = 0; i < n; ++i) {
      const auto& out = st->outcomes[static_cast<std::size_t>(i)];
      if (st->done_ns[static_cast<std::size_t>(i)] == 0) continue;
      if (!out.st.ok()) {
        ++r.failed;
        if (r.first_error.empty()) r.first_error = out.st.message();
        continue;
      }
      ++r.ok;
      if (out.reply && trim_end(*out.reply) == want) ++r.full;
      auto it = st->first_delta_ns.find(out.session_key);
      if (it == st->first_delta_ns.end()) continue;
      const double sub = static_cast<double>(it->second);
      r.e2e_ms.push_back((sub - static_cast<double>(st->sent_ns[static_cast<std::size_t>(i)])) / 1e6);
      const auto first_byte = static_cast<double>(tap::rx_kernel_ns[i].load());
      if (first_byte > 0)
        r.duration_ms.push_back((static_cast<double>(st->done_ns[static_cast<std::size_t>(i)]) - first_byte) / 1e6);
      const auto kernel = static_cast<double>(tap::rx_kernel_ns[i].load());
      const auto read = static_cast<double>(tap::rx_read_ns[i].load());
      const auto run = static_cast<double>(marks->runner_first_ns[i].load());
      const auto tx = static_cast<double>(tap::tx_ns[i].load());
      if (tx > 0) r.send_to_tx_ms.push_back((tx - static_cast<double>(st->sent_ns[static_cast<std::size_t>(i)])) / 1e6);
      if (tx > 0 && kernel > 0) r.tx_to_rx_ms.push_back((kernel - tx) / 1e6);
      if (read > 0) r.added_read_ms.push_back((sub - read) / 1e6);
      if (kernel > 0) {
        r.added_kernel_ms.push_back((sub - kernel) / 1e6);
        if (read > 0) r.socket_wait_ms.push_back((read - kernel) / 1e6);
        if (run > 0) r.rx_to_runner_ms.push_back((run - kernel) / 1e6);
      }
      if (run > 0) r.runner_to_sub_ms.push_back((sub - run) / 1e6);
    }
  }
  r.no_kernel_stamp = tap::no_timestamp.load();
  tap::enabled.store(false);
  results.push_back(std::move(r));
  if (results.back().timed_out) break;  // late completions would land in the next round
  }
  (void)rt->stop(std::chrono::seconds(30));
  rt.reset();
  counting.reset();
  runner.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return results;
}

// ---------------------------------------------------------------------------------------------
// pi-ai in Node: piai_stream.mjs --bench N, a child process.
// ---------------------------------------------------------------------------------------------
std::string run_capture(const std::vector<std::string>& args, const std::vector<std::string>& env, double deadline_s,
                        int* exit_code) {
  int out[2];
  if (::pipe(out) != 0) return "";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  const std::int64_t deadline = mono_ns() + static_cast<std::int64_t>(deadline_s * 1e9);
  bool killed = false;
  for (;;) {
    if (mono_ns() > deadline) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd pfd{out[0], POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got <= 0) break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  ::close(out[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  *exit_code = killed ? -9 : (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return text;
}

struct piai_result {
  bool ran = false;
  std::string why_not;
  bj::value json;
  double cpu_ms = -1, wall_ms = -1, chunks = -1, ttfd_p50 = -1, ttfd_p99 = -1, ttfd_max = -1, peak_rss_mb = -1,
         rss_before_mb = -1, ok = -1;
  double cpu_per_chunk_us() const { return chunks > 0 ? cpu_ms * 1000 / chunks : -1; }
};

piai_result run_piai(const server_process& srv, const std::string& api, const std::string& model, int n, double deadline_s) {
  piai_result r;
  std::string nm;
  if (const char* e = std::getenv("PIAI_NODE_MODULES"); e && *e) nm = e;
  if (nm.empty()) {
    int code = 0;
    const std::string script = std::string(SESSIONRT_SOURCE_DIR) + "/tests/providers/piai_install.sh";
    std::string got = run_capture({"timeout", "900", script}, {}, 960, &code);
    while (!got.empty() && (got.back() == '\n' || got.back() == ' ')) got.pop_back();
    if (code != 0 || got.empty()) {
      r.why_not = fmt::format("piai_install.sh exited {} (pi-ai not installed)", code);
      return r;
    }
    nm = got.substr(got.rfind('\n') == std::string::npos ? 0 : got.rfind('\n') + 1);
  }
  int code = 0;
  const std::string script = std::string(SESSIONRT_SOURCE_DIR) + "/tests/providers/piai_stream.mjs";
  const std::string out = run_capture({"node", script, "--bench", std::to_string(n), "--api", api, "--base-url", srv.base_url(api),
                                       "--model", model, "--key", "test-key", "--bench-timeout-s",
                                       std::to_string(static_cast<int>(deadline_s))},
                                      {"PIAI_NODE_MODULES=" + nm}, deadline_s + 60, &code);
  // The last non-empty line is the JSON.
  std::string line;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) line = l;
  boost::system::error_code ec;
  r.json = bj::parse(line, ec);
  if (ec || !r.json.is_object()) {
    r.why_not = fmt::format("piai_stream.mjs exited {} without its JSON line: {}", code, out.substr(0, 300));
    return r;
  }
  r.ran = true;
  r.cpu_ms = jnum(r.json, {"cpu_ms"});
  r.wall_ms = jnum(r.json, {"wall_ms"});
  r.chunks = jnum(r.json, {"chunks"});
  r.ok = jnum(r.json, {"ok"});
  r.ttfd_p50 = jnum(r.json, {"ttfd_ms", "p50"});
  r.ttfd_p99 = jnum(r.json, {"ttfd_ms", "p99"});
  r.ttfd_max = jnum(r.json, {"ttfd_ms", "max"});
  r.peak_rss_mb = jnum(r.json, {"peak_rss_mb"});
  r.rss_before_mb = jnum(r.json, {"rss_before_mb"});
  return r;
}

// ---------------------------------------------------------------------------------------------

struct args {
  int streams = 1000;
  int chunks = 300;
  int interval_ms = 20;
  std::string api = "openai-completions";
  bool piai = true;
  std::vector<int> probe{10000};
  int window = 2048;  // the floor client: streams waiting for their first byte at once
  int probe_chunks = 0, probe_interval_ms = 0;  // 0: as the main run
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "provider_bench: " << why
            << "\nusage: provider_bench [--streams N] [--chunks C] [--interval-ms MS] [--api A] [--no-piai]\n"
               "                      [--max-streams-probe P[,P2...]] [--probe-chunks C] [--probe-interval-ms MS]\n"
               "                      [--window W]\n";
  std::exit(2);
}

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto v = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value for " + k);
      return argv[++i];
    };
    if (k == "--streams") a.streams = std::stoi(v());
    else if (k == "--chunks") a.chunks = std::stoi(v());
    else if (k == "--interval-ms") a.interval_ms = std::stoi(v());
    else if (k == "--api") a.api = v();
    else if (k == "--no-piai") a.piai = false;
    else if (k == "--window") a.window = std::stoi(v());
    else if (k == "--probe-chunks") a.probe_chunks = std::stoi(v());
    else if (k == "--probe-interval-ms") a.probe_interval_ms = std::stoi(v());
    else if (k == "--max-streams-probe") {
      a.probe.clear();
      std::stringstream ss(v());
      for (std::string p; std::getline(ss, p, ',');)
        if (const int x = std::stoi(p); x > 0) a.probe.push_back(x);
    } else if (k == "-h" || k == "--help") usage("help");
    else usage("unknown argument " + k);
  }
  if (a.streams < 1 || a.chunks < 1 || a.interval_ms < 1) usage("sizes must be positive");
  static const char* const apis[] = {"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"};
  if (std::find(std::begin(apis), std::end(apis), a.api) == std::end(apis)) usage("unknown --api " + a.api);
  return a;
}

std::size_t hard_nofile() {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  return lim.rlim_max == RLIM_INFINITY ? 1u << 20 : static_cast<std::size_t>(lim.rlim_max);
}

// The live-session cap for n concurrent turns: each takes a socket and its session's transcript,
// so 2n descriptors plus the runtime's reserve must fit under the hard limit.
std::size_t live_cap_for(int n) {
  const std::size_t hard = hard_nofile();
  const std::size_t want = static_cast<std::size_t>(n) + 64;
  const std::size_t room = hard > static_cast<std::size_t>(n) + 600 ? hard - static_cast<std::size_t>(n) - 600 : 64;
  return std::min(want, room);
}

void progress(const std::string& s) { std::cerr << "[" << fmt::format("load {:.2f}", load1()) << "] " << s << std::endl; }

double us_per(double cpu_s, double chunks) { return chunks > 0 ? cpu_s * 1e6 / chunks : -1; }

bj::object ours_json(const ours_result& o, double ideal_s) {
  return {{"streams", o.n},
          {"ok", o.ok},
          {"full_replies", o.full},
          {"failed", o.failed},
          {"first_error", o.first_error},
          {"timed_out", o.timed_out},
          {"live_session_cap", o.live_cap},
          {"wall_s", std::round(o.wall_s * 1000) / 1000},
          {"wall_over_ideal", std::round(o.wall_s / ideal_s * 1000) / 1000},
          {"send_loop_s", std::round(o.start_s * 1000) / 1000},
          {"cpu_user_s", std::round(o.cpu.user * 1000) / 1000},
          {"cpu_sys_s", std::round(o.cpu.sys * 1000) / 1000},
          {"runner_deltas", o.runner_deltas},
          {"reply_delta_events", o.event_deltas},
          {"cpu_us_per_chunk", std::round(us_per(o.cpu.total(), static_cast<double>(o.runner_deltas)) * 100) / 100},
          {"peak_in_flight", o.peak_in_flight},
          {"rss_before_mb", std::round(static_cast<double>(o.rss_before_kb) / 1024 * 10) / 10},
          {"rss_plateau_mb", std::round(static_cast<double>(o.rss_plateau_kb) / 1024 * 10) / 10},
          {"rss_peak_mb", std::round(static_cast<double>(o.rss_peak_kb) / 1024 * 10) / 10},
          {"pace_s", o.pace_s},
          {"kb_per_stream_in_flight", std::round(o.kb_per_stream() * 10) / 10},
          {"heap_kb_per_call_in_flight", std::round(o.heap_kb_per_stream() * 10) / 10},
          {"heap_plateau_mb", std::round(static_cast<double>(o.heap_plateau_kb) / 1024 * 10) / 10},
          {"heap_after_mb", std::round(static_cast<double>(o.heap_after_kb) / 1024 * 10) / 10},
          {"mallinfo_ms_max", std::round(o.mallinfo_ms_max * 100) / 100},
          {"sampler_cpu_s", std::round(o.sampler_cpu_s * 1000) / 1000},
          {"stream_length_ms", to_json(percentiles(o.duration_ms))},
          {"e2e_ttfd_ms", to_json(percentiles(o.e2e_ms))},
          {"added_ttfd_ms", to_json(percentiles(o.added_kernel_ms))},
          {"added_ttfd_from_curl_read_ms", to_json(percentiles(o.added_read_ms))},
          {"socket_wait_ms", to_json(percentiles(o.socket_wait_ms))},
          {"rx_to_runner_ms", to_json(percentiles(o.rx_to_runner_ms))},
          {"runner_to_subscriber_ms", to_json(percentiles(o.runner_to_sub_ms))},
          {"send_to_request_written_ms", to_json(percentiles(o.send_to_tx_ms))},
          {"request_to_first_byte_ms", to_json(percentiles(o.tx_to_rx_ms))},
          {"no_kernel_stamp", o.no_kernel_stamp},
          {"http_requests", o.counters.http_requests},
          {"retries", o.counters.retries},
          {"failures", o.counters.failures},
          {"server", to_json(o.server)},
          {"busiest_threads_cpu_s", [&] {
             bj::object t;
             for (const auto& [name, cpu] : o.busiest_threads) t[name] = std::round(cpu * 100) / 100;
             return t;
           }()}};
}

bj::object raw_json(const raw_result& r, const server_view& sv, int chunks, double ideal_s) {
  const double ch = static_cast<double>(r.ok) * chunks;
  return {{"streams", r.n},
          {"ok", r.ok},
          {"failed", r.failed},
          {"first_error", r.first_error},
          {"timed_out", r.timed_out},
          {"wall_s", std::round(r.wall_s * 1000) / 1000},
          {"wall_over_ideal", std::round(r.wall_s / ideal_s * 1000) / 1000},
          {"cpu_user_s", std::round(r.cpu.user * 1000) / 1000},
          {"cpu_sys_s", std::round(r.cpu.sys * 1000) / 1000},
          {"chunks", ch},
          {"bytes", r.bytes},
          {"cpu_us_per_chunk", std::round(us_per(r.cpu.total(), ch) * 100) / 100},
          {"ttfb_ms", to_json(percentiles(r.ttfb_ms))},
          {"stream_length_ms", to_json(percentiles(r.duration_ms))},
          {"server", to_json(sv)}};
}

std::string srv_line(const server_view& v, double wall_s) {
  return fmt::format("event-loop delay p50/p99/max {:.1f}/{:.1f}/{:.1f} ms, catch-up writes {:.0f} of {:.0f} (max {:.0f} "
                     "deltas behind), first write <= {:.1f} ms, CPU {:.2f} s ({:.2f} cores); loopback: {} backlog drops, "
                     "{} TCP retransmits, {} listen overflows",
                     v.eld_p50, v.eld_p99, v.eld_max, v.catch_up, v.writes, v.max_behind, v.first_write_max, v.cpu_s,
                     wall_s > 0 ? v.cpu_s / wall_s : 0.0, v.net.backlog_drops, v.net.retrans, v.net.listen_overflows);
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  // Room for the probe's sockets (the server inherits the limit).
  {
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  const std::string model = fmt::format("slow:{}:{}", a.chunks, a.interval_ms);
  const double ideal_s = static_cast<double>(a.chunks) * a.interval_ms / 1000.0;
  const double deadline_s = 120 + 8 * ideal_s;
  const double load_at_start = load1();
  progress(fmt::format("starting fake_provider.mjs; {} streams x {} chunks x {} ms ({}), ideal {:.1f} s", a.streams,
                       a.chunks, a.interval_ms, a.api, ideal_s));
  server_process srv;

  // Is the request right? One short stream.
  {
    auto r = run_raw(srv.port(), raw_request(a.api, "slow:2:1", srv.port()), 1, 1, 30);
    if (r.ok != 1) {
      std::cerr << "provider_bench: the server does not stream " << a.api << ": " << r.first_error << "\n";
      return 1;
    }
  }
  // Warm the server (JIT, request parsing) with the same number of short streams.
  progress("warm-up: raw streams of slow:3:20");
  (void)run_raw(srv.port(), raw_request(a.api, fmt::format("slow:3:{}", a.interval_ms), srv.port()), a.streams, a.window,
                deadline_s);

  // 1. The floor.
  progress("floor: raw epoll client");
  srv.reset();
  phase_mark scpu = mark(srv);
  const raw_result floor = run_raw(srv.port(), raw_request(a.api, model, srv.port()), a.streams, a.window, deadline_s);
  const server_view floor_srv = read_server(srv, scpu);

  // 2. sessionrt: round 1 (new sessions), round 2 (the same sessions, live), both sent all at
  // once; round 3 (live) sent evenly over one stream's length, so the streams in flight climb to
  // ~N without a burst of N requests at one instant.
  progress("sessionrt: runtime::send + provider runner, 3 rounds");
  const std::vector<ours_result> ours =
      run_ours(srv, a.api, model, a.chunks, a.streams, static_cast<std::size_t>(a.streams) + 64, deadline_s, {0, 0, ideal_s});

  // 3. pi-ai.
  piai_result piai;
  server_view piai_srv;
  if (a.piai) {
    progress("pi-ai: piai_stream.mjs --bench");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    srv.reset();
    scpu = mark(srv);
    piai = run_piai(srv, a.api, model, a.streams, deadline_s);
    piai_srv = read_server(srv, scpu);
    if (!piai.ran) progress("pi-ai did not run: " + piai.why_not);
  } else {
    piai.why_not = "--no-piai";
  }

  // 4. The probe.
  struct probe_row {
    int n = 0;
    raw_result floor;
    server_view floor_srv;
    std::vector<ours_result> ours;
  };
  std::vector<probe_row> probes;
  const int probe_chunks = a.probe_chunks > 0 ? a.probe_chunks : a.chunks;
  const int probe_interval_ms = a.probe_interval_ms > 0 ? a.probe_interval_ms : a.interval_ms;
  const std::string probe_model = fmt::format("slow:{}:{}", probe_chunks, probe_interval_ms);
  const double probe_ideal_s = static_cast<double>(probe_chunks) * probe_interval_ms / 1000.0;
  for (const int p : a.probe) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    progress(fmt::format("probe at {}: floor", p));
    probe_row row;
    row.n = p;
    srv.reset();
    scpu = mark(srv);
    row.floor = run_raw(srv.port(), raw_request(a.api, probe_model, srv.port()), p, a.window, deadline_s);
    row.floor_srv = read_server(srv, scpu);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    progress(fmt::format("probe at {}: sessionrt, 2 rounds (live sessions capped at {})", p, live_cap_for(p)));
    row.ours = run_ours(srv, a.api, probe_model, probe_chunks, p, live_cap_for(p), deadline_s, {0, 0});
    probes.push_back(std::move(row));
  }

  // ---- Report.
  const double floor_chunks = static_cast<double>(floor.ok) * a.chunks;
  const double floor_us = us_per(floor.cpu.total(), floor_chunks);
  const double piai_us = piai.cpu_per_chunk_us();
  const pcts floor_ttfb = percentiles(floor.ttfb_ms);
  auto ours_us = [](const ours_result& o) { return us_per(o.cpu.total(), static_cast<double>(o.runner_deltas)); };
  const ours_result empty_round;
  auto round_at = [&](std::size_t k) -> const ours_result& { return ours.size() > k ? ours[k] : empty_round; };
  const ours_result& r1 = round_at(0);
  const ours_result& r2 = round_at(1);
  const ours_result& r3 = round_at(2);

  std::cout << fmt::format("\nprovider_bench: {} concurrent streams x {} chunks {} ms apart ({}), ideal wall {:.1f} s; "
                           "load average at start {:.2f}\n\n",
                           a.streams, a.chunks, a.interval_ms, a.api, ideal_s, load_at_start);
  auto row = [](const std::string& name, const std::string& f, const std::string& o1, const std::string& o2,
                const std::string& o3, const std::string& p) {
    std::cout << fmt::format("{:<38} {:>15} {:>15} {:>15} {:>15} {:>13}\n", name, f, o1, o2, o3, p);
  };
  const std::string na = "-";
  auto num = [](double v, int prec) { return v < 0 ? std::string("-") : fmt::format("{:.{}f}", v, prec); };
  auto ok_of = [](const ours_result& o) { return fmt::format("{}/{} ({})", o.ok, o.n, o.full); };
  row("", "floor", "sessionrt", "sessionrt", "sessionrt", "pi-ai");
  row("", "(raw epoll)", "1st turns", "2nd turns", "3rd turns", "(Node)");
  row("", "", "new sessions", "live sessions", "live sessions", "");
  row("", "all at once", "all at once", "all at once", fmt::format("over {:.1f} s", ideal_s), "all at once");
  row("streams ok (replies complete)", fmt::format("{}/{}", floor.ok, floor.n), ok_of(r1), ok_of(r2), ok_of(r3),
      piai.ran ? fmt::format("{:.0f}/{}", piai.ok, a.streams) : na);
  row("wall (s)", num(floor.wall_s, 2), num(r1.wall_s, 2), num(r2.wall_s, 2), num(r3.wall_s, 2),
      piai.ran ? num(piai.wall_ms / 1000, 2) : na);
  row("CPU user+sys (s)", num(floor.cpu.total(), 3), num(r1.cpu.total(), 3), num(r2.cpu.total(), 3), num(r3.cpu.total(), 3),
      piai.ran ? num(piai.cpu_ms / 1000, 3) : na);
  row("chunks received", num(floor_chunks, 0), fmt::format("{}", r1.runner_deltas), fmt::format("{}", r2.runner_deltas),
      fmt::format("{}", r3.runner_deltas), piai.ran ? num(piai.chunks, 0) : na);
  row("CPU per chunk (us)", num(floor_us, 2), num(ours_us(r1), 2), num(ours_us(r2), 2), num(ours_us(r3), 2),
      piai.ran ? num(piai_us, 2) : na);
  auto to_piai = [&](double us) { return piai_us > 0 && us > 0 ? num(us / piai_us, 3) : std::string("-"); };
  row("  / pi-ai's (target <= 0.20)", to_piai(floor_us), to_piai(ours_us(r1)), to_piai(ours_us(r2)), to_piai(ours_us(r3)), na);
  row("  / the floor's", na, num(ours_us(r1) / floor_us, 2), num(ours_us(r2) / floor_us, 2), num(ours_us(r3) / floor_us, 2),
      piai.ran ? num(piai_us / floor_us, 2) : na);
  row("1st byte/delta from request p50 (ms)", num(floor_ttfb.p50, 1), num(percentiles(r1.e2e_ms).p50, 1),
      num(percentiles(r2.e2e_ms).p50, 1), num(percentiles(r3.e2e_ms).p50, 1), piai.ran ? num(piai.ttfd_p50, 1) : na);
  row("1st byte/delta from request p99 (ms)", num(floor_ttfb.p99, 1), num(percentiles(r1.e2e_ms).p99, 1),
      num(percentiles(r2.e2e_ms).p99, 1), num(percentiles(r3.e2e_ms).p99, 1), piai.ran ? num(piai.ttfd_p99, 1) : na);
  row("added TTFD p50 (ms)", na, num(percentiles(r1.added_kernel_ms).p50, 2), num(percentiles(r2.added_kernel_ms).p50, 2),
      num(percentiles(r3.added_kernel_ms).p50, 2), na);
  row("added TTFD p99 (ms; target <= 5)", na, num(percentiles(r1.added_kernel_ms).p99, 2),
      num(percentiles(r2.added_kernel_ms).p99, 2), num(percentiles(r3.added_kernel_ms).p99, 2), na);
  row(fmt::format("stream length p50 (s; ideal {:.2f})", ideal_s - a.interval_ms / 1000.0),
      num(percentiles(floor.duration_ms).p50 / 1000, 2), num(percentiles(r1.duration_ms).p50 / 1000, 2),
      num(percentiles(r2.duration_ms).p50 / 1000, 2), num(percentiles(r3.duration_ms).p50 / 1000, 2), na);
  row("stream length p99 (s)", num(percentiles(floor.duration_ms).p99 / 1000, 2), num(percentiles(r1.duration_ms).p99 / 1000, 2),
      num(percentiles(r2.duration_ms).p99 / 1000, 2), num(percentiles(r3.duration_ms).p99 / 1000, 2), na);
  row("streams the server had active at once", num(floor_srv.max_active, 0), num(r1.server.max_active, 0),
      num(r2.server.max_active, 0), num(r3.server.max_active, 0), piai.ran ? num(piai_srv.max_active, 0) : na);
  row("peak calls in flight", na, fmt::format("{}", r1.peak_in_flight), fmt::format("{}", r2.peak_in_flight),
      fmt::format("{}", r3.peak_in_flight), na);
  row("peak RSS (MB)", na, num(static_cast<double>(r1.rss_peak_kb) / 1024, 1), num(static_cast<double>(r2.rss_peak_kb) / 1024, 1),
      num(static_cast<double>(r3.rss_peak_kb) / 1024, 1), piai.ran ? num(piai.peak_rss_mb, 1) : na);
  row("RSS growth per stream in flight (KB)", na, num(r1.kb_per_stream(), 1), num(r2.kb_per_stream(), 1),
      num(r3.kb_per_stream(), 1), piai.ran ? num((piai.peak_rss_mb - piai.rss_before_mb) * 1024 / a.streams, 1) : na);
  row("heap held per call in flight (KB)", na, num(r1.heap_kb_per_stream(), 1), num(r2.heap_kb_per_stream(), 1),
      num(r3.heap_kb_per_stream(), 1), na);

  std::cout << "\nadded TTFD: from the kernel's receive stamp of a turn's first response byte to the reply.delta "
               "subscriber seeing its first text.\nRSS growth: (RSS at the plateau - RSS before the round) / calls in "
               "flight; heap held: (malloc'ed bytes at the plateau - after the round) / calls in flight.\n";
  const char* const names[] = {"1st turns (new sessions, all at once)", "2nd turns (live sessions, all at once)",
                               "3rd turns (live sessions, spread)"};
  for (std::size_t k = 0; k < ours.size(); ++k) {
    const ours_result* r = &ours[k];
    std::cout << fmt::format("sessionrt {}: p50 / p99 / max (ms)\n", k < 3 ? names[k] : "round");
    std::cout << fmt::format("  send() -> request written               {}\n", fmt_p(percentiles(r->send_to_tx_ms), 2));
    std::cout << fmt::format("  request written -> first byte in socket {}   (the server)\n", fmt_p(percentiles(r->tx_to_rx_ms), 2));
    std::cout << fmt::format("  first byte -> curl's first read         {}\n", fmt_p(percentiles(r->socket_wait_ms), 3));
    std::cout << fmt::format("  first byte -> runner's first on_text    {}\n", fmt_p(percentiles(r->rx_to_runner_ms), 3));
    std::cout << fmt::format("  runner's on_text -> subscriber          {}\n", fmt_p(percentiles(r->runner_to_sub_ms), 3));
    std::cout << fmt::format("  first byte -> subscriber (added TTFD)   {}   ({} turns, {} without a kernel stamp)\n",
                             fmt_p(percentiles(r->added_kernel_ms), 3), r->added_kernel_ms.size(), r->no_kernel_stamp);
    std::cout << fmt::format("  memory: RSS ({:.1f} MB plateau - {:.1f} MB before) / {} in flight = {:.1f} KB; heap {}\n",
                             static_cast<double>(r->rss_plateau_kb) / 1024, static_cast<double>(r->rss_before_kb) / 1024,
                             r->peak_in_flight, r->kb_per_stream(),
                             r->heap_plateau_kb < 0
                                 ? std::string("not sampled (the plateau was shorter than a sample)")
                                 : fmt::format("({:.1f} MB plateau - {:.1f} MB after) / {} = {:.1f} KB (mallinfo2 took <= {:.1f} ms)",
                                               static_cast<double>(r->heap_plateau_kb) / 1024,
                                               static_cast<double>(r->heap_after_kb) / 1024, r->peak_in_flight,
                                               r->heap_kb_per_stream(), r->mallinfo_ms_max));
    std::cout << fmt::format("  CPU {:.3f} user + {:.3f} sys s (the bench's sampler, {:.3f} s, taken out); reply.delta "
                             "events with text {} (runner deltas {})\n",
                             r->cpu.user, r->cpu.sys, r->sampler_cpu_s, r->event_deltas, r->runner_deltas);
    std::cout << "  busiest threads (CPU s, share of the wall):";
    for (const auto& [name, cpu] : r->busiest_threads) std::cout << fmt::format(" {} {:.2f} ({:.0f}%)", name, cpu, 100 * cpu / r->wall_s);
    std::cout << "\n  server: " << srv_line(r->server, r->wall_s) << "\n";
    if (!r->first_error.empty()) std::cout << "  first error: " << r->first_error << "\n";
  }
  std::cout << "floor: server " << srv_line(floor_srv, floor.wall_s) << "\n";
  if (!floor.first_error.empty()) std::cout << "floor first error: " << floor.first_error << "\n";
  if (piai.ran) std::cout << "pi-ai: server " << srv_line(piai_srv, piai.wall_ms / 1000) << "\n";
  else std::cout << "pi-ai: " << piai.why_not << "\n";

  for (const auto& pr : probes) {
    const double fch = static_cast<double>(pr.floor.ok) * probe_chunks;
    const double ideal_s = probe_ideal_s;
    std::cout << fmt::format("\nprobe at {} streams of {} chunks {} ms apart (ideal wall {:.1f} s; open-file hard limit {}: "
                             "sessionrt's live sessions capped at {}, each stream in flight takes a socket and its "
                             "session's transcript); 'server active' = the most streams the server was writing at once:\n",
                             pr.n, probe_chunks, probe_interval_ms, ideal_s, hard_nofile(),
                             pr.ours.empty() ? 0 : pr.ours[0].live_cap);
    std::cout << fmt::format("  floor:          {}/{} ok, wall {:.2f} s ({:.2f}x ideal), CPU {:.2f} s = {:.2f} cores ({:.2f} "
                             "us/chunk), first byte p50/p99 {:.1f}/{:.1f} ms, stream length p50/p99 {:.2f}/{:.2f} s, "
                             "server active {:.0f}{}\n",
                             pr.floor.ok, pr.n, pr.floor.wall_s, pr.floor.wall_s / ideal_s, pr.floor.cpu.total(),
                             pr.floor.cpu.total() / pr.floor.wall_s, us_per(pr.floor.cpu.total(), fch),
                             percentiles(pr.floor.ttfb_ms).p50, percentiles(pr.floor.ttfb_ms).p99,
                             percentiles(pr.floor.duration_ms).p50 / 1000, percentiles(pr.floor.duration_ms).p99 / 1000,
                             pr.floor_srv.max_active, pr.floor.first_error.empty() ? "" : " (first error: " + pr.floor.first_error + ")");
    std::cout << "                  server: " << srv_line(pr.floor_srv, pr.floor.wall_s) << "\n";
    for (std::size_t k = 0; k < pr.ours.size(); ++k) {
      const auto& o = pr.ours[k];
      std::cout << fmt::format("  sessionrt {}:  {}/{} ok ({} complete), wall {:.2f} s ({:.2f}x ideal), peak {} in flight, "
                               "CPU {:.2f} s = {:.2f} cores ({:.2f} us/chunk), stream length p50/p99 {:.2f}/{:.2f} s, "
                               "added TTFD p50/p99 {:.2f}/{:.2f} ms, RSS growth {:.1f} KB / heap held {:.1f} KB per stream, "
                               "server active {:.0f}{}\n",
                               k == 0 ? "1st" : "2nd", o.ok, pr.n, o.full, o.wall_s, o.wall_s / ideal_s, o.peak_in_flight,
                               o.cpu.total(), o.cpu.total() / o.wall_s, ours_us(o), percentiles(o.duration_ms).p50 / 1000,
                               percentiles(o.duration_ms).p99 / 1000, percentiles(o.added_kernel_ms).p50,
                               percentiles(o.added_kernel_ms).p99, o.kb_per_stream(), o.heap_kb_per_stream(),
                               o.server.max_active, o.first_error.empty() ? "" : " (first error: " + o.first_error + ")");
      std::cout << "                  busiest threads:";
      for (const auto& [name, cpu] : o.busiest_threads) std::cout << fmt::format(" {} {:.2f} s ({:.0f}%)", name, cpu, 100 * cpu / o.wall_s);
      std::cout << "\n                  server: " << srv_line(o.server, o.wall_s) << "\n";
    }
  }

  bj::object j{{"bench", "provider_bench"},
               {"api", a.api},
               {"model", model},
               {"streams", a.streams},
               {"chunks", a.chunks},
               {"interval_ms", a.interval_ms},
               {"ideal_wall_s", ideal_s},
               {"load_at_start", std::round(load_at_start * 100) / 100},
               {"floor", raw_json(floor, floor_srv, a.chunks, ideal_s)}};
  bj::array rounds;
  for (const auto& o : ours) rounds.push_back(ours_json(o, ideal_s));
  j["sessionrt"] = rounds;
  if (piai.ran) {
    bj::object pj = piai.json.as_object();
    pj["cpu_us_per_chunk"] = std::round(piai_us * 100) / 100;
    pj["server"] = to_json(piai_srv);
    j["piai"] = pj;
    j["ratio_cpu_per_chunk_1st_turn"] = std::round(ours_us(r1) / piai_us * 10000) / 10000;
    j["ratio_cpu_per_chunk_2nd_turn"] = std::round(ours_us(r2) / piai_us * 10000) / 10000;
    j["ratio_cpu_per_chunk_3rd_turn"] = std::round(ours_us(r3) / piai_us * 10000) / 10000;
  } else {
    j["piai"] = bj::object{{"skipped", piai.why_not}};
  }
  bj::array pa;
  for (const auto& pr : probes) {
    bj::array pr_rounds;
    for (const auto& o : pr.ours) pr_rounds.push_back(ours_json(o, probe_ideal_s));
    pa.push_back(bj::object{{"streams", pr.n},
                            {"model", probe_model},
                            {"floor", raw_json(pr.floor, pr.floor_srv, probe_chunks, probe_ideal_s)},
                            {"sessionrt", pr_rounds}});
  }
  j["probe"] = pa;
  std::cout << "\n" << bj::serialize(j) << std::endl;
  bool all_ok = true;
  for (const auto& o : ours) all_ok = all_ok && o.ok == a.streams && o.full == a.streams;
  all_ok = all_ok && ours.size() == 3;
  return all_ok ? 0 : 1;
}
