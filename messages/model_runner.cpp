#include "messages/model_runner.hpp"

namespace sessionrt {

std::vector<std::string> steer_inbox::take() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out;
  out.swap(waiting_);
  taken_.insert(taken_.end(), out.begin(), out.end());
  return out;
}

void steer_inbox::put(std::string text) { (void)try_put(std::move(text)); }

bool steer_inbox::try_put(std::string text) {
  std::lock_guard<std::mutex> g(mu_);
  if (closed_) return false;
  waiting_.push_back(std::move(text));
  return true;
}

std::vector<std::string> steer_inbox::close() {
  std::lock_guard<std::mutex> g(mu_);
  closed_ = true;
  std::vector<std::string> out;
  out.swap(waiting_);
  return out;
}

std::vector<std::string> steer_inbox::taken() const {
  std::lock_guard<std::mutex> g(mu_);
  return taken_;
}

void cancellation::cancel() {
  std::vector<std::function<void()>> fns;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (cancelled_.exchange(true)) return;
    fns.swap(callbacks_);
  }
  for (auto& fn : fns) fn();
}

void cancellation::on_cancel(std::function<void()> fn) const {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!cancelled_.load()) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

bool model_completion::complete(result<boost::json::object> reply) {
  if (done_.exchange(true)) {
    ++duplicates_;
    return false;
  }
  auto s = std::move(sink_);
  sink_ = nullptr;
  if (s) s(std::move(reply));
  return true;
}

}  // namespace sessionrt
