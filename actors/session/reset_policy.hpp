// reset_policy: when does a session's current sessionId expire [R§4.1, R§4.2, SPEC §3].
// Pure functions of (config, the row's lifecycle timestamps, now, time zone): no clock, no I/O,
// no CAF. The one outside input is the IANA time zone database; the caller resolves the zone
// once with resolve_reset_zone() and passes the date::time_zone it got (it outlives the process).
// Timestamps are epoch milliseconds. Stored timestamps are read as JavaScript numbers (double),
// because freshness sanitizes them exactly as OpenClaw does (finite, >= 0, not in the future).
//
// Daily boundary, per local calendar day D in the zone: the instant JavaScript's
// `date.setHours(atHour, 0, 0, 0)` gives for D, i.e. the local wall time D atHour:00 read with
// the UTC offset in force just before it. So
//   - on a spring-forward day where atHour:00 does not exist (New York 02:00 on 2026-03-08) the
//     boundary is the first valid instant after the gap (03:00 EDT);
//   - on a fall-back day where atHour:00 happens twice (New York 01:00 on 2026-11-01) it is
//     the earlier of the two.
// The most recent boundary at `now` is the latest such instant <= now. Deliberate difference:
// OpenClaw steps back a day with setDate(), which keeps the shifted 03:00 wall time of a gap
// day for the day before; we use that day's own atHour boundary, so boundaries never move.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/session_entry.hpp"
#include "messages/status.hpp"

namespace date {
class time_zone;
}

namespace sessionrt::actors {

enum class reset_mode { daily, idle, none };

// JSON-era default (openclaw <= 2026.7.x); 2026.8 changed it to "none" [R§4.1].
inline constexpr reset_mode default_reset_mode = reset_mode::daily;
inline constexpr int default_reset_at_hour = 4;

std::string_view reset_mode_name(reset_mode mode);
std::optional<reset_mode> parse_reset_mode(std::string_view name);  // "daily" | "idle" | "none"

// One `session.reset`-shaped block; absent members fall through to the next level.
struct reset_config {
  std::optional<reset_mode> mode;
  std::optional<double> at_hour;
  std::optional<double> idle_minutes;
};

struct reset_by_type_config {
  std::optional<reset_config> direct;
  std::optional<reset_config> dm;  // legacy alias of `direct`, used when `direct` is absent
  std::optional<reset_config> group;
  std::optional<reset_config> thread;
};

// The `session` config members that decide resets.
struct session_reset_config {
  std::optional<reset_config> reset;
  std::optional<reset_by_type_config> reset_by_type;
  std::map<std::string, reset_config> reset_by_channel;  // keys: lowercase channel ids
  std::optional<double> idle_minutes;                    // legacy `session.idleMinutes`
  std::vector<std::string> reset_triggers;               // empty = ["/new", "/reset"]
  std::string timezone;                                  // IANA name; empty = host local zone
};

enum class reset_type { direct, group, thread };

// "thread" if is_thread or the key contains ":thread:"; "group" if is_group or the key
// contains ":group:" or ":channel:"; "direct" otherwise [R§4.1].
reset_type resolve_reset_type(std::string_view session_key, bool is_group, bool is_thread);

struct reset_policy {
  reset_mode mode = default_reset_mode;
  int at_hour = default_reset_at_hour;        // 0..23
  std::optional<std::int64_t> idle_minutes;   // absent or 0: idle never expires
  bool configured = false;                    // any reset setting applied (not only defaults)
};

// resolveSessionResetPolicy [R§4.1]. `channel` picks `reset_by_channel[lowercase(trim(channel))]`,
// which, when present, replaces `reset` and suppresses the per-type block and legacy idleMinutes.
reset_policy resolve_reset_policy(const session_reset_config& config, reset_type type,
                                  std::string_view channel = {});

// The zone for `session.timezone`: empty = the host's local zone. An unknown name is
// errc::invalid_argument naming it.
result<const date::time_zone*> resolve_reset_zone(std::string_view iana_name);

// Why a session ended: `/new`, `/reset`, or staleness (daily, idle).
enum class session_end_reason { new_session, reset, daily, idle };
std::string_view session_end_reason_name(session_end_reason reason);  // "new" | "reset" | ...

// Freshness inputs (resolveSessionLifecycleTimestamps [R§4.2]).
struct lifecycle_timestamps {
  std::optional<double> updated_at;
  std::optional<double> session_started_at;
  std::optional<double> last_interaction_at;
};

// Reads the row; `transcript_started_at` (the transcript header's timestamp, when its id matches)
// stands in for a missing sessionStartedAt.
lifecycle_timestamps lifecycle_timestamps_of(const session_entry& entry,
                                             std::optional<double> transcript_started_at = std::nullopt);

struct session_freshness {
  bool fresh = true;
  std::optional<std::int64_t> daily_reset_at;  // most recent boundary (daily mode)
  std::optional<double> idle_expires_at;       // lastInteraction + idleMinutes (idle > 0)
  std::optional<session_end_reason> stale_reason;  // daily | idle when !fresh
};

// evaluateSessionFreshness [R§4.2]: daily compares sessionStartedAt with the most recent
// boundary (stale if started before it); idle is stale when now > lastInteraction + idle;
// both stale -> "daily" if dailyResetAt <= idleExpiresAt, else "idle".
session_freshness evaluate_freshness(const lifecycle_timestamps& ts, std::int64_t now_ms,
                                     const reset_policy& policy, const date::time_zone& zone);

// The latest daily boundary at or before now_ms (see the top of this file).
std::int64_t most_recent_daily_boundary(std::int64_t now_ms, int at_hour, const date::time_zone& zone);

// Timers (SPEC §3 Decision). The earliest daily boundary strictly after now_ms; nullopt unless
// the policy is daily.
std::optional<std::int64_t> next_daily_boundary_after(std::int64_t now_ms, const reset_policy& policy,
                                                      const date::time_zone& zone);

// The first instant at which the idle rule says stale (lastInteraction + idle + 1 ms, since
// the rule is `now > expiry`), with the timestamps read as of now_ms; nullopt if idle is off.
std::optional<std::int64_t> idle_expiry_at(const lifecycle_timestamps& ts, const reset_policy& policy,
                                           std::int64_t now_ms);

// The earliest instant t >= now_ms at which evaluate_freshness(ts, t, ...) says stale (now_ms
// itself when already stale); nullopt if the policy never expires. Timestamps that lie after
// now_ms take effect from their own instant on, exactly as evaluate_freshness would read them.
std::optional<std::int64_t> stale_at(const lifecycle_timestamps& ts, const reset_policy& policy,
                                     const date::time_zone& zone, std::int64_t now_ms);

}  // namespace sessionrt::actors
