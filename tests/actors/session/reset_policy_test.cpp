// Expectations come from [R§4.1], [R§4.2] and the calendar (DST dates of 2026), not from
// running the code: every instant is written as a UTC wall time.
#include <catch2/catch.hpp>
#include <date/tz.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "actors/session/reset_policy.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t minute = 60'000;
constexpr std::int64_t hour = 60 * minute;
constexpr std::int64_t day = 24 * hour;

std::int64_t utc(int y, unsigned mo, unsigned d, int hh, int mm = 0, int ss = 0, int msec = 0) {
  using namespace std::chrono;
  auto tp = date::sys_days{date::year{y} / date::month{mo} / date::day{d}} + hours{hh} + minutes{mm} + seconds{ss} +
            milliseconds{msec};
  return duration_cast<milliseconds>(tp.time_since_epoch()).count();
}

const date::time_zone& zone(const char* name) {
  auto z = resolve_reset_zone(name);
  REQUIRE(z.ok());
  return **z;
}

reset_policy daily_at(int at_hour, std::optional<std::int64_t> idle = std::nullopt) {
  return reset_policy{reset_mode::daily, at_hour, idle, true};
}

reset_policy idle_only(std::int64_t minutes) { return reset_policy{reset_mode::idle, 4, minutes, true}; }

lifecycle_timestamps stamps(std::optional<double> started, std::optional<double> last = std::nullopt,
                            std::optional<double> updated = std::nullopt) {
  return lifecycle_timestamps{updated, started, last};
}

double d(std::int64_t t) { return static_cast<double>(t); }

}  // namespace

TEST_CASE("resolve_reset_policy: defaults and the legacy idleMinutes [R§4.1]") {
  session_reset_config none;
  auto p = resolve_reset_policy(none, reset_type::direct);
  CHECK(p.mode == reset_mode::daily);  // JSON-era default
  CHECK(default_reset_mode == reset_mode::daily);
  CHECK(p.at_hour == 4);
  CHECK_FALSE(p.idle_minutes);
  CHECK_FALSE(p.configured);

  session_reset_config legacy;
  legacy.idle_minutes = 30;
  p = resolve_reset_policy(legacy, reset_type::direct);
  CHECK(p.mode == reset_mode::idle);  // legacy idle without explicit reset blocks -> idle
  CHECK(p.idle_minutes == 30);
  CHECK(p.configured);

  // resetByType present: legacy idle no longer switches the mode, but still supplies minutes.
  legacy.reset_by_type = reset_by_type_config{};
  legacy.reset_by_type->group = reset_config{reset_mode::idle, std::nullopt, 5.0};
  p = resolve_reset_policy(legacy, reset_type::direct);
  CHECK(p.mode == reset_mode::daily);
  CHECK(p.idle_minutes == 30);
}

TEST_CASE("resolve_reset_policy: atHour clamp, idle floor, idle mode without minutes [R§4.1]") {
  struct row {
    std::optional<double> at_hour;
    int expected;
  };
  for (auto [raw, expected] : {row{27.9, 23}, row{-3, 0}, row{5.7, 5}, row{0, 0}, row{23, 23},
                               row{std::numeric_limits<double>::quiet_NaN(), 4},
                               row{std::numeric_limits<double>::infinity(), 4}, row{std::nullopt, 4}}) {
    session_reset_config c;
    c.reset = reset_config{reset_mode::daily, raw, std::nullopt};
    CHECK(resolve_reset_policy(c, reset_type::direct).at_hour == expected);
  }
  session_reset_config c;
  c.reset = reset_config{reset_mode::idle, std::nullopt, std::nullopt};
  auto p = resolve_reset_policy(c, reset_type::direct);
  CHECK(p.mode == reset_mode::idle);
  REQUIRE(p.idle_minutes);
  CHECK(*p.idle_minutes == 0);  // 0 = never expires

  c.reset->idle_minutes = 90.9;
  CHECK(resolve_reset_policy(c, reset_type::direct).idle_minutes == 90);
  c.reset->idle_minutes = -10;
  CHECK(resolve_reset_policy(c, reset_type::direct).idle_minutes == 0);

  c.reset = reset_config{reset_mode::daily, 6.0, std::nullopt};
  CHECK_FALSE(resolve_reset_policy(c, reset_type::direct).idle_minutes);
  c.reset->mode = reset_mode::none;
  CHECK(resolve_reset_policy(c, reset_type::direct).mode == reset_mode::none);
}

