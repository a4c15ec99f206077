// cluster_bench: issue #36's figures, on one machine. It starts a private etcd (Debian's
// etcd-server) and `sessionrt gateway --cluster` nodes on loopback (lease TTL 2 s, one shared
// state dir, one token, the simulated model: no config, so no network call in a turn) and
// measures, in this order:
//   turns       with 1, then 2, then 3 nodes: C WebSocket connections spread over the nodes, each
//               with its own session, T turns each, closed loop (chat.send, then the next once
//               the run's `chat` final arrived; one untimed turn per connection first creates
//               the sessions). turns/s, and the latency of chat.send -> final, p50 / p99, for
//               turns sent to the node that holds the session's shard ("owner") and turns sent
//               to another node ("forwarded", one hop over the node link), chosen so that 1/N
//               of the connections are owner turns. On one machine the ratio of the rates is
//               the cost of the cluster layer, not scaling: every node shares the same cores.
//               Under a closed loop both kinds wait in the same queues, so their latencies
//               differ little; the probe measures the hop itself.
//   probe       with 2 and 3 nodes: pairs of turns (an owner turn, then a forwarded one) with
//               one turn in flight in the whole cluster, the client's node rotating over the
//               members: the added latency of forwarding = forwarded - owner, at p50 and p99.
//   rebalance   with 2 nodes under steady traffic (C connections paced at --rebalance-rate,
//               default half the 2-node rate just measured; 0: closed loop), a third node
//               starts; the time until the table is settled (balanced, every shard held by its
//               table owner under its current lease), from its process start and from its
//               join; the table versions written and the shards that moved; the turns that
//               waited (retried after a retryable UNAVAILABLE, or slower than the p99 of the
//               steady traffic just before) and the largest wait; turns that failed, and how
//               many of them because the node's write permit had lapsed (its lease renewal
//               older than TTL/2 = 1 s: a loaded machine).
//   failover    K times (--kills, default 20): kill -9 of a node (n1, n2, n3 in turn, so the
//               placement leader is among the victims), the time until all 256 shards are held
//               by live nodes (p50 / max); the victim is restarted and the cluster settles
//               again before the next kill (that time is reported too). No traffic meanwhile.
// Output: one JSON line per figure on stdout ({"bench":"cluster_turns"|"cluster_forward_latency"|
// "cluster_rebalance"|"cluster_failover",...}, read by bench/report.mjs), a readable line per
// figure and progress on stderr. Each figure carries the 1-minute load average around it.
// A retryable UNAVAILABLE (the owner is moving, or the node's owner directory has not caught
// up) is retried after --retry-ms (100 ms) with the same idempotencyKey, not after the
// answer's retryAfterMs (1 s): the waits measured are the cluster's, not the client's pause.
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/blocking_etcd.hpp"
#include "cluster/cluster_keys.hpp"
#include "cluster/cluster_nodes.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_id.hpp"
#include "cluster/shard_table_store.hpp"
#include "gateway/gateway_client.hpp"
#include "messages/json_access.hpp"
#include "tests/cluster/cluster_view.hpp"
#include "tests/cluster/etcd_process.hpp"
#include "tests/cluster/logged_child.hpp"

using namespace sessionrt;
namespace bj = boost::json;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

const std::string k_cluster = "bench";
const std::string k_token = "cluster-bench-token";
constexpr int k_shards = cluster::default_shards_per_agent;
constexpr int k_ttl_s = 2;
// Two ticks of a node's owner directory refresh at TTL 2 s (TTL/4 = 0.5 s each).
constexpr double k_directory_lag_s = 1.0;

struct options {
  int connections = 36;  // N*N divides it for N = 2 and 3: exactly 1/N owner turns
  int turns = 200;
  int kills = 20;
  int probe_turns = 200;
  double steady_s = 4;
  double rebalance_rate = -1;  // turns/s during the rebalance; < 0: half the 2-node rate; 0: closed loop
  std::chrono::milliseconds retry{100};
  std::string sessionrt;
  bool keep = false;
};

// ---- small things ------------------------------------------------------------------------------

double seconds_since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

