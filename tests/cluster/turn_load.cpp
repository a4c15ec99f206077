#include "tests/cluster/turn_load.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>

#include <boost/json.hpp>

#include "gateway/forward_rule.hpp"
#include "gateway/gateway_client.hpp"

namespace sessionrt::testing {
namespace {

namespace bj = boost::json;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto k_send_timeout = 12s;    // above the forwarder's own 10 s bound for chat.send
constexpr auto k_final_timeout = 30s;   // started -> final
constexpr auto k_connect_timeout = 2s;  // a stopped node accepts TCP but never says hello
constexpr auto k_avoid = 3s;            // how long an address that failed is not picked

std::string text_of(const bj::value& message) {
  const auto* m = message.if_object();
  const auto* content = m ? m->if_contains("content") : nullptr;
  if (!content) return "";
  if (content->is_string()) return std::string(content->as_string());
  std::string out;
  if (content->is_array())
    for (const auto& part : content->as_array())
      if (const auto* p = part.if_object(); p && p->if_contains("text") && p->at("text").is_string())
        out += std::string(p->at("text").as_string());
  return out;
}

// One thread's connections, one per node address, opened on first use.
class connections {
 public:
  connections(std::string token, std::uint32_t seed) : token_(std::move(token)), rng_(seed) {}
  // A random address not failed lately (any, if all did); "" when none is known.
  std::string pick(const std::vector<std::string>& all) {
    std::vector<std::string> ok;
    const auto now = steady::now();
    for (const auto& a : all)
      if (auto it = avoid_.find(a); it == avoid_.end() || it->second < now) ok.push_back(a);
    const auto& from = ok.empty() ? all : ok;
    if (from.empty()) return "";
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng_)];
  }
  gateway::gateway_client* get(const std::string& address, std::string& error) {
    if (auto it = open_.find(address); it != open_.end()) return it->second.get();
    auto where = gateway::parse_address(address);
    if (!where) {
      error = "bad node address " + address;
      return nullptr;
    }
    gateway::gateway_client_options o;
    o.host = where->host;
    o.port = where->port;
    o.connect_timeout = k_connect_timeout;
    o.identity.token = token_;
    o.identity.scopes = {"operator.admin"};
    auto c = gateway::gateway_client::connect(o);
    if (!c) {
      error = "connect to " + address + ": " + c.error().message();
      failed(address);
      return nullptr;
    }
    return (open_[address] = std::move(*c)).get();
  }
  // The connection is in an unknown state (closed, silent, out of step): dropped, its node avoided.
  void failed(const std::string& address) {
    open_.erase(address);
    avoid_[address] = steady::now() + k_avoid;
  }
  std::mt19937& rng() { return rng_; }

 private:
  std::string token_;
  std::mt19937 rng_;
  std::map<std::string, std::unique_ptr<gateway::gateway_client>> open_;
  std::map<std::string, steady::time_point> avoid_;
};

// How one attempt ended.
enum class attempt { done, retry, retry_unknown };

// One chat.send through `address` and the run's events to its close.
attempt try_once(load_turn& t, connections& conns, const std::string& address) {
  std::string error;
  gateway::gateway_client* c = conns.get(address, error);
  if (!c) {
    t.error = error;
    ++t.answers["connect failed"];
    return attempt::retry;
  }
  ++t.sends;
  auto r = c->request("chat.send", bj::object{{"sessionKey", t.key}, {"message", t.text}, {"idempotencyKey", t.run_id}},
                      k_send_timeout);
  if (!r) {
    t.error = address + ": " + r.error().message();
    // A refusal names itself "gateway refused ..." (gateway_client.hpp); anything else is the
    // connection: the send may or may not have reached an owner.
    if (r.error().message().rfind("gateway refused", 0) != 0) {
      ++t.answers["send: connection failed"];
      conns.failed(address);
      return attempt::retry_unknown;
    }
    const auto& e = c->last_error();
    if (e && e->code == "UNAVAILABLE" && e->retryable) {
      // The forwarder's timeout or lost link: the owner may have taken the run.
      const auto* d = e->details.if_object();
      const auto* why = d ? d->if_contains("reason") : nullptr;
      const bool unknown = why && (*why == "node_timeout" || *why == "link_lost");
      ++t.answers["UNAVAILABLE " + (why && why->is_string() ? std::string(why->as_string()) : std::string("?"))];
      return unknown ? attempt::retry_unknown : attempt::retry;
    }
    ++t.answers["refused " + (e ? e->code : std::string("?"))];
    t.end = turn_end::failed;
    return attempt::done;
  }
  const auto* status = r->is_object() ? r->as_object().if_contains("status") : nullptr;
  const std::string state = status && status->is_string() ? std::string(status->as_string()) : "";
  if (state != "started") ++t.answers[state + (state == "in_flight" ? " via " + address : "")];
  if (state == "ok") {
    t.end = turn_end::deduped;
    return attempt::done;
  }
  if (state == "in_flight") return attempt::retry_unknown;
  if (state != "started") {
    t.error = address + ": chat.send answered " + bj::serialize(*r);
    t.end = turn_end::failed;
    return attempt::done;
  }
  const auto until = steady::now() + k_final_timeout;
  while (steady::now() < until) {
    auto ev = c->next_event(std::chrono::duration_cast<std::chrono::milliseconds>(until - steady::now()));
    if (!ev) {
      ++t.answers["started/connection failed"];
      t.error = address + ": waiting for the run's events: " + ev.error().message();
      conns.failed(address);
      return attempt::retry_unknown;
    }
    if (ev->event != "chat" || !ev->payload.is_object()) continue;
    const auto& p = ev->payload.as_object();
    if (!p.if_contains("runId") || p.at("runId") != bj::value(t.run_id.c_str())) continue;
    const auto* s = p.if_contains("state");
    const std::string run_state = s && s->is_string() ? std::string(s->as_string()) : "";
    if (run_state == "delta") continue;
    ++t.answers["started/" + run_state];
    if (run_state == "final") {
      if (const auto* m = p.if_contains("message")) t.reply = text_of(*m);
      t.end = turn_end::acknowledged;
      return attempt::done;
    }
    const auto* em = p.if_contains("errorMessage");
    t.error = address + ": run " + run_state + (em && em->is_string() ? ": " + std::string(em->as_string()) : "");
    if (run_state == "error") {
      // The run ended unacknowledged (a lapsed write permit, a fenced shard). Its owner keeps
      // the error for this idempotencyKey and answers a retry with it (as OpenClaw does), so a
      // client that wants the turn sends it again under a new key. Its user line may already be
      // stored: the history allows a second copy of a turn sent more than once.
      t.run_id = "load-" + t.text.substr(0, t.text.find(' ')) + "-" + std::to_string(t.seq) + "-again-" +
                 std::to_string(++t.reruns);
      return attempt::retry_unknown;
    }
    t.end = turn_end::failed;
    return attempt::done;
  }
  ++t.answers["started/no final"];
  t.error = address + ": no final event within " + std::to_string(k_final_timeout.count()) + " s";
  conns.failed(address);
  return attempt::retry_unknown;
}

}  // namespace