TEST_CASE("resolve_reset_policy: per-type blocks, dm alias and member fall-through [R§4.1]") {
  session_reset_config c;
  c.reset = reset_config{reset_mode::daily, 6.0, 120.0};
  c.reset_by_type = reset_by_type_config{};
  c.reset_by_type->dm = reset_config{reset_mode::idle, std::nullopt, 15.0};
  c.reset_by_type->thread = reset_config{std::nullopt, std::nullopt, 45.0};

  auto direct = resolve_reset_policy(c, reset_type::direct);
  CHECK(direct.mode == reset_mode::idle);  // dm = legacy alias of direct
  CHECK(direct.idle_minutes == 15);
  CHECK(direct.at_hour == 6);  // falls through to reset.atHour

  auto thread = resolve_reset_policy(c, reset_type::thread);
  CHECK(thread.mode == reset_mode::daily);  // thread block has no mode
  CHECK(thread.idle_minutes == 45);

  auto group = resolve_reset_policy(c, reset_type::group);
  CHECK(group.mode == reset_mode::daily);
  CHECK(group.idle_minutes == 120);

  c.reset_by_type->direct = reset_config{reset_mode::none, std::nullopt, std::nullopt};
  direct = resolve_reset_policy(c, reset_type::direct);
  CHECK(direct.mode == reset_mode::none);  // direct wins over dm
  CHECK(direct.idle_minutes == 120);
}

TEST_CASE("resolve_reset_policy: a per-channel override replaces reset and suppresses type and legacy [R§4.1]") {
  session_reset_config c;
  c.reset = reset_config{reset_mode::daily, 6.0, std::nullopt};
  c.reset_by_type = reset_by_type_config{};
  c.reset_by_type->direct = reset_config{reset_mode::none, std::nullopt, std::nullopt};
  c.idle_minutes = 45;
  c.reset_by_channel["telegram"] = reset_config{reset_mode::idle, std::nullopt, 10.0};
  c.reset_by_channel["discord"] = reset_config{std::nullopt, 7.0, std::nullopt};

  auto tg = resolve_reset_policy(c, reset_type::direct, " Telegram ");
  CHECK(tg.mode == reset_mode::idle);
  CHECK(tg.idle_minutes == 10);
  CHECK(tg.at_hour == 4);  // session.reset.atHour (6) is not used: the override replaces it
  CHECK(tg.configured);

  auto dc = resolve_reset_policy(c, reset_type::direct, "discord");
  CHECK(dc.mode == reset_mode::daily);  // default mode; the type block is suppressed
  CHECK(dc.at_hour == 7);
  CHECK_FALSE(dc.idle_minutes);  // legacy idleMinutes suppressed

  auto other = resolve_reset_policy(c, reset_type::direct, "slack");
  CHECK(other.mode == reset_mode::none);
  CHECK(other.at_hour == 6);
  CHECK(other.idle_minutes == 45);
}

TEST_CASE("resolve_reset_type reads flags and key markers [R§4.1]") {
  CHECK(resolve_reset_type("agent:main:telegram:direct:1", false, false) == reset_type::direct);
  CHECK(resolve_reset_type("agent:main:telegram:group:-100", false, false) == reset_type::group);
  CHECK(resolve_reset_type("agent:main:discord:channel:42", false, false) == reset_type::group);
  CHECK(resolve_reset_type("agent:main:slack:channel:42:thread:9", false, false) == reset_type::thread);
  CHECK(resolve_reset_type("agent:main:main", true, false) == reset_type::group);
  CHECK(resolve_reset_type("agent:main:main", true, true) == reset_type::thread);
}