double load1() {
  std::ifstream in("/proc/loadavg");
  double l = -1;
  in >> l;
  return l;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last `lines` lines of `text`.
std::string tail(const std::string& text, std::size_t lines) {
  std::size_t at = text.size();
  for (std::size_t n = 0; n <= lines && at > 0; ++n) {
    const auto nl = text.rfind('\n', at - 1);
    if (nl == std::string::npos) return text;
    at = nl;
  }
  return text.substr(at);
}

template <class... A>
void say(fmt::format_string<A...> f, A&&... a) {
  fmt::print(stderr, "cluster_bench: {}\n", fmt::format(f, std::forward<A>(a)...));
  std::fflush(stderr);
}

// The children, for the signal handler: killed (async-signal-safe) on SIGINT / SIGTERM.
constexpr int k_max_children = 16;
std::atomic<pid_t> g_children[k_max_children];

void remember(pid_t pid) {
  for (auto& c : g_children) {
    pid_t none = 0;
    if (c.compare_exchange_strong(none, pid)) return;
  }
}
void forget(pid_t pid) {
  for (auto& c : g_children) {
    pid_t p = pid;
    c.compare_exchange_strong(p, 0);
  }
}
extern "C" void on_signal(int sig) {
  for (auto& c : g_children)
    if (pid_t p = c.load(); p > 0) {
      ::kill(p, SIGCONT);
      ::kill(p, SIGKILL);
    }
  ::_exit(128 + sig);
}

// ---- the processes -----------------------------------------------------------------------------

// etcd, on free loopback ports, its data in `dir`; the pid is kept for the signal handler
// (testing::etcd_process hides it).
class etcd_server {
 public:
  etcd_server(std::string binary, std::string dir) : binary_(std::move(binary)), dir_(std::move(dir)) {}
  ~etcd_server() { stop(); }
  const std::string& endpoint() const { return endpoint_; }
  status start() {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const int client = testing::free_loopback_port(), peer = testing::free_loopback_port();
      if (client < 0 || peer < 0 || client == peer) continue;
      endpoint_ = fmt::format("http://127.0.0.1:{}", client);
      const std::string peer_url = fmt::format("http://127.0.0.1:{}", peer);
      const std::string data = fmt::format("{}/etcd-data-{}", dir_, attempt);  // a failed try's member stays out
      // clang-format off
      pid_ = testing::spawn_logged({binary_, "--name", "bench", "--data-dir", data,
                                    "--listen-client-urls", endpoint_, "--advertise-client-urls", endpoint_,
                                    "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                                    "--initial-cluster", "bench=" + peer_url, "--heartbeat-interval", "50",
                                    "--election-timeout", "250", "--log-level", "warn"},
                                   log());
      // clang-format on
      if (pid_ < 0) return status(errc::io_error, "fork failed");
      remember(pid_);
      auto etcd = cluster::blocking_etcd::connect({endpoint_, 1000});
      if (!etcd) return etcd.error();
      const auto until = steady::now() + 20s;
      while (steady::now() < until) {
        if (etcd->range("/ready").ok()) return status::success();
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {  // a port taken meanwhile: try others
          forget(pid_);
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(20ms);
      }
      stop();
    }
    return status(errc::io_error, "etcd did not start; the end of its log:\n" + tail(read_all(log()), 20));
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 250 && ::waitpid(pid_, nullptr, WNOHANG) != pid_; ++i) std::this_thread::sleep_for(20ms);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, WNOHANG);
    forget(pid_);
    pid_ = -1;
  }
  std::string log() const { return dir_ + "/etcd.log"; }

 private:
  std::string binary_, dir_, endpoint_;
  pid_t pid_ = -1;
};

// etcd's picture and the states waited for: the harness's rules (tests/cluster/cluster_view.hpp).
using view = testing::cluster_view;
std::optional<view> read_view(const cluster::blocking_etcd& etcd) { return testing::read_cluster_view(etcd, k_cluster, k_shards); }
bool settled(const view& v, const std::set<std::string>& ids) { return testing::settled_on(v, ids, k_shards); }
bool all_held_by(const view& v, const std::set<std::string>& ids) { return testing::all_held_by(v, ids, k_shards); }

class cluster_run {
 public:
  cluster_run(const options& o, std::string root, etcd_server& etcd, cluster::blocking_etcd client)
      : o_(o), root_(std::move(root)), etcd_(etcd), client_(std::move(client)) {
    ::mkdir(state_dir().c_str(), 0700);
  }
  ~cluster_run() {
    for (auto& [id, pid] : pids_) stop_node(id);
  }
  const cluster::blocking_etcd& etcd() const { return client_; }
  std::string state_dir() const { return root_ + "/cluster"; }
  std::string log_of(const std::string& id) const { return root_ + "/" + id + ".log"; }

  void start_node(const std::string& id) {
    const pid_t pid =
        testing::spawn_logged({o_.sessionrt, "gateway", "--state-dir", state_dir(), "--port", "0", "--token", k_token,
                               "--cluster", k_cluster, "--etcd", etcd_.endpoint(), "--node-id", id,
                               "--cluster-lease-ttl", std::to_string(k_ttl_s), "--log-level", "info"},
                              log_of(id));
    pids_[id] = pid;
    remember(pid);
  }
  void kill_node(const std::string& id) {
    ::kill(pids_.at(id), SIGKILL);
    ::waitpid(pids_.at(id), nullptr, 0);
    forget(pids_.at(id));
    pids_.at(id) = -1;
  }
  // Fails (naming the node and its log's end) when a node exited by itself.
  status check_alive() {
    for (auto& [id, pid] : pids_) {
      int ws = 0;
      if (pid > 0 && ::waitpid(pid, &ws, WNOHANG) == pid) {
        forget(pid);
        pid = -1;
        return status(errc::io_error, fmt::format("node {} exited ({}); the end of its log ({}):\n{}", id,
                                                  WIFEXITED(ws) ? fmt::format("status {}", WEXITSTATUS(ws))
                                                                : fmt::format("signal {}", WTERMSIG(ws)),
                                                  log_of(id), tail(read_all(log_of(id)), 20)));
      }
    }
    return status::success();
  }
  template <class Pred>
  result<view> wait_for(Pred pred, std::chrono::seconds bound, const std::string& what) {
    const auto until = steady::now() + bound;
    while (steady::now() < until) {
      SRT_RETURN_IF_ERROR(check_alive());
      if (auto v = read_view(client_); v && pred(*v)) return std::move(*v);
      std::this_thread::sleep_for(20ms);
    }
    std::string logs;
    for (const auto& [id, pid] : pids_)
      logs += fmt::format("--- {} ({})\n{}", id, log_of(id), tail(read_all(log_of(id)), 12));
    return status(errc::timeout,
                  fmt::format("{}: not within {} s; the nodes' logs end:\n{}", what, bound.count(), logs));
  }

 private:
  void stop_node(const std::string& id) {
    const pid_t pid = pids_.at(id);
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);  // its leave is not measured
    ::waitpid(pid, nullptr, 0);
    forget(pid);
  }

  const options& o_;
  std::string root_;
  etcd_server& etcd_;
  cluster::blocking_etcd client_;
  std::map<std::string, pid_t> pids_;
};

// ---- turns -------------------------------------------------------------------------------------

