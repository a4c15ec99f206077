// gateway_bench: the gateway's cost over the socket against the embedding API, in one run.
// - A child process (forked before any thread exists) runs gateway_server on a temp state dir
//   with the simulated model (no latency), port 0; the parent opens N connections (default
//   1,000), each with its own session (agent:main:bench-<i>), and drives T turns per connection
//   (default 3), closed loop: chat.send, then the next once its `chat` final event arrived.
//   Printed: turns/s and the p50 / p99 of chat.send -> final; the child's RSS before the
//   connections, with all of them idle, and the difference per connection; how many finals
//   waited out the hold bound (from the gateway's /metrics).
// - Then the same N sessions x T turns through runtime::send() in this process on another temp
//   dir, same model: turns/s, p50, p99 (send -> acknowledged outcome), and the ratios.
// - RLIMIT_NOFILE is raised to its hard limit first (each connection costs two descriptors here,
//   the client's and the child gateway's); too low a hard limit is said before anything runs.
// Usage: gateway_bench [--connections N] [--turns T] [--help]
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gateway/chat_delivery.hpp"
#include "gateway/gateway_client.hpp"
#include "gateway/gateway_server.hpp"
#include "messages/json_access.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;
namespace bj = boost::json;
using steady = std::chrono::steady_clock;

namespace {

std::int64_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  return -1;
}

// One sample of the gateway's /metrics (-1 when it cannot be read).
double scrape(int port, const std::string& token, const std::string& series) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string resp;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n\r\n";
    if (::send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size())) {
      char buf[8192];
      for (ssize_t k; (k = ::recv(fd, buf, sizeof buf, 0)) > 0;) resp.append(buf, static_cast<std::size_t>(k));
    }
  }
  ::close(fd);
  const auto at = resp.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::atof(resp.c_str() + at + series.size() + 2);
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

std::string temp_dir(const char* tag) {
  std::string t = (std::filesystem::temp_directory_path() / fmt::format("gwbench-{}-{}-XXXXXX", tag, ::getpid())).string();
  if (!::mkdtemp(t.data())) std::abort();
  return t;
}

std::shared_ptr<runtime::simulated_model> model() {
  return std::make_shared<runtime::simulated_model>(storage::real_clock());
}

// The child: a gateway on `dir`, its port written to `fd`, until SIGTERM.
[[noreturn]] void run_gateway_child(const std::string& dir, const std::string& token, int fd) {
  gateway::gateway_options o;
  o.runtime.settings.state_dir = dir;
  o.runtime.runner = model();
  o.port = 0;
  o.token = token;
  o.max_connections = 1u << 20;
  o.install_signal_handlers = true;
  auto s = gateway::gateway_server::start(std::move(o));
  if (!s) {
    fmt::print(stderr, "gateway_bench: gateway: {}\n", s.error().message());
    std::_Exit(2);
  }
  int port = (*s)->port();
  if (::write(fd, &port, sizeof port) != sizeof port) std::_Exit(2);
  ::close(fd);
  (*s)->wait();
  (void)(*s)->stop();
  std::_Exit(0);
}

