#include "actors/session/reset_policy.hpp"

#include <date/tz.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "messages/ascii_text.hpp"

namespace sessionrt::actors {
namespace {

using std::chrono::milliseconds;

// JavaScript's Date range ends at 8.64e15 ms; nothing later can be `now`.
constexpr double max_js_time_ms = 8.64e15;
// Beyond this, idle minutes only mean "never" (and would overflow in ms).
constexpr double max_idle_minutes = 1e12;

const reset_config* find_channel_override(const session_reset_config& config, std::string_view channel) {
  std::string key = ascii_lower(ascii_trim(channel));
  if (key.empty()) return nullptr;
  auto it = config.reset_by_channel.find(key);
  return it == config.reset_by_channel.end() ? nullptr : &it->second;
}

const reset_config* find_type_reset(const session_reset_config& config, reset_type type) {
  if (!config.reset_by_type) return nullptr;
  const auto& by_type = *config.reset_by_type;
  const std::optional<reset_config>* pick = nullptr;
  switch (type) {
    case reset_type::direct: pick = by_type.direct ? &by_type.direct : &by_type.dm; break;
    case reset_type::group: pick = &by_type.group; break;
    case reset_type::thread: pick = &by_type.thread; break;
  }
  return pick && *pick ? &**pick : nullptr;
}

// `a?.member ?? b?.member`
template <class T>
std::optional<T> first_of(const reset_config* a, const reset_config* b, std::optional<T> reset_config::*member) {
  if (a && a->*member) return a->*member;
  if (b && b->*member) return b->*member;
  return std::nullopt;
}

int normalize_at_hour(std::optional<double> raw) {
  if (!raw || !std::isfinite(*raw)) return default_reset_at_hour;
  return static_cast<int>(std::clamp(std::floor(*raw), 0.0, 23.0));
}

std::optional<std::int64_t> normalize_idle_minutes(std::optional<double> raw, reset_mode mode) {
  if (raw && std::isfinite(*raw)) return static_cast<std::int64_t>(std::clamp(std::floor(*raw), 0.0, max_idle_minutes));
  if (mode == reset_mode::idle) return 0;
  return std::nullopt;
}

// ts(x) of evaluateSessionFreshness: a finite, non-negative instant not after now.
std::optional<double> valid_at(std::optional<double> x, double now) {
  if (x && std::isfinite(*x) && *x >= 0 && *x <= now) return x;
  return std::nullopt;
}

struct effective_times {
  double started;
  double last_interaction;
};

effective_times effective_at(const lifecycle_timestamps& ts, double now) {
  double updated = valid_at(ts.updated_at, now).value_or(0);
  double started = valid_at(ts.session_started_at, now).value_or(updated);
  double last = valid_at(ts.last_interaction_at, now).value_or(started);
  return {started, last};
}

bool daily_enabled(const reset_policy& p) { return p.mode == reset_mode::daily; }
bool idle_enabled(const reset_policy& p) { return p.idle_minutes && *p.idle_minutes > 0; }

double idle_expiry(double last_interaction, const reset_policy& p) {
  return last_interaction + static_cast<double>(*p.idle_minutes) * 60000.0;
}

// The first integral ms strictly after `expiry`, if it is a representable time.
std::optional<std::int64_t> first_ms_after(double expiry) {
  if (!(expiry < max_js_time_ms)) return std::nullopt;
  return static_cast<std::int64_t>(std::floor(expiry)) + 1;
}

date::local_days local_day_of(std::int64_t t, const date::time_zone& zone) {
  auto local = zone.to_local(date::sys_time<milliseconds>(milliseconds(t)));
  return date::floor<date::days>(local);
}

// setHours(atHour, 0, 0, 0) on local day `day`: the wall time read with the offset in force
// before it (local_info::first), which is what ECMAScript's UTC(t) does in gaps and folds.
std::int64_t boundary_on(date::local_days day, int at_hour, const date::time_zone& zone) {
  date::local_seconds wall = day + std::chrono::hours(at_hour);
  date::local_info info = zone.get_info(wall);
  auto utc = wall.time_since_epoch() - info.first.offset;
  return std::chrono::duration_cast<milliseconds>(utc).count();
}

std::int64_t first_boundary_after(std::int64_t t, int at_hour, const date::time_zone& zone) {
  date::local_days day = local_day_of(t, zone);
  std::int64_t b = boundary_on(day, at_hour, zone);
  while (b <= t) {
    day += date::days(1);
    b = boundary_on(day, at_hour, zone);
  }
  return b;
}

// Earliest t >= from at which the rules say stale, with started/lastInteraction fixed.
std::optional<std::int64_t> earliest_stale_from(const effective_times& v, std::int64_t from,
                                                const reset_policy& p, const date::time_zone& zone) {
  std::optional<std::int64_t> best;
  auto consider = [&](std::int64_t t) {
    t = std::max(t, from);
    if (!best || t < *best) best = t;
  };
  if (daily_enabled(p)) {
    // A boundary b (integral) is > started exactly when it is > floor(started).
    consider(first_boundary_after(static_cast<std::int64_t>(std::floor(v.started)), p.at_hour, zone));
  }
  if (idle_enabled(p))
    if (auto t = first_ms_after(idle_expiry(v.last_interaction, p))) consider(*t);
  return best;
}

// Instants after now_ms at which a stored timestamp starts to count (it is ignored while in
// the future), ascending.
std::vector<std::int64_t> regime_changes_after(const lifecycle_timestamps& ts, std::int64_t now_ms) {
  std::vector<std::int64_t> points;
  for (auto x : {ts.updated_at, ts.session_started_at, ts.last_interaction_at}) {
    if (!x || !std::isfinite(*x) || *x < 0 || *x >= max_js_time_ms) continue;
    auto from = static_cast<std::int64_t>(std::ceil(*x));
    if (from > now_ms) points.push_back(from);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

}  // namespace

std::string_view reset_mode_name(reset_mode mode) {
  switch (mode) {
    case reset_mode::daily: return "daily";
    case reset_mode::idle: return "idle";
    case reset_mode::none: return "none";
  }
  return "none";
}

std::optional<reset_mode> parse_reset_mode(std::string_view name) {
  if (name == "daily") return reset_mode::daily;
  if (name == "idle") return reset_mode::idle;
  if (name == "none") return reset_mode::none;
  return std::nullopt;
}

namespace {
// Whether the ASCII-lowercased `s` contains `lower_part`, without building the lowercased copy.
bool contains_ascii_ci(std::string_view s, std::string_view lower_part) {
  const auto eq = [](char a, char b) { return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b; };
  return std::search(s.begin(), s.end(), lower_part.begin(), lower_part.end(), eq) != s.end();
}
}  // namespace

reset_type resolve_reset_type(std::string_view session_key, bool is_group, bool is_thread) {
  if (is_thread || contains_ascii_ci(session_key, ":thread:")) return reset_type::thread;
  if (is_group || contains_ascii_ci(session_key, ":group:") || contains_ascii_ci(session_key, ":channel:"))
    return reset_type::group;
  return reset_type::direct;
}

reset_policy resolve_reset_policy(const session_reset_config& config, reset_type type, std::string_view channel) {
  const reset_config* channel_override = find_channel_override(config, channel);
  const reset_config* base = channel_override ? channel_override : (config.reset ? &*config.reset : nullptr);
  const reset_config* type_reset = channel_override ? nullptr : find_type_reset(config, type);
  const bool has_explicit_reset = base || config.reset_by_type;
  const std::optional<double> legacy_idle = channel_override ? std::nullopt : config.idle_minutes;

  reset_policy p;
  p.configured = base || type_reset || legacy_idle;
  if (auto mode = first_of(type_reset, base, &reset_config::mode))
    p.mode = *mode;
  else
    p.mode = (!has_explicit_reset && legacy_idle) ? reset_mode::idle : default_reset_mode;
  p.at_hour = normalize_at_hour(first_of(type_reset, base, &reset_config::at_hour));
  auto idle_raw = first_of(type_reset, base, &reset_config::idle_minutes);
  p.idle_minutes = normalize_idle_minutes(idle_raw ? idle_raw : legacy_idle, p.mode);
  return p;
}

result<const date::time_zone*> resolve_reset_zone(std::string_view iana_name) {
  try {
    if (iana_name.empty()) return date::current_zone();
    return date::locate_zone(std::string(iana_name));
  } catch (const std::exception& e) {
    std::string shown = iana_name.empty() ? std::string("(host local zone)") : std::string(iana_name);
    return status(errc::invalid_argument, "session.timezone \"" + shown +
                                              "\" is not a time zone of the IANA database (" + e.what() +
                                              "); use a name such as \"Europe/Berlin\"");
  }
}

std::string_view session_end_reason_name(session_end_reason reason) {
  switch (reason) {
    case session_end_reason::new_session: return "new";
    case session_end_reason::reset: return "reset";
    case session_end_reason::daily: return "daily";
    case session_end_reason::idle: return "idle";
  }
  return "new";
}

lifecycle_timestamps lifecycle_timestamps_of(const session_entry& entry, std::optional<double> transcript_started_at) {
  const auto& o = entry.json();
  lifecycle_timestamps ts;
  ts.updated_at = json::get_number(o, "updatedAt");
  ts.session_started_at = json::get_number(o, "sessionStartedAt");
  if (!ts.session_started_at) ts.session_started_at = transcript_started_at;
  ts.last_interaction_at = json::get_number(o, "lastInteractionAt");
  return ts;
}

std::int64_t most_recent_daily_boundary(std::int64_t now_ms, int at_hour, const date::time_zone& zone) {
  date::local_days day = local_day_of(now_ms, zone);
  std::int64_t b = boundary_on(day, at_hour, zone);
  while (now_ms < b) {
    day -= date::days(1);
    b = boundary_on(day, at_hour, zone);
  }
  return b;
}

session_freshness evaluate_freshness(const lifecycle_timestamps& ts, std::int64_t now_ms, const reset_policy& policy,
                                     const date::time_zone& zone) {
  const double now = static_cast<double>(now_ms);
  const effective_times v = effective_at(ts, now);
  session_freshness f;
  if (daily_enabled(policy)) f.daily_reset_at = most_recent_daily_boundary(now_ms, policy.at_hour, zone);
  if (idle_enabled(policy)) f.idle_expires_at = idle_expiry(v.last_interaction, policy);
  const bool stale_daily = f.daily_reset_at && v.started < static_cast<double>(*f.daily_reset_at);
  const bool stale_idle = f.idle_expires_at && now > *f.idle_expires_at;
  if (stale_daily && stale_idle)
    f.stale_reason = static_cast<double>(*f.daily_reset_at) <= *f.idle_expires_at ? session_end_reason::daily
                                                                                  : session_end_reason::idle;
  else if (stale_idle)
    f.stale_reason = session_end_reason::idle;
  else if (stale_daily)
    f.stale_reason = session_end_reason::daily;
  f.fresh = !(stale_daily || stale_idle);
  return f;
}

std::optional<std::int64_t> next_daily_boundary_after(std::int64_t now_ms, const reset_policy& policy,
                                                      const date::time_zone& zone) {
  if (!daily_enabled(policy)) return std::nullopt;
  return first_boundary_after(now_ms, policy.at_hour, zone);
}

std::optional<std::int64_t> idle_expiry_at(const lifecycle_timestamps& ts, const reset_policy& policy,
                                           std::int64_t now_ms) {
  if (!idle_enabled(policy)) return std::nullopt;
  return first_ms_after(idle_expiry(effective_at(ts, static_cast<double>(now_ms)).last_interaction, policy));
}

std::optional<std::int64_t> stale_at(const lifecycle_timestamps& ts, const reset_policy& policy,
                                     const date::time_zone& zone, std::int64_t now_ms) {
  if (!daily_enabled(policy) && !idle_enabled(policy)) return std::nullopt;
  // Between two instants where a future timestamp starts to count, started/lastInteraction are
  // fixed and staleness only grows with time; take the first such stretch that turns stale.
  std::vector<std::int64_t> changes = regime_changes_after(ts, now_ms);
  std::int64_t from = now_ms;
  for (std::size_t i = 0;; ++i) {
    const effective_times v = effective_at(ts, static_cast<double>(from));
    auto t = earliest_stale_from(v, from, policy, zone);
    const bool last_stretch = i == changes.size();
    if (t && (last_stretch || *t < changes[i])) return t;
    if (last_stretch) return std::nullopt;
    from = changes[i];
  }
}

}  // namespace sessionrt::actors