struct turn_result {
  bool ok = false;
  int retries = 0;
  std::string error, reply;
};

// chat.send (retried while the answer is a retryable UNAVAILABLE), then the run's chat events
// until its closing one.
turn_result run_turn(gateway::gateway_client& c, const std::string& key, const std::string& text,
                     const std::string& run, std::chrono::milliseconds retry) {
  turn_result t;
  const bj::object params{{"sessionKey", key}, {"message", text}, {"idempotencyKey", run}};
  std::string answer;
  for (;;) {
    auto r = c.request("chat.send", params, 30s);
    if (r) {
      if (r->is_object()) answer = std::string(json::get_string(r->get_object(), "status").value_or(""));
      break;
    }
    const auto& e = c.last_error();
    if (!e || e->code != "UNAVAILABLE" || !e->retryable || t.retries >= 300) {
      t.error = r.error().message();
      return t;
    }
    ++t.retries;
    std::this_thread::sleep_for(retry);
  }
  // The owner's dedupe: an earlier attempt of this run reached the owner after all (its link was
  // lost on the way back); how it ended, and its events, are not this connection's.
  if (answer == "ok" || answer == "in_flight") {
    t.error = "deduped: the owner answered " + answer + " to a retry";
    return t;
  }
  const auto until = steady::now() + 60s;
  while (steady::now() < until) {
    auto ev = c.next_event(std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now()));
    if (!ev) {
      t.error = ev.error().message();
      return t;
    }
    if (ev->event != "chat" || !ev->payload.is_object()) continue;
    const bj::object& p = ev->payload.get_object();
    if (json::get_string(p, "runId").value_or("") != run) continue;
    const std::string state(json::get_string(p, "state").value_or(""));
    if (state == "delta") continue;
    t.ok = state == "final";
    if (!t.ok) t.error = fmt::format("{}: {}", state, json::get_string(p, "errorMessage").value_or(""));
    if (const auto* m = p.if_contains("message"); m && m->is_object())
      if (const auto* content = m->get_object().if_contains("content"); content && content->is_array())
        for (const auto& part : content->get_array())
          if (part.is_object()) t.reply += json::get_string(part.get_object(), "text").value_or("");
    return t;
  }
  t.error = "no closing chat event within 60 s";
  return t;
}

struct conn_plan {
  std::string node, address, key;
  bool forwarded = false;
};

struct turn_record {
  double start_s = 0, end_s = 0, ms = 0;  // start and end since the phase's origin
  bool forwarded = false, ok = false;
  const char* failure = "";  // failure_kind() of a failed turn
  int retries = 0;
};

// What a failed turn ran into, in a few words (the first messages are printed whole).
const char* failure_kind(const std::string& error) {
  if (error.find("may not write") != std::string::npos) return "write permit lapsed";  // lease renewal older than TTL/2
  // The shard's commit log dropped its file after a write the permit refused; it starts a new
  // one at its next round, which the permit refuses too until a renewal succeeds.
  if (error.find("no commit log could be started") != std::string::npos) return "commit log restarting";
  if (error.find("UNAVAILABLE") != std::string::npos) return "unavailable";
  if (error.rfind("deduped", 0) == 0) return "deduped";
  if (error.find("timeout") != std::string::npos || error.find("within") != std::string::npos) return "timeout";
  return "other";
}

// {"kind":count,...} and "kind count, ..." of the failed turns among `records` that `in` selects.
template <class In>
std::pair<std::string, std::string> failure_kinds(const std::vector<turn_record>& records, In in) {
  std::map<std::string, int> count;
  for (const auto& r : records)
    if (!r.ok && in(r)) ++count[r.failure];
  std::string j = "{", text;
  for (const auto& [k, n] : count) {
    j += fmt::format("{}\"{}\":{}", j.size() > 1 ? "," : "", k, n);
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", k, n);
  }
  return {j + "}", text.empty() ? "none" : text};
}

result<std::unique_ptr<gateway::gateway_client>> connect_to(const std::string& address) {
  return testing::client_at(address, k_token, {"operator.write"});
}

// How drive() runs its connections.
struct drive_plan {
  std::string tag;  // in session keys' texts and run ids
  int turns = 0;    // per connection; 0: until *stop
  std::atomic<bool>* stop = nullptr;
  double interval_s = 0;                 // per connection, between turn starts; 0: closed loop
  std::latch* started = nullptr;         // opened once the timed turns begin
  steady::time_point* origin = nullptr;  // set to that moment, before `started` opens
};

// Drives one connection per plan from its own thread: one untimed turn (creates the session),
// then, once every connection did its first, turns until `turns` are done or `stop`, back to
// back or one every `interval_s`. Records every timed turn (times from `origin`); `errors`
// keeps the connections that failed and the first failed turn of each kind.
struct traffic {
  std::vector<turn_record> records;
  std::vector<std::string> errors;                   // failed connections, the first failed turn of each kind
  std::map<std::string, std::string> first_of_kind;  // failure_kind() -> its first message
  int failed_connections = 0;
  bool simulated_reply_seen = false;
  steady::time_point origin;
};