struct conn {
  std::unique_ptr<gateway::gateway_client> client;
  std::string key, run_id;
  int done = 0;
  steady::time_point sent;
  bool waiting = false;
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1000;
  int turns = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--connections" && has_value) n = static_cast<std::size_t>(std::atol(argv[++i]));
    else if (a == "--turns" && has_value) turns = std::atoi(argv[++i]);
    else {
      fmt::print(a == "--help" ? stdout : stderr,
                 "usage: gateway_bench [--connections N (1000)] [--turns T (3)]\n"
                 "  N WebSocket connections to a gateway child, each with its own session, T turns each\n"
                 "  (chat.send -> final event), then the same turns through runtime::send in this process.\n");
      return a == "--help" ? 0 : 2;
    }
  }
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
  // Per connection: the client's socket here and the gateway's in the child (plus its sessions'
  // files, which the runtime budgets itself).
  if (rl.rlim_cur < n + 64)
    fmt::print(stderr, "gateway_bench: RLIMIT_NOFILE is {} (hard limit): {} connections may not fit\n",
               static_cast<std::uint64_t>(rl.rlim_cur), n);

  const std::string gw_dir = temp_dir("gw"), emb_dir = temp_dir("emb");
  const std::string token = "bench-token";
  int pfd[2];
  if (::pipe(pfd) != 0) return 2;
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pfd[0]);
    run_gateway_child(gw_dir, token, pfd[1]);
  }
  ::close(pfd[1]);
  int port = 0;
  if (::read(pfd[0], &port, sizeof port) != sizeof port) {
    fmt::print(stderr, "gateway_bench: the gateway child did not start\n");
    return 2;
  }
  const std::int64_t rss_before = rss_kib(child);

  // ---- connections -----------------------------------------------------------------------------
  std::vector<conn> conns(n);
  auto t_conn = steady::now();
  for (std::size_t i = 0; i < n; ++i) {
    gateway::gateway_client_options o;
    o.port = static_cast<std::uint16_t>(port);
    o.identity.token = token;
    o.identity.scopes = {"operator.write"};
    auto c = gateway::gateway_client::connect(o);
    if (!c) {
      fmt::print(stderr, "gateway_bench: connection {}: {}\n", i, c.error().message());
      ::kill(child, SIGTERM);
      return 2;
    }
    conns[i].client = std::move(*c);
    conns[i].key = fmt::format("agent:main:bench-{}", i);
  }
  const double connect_s = std::chrono::duration<double>(steady::now() - t_conn).count();
  const std::int64_t rss_idle = rss_kib(child);

  // ---- turns over the socket: one poll loop over every connection -----------------------------
  std::vector<double> lat;
  lat.reserve(n * static_cast<std::size_t>(turns));
  std::size_t remaining = n;
  auto send_next = [&](conn& c, std::size_t i) {
    c.run_id = fmt::format("r-{}-{}", i, c.done);
    bj::object p{{"sessionKey", c.key}, {"message", fmt::format("turn {} of connection {}", c.done, i)},
                 {"idempotencyKey", c.run_id}};
    c.sent = steady::now();
    c.waiting = true;
    auto id = c.client->send_request("chat.send", p);
    if (!id) fmt::print(stderr, "gateway_bench: send: {}\n", id.error().message());
  };
  auto t0 = steady::now();
  for (std::size_t i = 0; i < n; ++i) send_next(conns[i], i);
  std::vector<pollfd> fds(n);
  std::size_t failures = 0;
  while (remaining > 0) {
    for (std::size_t i = 0; i < n; ++i) fds[i] = {conns[i].waiting ? conns[i].client->socket().native_handle() : -1, POLLIN, 0};
    if (::poll(fds.data(), fds.size(), 30000) <= 0) {
      fmt::print(stderr, "gateway_bench: no progress in 30 s ({} connections still running)\n", remaining);
      break;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      conn& c = conns[i];
      for (;;) {
        auto e = c.client->next_event(std::chrono::milliseconds(0));
        if (!e) break;
        if (e->event != "chat" || !e->payload.is_object()) continue;
        const bj::object& p = e->payload.get_object();
        if (json::get_string(p, "runId").value_or("") != c.run_id) continue;
        auto state = json::get_string(p, "state").value_or("");
        if (state != "final" && state != "error" && state != "aborted") continue;
        if (state != "final") ++failures;
        lat.push_back(std::chrono::duration<double, std::milli>(steady::now() - c.sent).count());
        c.waiting = false;
        if (++c.done < turns) send_next(c, i);
        else --remaining;
        break;
      }
    }
  }
  const double gw_s = std::chrono::duration<double>(steady::now() - t0).count();
  const double gw_rate = static_cast<double>(lat.size()) / gw_s;
  fmt::print("gateway: {} connections (connected in {:.2f} s), {} turns each, {} turns in {:.2f} s: {:.0f} turns/s, "
             "chat.send->final p50 {:.2f} ms, p99 {:.2f} ms, failed {}\n",
             n, connect_s, turns, lat.size(), gw_s, gw_rate, pct(lat, 0.5), pct(lat, 0.99), failures);
  fmt::print("gateway RSS: {} KiB before the connections, {} KiB with {} idle connections: {:.1f} KiB per idle "
             "connection (sessions not yet created)\n",
             rss_before, rss_idle, n, static_cast<double>(rss_idle - rss_before) / static_cast<double>(n));
  fmt::print("gateway: {} chat finals waited out the {} ms hold for their turn's end on the event bus\n",
             scrape(port, token, "sessionrt_gateway_chat_holds_expired_total"), gateway::kClosingHold.count());
  const double gw_p50 = pct(lat, 0.5), gw_p99 = pct(lat, 0.99);
  for (auto& c : conns) (void)c.client->close();
  conns.clear();
  ::kill(child, SIGKILL);  // its stop is not what is measured
  int wst = 0;
  ::waitpid(child, &wst, 0);

  // ---- the same turns through the embedding API ------------------------------------------------
  runtime::runtime_options ro;
  ro.settings.state_dir = emb_dir;
  ro.runner = model();
  auto rt = runtime::runtime::start(ro);
  if (!rt) {
    fmt::print(stderr, "gateway_bench: runtime: {}\n", rt.error().message());
    return 2;
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<double> elat;
  elat.reserve(n * static_cast<std::size_t>(turns));
  std::size_t left = n;
  std::atomic<std::size_t> efail{0};
  std::function<void(std::size_t, int)> go = [&](std::size_t i, int k) {
    chat_event ev;
    ev.channel = "webchat";
    ev.peer_id = "main";
    ev.sender_id = "bench";
    ev.session_key = fmt::format("agent:main:bench-{}", i);
    ev.agent_id = "main";
    ev.text = fmt::format("turn {} of connection {}", k, i);
    ev.sender_authorized = true;
    auto sent = steady::now();
    (*rt)->send(std::move(ev), [&, i, k, sent](turn_outcome out) {
      if (!out.st.ok()) efail.fetch_add(1);
      {
        std::lock_guard l(mu);
        elat.push_back(std::chrono::duration<double, std::milli>(steady::now() - sent).count());
      }
      if (k + 1 < turns) {
        go(i, k + 1);
      } else {
        std::lock_guard l(mu);
        if (--left == 0) cv.notify_all();
      }
    });
  };
  auto e0 = steady::now();
  for (std::size_t i = 0; i < n; ++i) go(i, 0);
  {
    std::unique_lock l(mu);
    cv.wait_for(l, std::chrono::minutes(10), [&] { return left == 0; });
  }
  const double emb_s = std::chrono::duration<double>(steady::now() - e0).count();
  std::unique_lock l(mu);
  const double emb_rate = static_cast<double>(elat.size()) / emb_s;
  fmt::print("embedding API: {} sessions, {} turns each, {} turns in {:.2f} s: {:.0f} turns/s, send->outcome p50 {:.2f} ms, "
             "p99 {:.2f} ms, failed {}\n",
             n, turns, elat.size(), emb_s, emb_rate, pct(elat, 0.5), pct(elat, 0.99), efail.load());
  fmt::print("gateway cost vs embedding: throughput {:.2f}x lower, p50 {:.2f}x, p99 {:.2f}x\n", emb_rate / gw_rate,
             gw_p50 / std::max(1e-9, pct(elat, 0.5)), gw_p99 / std::max(1e-9, pct(elat, 0.99)));
  std::fflush(stdout);
  l.unlock();
  (void)(*rt)->stop();
  std::filesystem::remove_all(gw_dir);
  std::filesystem::remove_all(emb_dir);
  return 0;
}