TEST_CASE("resolve_reset_zone: IANA names, host zone, unknown names") {
  CHECK(resolve_reset_zone("Europe/Berlin").ok());
  CHECK(resolve_reset_zone("").ok());
  auto bad = resolve_reset_zone("Mars/Olympus_Mons");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == errc::invalid_argument);
  CHECK(bad.error().message().find("Mars/Olympus_Mons") != std::string::npos);
}

TEST_CASE("freshness, daily at 04:00 local: sessionStartedAt against the most recent boundary [R§4.2]") {
  const auto& z = zone("UTC");
  const auto policy = daily_at(4);
  const std::int64_t yesterday_10 = utc(2026, 7, 19, 10);
  struct row {
    const char* what;
    lifecycle_timestamps ts;
    std::int64_t now;
    bool fresh;
    std::int64_t boundary;
  };
  const row table[] = {
      {"message at 03:59", stamps(d(yesterday_10), d(utc(2026, 7, 20, 3, 0))), utc(2026, 7, 20, 3, 59), true,
       utc(2026, 7, 19, 4)},
      {"message at 04:01", stamps(d(yesterday_10), d(utc(2026, 7, 20, 3, 0))), utc(2026, 7, 20, 4, 1), false,
       utc(2026, 7, 20, 4)},
      {"started 03:59, active 04:00:30, checked 04:01: start time decides",
       stamps(d(utc(2026, 7, 20, 3, 59)), d(utc(2026, 7, 20, 4, 0, 30))), utc(2026, 7, 20, 4, 1), false,
       utc(2026, 7, 20, 4)},
      {"started exactly at the boundary", stamps(d(utc(2026, 7, 20, 4))), utc(2026, 7, 20, 4, 1), true,
       utc(2026, 7, 20, 4)},
      {"1 ms before the next boundary", stamps(d(utc(2026, 7, 20, 4))), utc(2026, 7, 21, 3, 59, 59, 999), true,
       utc(2026, 7, 20, 4)},
      {"at the next boundary", stamps(d(utc(2026, 7, 20, 4))), utc(2026, 7, 21, 4), false, utc(2026, 7, 21, 4)},
      {"no sessionStartedAt: updatedAt stands in (before boundary)",
       stamps(std::nullopt, std::nullopt, d(utc(2026, 7, 20, 3))), utc(2026, 7, 20, 4, 1), false,
       utc(2026, 7, 20, 4)},
      {"no sessionStartedAt: updatedAt stands in (after boundary)",
       stamps(std::nullopt, std::nullopt, d(utc(2026, 7, 20, 4, 30))), utc(2026, 7, 20, 5), true,
       utc(2026, 7, 20, 4)},
      {"sessionStartedAt in the future is ignored (updatedAt used)",
       stamps(d(utc(2026, 7, 20, 6)), std::nullopt, d(yesterday_10)), utc(2026, 7, 20, 4, 1), false,
       utc(2026, 7, 20, 4)},
      {"everything in the future: started falls back to 0",
       stamps(d(utc(2026, 7, 21, 0)), d(utc(2026, 7, 21, 0)), d(utc(2026, 7, 21, 0))), utc(2026, 7, 20, 12), false,
       utc(2026, 7, 20, 4)},
      {"negative and NaN timestamps are ignored",
       stamps(-5.0, std::nullopt, std::numeric_limits<double>::quiet_NaN()), utc(2026, 7, 20, 12), false,
       utc(2026, 7, 20, 4)},
  };
  for (const auto& r : table) {
    INFO(r.what);
    auto f = evaluate_freshness(r.ts, r.now, policy, z);
    CHECK(f.fresh == r.fresh);
    CHECK(f.daily_reset_at == r.boundary);
    CHECK_FALSE(f.idle_expires_at);
    if (r.fresh)
      CHECK_FALSE(f.stale_reason);
    else
      CHECK(f.stale_reason == session_end_reason::daily);
  }
}