traffic drive(const std::vector<conn_plan>& plans, const drive_plan& d, std::chrono::milliseconds retry) {
  traffic out;
  std::mutex mu;
  std::latch warmed(static_cast<std::ptrdiff_t>(plans.size())), go(1);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < plans.size(); ++i)
    threads.emplace_back([&, i] {
      const conn_plan& p = plans[i];
      auto c = connect_to(p.address);
      const std::string first_text = fmt::format("first words of {}-{}", d.tag, i);
      turn_result first;
      // Untimed, so a failure (a lapsed write permit on a loaded machine) is tried again.
      for (int attempt = 0; c && !first.ok && attempt < 5; ++attempt)
        first = run_turn(**c, p.key, first_text, fmt::format("{}-{}-warm{}", d.tag, i, attempt), retry);
      {
        std::lock_guard g(mu);
        if (!c || !first.ok) {
          ++out.failed_connections;
          out.errors.push_back(
              fmt::format("connection {} to {}: {}", i, p.node, c ? first.error : c.error().message()));
        }
        if (first.reply.find(first_text) != std::string::npos) out.simulated_reply_seen = true;
      }
      warmed.count_down();
      go.wait();
      if (!c || !first.ok) return;
      std::vector<turn_record> mine;
      // Paced connections start spread over one interval, not all at once.
      auto next = out.origin + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(
                                   d.interval_s * static_cast<double>(i) / static_cast<double>(plans.size())));
      for (int k = 0; d.turns > 0 ? k < d.turns : !d.stop->load(); ++k) {
        if (d.interval_s > 0) {
          std::this_thread::sleep_until(next);
          next += std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(d.interval_s));
        }
        turn_record r;
        r.forwarded = p.forwarded;
        const auto t0 = steady::now();
        auto t = run_turn(**c, p.key, fmt::format("turn {} of {}-{}", k, d.tag, i),
                          fmt::format("{}-{}-{}", d.tag, i, k), retry);
        const auto t1 = steady::now();
        r.start_s = std::chrono::duration<double>(t0 - out.origin).count();
        r.end_s = std::chrono::duration<double>(t1 - out.origin).count();
        r.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        r.ok = t.ok;
        r.retries = t.retries;
        if (!t.ok) r.failure = failure_kind(t.error);
        mine.push_back(r);
        if (!t.ok) {
          std::lock_guard g(mu);
          if (out.first_of_kind.emplace(r.failure, fmt::format("connection {} turn {}: {}", i, k, t.error)).second)
            out.errors.push_back(out.first_of_kind[r.failure]);
        }
      }
      (void)(*c)->close();
      std::lock_guard g(mu);
      out.records.insert(out.records.end(), mine.begin(), mine.end());
    });
  warmed.wait();
  out.origin = steady::now();
  if (d.origin) *d.origin = out.origin;
  go.count_down();
  if (d.started) d.started->count_down();
  for (auto& t : threads) t.join();
  return out;
}

// A key of the agent `main` whose shard `holder` holds in `v`: "agent:main:<stem>-<j>".
std::string key_held_by(const view& v, const std::string& holder, const std::string& stem) {
  for (int j = 0;; ++j) {
    std::string key = fmt::format("agent:main:{}-{}", stem, j);
    if (v.holder(cluster::shard_of(key).index) == holder) return key;
  }
}

// C connections over the members in id order: connection i on node i % N for a session held by
// node (i % N + i / N) % N, so 1/N of them are owner turns (exactly, when N*N divides C).
std::vector<conn_plan> spread(const view& v, int connections, const std::string& tag) {
  const auto members = v.members;
  const std::vector<std::string> ids(members.begin(), members.end());
  const std::size_t n = ids.size();
  std::vector<conn_plan> plans;
  for (int i = 0; i < connections; ++i) {
    const std::size_t at = std::size_t(i) % n, owner = (at + std::size_t(i) / n) % n;
    conn_plan p;
    p.node = ids[at];
    p.address = v.address.at(ids[at]);
    p.key = key_held_by(v, ids[owner], fmt::format("{}-{}", tag, i));
    p.forwarded = owner != at;
    plans.push_back(std::move(p));
  }
  return plans;
}

void report_errors(const traffic& t) {
  for (const auto& e : t.errors) say("  error (the first of its kind): {}", e);
}

// ---- the figures -------------------------------------------------------------------------------

// C connections, closed loop, T turns each: turns/s (returned) and latencies.
result<double> measure_turns(cluster_run& run, const options& o, int nodes) {
  const std::string tag = fmt::format("n{}", nodes);
  auto v = read_view(run.etcd());
  if (!v) return status(errc::io_error, "etcd did not answer");
  const double load_before = load1();
  const auto plans = spread(*v, o.connections, tag);
  drive_plan d;
  d.tag = tag;
  d.turns = o.turns;
  traffic t = drive(plans, d, o.retry);
  report_errors(t);
  if (t.failed_connections == static_cast<int>(plans.size()))
    return status(errc::io_error, fmt::format("no connection could run a turn with {} node(s)", nodes));
  if (!t.simulated_reply_seen)
    say("  warning: no reply echoed the message: is a configured model answering, not the simulated one?");
  double wall = 0;
  std::vector<double> all, own, fwd;
  int failures = 0, retries = 0;
  for (const auto& r : t.records) {
    wall = std::max(wall, r.end_s);
    retries += r.retries;
    if (!r.ok) {
      ++failures;
      continue;
    }
    all.push_back(r.ms);
    (r.forwarded ? fwd : own).push_back(r.ms);
  }
  const double rate = wall > 0 ? static_cast<double>(all.size()) / wall : 0, load_after = load1();
  const auto [kinds_json, kinds] = failure_kinds(t.records, [](const turn_record&) { return true; });
  const auto maybe = [](const std::vector<double>& x, double p) {
    return x.empty() ? std::string("null") : fmt::format("{:.3f}", pct(x, p));
  };
  const std::string added50 =
      own.empty() || fwd.empty() ? "null" : fmt::format("{:.3f}", pct(fwd, 0.5) - pct(own, 0.5));
  const std::string added99 =
      own.empty() || fwd.empty() ? "null" : fmt::format("{:.3f}", pct(fwd, 0.99) - pct(own, 0.99));
  fmt::print(
      R"({{"bench":"cluster_turns","nodes":{},"connections":{},"connections_failed":{},"turns_per_connection":{},"turns":{},"seconds":{:.3f},"turns_per_s":{:.1f},"latency_ms_p50":{:.3f},"latency_ms_p99":{:.3f},"owner_turns":{},"owner_ms_p50":{},"owner_ms_p99":{},"forwarded_turns":{},"forwarded_ms_p50":{},"forwarded_ms_p99":{},"forward_added_ms_p50":{},"forward_added_ms_p99":{},"retries":{},"failures":{},"failure_kinds":{},"lease_ttl_s":{},"load1_before":{:.2f},"load1_after":{:.2f}}})"
      "\n",
      nodes, o.connections, t.failed_connections, o.turns, all.size(), wall, rate, pct(all, 0.5), pct(all, 0.99),
      own.size(), maybe(own, 0.5), maybe(own, 0.99), fwd.size(), maybe(fwd, 0.5), maybe(fwd, 0.99), added50, added99,
      retries, failures, kinds_json, k_ttl_s, load_before, load_after);
  std::fflush(stdout);
  say("{} node(s): {} turns in {:.2f} s = {:.0f} turns/s; chat.send -> final p50 {:.2f} ms, p99 {:.2f} ms; "
      "owner {} turns p50 {} / p99 {} ms, forwarded {} turns p50 {} / p99 {} ms (added p50 {}, p99 {} ms); "
      "retries {}, failures {} ({}); load {:.1f} -> {:.1f}",
      nodes, all.size(), wall, rate, pct(all, 0.5), pct(all, 0.99), own.size(), maybe(own, 0.5), maybe(own, 0.99),
      fwd.size(), maybe(fwd, 0.5), maybe(fwd, 0.99), added50, added99, retries, failures, kinds, load_before,
      load_after);
  return rate;
}

