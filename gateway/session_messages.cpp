#include "gateway/session_messages.hpp"

#include <algorithm>

#include "gateway/chat_runs.hpp"
#include "gateway/message_identity.hpp"
#include "gateway/session_rows.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

void session_messages::subscribe(std::uint64_t conn, const std::string& key, mark baseline) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = by_key_.try_emplace(key);
  if (fresh || it->second.conns.empty()) it->second.last = std::move(baseline);
  if (!it->second.conns.insert(conn).second) return;
  order_.emplace_back(conn, key);
  while (order_.size() > kMaxSubscriptions) {
    auto [c, k] = order_.front();
    order_.pop_front();
    if (auto s = by_key_.find(k); s != by_key_.end()) s->second.conns.erase(c);
  }
}

bool session_messages::unsubscribe(std::uint64_t conn, const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end() || !it->second.conns.erase(conn)) return false;
  order_.erase(std::remove(order_.begin(), order_.end(), std::make_pair(conn, key)), order_.end());
  return true;
}

std::vector<std::uint64_t> session_messages::subscribers(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return {};
  return {it->second.conns.begin(), it->second.conns.end()};
}

bool session_messages::watched(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(key);
  return it != by_key_.end() && !it->second.conns.empty();
}

std::size_t session_messages::size() const {
  std::lock_guard lock(mu_);
  return order_.size();
}

bool session_messages::begin_read(const std::string& key) {
  std::lock_guard lock(mu_);
  auto& s = by_key_[key];
  if (s.reading) {
    s.again = true;
    return false;
  }
  s.reading = true;
  s.again = false;
  return true;
}

bool session_messages::end_read(const std::string& key) {
  std::lock_guard lock(mu_);
  auto& s = by_key_[key];
  if (s.again) {
    s.again = false;
    return true;
  }
  s.reading = false;
  return false;
}

session_messages::mark session_messages::last(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(key);
  return it == by_key_.end() ? mark{} : it->second.last;
}

void session_messages::set_last(const std::string& key, mark m) {
  std::lock_guard lock(mu_);
  by_key_[key].last = std::move(m);
}

namespace {

constexpr std::size_t kMaxPushedAtOnce = 200;  // a burst larger than this is read as its last page

// On a method worker: the messages stored past last_seq, to every subscriber.
void push_new_messages(gateway_core& core, const std::string& key, const std::string& agent_id) {
  auto& reg = *core.messages;
  if (!reg.begin_read(key)) return;
  do {
    if (core.rt->stopped()) break;
    const session_messages::mark last = reg.last(key);
    auto h = core.rt->history(key, kMaxPushedAtOnce);
    if (!h.ok()) continue;
    // Another transcript (a reset): all of its messages are new.
    const bool same = h->session_id == last.session_id;
    // The run of the page's first turn: the user message before the new ones, when on the page.
    std::string run;
    attach_identities(h->messages, h->ids, h->seqs, run);
    bj::object session;
    if (auto row = core.rt->session(key, agent_id); row.ok() && row->has_value()) {
      const auto d = defaults_of(*core.rt, core.default_provider, core.default_model);
      session = session_row_json({agent_id, key, std::move(**row)}, d, core.runs->open_runs(key));
    }
    session_messages::mark now{h->session_id, same ? last.offset : std::nullopt};
    for (std::size_t i = 0; i < h->messages.size(); ++i) {
      const std::uint64_t at = i < h->offsets.size() ? h->offsets[i] : 0;
      if ((same && last.offset && at <= *last.offset) || !h->messages[i].is_object()) continue;
      const auto& m = h->messages[i].get_object();
      if (const auto* role = m.if_contains("role"); role && *role == "compactionSummary") continue;  // not stored
      const auto& meta = m.at("__openclaw").get_object();
      bj::object payload{{"sessionKey", key},
                         {"agentId", agent_id},
                         {"message", m},
                         {"messageId", meta.at("id")},
                         {"messageSeq", meta.at("seq")}};
      if (const auto* r = meta.if_contains("runId")) payload["runId"] = *r;
      if (!session.empty()) payload["session"] = session;
      for (auto conn : reg.subscribers(key)) core.sink->event_to(conn, "session.message", payload);
      now.offset = std::max(now.offset.value_or(0), at);
    }
    reg.set_last(key, std::move(now));
  } while (reg.end_read(key));
}

}  // namespace

void session_message_appended(gateway_core& core, const lifecycle_event& e) {
  if (!core.messages || !core.sink || !core.messages->watched(e.session_key)) return;
  core.sink->run_later([c = &core, key = e.session_key, agent = e.agent_id] { push_new_messages(*c, key, agent); });
}

}  // namespace sessionrt::gateway