TEST_CASE("freshness, idle: lastInteractionAt + idleMinutes, strictly after, 0 = never expires [R§4.2]") {
  const auto& z = zone("UTC");
  const std::int64_t t = utc(2026, 7, 20, 12);
  auto f = evaluate_freshness(stamps(d(t - hour), d(t)), t + 60 * minute, idle_only(60), z);
  CHECK(f.fresh);
  CHECK(f.idle_expires_at == d(t + 60 * minute));
  CHECK_FALSE(f.daily_reset_at);
  f = evaluate_freshness(stamps(d(t - hour), d(t)), t + 60 * minute + 1, idle_only(60), z);
  CHECK_FALSE(f.fresh);
  CHECK(f.stale_reason == session_end_reason::idle);

  // lastInteractionAt missing -> sessionStartedAt; in the future -> ignored as well.
  f = evaluate_freshness(stamps(d(t - 2 * hour)), t, idle_only(60), z);
  CHECK_FALSE(f.fresh);
  CHECK(f.idle_expires_at == d(t - hour));
  f = evaluate_freshness(stamps(d(t - 2 * hour), d(t + 10 * minute)), t, idle_only(60), z);
  CHECK_FALSE(f.fresh);

  // mode idle without minutes resolves to 0 = never.
  session_reset_config c;
  c.reset = reset_config{reset_mode::idle, std::nullopt, std::nullopt};
  const auto never = resolve_reset_policy(c, reset_type::direct);
  f = evaluate_freshness(stamps(0.0, 0.0, 0.0), t + 3650 * day, never, z);
  CHECK(f.fresh);
  CHECK_FALSE(f.idle_expires_at);
  CHECK_FALSE(f.daily_reset_at);
  CHECK_FALSE(stale_at(stamps(0.0, 0.0, 0.0), never, z, t));

  const reset_policy off{reset_mode::none, 4, std::nullopt, true};
  CHECK(evaluate_freshness(stamps(0.0, 0.0, 0.0), t, off, z).fresh);
}

TEST_CASE("freshness, daily + idle: whichever expires first, ties go to daily [R§4.2]") {
  const auto& z = zone("UTC");
  const auto policy = daily_at(4, 60);
  const double started = d(utc(2026, 7, 19, 10));
  struct row {
    const char* what;
    lifecycle_timestamps ts;
    std::int64_t now;
    std::optional<session_end_reason> reason;
  };
  const row table[] = {
      {"both stale, boundary 04:00 before idle expiry 04:30", stamps(started, d(utc(2026, 7, 20, 3, 30))),
       utc(2026, 7, 20, 4, 45), session_end_reason::daily},
      {"both stale, idle expiry 03:00 before boundary 04:00", stamps(started, d(utc(2026, 7, 20, 2))),
       utc(2026, 7, 20, 4, 45), session_end_reason::idle},
      {"both stale, tie at 04:00 -> daily", stamps(started, d(utc(2026, 7, 20, 3))), utc(2026, 7, 20, 4, 45),
       session_end_reason::daily},
      {"only idle", stamps(d(utc(2026, 7, 20, 4, 10)), d(utc(2026, 7, 20, 4, 10))), utc(2026, 7, 20, 5, 20),
       session_end_reason::idle},
      {"only daily", stamps(started, d(utc(2026, 7, 20, 3, 59))), utc(2026, 7, 20, 4, 1), session_end_reason::daily},
      {"neither", stamps(d(utc(2026, 7, 20, 4, 10)), d(utc(2026, 7, 20, 5))), utc(2026, 7, 20, 5, 30), std::nullopt},
  };
  for (const auto& r : table) {
    INFO(r.what);
    auto f = evaluate_freshness(r.ts, r.now, policy, z);
    CHECK(f.fresh == !r.reason);
    CHECK(f.stale_reason == r.reason);
  }
}