// One turn in flight in the whole cluster: P pairs of turns, an owner turn then a forwarded one,
// the connection's node rotating over the members, so both kinds see the same machine. The
// added latency of a hop without queueing behind other turns.
status measure_forward_latency(cluster_run& run, const options& o, int nodes) {
  auto v = read_view(run.etcd());
  if (!v) return status(errc::io_error, "etcd did not answer");
  const auto members = v->members;
  const std::vector<std::string> ids(members.begin(), members.end());
  std::vector<std::unique_ptr<gateway::gateway_client>> conns;
  std::vector<std::string> own_key, fwd_key;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto c = connect_to(v->address.at(ids[i]));
    if (!c) return c.error().with_context("connecting to " + ids[i]);
    conns.push_back(std::move(*c));
    own_key.push_back(key_held_by(*v, ids[i], fmt::format("probe{}-own-{}", nodes, i)));
    fwd_key.push_back(key_held_by(*v, ids[(i + 1) % ids.size()], fmt::format("probe{}-fwd-{}", nodes, i)));
  }
  const double load_before = load1();
  std::vector<double> own, fwd;
  int failures = 0, retries = 0;
  // An owner turn and a forwarded one on connection i; timed unless k < 0.
  auto pair = [&](std::size_t i, int k) {
    for (const bool forwarded : {false, true}) {
      const auto t0 = steady::now();
      auto t = run_turn(*conns[i], forwarded ? fwd_key[i] : own_key[i], fmt::format("probe turn {}", k),
                        fmt::format("probe{}-{}-{}-{}", nodes, i, forwarded ? "fwd" : "own", k), o.retry);
      const double ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
      retries += t.retries;
      if (k < 0) continue;
      if (!t.ok)
        ++failures;
      else
        (forwarded ? fwd : own).push_back(ms);
    }
  };
  for (std::size_t i = 0; i < ids.size(); ++i) pair(i, -1);  // creates the sessions and the node links
  for (int k = 0; k < o.probe_turns; ++k) pair(static_cast<std::size_t>(k) % ids.size(), k);
  for (auto& c : conns) (void)c->close();
  const double load_after = load1();
  fmt::print(
      R"({{"bench":"cluster_forward_latency","nodes":{},"pairs":{},"owner_ms_p50":{:.3f},"owner_ms_p99":{:.3f},"forwarded_ms_p50":{:.3f},"forwarded_ms_p99":{:.3f},"added_ms_p50":{:.3f},"added_ms_p99":{:.3f},"retries":{},"failures":{},"load1_before":{:.2f},"load1_after":{:.2f}}})"
      "\n",
      nodes, own.size(), pct(own, 0.5), pct(own, 0.99), pct(fwd, 0.5), pct(fwd, 0.99), pct(fwd, 0.5) - pct(own, 0.5),
      pct(fwd, 0.99) - pct(own, 0.99), retries, failures, load_before, load_after);
  std::fflush(stdout);
  say("{} nodes, one turn in flight: owner p50 {:.2f} / p99 {:.2f} ms, forwarded p50 {:.2f} / p99 {:.2f} ms "
      "over {} pairs: forwarding adds {:.2f} ms at p50, {:.2f} ms at p99; failures {}; load {:.1f} -> {:.1f}",
      nodes, pct(own, 0.5), pct(own, 0.99), pct(fwd, 0.5), pct(fwd, 0.99), own.size(), pct(fwd, 0.5) - pct(own, 0.5),
      pct(fwd, 0.99) - pct(own, 0.99), failures, load_before, load_after);
  return status::success();
}

std::int64_t table_version(const cluster::blocking_etcd& etcd) {
  auto r = etcd.range(cluster::shard_table_key(k_cluster, "main"));
  return r && !r->kvs.empty() ? r->kvs[0].version : 0;
}

