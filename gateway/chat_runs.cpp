#include "gateway/chat_runs.hpp"

namespace sessionrt::gateway {

chat_runs::begun chat_runs::begin(const std::string& key, const std::string& session_key, const std::string& agent_id,
                                  std::uint64_t origin) {
  std::lock_guard lock(mu_);
  if (auto it = seen_.find(key); it != seen_.end()) {
    bool running = false;
    if (auto rs = run_session_.find(it->second); rs != run_session_.end())
      for (const auto& r : by_session_.at(rs->second)) running = running || (r.id == it->second && !r.held);
    return {it->second, true, running};
  }
  seen_[key] = key;
  seen_order_.push_back(key);
  if (seen_order_.size() > kMaxRemembered) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
  run r;
  r.id = key;
  r.session_key = session_key;
  r.agent_id = agent_id;
  r.origin = origin;
  by_session_[session_key].push_back(std::move(r));
  run_session_[key] = session_key;
  return {key, false, true};
}

chat_runs::run* chat_runs::bus_target(const std::string& session_key) {
  auto it = by_session_.find(session_key);
  if (it == by_session_.end()) return nullptr;
  for (auto& r : it->second)
    if (!r.turn_ended) return &r;
  return nullptr;
}

void chat_runs::close(std::deque<run>& q, std::deque<run>::iterator it, const closing_fn& send) {
  finished f{it->id, it->session_key, it->agent_id, it->origin, it->seq + 1, std::move(it->text), std::move(*it->held)};
  const std::string session = it->session_key;
  run_session_.erase(it->id);
  --held_;
  q.erase(it);
  if (q.empty()) by_session_.erase(session);
  send(f);
}

void chat_runs::on_piece(const std::string& session_key, const std::string& piece, bool discarded,
                         std::int64_t index, const delta_fn& send) {
  std::lock_guard lock(mu_);
  run* r = bus_target(session_key);
  if (!r) return;
  if (index == 0) r->streaming = true;
  if (!r->streaming) return;  // the tail of a run already gone
  if (discarded) {
    r->text.clear();
    return;
  }
  if (piece.empty()) return;
  r->text += piece;
  send(delta{r->id, r->session_key, r->agent_id, r->origin, ++r->seq, r->text, piece});
}

void chat_runs::on_turn_end(const std::string& session_key, const closing_fn& send) {
  std::lock_guard lock(mu_);
  auto qs = by_session_.find(session_key);
  if (qs == by_session_.end()) return;
  auto& q = qs->second;
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it->turn_ended) continue;
    if (it->held) close(q, it, send);
    else it->turn_ended = true;  // acknowledged later: its closing event need not wait
    return;
  }
}

chat_runs::ack chat_runs::finish(const std::string& run_id, turn_outcome outcome, bool wait_for_turn_end,
                                 const closing_fn& send) {
  std::lock_guard lock(mu_);
  auto rs = run_session_.find(run_id);
  if (rs == run_session_.end()) return ack::unknown;
  auto& q = by_session_[rs->second];
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it->id != run_id) continue;
    if (it->held) return ack::unknown;  // acknowledged twice: the first one counts
    it->held = std::move(outcome);
    ++held_;
    if (wait_for_turn_end && !it->turn_ended) return ack::held;
    close(q, it, send);
    return ack::sent;
  }
  return ack::unknown;
}

bool chat_runs::expire(const std::string& run_id, const closing_fn& send) {
  std::lock_guard lock(mu_);
  auto rs = run_session_.find(run_id);
  if (rs == run_session_.end()) return false;
  auto& q = by_session_[rs->second];
  for (auto it = q.begin(); it != q.end(); ++it)
    if (it->id == run_id) {
      if (!it->held) return false;
      close(q, it, send);
      return true;
    }
  return false;
}

std::vector<std::string> chat_runs::open_runs(const std::string& session_key) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  if (auto it = by_session_.find(session_key); it != by_session_.end())
    for (const auto& r : it->second)
      if (!r.held) out.push_back(r.id);
  return out;
}

bool chat_runs::has_open_run(const std::string& session_key) const { return !open_runs(session_key).empty(); }

std::size_t chat_runs::open_count() const {
  std::lock_guard lock(mu_);
  return run_session_.size() - held_;
}

std::size_t chat_runs::held_count() const {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace sessionrt::gateway
