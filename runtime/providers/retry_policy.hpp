// retry_policy: whether a failed model call is tried again, and after how long. Pure rules: no
// I/O, no clock read (the caller passes now_ms, Unix epoch milliseconds, for an HTTP-date
// retry-after), randomness from an injected source. Rules (../shared/reference/provider-apis.md
// § Retries: the openai SDK and OpenClaw):
//   - Retried: HTTP 408, 409, 429 and 5xx (529 "overloaded" included); a connection failure
//     (errc::io_error, errc::timeout: connect, first byte) before the stream started. The
//     server's `x-should-retry: true|false` overrides the status rule, as in the openai SDK.
//   - Never retried: any other status (400, 401, 403, 404, 422, ...); any failure after the
//     stream started (its output already reached the user: no SDK retries mid-stream); a
//     cancellation.
//   - The wait: `retry-after-ms`, else `retry-after` (seconds, or an HTTP date), else
//     min(base_delay_ms·2^attempt, max_backoff_ms) shortened by up to `jitter` (25%). A
//     server-given wait above max_delay_ms gives up at once, so the caller moves on to its
//     fallback model instead of sleeping on one that is unavailable.
//   - At most max_attempts tries of one model, the first included.
// A retry_policy is not thread-safe when its random source is not (the default engine): use one
// per runner, or per loop thread.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "messages/status.hpp"
#include "runtime/providers/http_loop.hpp"

namespace sessionrt::providers {

struct retry_settings {
  int max_attempts = 4;                // models.retry.maxAttempts: tries in all (< 1 counts as 1)
  std::int64_t max_delay_ms = 60000;   // models.retry.maxDelayMs: a longer server wait gives up
  std::int64_t base_delay_ms = 500;    // the first backoff (openai SDK: 0.5 s)
  std::int64_t max_backoff_ms = 8000;  // the backoff's cap (openai SDK: 8 s)
  double jitter = 0.25;                // a backoff is shortened by up to this fraction
};

// What went wrong with one try. Either a complete response with a failing status (error ==
// errc::ok, http_status != 0), or a transport failure (error != errc::ok; http_status and head
// may still tell a response that began).
struct call_failure {
  long http_status = 0;
  const http_response_head* head = nullptr;  // retry-after, x-should-retry; owned by the caller
  errc error = errc::ok;
  // The stream began: a 2xx head (or any output) reached the caller. A streamed error event
  // with no output before it (Anthropic's overloaded_error) may be passed as http_status 529.
  bool stream_started = false;

  static call_failure response(const http_response_head& h) { return {h.status, &h, errc::ok, false}; }
  static call_failure transport(errc e, bool started) { return {0, nullptr, e, started}; }
};

struct retry_decision {
  enum class action : std::uint8_t { retry, give_up };
  action what = action::give_up;
  std::int64_t delay_ms = 0;  // retry: wait this long first
  std::string reason;         // one sentence for logs / the error the caller reports

  bool retry() const { return what == action::retry; }
};

// The server's requested wait in ms from `retry-after-ms`, else `retry-after` (decimal
// seconds, or an IMF-fixdate / RFC 850 / asctime HTTP date, taken relative to now_ms and never
// negative); nullopt when neither is present and valid.
std::optional<std::int64_t> parse_retry_after(const http_response_head& head, std::int64_t now_ms);

// Parses an HTTP date (RFC 9110 §5.6.7: the three formats) to Unix epoch milliseconds.
std::optional<std::int64_t> parse_http_date(std::string_view text);

class retry_policy {
 public:
  using random_source = std::function<double()>;  // uniform in [0, 1)
  // A deterministic source: std::mt19937_64 seeded with `seed`.
  static random_source seeded_random(std::uint64_t seed);

  // An empty `random` is seeded_random(0).
  explicit retry_policy(retry_settings settings = {}, random_source random = {});

  // `attempt`: the 0-based number of the try that failed.
  retry_decision decide(int attempt, const call_failure& failure, std::int64_t now_ms) const;

  const retry_settings& settings() const { return settings_; }

 private:
  std::int64_t backoff_ms(int attempt) const;

  retry_settings settings_;
  random_source random_;
};

}  // namespace sessionrt::providers