TEST_CASE("daily boundary in non-UTC zones: Asia/Kolkata (+05:30) and America/Los_Angeles") {
  const auto& kolkata = zone("Asia/Kolkata");
  // 04:00 IST = 22:30 UTC of the previous day.
  CHECK(most_recent_daily_boundary(utc(2026, 7, 20, 22, 29), 4, kolkata) == utc(2026, 7, 19, 22, 30));
  CHECK(most_recent_daily_boundary(utc(2026, 7, 20, 22, 31), 4, kolkata) == utc(2026, 7, 20, 22, 30));
  const auto ts = stamps(d(utc(2026, 7, 20, 10)));
  CHECK(evaluate_freshness(ts, utc(2026, 7, 20, 22, 29), daily_at(4), kolkata).fresh);  // 03:59 IST
  CHECK_FALSE(evaluate_freshness(ts, utc(2026, 7, 20, 22, 31), daily_at(4), kolkata).fresh);  // 04:01 IST

  const auto& la = zone("America/Los_Angeles");
  // January: PST (-8) -> 04:00 = 12:00 UTC. July: PDT (-7) -> 11:00 UTC.
  CHECK(most_recent_daily_boundary(utc(2026, 1, 15, 11, 59), 4, la) == utc(2026, 1, 14, 12));
  CHECK(most_recent_daily_boundary(utc(2026, 1, 15, 12, 1), 4, la) == utc(2026, 1, 15, 12));
  CHECK(most_recent_daily_boundary(utc(2026, 7, 15, 11, 1), 4, la) == utc(2026, 7, 15, 11));
  CHECK(next_daily_boundary_after(utc(2026, 7, 15, 10, 59), daily_at(4), la) == utc(2026, 7, 15, 11));
  // A session started 03:59 PDT and checked at 04:01 PDT is stale.
  CHECK_FALSE(evaluate_freshness(stamps(d(utc(2026, 7, 15, 10, 59))), utc(2026, 7, 15, 11, 1), daily_at(4), la).fresh);
}

TEST_CASE("daily boundary across DST: America/New_York 2026-03-08 and 2026-11-01") {
  const auto& ny = zone("America/New_York");
  struct row {
    const char* what;
    int at_hour;
    std::int64_t boundary;       // that day's boundary
    std::int64_t previous;       // the day before's
  };
  const row table[] = {
      // Spring forward: 02:00 EST -> 03:00 EDT. 02:00 does not exist: setHours gives 03:00 EDT.
      {"spring, 00:00 EST", 0, utc(2026, 3, 8, 5), utc(2026, 3, 7, 5)},
      {"spring, 01:00 EST", 1, utc(2026, 3, 8, 6), utc(2026, 3, 7, 6)},
      {"spring, 02:00 in the gap -> 03:00 EDT", 2, utc(2026, 3, 8, 7), utc(2026, 3, 7, 7)},
      {"spring, 03:00 EDT", 3, utc(2026, 3, 8, 7), utc(2026, 3, 7, 8)},
      {"spring, 04:00 EDT", 4, utc(2026, 3, 8, 8), utc(2026, 3, 7, 9)},
      // Fall back: 02:00 EDT -> 01:00 EST. 01:00 happens twice: the earlier (EDT) counts.
      {"fall, 00:00 EDT", 0, utc(2026, 11, 1, 4), utc(2026, 10, 31, 4)},
      {"fall, 01:00 twice -> 01:00 EDT", 1, utc(2026, 11, 1, 5), utc(2026, 10, 31, 5)},
      {"fall, 02:00 EST", 2, utc(2026, 11, 1, 7), utc(2026, 10, 31, 6)},
      {"fall, 04:00 EST", 4, utc(2026, 11, 1, 9), utc(2026, 10, 31, 8)},
  };
  for (const auto& r : table) {
    INFO(r.what);
    const auto policy = daily_at(r.at_hour);
    CHECK(most_recent_daily_boundary(r.boundary, r.at_hour, ny) == r.boundary);
    CHECK(most_recent_daily_boundary(r.boundary + 6 * hour, r.at_hour, ny) == r.boundary);
    CHECK(most_recent_daily_boundary(r.boundary - 1, r.at_hour, ny) == r.previous);
    CHECK(next_daily_boundary_after(r.previous, policy, ny) == r.boundary);
    CHECK(next_daily_boundary_after(r.boundary - 1, policy, ny) == r.boundary);
    // A session started 1 ms before the boundary is fresh just before it, stale at it.
    const auto ts = stamps(d(r.boundary - 1));
    CHECK(evaluate_freshness(ts, r.boundary - 1, policy, ny).fresh);
    CHECK_FALSE(evaluate_freshness(ts, r.boundary, policy, ny).fresh);
    CHECK(stale_at(ts, policy, ny, r.boundary - 1) == r.boundary);
  }
  // In the fold, the second 01:30 (EST, 06:30 UTC) is after the 01:00 EDT boundary.
  CHECK(most_recent_daily_boundary(utc(2026, 11, 1, 6, 30), 1, ny) == utc(2026, 11, 1, 5));
  CHECK(next_daily_boundary_after(utc(2026, 11, 1, 5), daily_at(1), ny) == utc(2026, 11, 2, 6));
}

