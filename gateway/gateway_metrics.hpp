// gateway_metrics: the counters behind GET /metrics (Prometheus text format 0.0.4). Every field
// is an atomic so the loop thread, the method workers and the runtime's callbacks count without
// a lock. render() adds the runtime's own figures (model calls, live sessions, disk use) that
// the caller samples at scrape time.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace sessionrt::gateway {

// Refused bad input, one counter each (label reason="...").
enum class refusal {
  not_json,              // a frame that is not JSON, or not an object
  bad_frame,             // an object that is not a request frame
  before_connect,        // a request before connect
  bad_connect,           // connect params that do not validate
  token_mismatch,        // wrong or missing token
  protocol_mismatch,
  unknown_method,
  bad_params,            // wrong param types / missing fields
  forbidden,             // a method beyond the granted scopes
  oversized_frame,       // over the payload limit (64 KiB before connect)
  handshake_timeout,
  too_many_connections,
  slow_consumer,         // closed past maxBufferedBytes
  disconnect_mid_request,  // a response (or run) whose connection was gone
  bad_session_key,       // chat.send to a key the routing rules refuse
  duplicate_idempotency_key,
  bad_http,              // HTTP that is not a GET we serve, or a bad upgrade
  count_
};
const char* refusal_name(refusal r);

inline constexpr std::array<double, 13> kAckBucketsMs = {1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

struct runtime_sample {
  std::size_t model_running = 0, model_waiting = 0;
  std::int64_t live_sessions = -1, trimmed_sessions = -1;  // -1: unknown
  std::int64_t stored_sessions = 0;
  std::int64_t disk_bytes = 0;
  std::optional<std::int64_t> disk_budget_bytes;
};

class gateway_metrics {
 public:
  void refused(refusal r) { refusals_[static_cast<std::size_t>(r)].fetch_add(1); }
  std::uint64_t refusals(refusal r) const { return refusals_[static_cast<std::size_t>(r)].load(); }
  void ack_latency_ms(double ms);
  std::atomic<std::uint64_t> connections_opened{0}, connections_open{0}, frames_in{0}, frames_out{0};
  std::atomic<std::uint64_t> requests{0}, turns_started{0}, turns_completed{0}, turns_failed{0}, turns_aborted{0};
  std::atomic<std::uint64_t> passivations{0}, store_writes{0}, events_out{0};
  std::atomic<std::uint64_t> runner_calls{0}, runner_failovers{0}, runner_failures{0};
  std::atomic<std::uint64_t> chat_holds_expired{0};  // closing events the bound let go (chat_delivery.hpp)

  std::string render(const runtime_sample& rt) const;

 private:
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(refusal::count_)> refusals_{};
  std::array<std::atomic<std::uint64_t>, kAckBucketsMs.size()> ack_buckets_{};
  std::atomic<std::uint64_t> ack_count_{0};
  std::atomic<std::uint64_t> ack_sum_us_{0};
};

}  // namespace sessionrt::gateway
