#include "gateway/gateway_metrics.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace sessionrt::gateway {

const char* refusal_name(refusal r) {
  switch (r) {
    case refusal::not_json: return "not_json";
    case refusal::bad_frame: return "bad_frame";
    case refusal::before_connect: return "before_connect";
    case refusal::bad_connect: return "bad_connect";
    case refusal::token_mismatch: return "token_mismatch";
    case refusal::protocol_mismatch: return "protocol_mismatch";
    case refusal::unknown_method: return "unknown_method";
    case refusal::bad_params: return "bad_params";
    case refusal::forbidden: return "forbidden";
    case refusal::oversized_frame: return "oversized_frame";
    case refusal::handshake_timeout: return "handshake_timeout";
    case refusal::too_many_connections: return "too_many_connections";
    case refusal::slow_consumer: return "slow_consumer";
    case refusal::disconnect_mid_request: return "disconnect_mid_request";
    case refusal::bad_session_key: return "bad_session_key";
    case refusal::duplicate_idempotency_key: return "duplicate_idempotency_key";
    case refusal::bad_http: return "bad_http";
    case refusal::too_many_unauthenticated: return "too_many_unauthenticated";
    case refusal::fd_reserve: return "fd_reserve";
    case refusal::request_timeout: return "request_timeout";
    case refusal::message_timeout: return "message_timeout";
    case refusal::busy_connection: return "busy_connection";
    case refusal::busy_queue: return "busy_queue";
    case refusal::count_: break;
  }
  return "unknown";
}

void gateway_metrics::ack_latency_ms(double ms) {
  for (std::size_t i = 0; i < kAckBucketsMs.size(); ++i)
    if (ms <= kAckBucketsMs[i]) ack_buckets_[i].fetch_add(1);
  ack_count_.fetch_add(1);
  ack_sum_us_.fetch_add(static_cast<std::uint64_t>(ms * 1000.0));
}

void count_refusal(gateway_metrics& metrics, refusal r, const std::string& what) {
  metrics.refused(r);
  const std::uint64_t n = metrics.refusals(r);
  if (n <= 3 || n % 1000 == 0) spdlog::warn("gateway: refused ({}, {} so far): {}", refusal_name(r), n, what);
}

