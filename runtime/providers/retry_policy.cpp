#include "runtime/providers/retry_policy.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "messages/ascii_text.hpp"

namespace sessionrt::providers {
namespace {

// Keeps every conversion to int64 milliseconds far from overflow (~31,000 years).
constexpr double kMaxWaitMs = 1e15;

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "12" / "1.5": a non-negative decimal without sign or exponent (what servers send).
std::optional<double> parse_decimal(std::string_view s) {
  const auto dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
  if (!all_digits(whole) || (dot != std::string_view::npos && !all_digits(frac))) return std::nullopt;
  double v = 0;
  for (char c : whole) v = std::min(v * 10 + (c - '0'), kMaxWaitMs);
  double scale = 0.1;
  for (char c : frac) {
    v += (c - '0') * scale;
    scale /= 10;
  }
  return v;
}

std::int64_t ceil_ms(double ms) { return static_cast<std::int64_t>(std::ceil(std::min(ms, kMaxWaitMs))); }

int parse_int(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

unsigned days_in_month(int y, unsigned m) {
  static constexpr std::array<unsigned, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

// "Jan".."Dec" -> 1..12, else 0.
unsigned parse_month(std::string_view s) {
  static constexpr std::array<std::string_view, 12> names{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (unsigned i = 0; i < names.size(); ++i) {
    if (ascii_iequals(s, names[i])) return i + 1;
  }
  return 0;
}

// Splits on spaces, commas and dashes, dropping empty pieces.
std::vector<std::string_view> date_tokens(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ' ' || s[i] == ',' || s[i] == '-') {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

struct date_parts {
  std::string_view day, month, year, time;
};

std::optional<std::int64_t> to_epoch_ms(const date_parts& p) {
  if (!all_digits(p.day) || p.day.size() > 2 || !all_digits(p.year) || (p.year.size() != 2 && p.year.size() != 4)) {
    return std::nullopt;
  }
  const std::string_view t = p.time;
  if (t.size() != 8 || t[2] != ':' || t[5] != ':' || !all_digits(t.substr(0, 2)) || !all_digits(t.substr(3, 2)) ||
      !all_digits(t.substr(6, 2))) {
    return std::nullopt;
  }
  const unsigned month = parse_month(p.month);
  int year = parse_int(p.year);
  // RFC 850's two-digit year (no clock here to apply RFC 9110's 50-year rule exactly).
  if (p.year.size() == 2) year += year < 70 ? 2000 : 1900;
  const auto day = static_cast<unsigned>(parse_int(p.day));
  const int h = parse_int(t.substr(0, 2)), m = parse_int(t.substr(3, 2)), s = parse_int(t.substr(6, 2));
  if (month == 0 || day == 0 || day > days_in_month(year, month) || h > 23 || m > 59 || s > 60) return std::nullopt;
  const std::int64_t secs = days_from_civil(year, month, day) * 86400 + h * 3600 + m * 60 + s;
  return secs * 1000;
}

std::string seconds_text(std::int64_t ms) {
  std::string out = std::to_string(ms / 1000);
  if (const std::int64_t frac = ms % 1000; frac != 0) {
    std::string digits = std::to_string(1000 + frac).substr(1);
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

retry_decision give_up(std::string reason) {
  return {retry_decision::action::give_up, 0, std::move(reason)};
}

// Whether a failure may be retried at all, with its name for reasons ("HTTP 429", "io_error").
struct verdict {
  bool retryable = false;
  std::string what;
  std::string why_not;  // when not retryable
};

verdict classify(const call_failure& f) {
  const bool is_response = f.error == errc::ok;
  std::string what = is_response ? "HTTP " + std::to_string(f.http_status) : std::string(errc_name(f.error));
  if (f.stream_started) return {false, what, what + " after the stream started is not retried"};
  if (!is_response) {
    if (f.error == errc::io_error || f.error == errc::timeout) return {true, what, {}};
    return {false, what, what + " is not retried"};
  }
  if (f.head != nullptr) {
    const std::string_view hint = ascii_trim(f.head->header("x-should-retry"));
    if (ascii_iequals(hint, "true")) return {true, what, {}};
    if (ascii_iequals(hint, "false")) return {false, what, what + " is not retried (x-should-retry: false)"};
  }
  const long s = f.http_status;
  const bool retryable = s == 408 || s == 409 || s == 429 || (s >= 500 && s <= 599);
  return {retryable, what, what + " is not retried"};
}

}  // namespace

std::optional<std::int64_t> parse_http_date(std::string_view text) {
  text = ascii_trim(text);
  std::size_t i = 0;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
  if (i < 3) return std::nullopt;  // the weekday
  const std::string_view rest = text.substr(i);
  const std::vector<std::string_view> tok = date_tokens(rest);
  if (!rest.empty() && rest.front() == ',') {
    // IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" / RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT".
    if (tok.size() != 5 || !(ascii_iequals(tok[4], "GMT") || ascii_iequals(tok[4], "UTC"))) return std::nullopt;
    return to_epoch_ms({tok[0], tok[1], tok[2], tok[3]});
  }
  // asctime "Sun Nov  6 08:49:37 1994".
  if (tok.size() != 4 || tok[3].size() != 4) return std::nullopt;
  return to_epoch_ms({tok[1], tok[0], tok[3], tok[2]});
}

std::optional<std::int64_t> parse_retry_after(const http_response_head& head, std::int64_t now_ms) {
  if (auto ms = parse_decimal(ascii_trim(head.header("retry-after-ms")))) return ceil_ms(*ms);
  const std::string_view value = ascii_trim(head.header("retry-after"));
  if (value.empty()) return std::nullopt;
  if (auto secs = parse_decimal(value)) return ceil_ms(*secs * 1000);
  if (auto at = parse_http_date(value)) return std::max<std::int64_t>(0, *at - now_ms);
  return std::nullopt;
}

retry_policy::random_source retry_policy::seeded_random(std::uint64_t seed) {
  auto engine = std::make_shared<std::mt19937_64>(seed);
  return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}

retry_policy::retry_policy(retry_settings settings, random_source random)
    : settings_(settings), random_(random ? std::move(random) : seeded_random(0)) {}

std::int64_t retry_policy::backoff_ms(int attempt) const {
  const std::int64_t cap = std::max<std::int64_t>(0, settings_.max_backoff_ms);
  std::int64_t d = std::clamp<std::int64_t>(settings_.base_delay_ms, 0, cap);
  for (int i = 0; i < attempt && d < cap; ++i) d = d > cap / 2 ? cap : d * 2;
  const double r = std::clamp(random_(), 0.0, 1.0);
  const double jitter = std::clamp(settings_.jitter, 0.0, 1.0);
  return static_cast<std::int64_t>(std::llround(static_cast<double>(d) * (1.0 - jitter * r)));
}

retry_decision retry_policy::decide(int attempt, const call_failure& failure, std::int64_t now_ms) const {
  const verdict v = classify(failure);
  if (!v.retryable) return give_up(v.why_not);
  const int max_attempts = std::max(1, settings_.max_attempts);
  const int tries = std::max(0, attempt) + 1;
  if (tries >= max_attempts) {
    return give_up(v.what + ": gave up after " + std::to_string(tries) + " attempt" + (tries == 1 ? "" : "s") +
                   " (models.retry.maxAttempts " + std::to_string(max_attempts) + ")");
  }
  const std::string of = " (attempt " + std::to_string(tries) + " of " + std::to_string(max_attempts) + ")";
  if (failure.head != nullptr) {
    if (std::optional<std::int64_t> wait = parse_retry_after(*failure.head, now_ms)) {
      if (*wait > settings_.max_delay_ms) {
        return give_up(v.what + ": retry-after " + seconds_text(*wait) + " s exceeds models.retry.maxDelayMs (" +
                       std::to_string(settings_.max_delay_ms) + ")");
      }
      return {retry_decision::action::retry, *wait,
              v.what + ": retrying in " + std::to_string(*wait) + " ms as the server asked" + of};
    }
  }
  const std::int64_t delay = backoff_ms(attempt);
  return {retry_decision::action::retry, delay, v.what + ": retrying in " + std::to_string(delay) + " ms" + of};
}

}  // namespace sessionrt::providers