// Two nodes under steady traffic (paced at `rate` turns/s; 0: closed loop), a third starts: the
// settle time and the turns that waited.
status measure_rebalance(cluster_run& run, const options& o, double rate) {
  auto before = read_view(run.etcd());
  if (!before) return status(errc::io_error, "etcd did not answer");
  const std::int64_t version_before = table_version(run.etcd());
  std::vector<conn_plan> plans;
  const auto members = before->members;
  const std::vector<std::string> ids(members.begin(), members.end());
  for (int i = 0; i < o.connections; ++i) {
    conn_plan p;
    p.node = ids[std::size_t(i) % ids.size()];
    p.address = before->address.at(p.node);
    p.key = fmt::format("agent:main:rb-{}", i);
    plans.push_back(std::move(p));
  }
  std::atomic<bool> stop{false};
  std::latch started(1);
  traffic t;
  steady::time_point origin;  // the records' time 0, set before `started` opens
  drive_plan d;
  d.tag = "rb";
  d.stop = &stop;
  d.started = &started;
  d.origin = &origin;
  d.interval_s = rate > 0 ? static_cast<double>(o.connections) / rate : 0;
  std::thread driver([&] { t = drive(plans, d, o.retry); });
  started.wait();
  const double load_before = load1();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.steady_s));
  const double join_s = seconds_since(origin);
  run.start_node("n3");
  auto joined = run.wait_for([](const view& x) { return x.address.count("n3") > 0; }, 30s, "the third node joining");
  const double member_s = seconds_since(origin);
  result<view> after = joined ? run.wait_for(
                                    [](const view& x) {
                                      return settled(x, {"n1", "n2", "n3"});
                                    },
                                    90s, "the table settling on 3 nodes")
                              : result<view>(joined.error());
  const double settled_s = seconds_since(origin);
  // The nodes' owner directories follow etcd at their tick (0.5 s): turns keep running a while
  // after the table settled, so the waits of the last moves are seen.
  std::this_thread::sleep_for(2s);
  stop = true;
  driver.join();
  report_errors(t);
  if (!after) return after.error();
  const std::int64_t version_after = table_version(run.etcd());
  int moved = 0;
  for (int s = 0; s < k_shards; ++s) moved += before->holder(s) != after->holder(s) ? 1 : 0;
  // The steady p99: turns that began after the first second and ended before the join.
  std::vector<double> steady_ms;
  for (const auto& r : t.records)
    if (r.ok && r.start_s >= 1.0 && r.end_s < join_s) steady_ms.push_back(r.ms);
  const double steady_p99 = pct(steady_ms, 0.99), steady_p50 = pct(steady_ms, 0.5);
  const double steady_rate = join_s > 1.0 ? static_cast<double>(steady_ms.size()) / (join_s - 1.0) : 0;
  int window = 0, waited = 0, retried = 0, retries = 0, failures = 0, window_ok = 0;
  double largest = 0;
  // The window: from the third node's start until its directory lag after the table settled
  // (a node reads the owner keys every 0.5 s, so for up to that long it may still send a turn
  // to the old owner, which answers not_owner, or answer owner_unknown).
  const double window_end_s = settled_s + k_directory_lag_s;
  const auto in_window = [&](const turn_record& r) { return r.end_s >= join_s && r.start_s <= window_end_s; };
  for (const auto& r : t.records) {
    if (!in_window(r)) continue;
    ++window;
    retries += r.retries;
    if (!r.ok) {
      ++failures;
      continue;
    }
    ++window_ok;
    const bool w = r.retries > 0 || r.ms > steady_p99;
    retried += r.retries > 0 ? 1 : 0;
    if (w) {
      ++waited;
      largest = std::max(largest, r.ms);
    }
  }
  const double window_rate = static_cast<double>(window_ok) / (window_end_s - join_s);
  const auto [kinds_json, kinds] = failure_kinds(t.records, in_window);
  const auto [steady_kinds_json, steady_kinds] =
      failure_kinds(t.records, [&](const turn_record& r) { return r.start_s >= 1.0 && r.end_s < join_s; });
  const double load_after = load1();
  fmt::print(
      R"({{"bench":"cluster_rebalance","shards":{},"from_nodes":2,"to_nodes":3,"connections":{},"paced_turns_per_s":{:.1f},"settle_s_from_start":{:.3f},"settle_s_from_join":{:.3f},"table_versions":{},"shards_moved":{},"steady_turns":{},"steady_turns_per_s":{:.1f},"steady_ms_p50":{:.3f},"steady_ms_p99":{:.3f},"window_s":{:.3f},"window_turns":{},"window_turns_per_s":{:.1f},"waited_turns":{},"retried_turns":{},"retries":{},"largest_wait_ms":{:.3f},"failures":{},"failure_kinds":{},"steady_failure_kinds":{},"retry_ms":{},"lease_ttl_s":{},"load1_before":{:.2f},"load1_after":{:.2f}}})"
      "\n",
      k_shards, o.connections, rate, settled_s - join_s, settled_s - member_s, version_after - version_before, moved,
      steady_ms.size(), steady_rate, steady_p50, steady_p99, window_end_s - join_s, window, window_rate, waited,
      retried, retries, largest, failures, kinds_json, steady_kinds_json, o.retry.count(), k_ttl_s, load_before,
      load_after);
  std::fflush(stdout);
  say("rebalance 2 -> 3 nodes under {} connections ({}): settled {:.2f} s after the third node's start "
      "({:.2f} s after it joined), {} table versions, {} shards moved; steady before: {:.0f} turns/s, "
      "p50 {:.2f} ms, p99 {:.2f} ms; from the start to 1 s after settling: {} turns ({:.0f} turns/s), "
      "{} waited ({} retried after UNAVAILABLE, {} retries), largest wait {:.1f} ms, failures {} "
      "({}; before the join: {}); load {:.1f} -> {:.1f}",
      o.connections, rate > 0 ? fmt::format("paced at {:.0f} turns/s", rate) : std::string("closed loop"),
      settled_s - join_s, settled_s - member_s, version_after - version_before, moved, steady_rate, steady_p50,
      steady_p99, window, window_rate, waited, retried, retries, largest, failures, kinds, steady_kinds, load_before,
      load_after);
  return status::success();
}