std::string gateway_metrics::render(const runtime_sample& rt) const {
  std::string out;
  auto counter = [&](const char* name, const char* help, std::uint64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, v);
  };
  auto gauge = [&](const char* name, const char* help, std::int64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n{0} {2}\n", name, help, v);
  };
  counter("sessionrt_gateway_connections_total", "WebSocket connections accepted.", connections_opened.load());
  gauge("sessionrt_gateway_connections_open", "WebSocket connections open now.",
        static_cast<std::int64_t>(connections_open.load()));
  gauge("sessionrt_gateway_unauthenticated_open", "Sockets accepted that have not completed connect.",
        static_cast<std::int64_t>(unauthenticated_open.load()));
  gauge("sessionrt_gateway_buffered_bytes", "Output not yet taken by the kernel, all connections.",
        buffered_bytes.load());
  gauge("sessionrt_gateway_buffered_bytes_peak", "The most unsent output one connection had.",
        static_cast<std::int64_t>(buffered_bytes_peak.load()));
  counter("sessionrt_gateway_pongs_coalesced_total", "Pongs not sent because a later pong answers their ping.",
          pongs_coalesced.load());
  counter("sessionrt_gateway_requests_total", "Requests received after the handshake.", requests.load());
  gauge("sessionrt_gateway_method_calls_running", "Method calls running on the method runner's threads.",
        static_cast<std::int64_t>(rt.methods_running));
  gauge("sessionrt_gateway_method_calls_queued", "Method calls waiting for a thread.",
        static_cast<std::int64_t>(rt.methods_waiting));
  gauge("sessionrt_gateway_method_calls_running_peak", "The most method calls that ran at once.",
        static_cast<std::int64_t>(rt.methods_peak_running));
  gauge("sessionrt_gateway_method_calls_queued_peak", "The most method calls that waited at once.",
        static_cast<std::int64_t>(rt.methods_peak_waiting));
  counter("sessionrt_gateway_events_sent_total", "Event frames sent.", events_out.load());
  counter("sessionrt_turns_started_total", "chat.send runs started.", turns_started.load());
  counter("sessionrt_turns_completed_total", "chat.send runs that ended final.", turns_completed.load());
  counter("sessionrt_turns_failed_total", "chat.send runs that ended in error.", turns_failed.load());
  counter("sessionrt_turns_aborted_total", "chat.send runs that ended aborted.", turns_aborted.load());
  counter("sessionrt_gateway_chat_holds_expired_total",
          "chat closing events sent when the hold bound passed before the turn's end came through the event bus.",
          chat_holds_expired.load());
  out += "# HELP sessionrt_turn_ack_latency_ms From chat.send received to the turn acknowledged (durable).\n"
         "# TYPE sessionrt_turn_ack_latency_ms histogram\n";
  for (std::size_t i = 0; i < kAckBucketsMs.size(); ++i)
    out += fmt::format("sessionrt_turn_ack_latency_ms_bucket{{le=\"{}\"}} {}\n", kAckBucketsMs[i], ack_buckets_[i].load());
  out += fmt::format("sessionrt_turn_ack_latency_ms_bucket{{le=\"+Inf\"}} {}\n", ack_count_.load());
  out += fmt::format("sessionrt_turn_ack_latency_ms_sum {}\n", static_cast<double>(ack_sum_us_.load()) / 1000.0);
  out += fmt::format("sessionrt_turn_ack_latency_ms_count {}\n", ack_count_.load());
  gauge("sessionrt_sessions_live", "Sessions with a live actor.", rt.live_sessions);
  gauge("sessionrt_sessions_trimmed", "Live sessions that closed their transcript (idle).", rt.trimmed_sessions);
  gauge("sessionrt_sessions_stored", "Rows in the stores.", rt.stored_sessions);
  counter("sessionrt_sessions_passivated_total", "session.passivated events.", passivations.load());
  gauge("sessionrt_model_calls_running", "Model calls in flight.", static_cast<std::int64_t>(rt.model_running));
  gauge("sessionrt_model_calls_queued", "Model calls waiting for model.maxConcurrent.",
        static_cast<std::int64_t>(rt.model_waiting));
  counter("sessionrt_store_writes_total", "sessions.json writes (store.flushed events).", store_writes.load());
  gauge("sessionrt_disk_bytes", "Bytes in the sessions directories.", rt.disk_bytes);
  gauge("sessionrt_disk_budget_bytes", "session.maintenance.maxDiskBytes (-1: no budget).",
        rt.disk_budget_bytes ? *rt.disk_budget_bytes : -1);
  counter("sessionrt_runner_calls_total", "Model calls handed to remote runners.", runner_calls.load());
  counter("sessionrt_runner_failovers_total", "Calls moved to another runner after a disconnect.",
          runner_failovers.load());
  counter("sessionrt_runner_failures_total", "Calls failed because no runner was left.", runner_failures.load());
  out += "# HELP sessionrt_gateway_refused_total Bad input refused, by reason.\n"
         "# TYPE sessionrt_gateway_refused_total counter\n";
  for (std::size_t i = 0; i < static_cast<std::size_t>(refusal::count_); ++i)
    out += fmt::format("sessionrt_gateway_refused_total{{reason=\"{}\"}} {}\n", refusal_name(static_cast<refusal>(i)),
                       refusals_[i].load());
  std::lock_guard g(extra_mu_);
  if (extra_) out += extra_();
  return out;
}

void gateway_metrics::set_extra(std::function<std::string()> lines) {
  std::lock_guard g(extra_mu_);
  extra_ = std::move(lines);
}

}  // namespace sessionrt::gateway
