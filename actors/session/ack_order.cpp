#include "actors/session/ack_order.hpp"

#include <algorithm>

namespace sessionrt::actors {

void ack_order::push(sink s, turn_outcome outcome, waits w) { pending_.push_back({std::move(s), std::move(outcome), w}); }

void ack_order::synced(std::uint64_t file, std::uint64_t seq, const std::string& error) {
  for (auto& p : pending_) {
    bool matched = false;
    if (p.w.sync_seq != 0 && p.w.sync_file == file && p.w.sync_seq <= seq) {
      p.w.sync_seq = 0;
      matched = true;
    }
    if (file == 0 && p.w.rows_seq != 0 && p.w.rows_seq <= seq) {
      p.w.rows_seq = 0;
      matched = true;
    }
    if (matched && !error.empty()) {
      p.outcome.st = status(errc::io_error, "transcript sync failed: " + error);
      p.outcome.reply.reset();
    }
  }
}

void ack_order::stored(const std::string& error) {
  for (auto& p : pending_)
    if (p.w.store) {
      p.w.store = false;
      if (!error.empty()) p.outcome.st = status(errc::io_error, "saving the session row failed: " + error);
      return;
    }
}

std::size_t ack_order::waiting_on_sync() const {
  return static_cast<std::size_t>(
      std::count_if(pending_.begin(), pending_.end(), [](const pending& p) { return p.w.sync_seq != 0 || p.w.rows_seq != 0; }));
}

std::size_t ack_order::waiting_on_store() const {
  return static_cast<std::size_t>(std::count_if(pending_.begin(), pending_.end(), [](const pending& p) { return p.w.store; }));
}

std::vector<std::pair<ack_order::sink, turn_outcome>> ack_order::take_ready() {
  std::vector<std::pair<sink, turn_outcome>> ready;
  std::size_t n = 0;
  while (n < pending_.size() && pending_[n].w.ready()) ++n;
  if (n == 0) return ready;
  ready.reserve(n);
  for (std::size_t i = 0; i < n; ++i) ready.emplace_back(std::move(pending_[i].s), std::move(pending_[i].outcome));
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  if (pending_.empty()) pending_.shrink_to_fit();  // nothing kept between turns
  return ready;
}

}  // namespace sessionrt::actors