status measure_failover(cluster_run& run, const options& o) {
  const std::vector<std::string> ids = {"n1", "n2", "n3"};
  std::vector<double> failover, rejoin;
  int leader_kills = 0;
  const double load_before = load1();
  for (int k = 0; k < o.kills; ++k) {
    const std::string victim = ids[std::size_t(k) % ids.size()];
    auto v = read_view(run.etcd());
    const bool was_leader = v && v->leader == victim;
    leader_kills += was_leader ? 1 : 0;
    std::set<std::string> rest(ids.begin(), ids.end());
    rest.erase(victim);
    const auto t0 = steady::now();
    run.kill_node(victim);
    auto held = run.wait_for([&](const view& x) { return all_held_by(x, rest); }, std::chrono::seconds(k_ttl_s + 20),
                             fmt::format("kill {}: every shard held by the live nodes", k + 1));
    if (!held) return held.error();
    failover.push_back(seconds_since(t0));
    const auto t1 = steady::now();
    run.start_node(victim);
    auto back = run.wait_for(
        [&](const view& x) {
          return settled(x, {"n1", "n2", "n3"});
        },
        90s, fmt::format("kill {}: {} restarted, the table settling on 3 nodes", k + 1, victim));
    if (!back) return back.error();
    rejoin.push_back(seconds_since(t1));
    say("  kill {} of {}: {}{}: all shards held by live nodes after {:.2f} s; restarted and settled in {:.2f} s", k + 1,
        o.kills, victim, was_leader ? " (the placement leader)" : "", failover.back(), rejoin.back());
  }
  if (failover.empty()) return status::success();
  std::string list;
  for (double x : failover) list += fmt::format("{}{:.3f}", list.empty() ? "" : ",", x);
  const auto [lo, hi] = std::minmax_element(failover.begin(), failover.end());
  const double load_after = load1();
  fmt::print(
      R"({{"bench":"cluster_failover","kills":{},"lease_ttl_s":{},"shards":{},"p50_s":{:.3f},"max_s":{:.3f},"min_s":{:.3f},"leader_kills":{},"rejoin_p50_s":{:.3f},"rejoin_max_s":{:.3f},"times_s":[{}],"load1_before":{:.2f},"load1_after":{:.2f}}})"
      "\n",
      failover.size(), k_ttl_s, k_shards, pct(failover, 0.5), *hi, *lo, leader_kills, pct(rejoin, 0.5),
      *std::max_element(rejoin.begin(), rejoin.end()), list, load_before, load_after);
  std::fflush(stdout);
  say("failover after kill -9 (TTL {} s): all {} shards held by live nodes p50 {:.2f} s, max {:.2f} s, "
      "min {:.2f} s over {} kills ({} of the leader); restart + settle p50 {:.2f} s, max {:.2f} s; "
      "load {:.1f} -> {:.1f}",
      k_ttl_s, k_shards, pct(failover, 0.5), *hi, *lo, failover.size(), leader_kills, pct(rejoin, 0.5),
      *std::max_element(rejoin.begin(), rejoin.end()), load_before, load_after);
  return status::success();
}

// ---- main --------------------------------------------------------------------------------------

const char* k_usage =
    "usage: cluster_bench [--connections C (36)] [--turns T (200)] [--kills K (20)] [--steady-s S (4)]\n"
    "                     [--probe-turns P (200)] [--rebalance-rate R] [--retry-ms MS (100)] [--quick]\n"
    "                     [--sessionrt PATH] [--keep] [--help]\n"
    "Issue #36's figures on this machine: a private etcd and `sessionrt gateway --cluster` nodes on loopback\n"
    "(lease TTL 2 s, 256 shards, one shared state dir, the simulated model).\n"
    "  turns      1, 2, then 3 nodes: C connections spread over the nodes, T turns each (chat.send -> final),\n"
    "             turns/s and latency p50 / p99, owner turns and forwarded turns apart (1/N of the connections\n"
    "             send to the session's owner; the rest go through another node)\n"
    "  probe      with 2 and 3 nodes: P pairs of turns with one turn in flight in the whole cluster, an owner\n"
    "             turn then a forwarded one: the added latency of a hop, p50 / p99, without queueing\n"
    "  rebalance  2 nodes under C connections of steady traffic paced at R turns/s (default: half the 2-node\n"
    "             rate just measured; 0: closed loop), S seconds measured first, then a third node starts: the\n"
    "             time until the table settles, the shards moved, the turns that waited and the longest wait\n"
    "  failover   K kill -9s of a node in turn (n1, n2, n3), each: time until all 256 shards are held by live\n"
    "             nodes; the victim restarted and settled again before the next (K = 0: no failover)\n"
    "  --retry-ms    pause before retrying a retryable UNAVAILABLE (same idempotencyKey)\n"
    "  --quick       C 12, T 10, K 3, S 2, P 30 (about 30 s)\n"
    "  --sessionrt   the sessionrt binary (default: the one built beside this bench, <build>/sessionrt)\n"
    "  --keep        keep the temp dir (state, etcd data, the nodes' logs)\n"
    "One JSON line per figure on stdout (bench/report.mjs reads them), readable lines and progress on stderr.\n"
    "Needs etcd (Debian's etcd-server; scripts/setup.sh installs it; or $SESSIONRT_ETCD_BIN).\n";

std::string default_sessionrt() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("sessionrt") : (self.parent_path().parent_path() / "sessionrt").string();
}

