#include "gateway/chat_runs.hpp"

namespace sessionrt::gateway {

chat_runs::begun chat_runs::begin(const std::string& key, const std::string& session_key, const std::string& agent_id) {
  std::lock_guard lock(mu_);
  if (auto it = seen_.find(key); it != seen_.end())
    return {it->second, true, run_session_.count(it->second) > 0};
  seen_[key] = key;
  seen_order_.push_back(key);
  if (seen_order_.size() > kMaxRemembered) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
  by_session_[session_key].push_back(run{key, session_key, agent_id, 0, {}, false});
  run_session_[key] = session_key;
  return {key, false, true};
}

std::optional<chat_runs::delta> chat_runs::on_piece(const std::string& session_key, const std::string& piece,
                                                    bool discarded, std::int64_t index) {
  std::lock_guard lock(mu_);
  auto it = by_session_.find(session_key);
  if (it == by_session_.end() || it->second.empty()) return std::nullopt;
  run& r = it->second.front();
  if (index == 0) r.streaming = true;
  if (!r.streaming) return std::nullopt;  // the tail of the run before this one
  if (discarded) {
    r.text.clear();
    return std::nullopt;
  }
  if (piece.empty()) return std::nullopt;
  r.text += piece;
  return delta{r.id, r.session_key, r.agent_id, ++r.seq, r.text, piece};
}

std::optional<chat_runs::finished> chat_runs::finish(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto rs = run_session_.find(run_id);
  if (rs == run_session_.end()) return std::nullopt;
  auto& q = by_session_[rs->second];
  std::optional<finished> out;
  for (auto it = q.begin(); it != q.end(); ++it)
    if (it->id == run_id) {
      out = finished{it->id, it->session_key, it->agent_id, it->seq + 1, it->text};
      q.erase(it);
      break;
    }
  if (q.empty()) by_session_.erase(rs->second);
  run_session_.erase(rs);
  return out;
}

std::vector<std::string> chat_runs::open_runs(const std::string& session_key) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  if (auto it = by_session_.find(session_key); it != by_session_.end())
    for (const auto& r : it->second) out.push_back(r.id);
  return out;
}

bool chat_runs::has_open_run(const std::string& session_key) const {
  std::lock_guard lock(mu_);
  auto it = by_session_.find(session_key);
  return it != by_session_.end() && !it->second.empty();
}

std::size_t chat_runs::open_count() const {
  std::lock_guard lock(mu_);
  return run_session_.size();
}

}  // namespace sessionrt::gateway
