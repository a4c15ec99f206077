#include "gateway/chat_runs.hpp"

#include <algorithm>

namespace sessionrt::gateway {

chat_runs::begun chat_runs::begin(const std::string& key, const std::string& session_key, const std::string& agent_id,
                                  std::uint64_t origin) {
  std::lock_guard lock(mu_);
  if (auto it = seen_.find(key); it != seen_.end()) {
    auto r = runs_.find(it->second);
    begun b{it->second, true, r != runs_.end() && !r->second.held, std::nullopt};
    if (auto f = failed_.find(it->second); f != failed_.end()) b.error = f->second;
    return b;
  }
  seen_[key] = key;
  seen_order_.push_back(key);
  if (seen_order_.size() > kMaxRemembered) {
    if (auto f = seen_.find(seen_order_.front()); f != seen_.end()) failed_.erase(f->second);
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
  run r;
  r.id = key;
  r.session_key = session_key;
  r.agent_id = agent_id;
  r.origin = origin;
  runs_.emplace(key, std::move(r));
  by_session_[session_key].push_back(key);
  return {key, false, true, std::nullopt};
}

void chat_runs::forget_key(const std::string& key) {
  if (seen_.erase(key) == 0) return;
  seen_order_.erase(std::remove(seen_order_.begin(), seen_order_.end(), key), seen_order_.end());
}

void chat_runs::close(std::map<std::string, run>::iterator it, const closing_fn& send) {
  run& r = it->second;
  finished f{r.id, r.session_key, r.agent_id, r.origin, r.seq + 1, std::move(r.text), std::move(*r.held)};
  auto s = by_session_.find(r.session_key);
  if (s != by_session_.end()) {
    s->second.erase(std::remove(s->second.begin(), s->second.end(), r.id), s->second.end());
    if (s->second.empty()) by_session_.erase(s);
  }
  --held_;
  // A turn that ran and failed keeps its error for a retry of its key (begin()); one refused
  // before its turn (not the owner, the lock busy, too big: nothing stored) forgets the key, so
  // a retry runs it, as OpenClaw caches no "client-retry" failure. An aborted run is neither.
  if (!f.outcome.st.ok() && f.outcome.st.code() != errc::cancelled) {
    if (f.outcome.turn_event)
      failed_[r.id] = f.outcome.st.message();
    else
      forget_key(r.id);
  }
  runs_.erase(it);
  send(f);
}

void chat_runs::on_piece(const std::string& run_id, const std::string& piece, bool discarded, const delta_fn& send) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || it->second.turn_ended) return;
  run& r = it->second;
  if (discarded) {
    r.text.clear();
    return;
  }
  if (piece.empty()) return;
  r.text += piece;
  send(delta{r.id, r.session_key, r.agent_id, r.origin, ++r.seq, r.text, piece});
}

void chat_runs::on_turn_end(const std::string& run_id, const closing_fn& send) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  if (it->second.held) close(it, send);
  else it->second.turn_ended = true;  // acknowledged later: its closing event need not wait
}

chat_runs::ack chat_runs::finish(const std::string& run_id, turn_outcome outcome, bool wait_for_turn_end,
                                 const closing_fn& send) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || it->second.held) return ack::unknown;  // acknowledged twice: the first one counts
  it->second.held = std::move(outcome);
  ++held_;
  if (wait_for_turn_end && !it->second.turn_ended) return ack::held;
  close(it, send);
  return ack::sent;
}

bool chat_runs::expire(const std::string& run_id, const closing_fn& send) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || !it->second.held) return false;
  close(it, send);
  return true;
}

std::vector<std::string> chat_runs::open_runs(const std::string& session_key) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  if (auto s = by_session_.find(session_key); s != by_session_.end())
    for (const auto& id : s->second)
      if (auto r = runs_.find(id); r != runs_.end() && !r->second.held) out.push_back(id);
  return out;
}

bool chat_runs::has_open_run(const std::string& session_key) const { return !open_runs(session_key).empty(); }

std::size_t chat_runs::open_count() const {
  std::lock_guard lock(mu_);
  return runs_.size() - held_;
}

std::size_t chat_runs::held_count() const {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace sessionrt::gateway
