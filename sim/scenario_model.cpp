#include "sim/scenario_model.hpp"

#include <cmath>

namespace sessionrt::sim {

namespace {
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t hash_text(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}
double unit(std::uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)

runtime::simulated_model_options inner_options(const model_spec& spec) {
  auto o = spec.options;
  o.latency = {};  // the wrapper keeps time
  o.timers = nullptr;
  o.stream_chunk_bytes = 0;
  return o;
}
}  // namespace

scenario_model::scenario_model(manual_clock& clock, const model_spec& spec, std::uint64_t seed)
    : clock_(clock), spec_(spec), seed_(seed), inner_(clock, inner_options(spec)) {}

std::int64_t scenario_model::draw_latency(std::uint64_t h) const {
  const auto& l = spec_.options.latency;
  using shape = runtime::simulated_latency::shape;
  switch (l.kind) {
    case shape::fixed:
      return l.ms;
    case shape::uniform:
      return l.min_ms + static_cast<std::int64_t>(unit(mix(h ^ 1)) * static_cast<double>(l.max_ms - l.min_ms + 1));
    case shape::lognormal: {
      const double u1 = std::max(unit(mix(h ^ 2)), 1e-12), u2 = unit(mix(h ^ 3));
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      auto ms = static_cast<std::int64_t>(std::llround(static_cast<double>(l.ms) * std::exp(l.sigma * z)));
      if (l.max_ms > 0) ms = std::min(ms, l.max_ms);
      return std::max<std::int64_t>(ms, 0);
    }
  }
  return 0;
}

void scenario_model::start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
                           std::shared_ptr<const cancellation> cancel) {
  const std::int64_t now = clock_.now_ms();
  std::uint64_t n = 0, call = 0;
  {
    std::lock_guard<std::mutex> g(mu_);
    n = ++calls_by_key_[request->session_key];
    call = next_call_++;
  }
  const std::uint64_t h = mix(seed_ ^ mix(hash_text(request->session_key) ^ mix(n)));
  const std::int64_t latency = draw_latency(h);
  result<boost::json::object> answer = status(errc::io_error, "simulated model failure");
  bool failed = false;
  if (unit(mix(h ^ 4)) < spec_.failure_rate) {
    failed = true;
    failures_.fetch_add(1);
  } else if (request->purpose == "turn" && unit(mix(h ^ 5)) < spec_.overflow_rate) {
    failed = true;
    overflows_.fetch_add(1);
    const std::int64_t window = spec_.options.context_window;
    answer = status(errc::limit_exceeded, runtime::simulated_overflow_text(window + 1, window));
  } else {
    answer = inner_.run(*request);
    failed = !answer.ok();
  }
  started_.fetch_add(1);
  {
    std::lock_guard<std::mutex> g(mu_);
    records_.push_back({now, failed});
  }
  if (latency <= 0) {
    done->complete(std::move(answer));
    return;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    pending_[call] = {request->session_key, now + latency};
    due_.insert(now + latency);
    ++waiting_keys_[request->session_key];
  }
  auto shared_answer = std::make_shared<result<boost::json::object>>(std::move(answer));
  cancel->on_cancel([this, done, call] {
    if (done->complete(status(errc::cancelled, "model call cancelled"))) finished(call);
  });
  clock_.at(now + latency, [this, done, call, shared_answer] {
    finished(call);
    done->complete(std::move(*shared_answer));
  });
}

void scenario_model::finished(std::uint64_t call) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = pending_.find(call);
  if (it == pending_.end()) return;
  if (auto d = due_.find(it->second.due); d != due_.end()) due_.erase(d);
  if (auto w = waiting_keys_.find(it->second.key); w != waiting_keys_.end() && --w->second == 0) waiting_keys_.erase(w);
  pending_.erase(it);
}

bool scenario_model::waiting_on(const std::string& session_key) const {
  std::lock_guard<std::mutex> g(mu_);
  return waiting_keys_.count(session_key) > 0;
}

std::optional<std::int64_t> scenario_model::next_due_ms() const {
  std::lock_guard<std::mutex> g(mu_);
  if (due_.empty()) return std::nullopt;
  return *due_.begin();
}

std::vector<model_call_record> scenario_model::take_calls() {
  std::lock_guard<std::mutex> g(mu_);
  return std::exchange(records_, {});
}

}  // namespace sessionrt::sim