const char* to_string(turn_end e) {
  switch (e) {
    case turn_end::pending: return "pending";
    case turn_end::acknowledged: return "acknowledged";
    case turn_end::deduped: return "deduped";
    case turn_end::failed: return "failed";
    case turn_end::unanswered: return "unanswered";
  }
  return "?";
}

std::string key_tag(std::size_t index) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%02zu", index);
  return buf;
}

std::string turn_text(const std::string& tag, int seq) {
  char buf[16];
  std::snprintf(buf, sizeof buf, " #%04d", seq);
  return tag + buf;
}

turn_load::turn_load(load_options options) : options_(std::move(options)) {}

turn_load::~turn_load() { stop(); }

void turn_load::start() {
  addresses_ = options_.addresses();
  poller_ = std::thread([this] { poll_addresses(); });
  for (int i = 0; i < options_.threads; ++i) threads_.emplace_back([this, i] { run(i); });
}

void turn_load::stop() {
  stop_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  if (poller_.joinable()) poller_.join();
}

std::vector<load_turn> turn_load::turns() const {
  std::lock_guard g(mu_);
  return {turns_.begin(), turns_.end()};
}

std::vector<std::string> turn_load::addresses() const {
  std::lock_guard g(mu_);
  return addresses_;
}

void turn_load::poll_addresses() {
  while (!stop_) {
    std::this_thread::sleep_for(200ms);
    auto now = options_.addresses();
    if (now.empty()) continue;
    std::lock_guard g(mu_);
    addresses_ = std::move(now);
  }
}

void turn_load::run(int thread) {
  connections conns(options_.token, options_.seed * 7919u + static_cast<std::uint32_t>(thread));
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(thread); i < options_.keys.size();
       i += static_cast<std::size_t>(options_.threads))
    mine.push_back(i);
  std::vector<int> next(mine.size(), 1);
  while (!stop_ && !mine.empty()) {
    for (std::size_t m = 0; m < mine.size() && !stop_; ++m) {
      load_turn t;
      t.key = options_.keys[mine[m]];
      t.seq = next[m]++;
      t.text = turn_text(key_tag(mine[m]), t.seq);
      t.run_id = "load-" + key_tag(mine[m]) + "-" + std::to_string(t.seq);
      t.sent = steady::now();
      load_turn* slot;
      {
        std::lock_guard g(mu_);
        turns_.push_back(t);
        slot = &turns_.back();  // a deque keeps its elements where they are on push_back
      }
      bool reached = false;  // an attempt may have reached an owner
      for (int n = 0; t.end == turn_end::pending; ++n) {
        if (steady::now() - t.sent > options_.turn_deadline) {
          t.end = reached ? turn_end::unanswered : turn_end::failed;
          break;
        }
        if (n > 0) {
          ++t.waits;
          std::this_thread::sleep_for(std::chrono::milliseconds(
              std::uniform_int_distribution<int>(50, 150)(conns.rng())));
        }
        const std::string address = conns.pick(addresses());
        if (address.empty()) {
          t.error = "no node address known";
          continue;
        }
        const attempt a = try_once(t, conns, address);
        reached = reached || a == attempt::retry_unknown;
      }
      t.ended = steady::now();
      {
        std::lock_guard g(mu_);
        *slot = t;
      }
      ++ended_;
      std::this_thread::sleep_for(options_.pause);
    }
  }
}

}  // namespace sessionrt::testing