TEST_CASE("daily boundary across DST: Europe/Berlin 2026-03-29 and 2026-10-25") {
  const auto& berlin = zone("Europe/Berlin");
  struct row {
    const char* what;
    int at_hour;
    std::int64_t boundary;
    std::int64_t previous;
  };
  const row table[] = {
      // Spring forward: 02:00 CET -> 03:00 CEST.
      {"spring, 01:00 CET", 1, utc(2026, 3, 29, 0), utc(2026, 3, 28, 0)},
      {"spring, 02:00 in the gap -> 03:00 CEST", 2, utc(2026, 3, 29, 1), utc(2026, 3, 28, 1)},
      {"spring, 03:00 CEST", 3, utc(2026, 3, 29, 1), utc(2026, 3, 28, 2)},
      {"spring, 04:00 CEST", 4, utc(2026, 3, 29, 2), utc(2026, 3, 28, 3)},
      // Fall back: 03:00 CEST -> 02:00 CET; 02:00 happens twice: 02:00 CEST counts.
      {"fall, 01:00 CEST", 1, utc(2026, 10, 24, 23), utc(2026, 10, 23, 23)},
      {"fall, 02:00 twice -> 02:00 CEST", 2, utc(2026, 10, 25, 0), utc(2026, 10, 24, 0)},
      {"fall, 03:00 CET", 3, utc(2026, 10, 25, 2), utc(2026, 10, 24, 1)},
      {"fall, 04:00 CET", 4, utc(2026, 10, 25, 3), utc(2026, 10, 24, 2)},
  };
  for (const auto& r : table) {
    INFO(r.what);
    const auto policy = daily_at(r.at_hour);
    CHECK(most_recent_daily_boundary(r.boundary, r.at_hour, berlin) == r.boundary);
    CHECK(most_recent_daily_boundary(r.boundary - 1, r.at_hour, berlin) == r.previous);
    CHECK(next_daily_boundary_after(r.previous, policy, berlin) == r.boundary);
    const auto ts = stamps(d(r.previous));
    CHECK(evaluate_freshness(ts, r.boundary - 1, policy, berlin).fresh);
    CHECK_FALSE(evaluate_freshness(ts, r.boundary, policy, berlin).fresh);
  }
}

