#include "runtime/providers/retry_policy.hpp"

#include <catch2/catch.hpp>

#include <set>

namespace sessionrt::providers {
namespace {

constexpr std::int64_t k_2015_10_21_07_28_00 = 1445412480000;  // Wed, 21 Oct 2015 07:28:00 GMT

http_response_head head_of(long status, http_headers headers = {}) {
  http_response_head h;
  h.status = status;
  h.headers = std::move(headers);
  return h;
}

// Jitter off: r = 0 keeps the whole backoff.
retry_policy exact_policy(retry_settings s = {}) {
  return retry_policy(s, [] { return 0.0; });
}

}  // namespace

TEST_CASE("retry_policy: 408, 409, 429 and 5xx (529 included) are retried after the base backoff", "[retry_policy]") {
  const retry_policy policy = exact_policy();
  for (long status : {408L, 409L, 429L, 500L, 502L, 503L, 504L, 529L}) {
    const http_response_head h = head_of(status);
    const retry_decision d = policy.decide(0, call_failure::response(h), 0);
    INFO("status " << status << ": " << d.reason);
    CHECK(d.retry());
    CHECK(d.delay_ms == 500);
    CHECK(d.reason.find("HTTP " + std::to_string(status)) != std::string::npos);
  }
}

TEST_CASE("retry_policy: 400, 401, 403, 404 and 422 are terminal", "[retry_policy]") {
  const retry_policy policy = exact_policy();
  for (long status : {400L, 401L, 403L, 404L, 422L}) {
    const http_response_head h = head_of(status);
    const retry_decision d = policy.decide(0, call_failure::response(h), 0);
    INFO("status " << status);
    CHECK(d.what == retry_decision::action::give_up);
    CHECK(d.reason == "HTTP " + std::to_string(status) + " is not retried");
  }
}

TEST_CASE("retry_policy: the backoff doubles per attempt up to its cap", "[retry_policy]") {
  retry_settings s;
  s.max_attempts = 10;
  const retry_policy policy = exact_policy(s);
  const http_response_head h = head_of(503);
  std::vector<std::int64_t> delays;
  for (int attempt = 0; attempt < 7; ++attempt) delays.push_back(policy.decide(attempt, call_failure::response(h), 0).delay_ms);
  CHECK(delays == std::vector<std::int64_t>{500, 1000, 2000, 4000, 8000, 8000, 8000});
}

TEST_CASE("retry_policy: jitter shortens the backoff by up to 25% from the injected source", "[retry_policy]") {
  const http_response_head h = head_of(429);
  double r = 0.5;
  const retry_policy policy({}, [&r] { return r; });
  CHECK(policy.decide(0, call_failure::response(h), 0).delay_ms == 438);  // 500 · (1 − 0.25·0.5)
  r = 0.999;
  CHECK(policy.decide(1, call_failure::response(h), 0).delay_ms == 750);  // 1000 · (1 − 0.24975)

  // A seeded engine: within [75%, 100%] of the backoff, varied, and reproducible.
  retry_policy a({}, retry_policy::seeded_random(42));
  retry_policy b({}, retry_policy::seeded_random(42));
  std::set<std::int64_t> seen;
  for (int i = 0; i < 50; ++i) {
    const std::int64_t da = a.decide(0, call_failure::response(h), 0).delay_ms;
    CHECK(da >= 375);
    CHECK(da <= 500);
    CHECK(b.decide(0, call_failure::response(h), 0).delay_ms == da);
    seen.insert(da);
  }
  CHECK(seen.size() > 10);
}

TEST_CASE("retry_policy: a connection failure is retried before the stream starts, never after", "[retry_policy]") {
  const retry_policy policy = exact_policy();
  CHECK(policy.decide(0, call_failure::transport(errc::io_error, false), 0).retry());
  CHECK(policy.decide(0, call_failure::transport(errc::timeout, false), 0).retry());
  CHECK(policy.decide(1, call_failure::transport(errc::timeout, false), 0).delay_ms == 1000);

  const retry_decision mid = policy.decide(0, call_failure::transport(errc::io_error, true), 0);
  CHECK(mid.what == retry_decision::action::give_up);
  CHECK(mid.reason == "io_error after the stream started is not retried");

  CHECK_FALSE(policy.decide(0, call_failure::transport(errc::cancelled, false), 0).retry());
  CHECK_FALSE(policy.decide(0, call_failure::transport(errc::invalid_argument, false), 0).retry());

  // A retryable status is not retried once output was shown (a streamed overloaded error).
  const http_response_head h = head_of(529);
  call_failure streamed = call_failure::response(h);
  streamed.stream_started = true;
  CHECK_FALSE(policy.decide(0, streamed, 0).retry());
}

TEST_CASE("retry_policy: retry-after-ms wins over retry-after", "[retry_policy]") {
  const retry_policy policy = exact_policy();
  const http_response_head both = head_of(429, {{"retry-after-ms", "1500"}, {"retry-after", "7"}});
  const retry_decision d = policy.decide(0, call_failure::response(both), 0);
  CHECK(d.retry());
  CHECK(d.delay_ms == 1500);
  CHECK(d.reason.find("as the server asked") != std::string::npos);
  CHECK(parse_retry_after(head_of(429, {{"retry-after-ms", "250.5"}}), 0) == 251);
}

TEST_CASE("retry_policy: retry-after in seconds is honoured without jitter", "[retry_policy]") {
  const retry_policy policy({}, [] { return 0.9; });
  const http_response_head h = head_of(503, {{"retry-after", "7"}});
  CHECK(policy.decide(0, call_failure::response(h), 0).delay_ms == 7000);
  CHECK(parse_retry_after(head_of(503, {{"retry-after", " 1.5 "}}), 0) == 1500);
  CHECK(parse_retry_after(head_of(503, {{"retry-after", "0"}}), 0) == 0);
}

TEST_CASE("retry_policy: retry-after as an HTTP date counts from now_ms, in all three formats", "[retry_policy]") {
  const std::int64_t now = k_2015_10_21_07_28_00 - 30000;
  for (const char* date : {"Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT",
                           "Wed Oct 21 07:28:00 2015"}) {
    INFO(date);
    CHECK(parse_http_date(date) == k_2015_10_21_07_28_00);
    CHECK(parse_retry_after(head_of(429, {{"retry-after", date}}), now) == 30000);
  }
  const retry_policy policy = exact_policy();
  const http_response_head h = head_of(429, {{"Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"}});
  CHECK(policy.decide(0, call_failure::response(h), now).delay_ms == 30000);
  // A date already past: retry at once.
  CHECK(parse_retry_after(h, k_2015_10_21_07_28_00 + 5000) == 0);
  CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == std::int64_t{784111777} * 1000);
  CHECK(parse_http_date("Thu, 29 Feb 2024 12:00:00 GMT") == std::int64_t{1709208000} * 1000);
}