std::optional<options> parse(int argc, char** argv, int& exit_code) {
  options o;
  o.sessionrt = default_sessionrt();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    auto number = [&](double& out) {
      char* end = nullptr;
      out = std::strtod(argv[++i], &end);
      return end && *end == '\0' && out >= 0;
    };
    double x = 0;
    bool ok = true;
    if (a == "--help" || a == "-h") {
      fmt::print("{}", k_usage);
      exit_code = 0;
      return std::nullopt;
    } else if (a == "--quick") {
      o.connections = 12;
      o.turns = 10;
      o.kills = 3;
      o.steady_s = 2;
      o.probe_turns = 30;
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--sessionrt" && has) {
      o.sessionrt = argv[++i];
    } else if (a == "--connections" && has) {
      ok = number(x) && x >= 1;
      o.connections = static_cast<int>(x);
    } else if (a == "--turns" && has) {
      ok = number(x) && x >= 1;
      o.turns = static_cast<int>(x);
    } else if (a == "--kills" && has) {
      ok = number(x);
      o.kills = static_cast<int>(x);
    } else if (a == "--steady-s" && has) {
      ok = number(x) && x >= 1.5;
      o.steady_s = x;
    } else if (a == "--probe-turns" && has) {
      ok = number(x);
      o.probe_turns = static_cast<int>(x);
    } else if (a == "--rebalance-rate" && has) {
      ok = number(x);
      o.rebalance_rate = x;
    } else if (a == "--retry-ms" && has) {
      ok = number(x);
      o.retry = std::chrono::milliseconds(static_cast<int>(x));
    } else {
      fmt::print(stderr, "cluster_bench: unknown option or missing value: '{}'\n{}", a, k_usage);
      exit_code = 2;
      return std::nullopt;
    }
    if (!ok) {
      fmt::print(stderr, "cluster_bench: bad value for {} (connections and turns >= 1, steady-s >= 1.5, others >= 0)\n",
                 a);
      exit_code = 2;
      return std::nullopt;
    }
  }
  return o;
}

int fail(const status& st) {
  fmt::print(stderr, "cluster_bench: {}\n", st.message());
  return 1;
}

int run_all(const options& o, const std::string& root, const std::string& etcd_bin) {
  etcd_server etcd(etcd_bin, root);
  if (auto st = etcd.start(); !st.ok()) return fail(st);
  auto client = cluster::blocking_etcd::connect({etcd.endpoint(), 2000});
  if (!client) return fail(client.error());
  cluster_run run(o, root, etcd, std::move(*client));
  say("etcd at {}, state dir {}, nodes' logs in {}", etcd.endpoint(), run.state_dir(), root);

  std::set<std::string> ids;
  double two_node_rate = 0;
  for (int n = 1; n <= 3; ++n) {
    const std::string id = fmt::format("n{}", n);
    ids.insert(id);
    if (n == 3) {
      const double rate = o.rebalance_rate < 0 ? two_node_rate / 2 : o.rebalance_rate;
      if (auto st = measure_rebalance(run, o, rate); !st.ok()) return fail(st);
    } else {
      const auto t0 = steady::now();
      run.start_node(id);
      auto v = run.wait_for([&](const view& x) { return settled(x, ids); }, 90s, fmt::format("{} node(s) settling", n));
      if (!v) return fail(v.error());
      say("{} node(s) settled {:.2f} s after {}'s start", n, seconds_since(t0), id);
    }
    auto rate = measure_turns(run, o, n);
    if (!rate) return fail(rate.error());
    if (n == 2) two_node_rate = *rate;
    if (n >= 2 && o.probe_turns > 0)
      if (auto st = measure_forward_latency(run, o, n); !st.ok()) return fail(st);
  }
  if (auto st = measure_failover(run, o); !st.ok()) return fail(st);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 0;
  auto o = parse(argc, argv, code);
  if (!o) return code;
  const auto etcd_bin = testing::etcd_binary();
  if (!etcd_bin) {
    const char* env = std::getenv("SESSIONRT_ETCD_BIN");
    if (env != nullptr && *env != '\0')
      fmt::print(stderr, "cluster_bench: $SESSIONRT_ETCD_BIN ({}) is not an executable file\n", env);
    else
      fmt::print(stderr,
                 "cluster_bench: etcd not found on PATH: install Debian's etcd-server (apt-get install etcd-server, "
                 "as scripts/setup.sh does), or name the binary in $SESSIONRT_ETCD_BIN\n");
    return 2;
  }
  if (::access(o->sessionrt.c_str(), X_OK) != 0) {
    fmt::print(stderr,
               "cluster_bench: {} is not an executable: build it (cmake --build {} --target sessionrt) or name it "
               "with --sessionrt PATH\n",
               o->sessionrt, std::filesystem::path(o->sessionrt).parent_path().string());
    return 2;
  }
  std::string root = (std::filesystem::temp_directory_path() / "sessionrt-cluster-bench-XXXXXX").string();
  if (!::mkdtemp(root.data())) {
    fmt::print(stderr, "cluster_bench: cannot make a temp dir: {}\n", std::strerror(errno));
    return 2;
  }
  ::signal(SIGINT, on_signal);
  ::signal(SIGTERM, on_signal);
  ::signal(SIGPIPE, SIG_IGN);
  say("{} connections x {} turns per node count, {} kills, sessionrt {}, {} cores, load {:.1f}", o->connections,
      o->turns, o->kills, o->sessionrt, std::thread::hardware_concurrency(), load1());
  const int rc = run_all(*o, root, *etcd_bin);
  if (o->keep || rc != 0) {
    say("kept {} (state, etcd data, logs)", root);
  } else {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  return rc;
}
