// session.maintenance.archiveDashboardAfter (OpenClaw 2026.9): the rule, its step in the
// maintenance plan and the offline applier; and transcripts kept compressed as the other steps
// see them (never missing, archived as they are).
#include <catch2/catch.hpp>

#include <algorithm>

#include "actors/maintenance/dashboard_archive.hpp"
#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "messages/json_access.hpp"
#include "storage/cold_transcript.hpp"
#include "tests/actors/maintenance/maintenance_fixture.hpp"

namespace sessionrt::testing {
namespace {

using actors::action_kind;
using actors::maintenance_mode;
using actors::maintenance_settings;
using actors::maintenance_step;

maintenance_settings enforce_settings() {
  maintenance_settings s;
  s.mode = maintenance_mode::enforce;
  return s;
}

std::vector<std::string> archived_keys(const actors::maintenance_plan& plan) {
  std::vector<std::string> keys;
  for (const auto& a : plan.actions)
    if (a.kind == action_kind::archive_row) keys.push_back(a.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

actors::apply_report apply(sessions_fixture& fx, const actors::maintenance_plan& plan) {
  manual_clock clock(fixture_now);
  storage::session_store_file file(storage::posix_fs(), clock, fx.store_path());
  REQUIRE(file.load().ok());
  auto rep = actors::apply_plan(storage::posix_fs(), file, fx.dir(), plan);
  REQUIRE(rep.error.ok());
  return rep;
}

boost::json::object saved_row(const sessions_fixture& fx, const std::string& key) {
  auto parsed = storage::load_from_text(read_text(fx.store_path()));
  REQUIRE(parsed.ok());
  const session_entry* e = parsed->store.find(key);
  REQUIRE(e);
  return e->json();
}

}  // namespace

TEST_CASE("dashboard archive rule: dashboard keys only, by activity, never a pinned, locked, running or archived row") {
  using actors::maintenance_row_of;
  const std::int64_t now = fixture_now, week = 7 * day;
  auto row = [&](const std::string& key, boost::json::object o) {
    return maintenance_row_of(key, session_entry(std::move(o)));
  };
  CHECK(actors::is_dashboard_key("agent:main:dashboard:9f1c"));
  CHECK(actors::is_dashboard_key("AGENT:Ops:Dashboard:X"));  // keys compare lower-cased
  CHECK_FALSE(actors::is_dashboard_key("agent:main:main"));
  CHECK_FALSE(actors::is_dashboard_key("dashboard:9f1c"));  // not an agent key
  CHECK_FALSE(actors::is_dashboard_key("agent:main:webchat:dashboard:1"));

  const boost::json::object old{{"sessionId", "s"}, {"updatedAt", now - 8 * day}};
  CHECK(actors::is_stale_dashboard(row("agent:main:dashboard:a", old), week, now));
  CHECK_FALSE(actors::is_stale_dashboard(row("agent:main:direct:a", old), week, now));
  CHECK_FALSE(actors::is_stale_dashboard(row("agent:main:dashboard:a", old), 0, now));
  CHECK_FALSE(actors::is_stale_dashboard(row("agent:main:dashboard:a", old), 9 * day, now));
  // Activity is the latest of lastInteractionAt, lastActivityAt, sessionStartedAt, updatedAt.
  for (const char* field : {"lastInteractionAt", "lastActivityAt", "sessionStartedAt"}) {
    boost::json::object o = old;
    o[field] = now - day;
    CHECK_FALSE(actors::is_stale_dashboard(row("agent:main:dashboard:a", o), week, now));
  }
  // No activity known: kept (OpenClaw cannot tell its age either).
  CHECK_FALSE(actors::is_stale_dashboard(row("agent:main:dashboard:a", {{"sessionId", "s"}}), week, now));
  // OpenClaw's preservations.
  auto with = [&](boost::json::object extra) {
    boost::json::object o = old;
    for (auto& kv : extra) o[kv.key()] = kv.value();
    return row("agent:main:dashboard:a", o);
  };
  CHECK_FALSE(actors::is_stale_dashboard(with({{"pinnedAt", now - 9 * day}}), week, now));
  CHECK(actors::is_stale_dashboard(with({{"pinnedAt", now - 9 * day}, {"spawnedBy", "agent:main:main"}}), week, now));
  CHECK_FALSE(actors::is_stale_dashboard(with({{"modelSelectionLocked", true}}), week, now));
  CHECK_FALSE(actors::is_stale_dashboard(with({{"status", "running"}}), week, now));
  CHECK_FALSE(actors::is_stale_dashboard(with({{"archivedAt", now - day}}), week, now));
}

TEST_CASE("dashboard archive in the plan: stale dashboards archived before the stale step, protected and preserved ones kept") {
  sessions_fixture fx;
  fx.row("agent:main:dashboard:a", "da", 8 * day);
  fx.row("agent:main:dashboard:b", "db", 2 * day);
  fx.row("agent:main:dashboard:ancient", "dz", 40 * day);  // archived as a dashboard, before the stale step sees it
  fx.row("agent:main:dashboard:kept", "dk", 8 * day);
  fx.row("agent:main:dashboard:recent", "dr", 8 * day, {{"lastInteractionAt", fixture_now - 3 * day}});
  fx.row("agent:main:direct:x", "dx", 8 * day);
  for (auto id : {"da", "db", "dz", "dk", "dr", "dx"}) fx.transcript(id, 200, 8 * day);
  fx.save();
  auto s = enforce_settings();
  auto plan = fx.plan(s, "agent:main:dashboard:kept");
  CHECK(archived_keys(plan) == std::vector<std::string>{"agent:main:dashboard:a", "agent:main:dashboard:ancient"});
  CHECK(plan.dashboards_archived == 2);
  CHECK(plan.pruned == 0);
  CHECK(plan.age_archived == 0);  // OpenClaw's write profile archives dashboards first
  CHECK(std::string(actors::row_label_in(plan, "agent:main:dashboard:a")) == "archive-dashboard");
  CHECK(std::string(actors::row_label_in(plan, "agent:main:dashboard:ancient")) == "archive-dashboard");
  CHECK(plan.after_count == 6);  // archived rows stay
  // The row grows by exactly archivedAt and archiveReason in the projected store.
  const auto* a = &*std::find_if(plan.actions.begin(), plan.actions.end(),
                                 [](const actors::plan_action& x) { return x.kind == action_kind::archive_row; });
  CHECK(a->at_ms == fixture_now);
  CHECK(a->updated_at == fixture_now - 8 * day);

  s.preserve_recent_ms = 10 * day;  // preserveRecent keeps it as it keeps rows from removal
  CHECK(archived_keys(fx.plan(s)) == std::vector<std::string>{"agent:main:dashboard:ancient"});
  s.preserve_recent_ms.reset();
  s.archive_dashboard_after_ms.reset();  // archiveDashboardAfter: false: only the stale step's, by age
  auto no_dash = fx.plan(s);
  CHECK(archived_keys(no_dash) == std::vector<std::string>{"agent:main:dashboard:ancient"});
  CHECK(no_dash.age_archived == 1);
  s.archive_dashboard_after_ms = 1 * day;
  CHECK(archived_keys(fx.plan(s)) ==
        std::vector<std::string>{"agent:main:dashboard:a", "agent:main:dashboard:ancient", "agent:main:dashboard:b",
                                 "agent:main:dashboard:kept", "agent:main:dashboard:recent"});
  // A protected dashboard row (group chat) is never archived.
  fx.row("agent:main:dashboard:g", "dg", 8 * day, {{"chatType", "group"}});
  fx.save();
  const auto with_group = archived_keys(fx.plan(s));
  CHECK(with_group.size() == 5);
  CHECK(std::count(with_group.begin(), with_group.end(), "agent:main:dashboard:g") == 0);
}

TEST_CASE("dashboard archive applied offline: the row stays with archivedAt and archiveReason, its updatedAt and place kept") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", day);
  fx.row("agent:main:dashboard:a", "da", 8 * day, {{"label", "old chat"}, {"archivedBy", "someone"}});
  fx.row("agent:main:dashboard:b", "db", 9 * day);
  for (auto id : {"m1", "da", "db"}) fx.transcript(id, 200, 8 * day);
  fx.save();
  const auto size_before = read_text(fx.store_path()).size();
  auto plan = fx.plan(enforce_settings());
  REQUIRE(plan.dashboards_archived == 2);
  auto rep = apply(fx, plan);
  CHECK(rep.applied.size() == 2);
  const auto a = saved_row(fx, "agent:main:dashboard:a");
  CHECK(a.at("archivedAt").to_number<std::int64_t>() == fixture_now);
  CHECK(json::get_string(a, "archiveReason") == std::optional<std::string_view>("stale-dashboard"));
  CHECK_FALSE(a.contains("archivedBy"));
  CHECK(a.at("updatedAt").to_number<std::int64_t>() == fixture_now - 8 * day);
  std::vector<std::string> keys;
  for (const auto& kv : a) keys.emplace_back(kv.key());
  CHECK(keys == std::vector<std::string>{"sessionId", "updatedAt", "label", "archivedAt", "archiveReason"});
  CHECK(fx.keys_on_disk() ==
        std::vector<std::string>{"agent:main:main", "agent:main:dashboard:a", "agent:main:dashboard:b"});
  // The plan's projected store size was right for the row without archivedBy.
  const auto grown = read_text(fx.store_path()).size() - size_before;
  CHECK(grown + std::string(",\n    \"archivedBy\": \"someone\"").size() == 2 * actors::archived_row_extra_bytes(fixture_now));
  // Archived: the next plan leaves them alone.
  CHECK(fx.plan(enforce_settings()).dashboards_archived == 0);
}

TEST_CASE("dashboard archive applied offline: a row updated since the plan is not archived") {
  sessions_fixture fx;
  fx.row("agent:main:dashboard:a", "da", 8 * day);
  fx.transcript("da", 200, 8 * day);
  fx.save();
  auto plan = fx.plan(enforce_settings());
  REQUIRE(plan.dashboards_archived == 1);
  fx.row("agent:main:dashboard:a", "da", 0);  // a turn meanwhile
  fx.save();
  auto rep = apply(fx, plan);
  CHECK(rep.applied.empty());
  REQUIRE(rep.skipped.size() == 1);
  CHECK_THAT(rep.skipped[0], Catch::Contains("agent:main:dashboard:a"));
  CHECK_FALSE(saved_row(fx, "agent:main:dashboard:a").contains("archivedAt"));
}

TEST_CASE("a transcript kept compressed is never missing, and its row's removal archives it as it is") {
  sessions_fixture fx;
  // Synthetic rows: the stale step removes them (others it archives in place, with their transcripts).
  fx.row("agent:main:hook:cold", "c1", 40 * day);
  fx.row("agent:main:hook:warm", "w1", 40 * day);
  fx.transcript("c1", 300, 40 * day);
  fx.transcript("w1", 300, 40 * day);
  REQUIRE(storage::compress_transcript(storage::posix_fs(), fx.path("c1.jsonl"))->done);
  fx.save();
  // --fix-missing: the compressed one is there.
  auto rows = fx.rows();
  auto files = fx.listing();
  actors::planner_input in;
  in.rows = &rows;
  in.files = &files;
  in.settings = enforce_settings();
  in.settings.prune_after_ms = 365 * day;
  in.now_ms = fixture_now;
  in.fix_missing = true;
  auto fix = actors::plan_maintenance(in);
  CHECK(fix.missing == 0);
  // Stale: both rows go, both transcripts archived (the compressed one as .zst.deleted.<ts>).
  auto plan = fx.plan(enforce_settings());
  CHECK(plan.pruned == 2);
  apply(fx, plan);
  auto names = list_names(fx.dir());
  CHECK(has_name_starting(names, "c1.jsonl.zst.deleted."));
  CHECK(has_name_starting(names, "w1.jsonl.deleted."));
  CHECK_FALSE(has_name_starting(names, "c1.jsonl.deleted."));
}

}  // namespace sessionrt::testing
