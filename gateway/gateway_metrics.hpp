// gateway_metrics: the counters behind GET /metrics (Prometheus text format 0.0.4). Every field
// is an atomic so the loop thread, the method workers and the runtime's callbacks count without
// a lock. render() adds the runtime's own figures (model calls, live sessions, disk use) that
// the caller samples at scrape time.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
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
  too_many_unauthenticated,  // a socket accepted past gateway.maxUnauthenticated (closed at once)
  fd_reserve,            // a socket accepted within gateway.fdReserve of RLIMIT_NOFILE (closed at once)
  request_timeout,       // an HTTP request head (or body) not complete within the request timeout
  message_timeout,       // a WebSocket message begun and not finished within gateway.messageTimeoutMs
  busy_connection,       // a request past gateway.maxRequestsInFlight on its connection (UNAVAILABLE)
  busy_queue,            // a request past gateway.maxQueuedRequests waiting in all (UNAVAILABLE)
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
  // The method runner's (gateway/method_runner.hpp), sampled by the transport.
  std::size_t methods_running = 0, methods_waiting = 0, methods_peak_running = 0, methods_peak_waiting = 0;
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
  // Sockets accepted that have not completed connect (HTTP, upgrade, handshake), now.
  std::atomic<std::uint64_t> unauthenticated_open{0};
  // Unsent output (libuv's write queue + wslay's queue, control frames included): all
  // connections now, and the most one connection ever had.
  std::atomic<std::int64_t> buffered_bytes{0};
  std::atomic<std::uint64_t> buffered_bytes_peak{0};
  std::atomic<std::uint64_t> pongs_coalesced{0};  // pongs not sent: a later one answers their ping
  void buffered_peak(std::uint64_t n) {
    std::uint64_t cur = buffered_bytes_peak.load();
    while (n > cur && !buffered_bytes_peak.compare_exchange_weak(cur, n)) {
    }
  }

  std::string render(const runtime_sample& rt) const;
  // Lines a layer beside the gateway adds at each scrape (the cluster node's sessionrt_cluster_*
  // figures, set by the executable); Prometheus text. Null: none. Thread-safe.
  void set_extra(std::function<std::string()> lines);

 private:
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(refusal::count_)> refusals_{};
  mutable std::mutex extra_mu_;
  std::function<std::string()> extra_;
  std::array<std::atomic<std::uint64_t>, kAckBucketsMs.size()> ack_buckets_{};
  std::atomic<std::uint64_t> ack_count_{0};
  std::atomic<std::uint64_t> ack_sum_us_{0};
};

// Counts a refused client, then logs one line for it, rate-limited by that count: the first
// three of a reason, then every 1000th, so that a flood of hostile sockets cannot flood the
// log. `what` must never hold the token or a frame's text.
void count_refusal(gateway_metrics& metrics, refusal r, const std::string& what);

}  // namespace sessionrt::gateway
