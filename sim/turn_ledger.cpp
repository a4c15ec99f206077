#include "sim/turn_ledger.hpp"

namespace sessionrt::sim {

void turn_ledger::sent(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  ++inflight_;
  ++inflight_keys_[key];
}

void turn_ledger::answered(const std::string& key, const std::string& text, const turn_outcome& out) {
  std::lock_guard<std::mutex> g(mu_);
  --inflight_;
  if (auto it = inflight_keys_.find(key); it != inflight_keys_.end() && --it->second <= 0) inflight_keys_.erase(it);
  if (!out.st.ok()) ++failed_turns_;
  if (out.st.ok() && !out.session_id.empty()) {
    auto& a = acked_[out.session_key];
    if (a.session_id != out.session_id) a = acked_session{out.session_id, {}, 0};
    if (out.command.empty()) {  // a command's text is not stored as a message
      a.texts.push_back(text);
      if (a.texts.size() > kAckedKept) a.texts.pop_front();
      ++a.count;
    }
  }
}

void turn_ledger::note(bool touches_rows) {
  if (touches_rows) rows_touched_.fetch_add(1);
  progress_.fetch_add(1);
  // Under the lock: a waiter that just checked its predicate is then inside wait() already.
  std::lock_guard<std::mutex> g(mu_);
  cv_.notify_all();
}

bool turn_ledger::wait_for(std::chrono::milliseconds wall, const std::function<bool()>& done) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, wall, done);
}

std::int64_t turn_ledger::inflight() const {
  std::lock_guard<std::mutex> g(mu_);
  return inflight_;
}

std::int64_t turn_ledger::failed_turns() const {
  std::lock_guard<std::mutex> g(mu_);
  return failed_turns_;
}

std::size_t turn_ledger::keys_in_flight(const std::function<bool(const std::string&)>& pred) const {
  std::lock_guard<std::mutex> g(mu_);
  std::size_t n = 0;
  for (const auto& [k, count] : inflight_keys_)
    if (count > 0 && pred(k)) ++n;
  return n;
}

std::map<std::string, acked_session> turn_ledger::acked() const {
  std::lock_guard<std::mutex> g(mu_);
  return acked_;
}

void turn_ledger::forget_inflight() {
  std::lock_guard<std::mutex> g(mu_);
  inflight_ = 0;
  inflight_keys_.clear();
}

}  // namespace sessionrt::sim