TEST_CASE("timer instants: next boundary, idle expiry, stale_at") {
  const auto& z = zone("UTC");
  const std::int64_t now = utc(2026, 7, 20, 6);
  CHECK(next_daily_boundary_after(now, daily_at(4), z) == utc(2026, 7, 21, 4));
  CHECK(next_daily_boundary_after(utc(2026, 7, 21, 4), daily_at(4), z) == utc(2026, 7, 22, 4));
  CHECK_FALSE(next_daily_boundary_after(now, idle_only(60), z));

  const auto ts = stamps(d(utc(2026, 7, 20, 5)), d(utc(2026, 7, 20, 5, 30)));
  CHECK(idle_expiry_at(ts, idle_only(60), now) == utc(2026, 7, 20, 6, 30) + 1);  // stale when now > expiry
  CHECK_FALSE(idle_expiry_at(ts, daily_at(4), now));
  CHECK(stale_at(ts, daily_at(4), z, now) == utc(2026, 7, 21, 4));
  CHECK(stale_at(ts, idle_only(60), z, now) == utc(2026, 7, 20, 6, 30) + 1);
  CHECK(stale_at(ts, daily_at(4, 60), z, now) == utc(2026, 7, 20, 6, 30) + 1);  // earlier of the two
  CHECK(stale_at(ts, daily_at(4, 24 * 60), z, now) == utc(2026, 7, 21, 4));
  // Already stale -> now.
  CHECK(stale_at(stamps(d(utc(2026, 7, 19, 5))), daily_at(4), z, now) == now);
  // A sessionStartedAt still in the future counts from its own instant on.
  const auto future = stamps(d(now + hour), std::nullopt, d(utc(2026, 7, 19, 5)));
  CHECK(stale_at(future, daily_at(4), z, now) == now);  // read now: started = updatedAt (yesterday)
  const auto future2 = stamps(d(now + hour), std::nullopt, d(now - hour));
  CHECK(stale_at(future2, daily_at(4), z, now) == utc(2026, 7, 21, 4));
}

TEST_CASE("stale_at agrees with evaluate_freshness over random rows, times, zones and policies") {
  const char* zones[] = {"UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "America/Los_Angeles",
                         "Australia/Lord_Howe"};
  const std::int64_t anchors[] = {utc(2026, 3, 8, 6), utc(2026, 11, 1, 5), utc(2026, 3, 29, 0),
                                  utc(2026, 10, 25, 0), utc(2026, 7, 20, 12), utc(2026, 4, 5, 15)};
  std::mt19937_64 rng(20260720);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  auto maybe_time = [&](std::int64_t now) -> std::optional<double> {
    switch (pick(0, 9)) {
      case 0: return std::nullopt;
      case 1: return d(now + pick(1, 2 * day));  // in the future
      default: return d(now - pick(0, 3 * day));
    }
  };
  int checked = 0;
  for (int i = 0; i < 4000; ++i) {
    const auto& z = zone(zones[pick(0, 5)]);
    const std::int64_t now = anchors[pick(0, 5)] + pick(-2 * day, 2 * day);
    reset_policy policy;
    policy.mode = static_cast<reset_mode>(pick(0, 2));
    policy.at_hour = static_cast<int>(pick(0, 23));
    const std::optional<std::int64_t> idle_choices[] = {std::nullopt, 0, 1, 30, 60, 1440};
    policy.idle_minutes = idle_choices[pick(0, 5)];
    const lifecycle_timestamps ts{maybe_time(now), maybe_time(now), maybe_time(now)};
    INFO("case " << i << " now " << now << " mode " << reset_mode_name(policy.mode) << " at " << policy.at_hour);

    const auto s = stale_at(ts, policy, z, now);
    if (!s) {
      CHECK(evaluate_freshness(ts, now, policy, z).fresh);
      CHECK(evaluate_freshness(ts, now + 400 * day, policy, z).fresh);
      continue;
    }
    REQUIRE(*s >= now);
    CHECK_FALSE(evaluate_freshness(ts, *s, policy, z).fresh);
    if (*s > now) {
      CHECK(evaluate_freshness(ts, *s - 1, policy, z).fresh);
      CHECK(evaluate_freshness(ts, now, policy, z).fresh);
      CHECK(evaluate_freshness(ts, pick(now, *s - 1), policy, z).fresh);
    }
    // After it: stays stale unless a future timestamp starts to count later on.
    const std::int64_t later = *s + pick(1, 2 * day);
    bool regime_changes = false;
    for (auto x : {ts.updated_at, ts.session_started_at, ts.last_interaction_at})
      if (x && *x > d(*s) && *x <= d(later)) regime_changes = true;
    if (!regime_changes) CHECK_FALSE(evaluate_freshness(ts, later, policy, z).fresh);
    ++checked;
  }
  CHECK(checked > 1000);
}