TEST_CASE("retry_policy: an unparsable retry-after falls back to the backoff", "[retry_policy]") {
  const retry_policy policy = exact_policy();
  for (const char* bad : {"soon", "-5", "1e3", "Fri, 31 Feb 2025 10:00:00 GMT", "Wed, 21 Oct 2015 25:28:00 GMT",
                          "Wed, 21 Oct 2015 07:28:00 PST", ""}) {
    INFO("retry-after: " << bad);
    const http_response_head h = head_of(429, {{"retry-after", bad}});
    CHECK_FALSE(parse_retry_after(h, 0).has_value());
    CHECK(policy.decide(0, call_failure::response(h), 0).delay_ms == 500);
  }
}

TEST_CASE("retry_policy: a server wait above maxDelayMs gives up naming the limit", "[retry_policy]") {
  const retry_policy policy = exact_policy();
  const http_response_head long_wait = head_of(429, {{"retry-after", "120"}});
  const retry_decision d = policy.decide(0, call_failure::response(long_wait), 0);
  CHECK(d.what == retry_decision::action::give_up);
  CHECK(d.reason == "HTTP 429: retry-after 120 s exceeds models.retry.maxDelayMs (60000)");

  const http_response_head ms_wait = head_of(503, {{"retry-after-ms", "90500"}});
  CHECK(policy.decide(0, call_failure::response(ms_wait), 0).reason ==
        "HTTP 503: retry-after 90.5 s exceeds models.retry.maxDelayMs (60000)");

  const http_response_head at_limit = head_of(429, {{"retry-after", "60"}});
  const retry_decision ok = policy.decide(0, call_failure::response(at_limit), 0);
  CHECK(ok.retry());
  CHECK(ok.delay_ms == 60000);

  retry_settings tight;
  tight.max_delay_ms = 5000;
  CHECK(exact_policy(tight).decide(0, call_failure::response(head_of(429, {{"retry-after", "6"}})), 0).reason ==
        "HTTP 429: retry-after 6 s exceeds models.retry.maxDelayMs (5000)");
}

TEST_CASE("retry_policy: at most max_attempts tries in all", "[retry_policy]") {
  const retry_policy policy = exact_policy();  // 4
  const http_response_head h = head_of(500);
  CHECK(policy.decide(2, call_failure::response(h), 0).retry());
  const retry_decision last = policy.decide(3, call_failure::response(h), 0);
  CHECK(last.what == retry_decision::action::give_up);
  CHECK(last.reason == "HTTP 500: gave up after 4 attempts (models.retry.maxAttempts 4)");

  retry_settings once;
  once.max_attempts = 1;
  CHECK(exact_policy(once).decide(0, call_failure::transport(errc::io_error, false), 0).reason ==
        "io_error: gave up after 1 attempt (models.retry.maxAttempts 1)");
}

TEST_CASE("retry_policy: x-should-retry overrides the status rule", "[retry_policy]") {
  const retry_policy policy = exact_policy();
  const http_response_head yes = head_of(400, {{"x-should-retry", "true"}});
  CHECK(policy.decide(0, call_failure::response(yes), 0).retry());
  const http_response_head no = head_of(503, {{"x-should-retry", "false"}});
  const retry_decision d = policy.decide(0, call_failure::response(no), 0);
  CHECK_FALSE(d.retry());
  CHECK(d.reason == "HTTP 503 is not retried (x-should-retry: false)");
}

}  // namespace sessionrt::providers
