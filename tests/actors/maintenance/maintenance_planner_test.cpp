// The maintenance planner and its offline applier, step by step, on sessions dirs built on disk.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "storage/forwarding_fs.hpp"
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

std::vector<std::string> removed_keys(const actors::maintenance_plan& plan, maintenance_step step) {
  std::vector<std::string> keys;
  for (const auto& a : plan.actions)
    if (a.kind == action_kind::remove_row && a.step == step) keys.push_back(a.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The rows `step` archives in place, sorted.
std::vector<std::string> archived_keys(const actors::maintenance_plan& plan, maintenance_step step) {
  std::vector<std::string> keys;
  for (const auto& a : plan.actions)
    if (a.kind == action_kind::archive_row && a.step == step) keys.push_back(a.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The saved row of `key` ("" fields when absent).
boost::json::object row_on_disk(const sessions_fixture& fx, const std::string& key) {
  auto parsed = storage::load_from_text(read_text(fx.store_path()));
  REQUIRE(parsed.ok());
  const auto* e = parsed->store.find(key);
  return e ? e->json() : boost::json::object{};
}

const actors::plan_action* file_action(const actors::maintenance_plan& plan, const std::string& file) {
  for (const auto& a : plan.actions)
    if (a.kind != action_kind::remove_row && a.kind != action_kind::archive_row && a.file == file) return &a;
  return nullptr;
}

// Applies the whole plan to the fixture's files; returns the report.
actors::apply_report apply(sessions_fixture& fx, const actors::maintenance_plan& plan, std::size_t batch = 50000) {
  manual_clock clock(fixture_now);
  storage::session_store_file file(storage::posix_fs(), clock, fx.store_path());
  auto loaded = file.load();
  REQUIRE(loaded.ok());
  auto rep = actors::apply_plan(storage::posix_fs(), file, fx.dir(), plan, batch);
  REQUIRE(rep.error.ok());
  return rep;
}

const std::string group_key = "agent:main:telegram:group:-100123";
const std::string thread_key = "agent:main:slack:channel:c01:thread:1700000000.1";
const std::string topic_key = "agent:main:telegram:group:-100999:topic:42";
const std::string channel_typed_key = "agent:main:discord:direct:77";  // a delivery route, chatType channel

void add_protected_rows(sessions_fixture& fx, std::int64_t age) {
  fx.row(group_key, "g1", age);
  fx.row(thread_key, "t1", age);
  fx.row(topic_key, "tp1", age);
  fx.row(channel_typed_key, "c1", age, {{"chatType", "channel"}});
  for (const char* id : {"g1", "t1", "tp1", "c1"}) fx.transcript(id, 3000, age);
}

}  // namespace

TEST_CASE("maintenance settings: defaults and derived figures", "[maintenance]") {
  maintenance_settings s;
  CHECK(s.mode == maintenance_mode::warn);
  CHECK(s.prune_after_ms == 30 * day);
  CHECK(actors::entry_high_water(500) == 550);
  CHECK(actors::entry_high_water(10) == 11);
  CHECK(actors::entry_high_water(1000) == 1100);
  CHECK(actors::entry_high_water(0) == 1);
  CHECK(*actors::reset_archive_retention(s) == 30 * day);
  s.reset_archive_retention_disabled = true;
  CHECK_FALSE(actors::reset_archive_retention(s));
  CHECK_FALSE(actors::high_water_bytes(s));
  s.max_disk_bytes = 1000;
  CHECK(*actors::high_water_bytes(s) == 800);
  s.high_water_bytes = 5000;
  CHECK(*actors::high_water_bytes(s) == 1000);  // clamped
}

TEST_CASE("maintenance planner: the stale step archives old rows in place, removes old synthetic ones, keeps "
          "protected, active and recent ones",
          "[maintenance]") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", 40 * day);                   // the active key
  fx.row("agent:main:explicit:dm5", "d5", 40 * day);      // stale ordinary row (no delivery: unprotected)
  fx.row("agent:main:cron:job1:run:r1", "r1", 31 * day);       // synthetic: always eligible
  fx.row("agent:main:explicit:dm6", "d6", 2 * day);       // recent
  fx.row("agent:main:explicit:dm7", "d7", std::nullopt);  // no updatedAt: never age-pruned
  add_protected_rows(fx, 90 * day);
  for (const char* id : {"m1", "d5", "r1", "d6", "d7"}) fx.transcript(id, 500, 40 * day);
  fx.file("d5.trajectory.jsonl", 100, 40 * day);
  fx.save();

  auto plan = fx.plan(enforce_settings(), "agent:main:main");
  // OpenClaw 2026.9 (pruneStaleEntries): synthetic rows go, the others stay archived.
  CHECK(removed_keys(plan, maintenance_step::stale) == std::vector<std::string>{"agent:main:cron:job1:run:r1"});
  CHECK(archived_keys(plan, maintenance_step::stale) == std::vector<std::string>{"agent:main:explicit:dm5"});
  CHECK(plan.pruned == 1);
  CHECK(plan.age_archived == 1);
  CHECK(plan.before_count == 9);
  CHECK(plan.after_count == 8);
  // The removed row's transcript is archived as .deleted.<ts>; the archived row keeps its files.
  const auto* r1 = file_action(plan, "r1.jsonl");
  REQUIRE(r1);
  CHECK(r1->kind == action_kind::archive_file);
  CHECK(r1->step == maintenance_step::unreferenced);
  CHECK_FALSE(file_action(plan, "d5.jsonl"));
  CHECK_FALSE(file_action(plan, "d5.trajectory.jsonl"));
  CHECK_FALSE(file_action(plan, "m1.jsonl"));
  CHECK(actors::row_label_in(plan, "agent:main:explicit:dm5") == std::string("archive-age"));
  CHECK(actors::row_label_in(plan, "agent:main:cron:job1:run:r1") == std::string("prune-stale"));
  CHECK(actors::row_label_in(plan, "agent:main:main") == std::string("keep"));

  apply(fx, plan);
  auto keys = fx.keys_on_disk();
  CHECK(std::find(keys.begin(), keys.end(), "agent:main:main") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), group_key) != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "agent:main:cron:job1:run:r1") == keys.end());
  auto d5 = row_on_disk(fx, "agent:main:explicit:dm5");
  CHECK(d5["archivedAt"] == boost::json::value(fixture_now));
  CHECK(d5["archiveReason"] == boost::json::value("age-retention"));
  CHECK(d5["updatedAt"] == boost::json::value(fixture_now - 40 * day));  // not touched
  CHECK(exists(fx.path("d5.jsonl")));
  CHECK(exists(fx.path("d5.trajectory.jsonl")));
  CHECK_FALSE(exists(fx.path("r1.jsonl")));
  CHECK(exists(fx.path(r1->target)));
  CHECK(exists(fx.path("m1.jsonl")));
  // Applied again, the plan of the new state is empty: an archived row is never pruned again,
  // however old (even forced, as `sessions cleanup` runs it).
  CHECK(fx.plan(enforce_settings(), "agent:main:main").actions.empty());
  CHECK(fx.plan(enforce_settings(), "agent:main:main", true).actions.empty());
}

TEST_CASE("maintenance planner: the cap waits for the high-water mark, then archives the least active in place",
          "[maintenance]") {
  sessions_fixture fx;
  auto settings = enforce_settings();
  settings.max_entries = 10;  // high water 11
  for (int i = 0; i < 10; ++i) fx.row("agent:main:explicit:dm" + std::to_string(i), "s" + std::to_string(i), (i + 1) * 1000);
  fx.row(group_key, "g1", 5 * day);  // protected: counts against the cap, never changed
  for (int i = 0; i < 10; ++i) fx.transcript("s" + std::to_string(i), 100, 1000);
  fx.save();
  // 11 rows = the high water: the cap runs and brings the unarchived rows to 10.
  auto plan = fx.plan(settings);
  CHECK(archived_keys(plan, maintenance_step::cap) == std::vector<std::string>{"agent:main:explicit:dm9"});
  CHECK(removed_keys(plan, maintenance_step::cap).empty());
  CHECK(plan.cap_archived == 1);
  CHECK(plan.capped == 0);
  CHECK(plan.after_count == 11);
  CHECK_FALSE(file_action(plan, "s9.jsonl"));  // it keeps its transcript
  CHECK(actors::row_label_in(plan, "agent:main:explicit:dm9") == std::string("archive-cap"));
  apply(fx, plan);
  CHECK(row_on_disk(fx, "agent:main:explicit:dm9")["archiveReason"] == boost::json::value("active-session-cap"));
  CHECK(exists(fx.path("s9.jsonl")));

  // 11 rows, 10 unarchived: below the high water, no cap on a write (the archived row does not count) ...
  CHECK(fx.plan(settings).actions.empty());
  // ... but cleanup (forced) caps whenever the unarchived count is over maxEntries.
  fx.row("agent:main:explicit:dm9", "s9", 10 * 1000, {{"archivedAt", fixture_now}, {"archiveReason", "active-session-cap"}});
  fx.row("agent:main:explicit:dmx", "sx", 1);
  fx.save();  // 12 rows, 11 unarchived
  settings.max_entries = 9;  // high water 10: 2 of the 10 unprotected unarchived rows go
  auto forced = fx.plan(settings, {}, true);
  CHECK(forced.cap_archived == 2);
  CHECK(archived_keys(forced, maintenance_step::cap) ==
        std::vector<std::string>{"agent:main:explicit:dm7", "agent:main:explicit:dm8"});
}

TEST_CASE("maintenance planner: the cap removes synthetic rows and archives the others", "[maintenance]") {
  sessions_fixture fx;
  auto settings = enforce_settings();
  settings.max_entries = 1;  // high water 2
  fx.row("agent:main:hook:h1", "h1", 3000);
  fx.row("agent:main:explicit:dm1", "d1", 2000);
  fx.row("agent:main:explicit:dm2", "d2", 1000);
  for (const char* id : {"h1", "d1", "d2"}) fx.transcript(id, 100, 1000);
  fx.save();
  auto plan = fx.plan(settings);
  CHECK(removed_keys(plan, maintenance_step::cap) == std::vector<std::string>{"agent:main:hook:h1"});
  CHECK(archived_keys(plan, maintenance_step::cap) == std::vector<std::string>{"agent:main:explicit:dm1"});
  CHECK(plan.capped == 1);
  CHECK(plan.cap_archived == 1);
  CHECK(actors::row_label_in(plan, "agent:main:hook:h1") == std::string("cap-overflow"));
  REQUIRE(file_action(plan, "h1.jsonl"));
  CHECK(file_action(plan, "h1.jsonl")->kind == action_kind::archive_file);
  CHECK_FALSE(file_action(plan, "d1.jsonl"));
}

TEST_CASE("maintenance planner: pinned, model-locked and running rows are never archived or removed",
          "[maintenance]") {
  sessions_fixture fx;
  fx.row("agent:main:explicit:dm1", "d1", 40 * day, {{"pinnedAt", 5}});
  fx.row("agent:main:explicit:dm2", "d2", 40 * day, {{"modelSelectionLocked", true}});
  fx.row("agent:main:explicit:dm3", "d3", 40 * day, {{"status", "running"}});
  fx.row("agent:main:explicit:dm4", "d4", 40 * day);
  fx.save();
  auto plan = fx.plan(enforce_settings(), {}, true);
  CHECK(archived_keys(plan, maintenance_step::stale) == std::vector<std::string>{"agent:main:explicit:dm4"});
  CHECK(plan.actions.size() == 1);
}

TEST_CASE("maintenance planner: the cap takes rows without updatedAt first and keeps the active key",
          "[maintenance]") {
  sessions_fixture fx;
  auto settings = enforce_settings();
  settings.max_entries = 3;  // high water 4
  fx.row("agent:main:a", "a", std::nullopt);
  fx.row("agent:main:b", "b", 10);
  fx.row("agent:main:c", "c", 20);
  fx.row("agent:main:d", "d", 30);
  fx.row("agent:main:e", "e", 999999);  // oldest, but active
  fx.save();
  auto plan = fx.plan(settings, "agent:main:e");
  // 5 unarchived, 2 over the cap; e is preserved: the least active of a..d, a (no time) and d.
  CHECK(archived_keys(plan, maintenance_step::cap) == std::vector<std::string>{"agent:main:a", "agent:main:d"});
}

TEST_CASE("maintenance planner: rows the cap finds tied on updatedAt go by key, whatever their store order",
          "[maintenance]") {
  // Rows of one virtual millisecond reach the store in thread order: a replay must evict alike.
  for (const auto& order : {std::vector<std::string>{"c", "a", "b"}, std::vector<std::string>{"b", "c", "a"}}) {
    sessions_fixture fx;
    auto settings = enforce_settings();
    settings.max_entries = 2;  // high water 3
    for (const auto& k : order) fx.row("agent:main:" + k, k, 5000);
    fx.save();
    auto plan = fx.plan(settings);
    CHECK(archived_keys(plan, maintenance_step::cap) == std::vector<std::string>{"agent:main:a"});
  }
}

TEST_CASE("maintenance planner: a transcript still referenced by another row is not archived", "[maintenance]") {
  sessions_fixture fx;
  // Synthetic rows: the stale step removes them (others it archives, with their transcripts).
  fx.row("agent:main:hook:1", "shared", 40 * day);
  fx.row("agent:main:explicit:dm2", "shared", 1 * day);
  fx.row("agent:main:hook:3", "alone", 40 * day, {{"sessionFile", "2026-12-01T00-00-00-000Z_alone.jsonl"}});
  fx.transcript("shared", 100, 40 * day);
  fx.file("2026-12-01T00-00-00-000Z_alone.jsonl", 100, 40 * day);
  fx.file("alone.checkpoint.0b7e5a52-5f5e-4a43-9c1e-2f4e6f1d9a10.jsonl", 100, 40 * day);
  fx.save();
  auto plan = fx.plan(enforce_settings());
  CHECK(plan.pruned == 2);
  CHECK_FALSE(file_action(plan, "shared.jsonl"));
  REQUIRE(file_action(plan, "2026-12-01T00-00-00-000Z_alone.jsonl"));
  CHECK(file_action(plan, "2026-12-01T00-00-00-000Z_alone.jsonl")->kind == action_kind::archive_file);
  REQUIRE(file_action(plan, "alone.checkpoint.0b7e5a52-5f5e-4a43-9c1e-2f4e6f1d9a10.jsonl"));
}

TEST_CASE("maintenance planner: archives past their retention are removed, by the timestamp in the name",
          "[maintenance]") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", 1000);
  fx.transcript("m1", 100, 1000);
  const auto old_reset = storage::archive_name("x.jsonl", storage::archive_reason::reset, fixture_now - 31 * day);
  const auto new_reset = storage::archive_name("y.jsonl", storage::archive_reason::reset, fixture_now - 5 * day);
  const auto old_deleted = storage::archive_name("z.jsonl", storage::archive_reason::deleted, fixture_now - 31 * day);
  fx.file(old_reset, 100, 1000);  // the mtime is recent: the name decides
  fx.file(new_reset, 100, 40 * day);
  fx.file(old_deleted, 100, 1000);
  fx.save();
  auto settings = enforce_settings();
  auto plan = fx.plan(settings);
  REQUIRE(file_action(plan, old_reset));
  CHECK(file_action(plan, old_reset)->step == maintenance_step::archive_retention);
  CHECK(file_action(plan, old_reset)->kind == action_kind::delete_file);
  REQUIRE(file_action(plan, old_deleted));
  CHECK_FALSE(file_action(plan, new_reset));

  settings.reset_archive_retention_disabled = true;  // resetArchiveRetention: false
  auto kept = fx.plan(settings);
  CHECK_FALSE(file_action(kept, old_reset));
  CHECK(file_action(kept, old_deleted));
  settings.reset_archive_retention_disabled = false;
  settings.reset_archive_retention_ms = 2 * day;
  CHECK(file_action(fx.plan(settings), new_reset));
}

TEST_CASE("maintenance planner: the disk budget deletes removable files oldest first, then evicts rows the cap "
          "archived (phases B, C)",
          "[maintenance]") {
  sessions_fixture fx;
  // Three ordinary rows with 10 kB transcripts, a protected group row, an old archive and an orphan.
  // Phase C evicts only rows the cap archived (OpenClaw 2026.9's isSessionEntryDiskBudgetEvictable):
  // dm1 (archived first), then dm2; dm3, archived by age, stays whatever the budget.
  fx.row("agent:main:explicit:dm1", "s1", 3 * day, {{"archivedAt", fixture_now - 9 * day}, {"archiveReason", "active-session-cap"}});
  fx.row("agent:main:explicit:dm2", "s2", 20 * day, {{"archivedAt", fixture_now - 1 * day}, {"archiveReason", "active-session-cap"}});
  fx.row("agent:main:explicit:dm3", "s3", 90 * day, {{"archivedAt", fixture_now - 30 * day}, {"archiveReason", "age-retention"}});
  fx.row(group_key, "g1", 9 * day);
  for (const char* id : {"s1", "s2", "s3", "g1"}) fx.transcript(id, 10000, 1 * day);
  const auto archive = storage::archive_name("old.jsonl", storage::archive_reason::reset, fixture_now - 3 * day);
  fx.file(archive, 10000, 20 * day);
  fx.file("orphan.jsonl", 10000, 10 * day);
  fx.file("notes.txt", 500, 10 * day);  // unknown files are never removed
  fx.save();
  auto settings = enforce_settings();
  auto before = fx.plan(settings);
  REQUIRE(before.actions.empty());  // no budget yet
  const auto total = before.total_bytes_before;
  // A budget that phase B alone (two 10 kB files) cannot meet: one row must go too.
  settings.max_disk_bytes = static_cast<std::int64_t>(total) - 1;
  settings.high_water_bytes = static_cast<std::int64_t>(total) - 25000;
  auto plan = fx.plan(settings);
  REQUIRE(plan.disk_budget);
  CHECK(plan.disk_budget->over_budget);
  CHECK(plan.disk_budget->met);
  CHECK(plan.disk_budget->total_bytes_after <= static_cast<std::uint64_t>(*settings.high_water_bytes));
  std::vector<std::string> order;
  for (const auto& a : plan.actions) order.push_back(a.kind == action_kind::remove_row ? "row " + a.key : a.file);
  CHECK(order == std::vector<std::string>{archive, "orphan.jsonl", "row agent:main:explicit:dm1", "s1.jsonl"});
  CHECK(file_action(plan, "s1.jsonl")->kind == action_kind::delete_file);  // phase C deletes outright
  CHECK(file_action(plan, "s1.jsonl")->step == maintenance_step::budget_rows);
  CHECK(plan.evicted == 1);
  CHECK(plan.disk_budget->removed_entries == 1);
  CHECK(plan.disk_budget->removed_files == 3);
  CHECK(actors::row_label_in(plan, "agent:main:explicit:dm1") == std::string("evict-budget"));

  // A budget no file or cap-archived row can meet: dm3 and the group row stay.
  settings.high_water_bytes = 1;
  auto all = fx.plan(settings);
  CHECK(removed_keys(all, maintenance_step::budget_rows) ==
        std::vector<std::string>{"agent:main:explicit:dm1", "agent:main:explicit:dm2"});
  CHECK_FALSE(all.disk_budget->met);
  settings.high_water_bytes = static_cast<std::int64_t>(total) - 25000;

  apply(fx, plan);
  auto rescan = fx.plan(settings);
  CHECK(rescan.total_bytes_before == plan.total_bytes_after);  // the projection was exact
  CHECK(exists(fx.path("notes.txt")));
}

TEST_CASE("maintenance planner: a budget that cannot be met is reported as such", "[maintenance]") {
  sessions_fixture fx;
  add_protected_rows(fx, 1 * day);
  fx.row("agent:main:main", "m1", 1 * day);
  fx.transcript("m1", 3000, 1 * day);
  fx.save();
  auto settings = enforce_settings();
  settings.max_disk_bytes = 4000;
  auto plan = fx.plan(settings, "agent:main:main");
  REQUIRE(plan.disk_budget);
  CHECK(plan.disk_budget->over_budget);
  CHECK_FALSE(plan.disk_budget->met);
  CHECK(plan.disk_budget->removed_entries == 0);
  CHECK(plan.actions.empty());
  REQUIRE(plan.warnings.size() == 1);
  CHECK(plan.warnings[0].find("cannot be met") != std::string::npos);
  CHECK(plan.warnings[0].find("maxDiskBytes 4000") != std::string::npos);
}

TEST_CASE("maintenance planner: protected rows survive every phase", "[maintenance]") {
  sessions_fixture fx;
  add_protected_rows(fx, 400 * day);  // ancient
  for (int i = 0; i < 8; ++i) {
    std::string id = "x" + std::to_string(i);
    fx.row("agent:main:hook:" + id, id, 400 * day);  // synthetic: never protected
    fx.transcript(id, 2000, 400 * day);
  }
  fx.save();
  auto settings = enforce_settings();
  settings.max_entries = 2;
  settings.max_disk_bytes = 100;  // unreachable
  auto plan = fx.plan(settings, {}, true);
  std::set<std::string> removed;
  for (const auto& a : plan.actions) {
    if (a.kind == action_kind::remove_row) removed.insert(a.key);
    for (const char* id : {"g1", "t1", "tp1", "c1"}) CHECK(a.session_id != id);
  }
  CHECK(removed.size() == 8);
  for (const auto& k : {group_key, thread_key, topic_key, channel_typed_key}) CHECK_FALSE(removed.count(k));
  CHECK(plan.after_count == 4);
  REQUIRE(plan.disk_budget);
  CHECK_FALSE(plan.disk_budget->met);
  apply(fx, plan);
  auto keys = fx.keys_on_disk();
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> want{group_key, thread_key, topic_key, channel_typed_key};
  std::sort(want.begin(), want.end());
  CHECK(keys == want);
  for (const char* id : {"g1", "t1", "tp1", "c1"}) CHECK(exists(fx.path(std::string(id) + ".jsonl")));
}

TEST_CASE("maintenance planner: the steps run in the order of [R§5.3]", "[maintenance]") {
  sessions_fixture fx;
  auto settings = enforce_settings();
  settings.max_entries = 2;
  fx.row("agent:main:explicit:model-run-0b7e5a52-5f5e-4a43-9c1e-2f4e6f1d9a10", "mr", 2 * day);
  fx.row("agent:main:explicit:dm1", "s1", 40 * day);
  fx.row("agent:main:explicit:dm2", "s2", 3 * day);
  fx.row("agent:main:explicit:dm3", "s3", 2 * day);
  fx.row("agent:main:explicit:dm4", "s4", 1 * day);
  for (const char* id : {"mr", "s1", "s2", "s3", "s4"}) fx.transcript(id, 1000, 1 * day);
  fx.file(storage::archive_name("q.jsonl", storage::archive_reason::deleted, fixture_now - 40 * day), 50, day);
  fx.file("zz.jsonl", 5000, 1 * day);  // orphan, recent: only the budget takes it
  fx.save();
  settings.max_disk_bytes = 100;
  auto plan = fx.plan(settings, {}, true);
  std::vector<maintenance_step> steps;
  for (const auto& a : plan.actions)
    if (steps.empty() || steps.back() != a.step) steps.push_back(a.step);
  CHECK(steps == std::vector<maintenance_step>{maintenance_step::model_run, maintenance_step::stale,
                                               maintenance_step::cap, maintenance_step::unreferenced,
                                               maintenance_step::archive_retention, maintenance_step::budget_files,
                                               maintenance_step::budget_rows});
  CHECK(plan.model_run_pruned == 1);
  CHECK(archived_keys(plan, maintenance_step::stale) == std::vector<std::string>{"agent:main:explicit:dm1"});
  // s1 archived by age no longer counts: 3 unarchived rows over a cap of 2, the least active archived ...
  CHECK(archived_keys(plan, maintenance_step::cap) == std::vector<std::string>{"agent:main:explicit:dm2"});
  // ... and evicted by phase C; the age-archived row is not.
  CHECK(removed_keys(plan, maintenance_step::budget_rows) == std::vector<std::string>{"agent:main:explicit:dm2"});
  // Every file action of a row's session comes after that row's removal.
  std::set<std::string> gone, row_sessions{"mr", "s1", "s2", "s3", "s4"};
  for (const auto& a : plan.actions) {
    if (a.kind == action_kind::remove_row)
      gone.insert(a.session_id);
    else if (row_sessions.count(a.session_id) && a.kind != action_kind::archive_row)
      CHECK(gone.count(a.session_id));
  }
  CHECK(file_action(plan, "zz.jsonl"));
}

TEST_CASE("maintenance planner: fix-missing and fix-dm-scope retire rows as cleanup asks", "[maintenance]") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", 1000);
  fx.row("agent:main:telegram:direct:1", "s1", 1000);     // per-peer DM row
  fx.row("agent:main:slack:acct:direct:u2", "s2", 1000);  // <ch>:<acct>:direct:<id>
  fx.row("agent:main:hook:h1", "gone", 1000);             // no transcript
  fx.row("agent:main:hook:h2", "empty", 1000);            // header only
  fx.transcript("m1", 100, 1000);
  fx.transcript("s1", 100, 1000);
  fx.transcript("s2", 100, 1000);
  fx.transcript("empty", 100, 1000, false);
  fx.save();
  auto rows = fx.rows();
  auto files = fx.listing();
  auto empty = actors::find_empty_transcripts(storage::posix_fs(), fx.dir(), rows, files);
  REQUIRE(empty.ok());
  CHECK(*empty == std::unordered_set<std::string>{"empty.jsonl"});
  actors::planner_input in;
  in.rows = &rows;
  in.files = &files;
  in.settings = enforce_settings();
  in.now_ms = fixture_now;
  in.forced = true;
  in.fix_missing = true;
  in.empty_transcripts = &*empty;
  in.fix_dm_scope = true;
  auto plan = actors::plan_maintenance(in);
  CHECK(removed_keys(plan, maintenance_step::fix_missing) ==
        std::vector<std::string>{"agent:main:hook:h1", "agent:main:hook:h2"});
  CHECK(removed_keys(plan, maintenance_step::fix_dm_scope) ==
        std::vector<std::string>{"agent:main:slack:acct:direct:u2", "agent:main:telegram:direct:1"});
  CHECK(plan.missing == 2);
  CHECK(plan.dm_scope_retired == 2);
  REQUIRE(file_action(plan, "s1.jsonl"));
  CHECK(file_action(plan, "s1.jsonl")->kind == action_kind::archive_file);
  CHECK(actors::is_per_peer_direct_key("agent:main:direct:abc"));
  CHECK_FALSE(actors::is_per_peer_direct_key("agent:main:telegram:group:1"));
  CHECK_FALSE(actors::is_per_peer_direct_key("agent:main:main"));
}

TEST_CASE("plan applier: batches of any size give the same result, and changed rows and files are left alone",
          "[maintenance]") {
  auto build = [](sessions_fixture& fx) {
    for (int i = 0; i < 30; ++i) {
      std::string id = "s" + std::to_string(i);
      fx.row("agent:main:explicit:dm" + id, id, (i % 2 ? 40 : 1) * day);
      fx.transcript(id, 200, 40 * day);
    }
    fx.save();
  };
  sessions_fixture one, many;
  build(one);
  build(many);
  auto p1 = one.plan(enforce_settings());
  auto p2 = many.plan(enforce_settings());
  REQUIRE(p1.actions.size() == 15);  // 15 rows archived in place (their transcripts stay)
  apply(one, p1);
  apply(many, p2, 4);
  CHECK(list_names(one.dir()) == list_names(many.dir()));
  CHECK(read_text(one.store_path()) == read_text(many.store_path()));

  // A row updated after the plan is kept, and so is its transcript.
  sessions_fixture fx;
  build(fx);
  auto plan = fx.plan(enforce_settings());
  fx.row("agent:main:explicit:dms1", "s1", 0);
  fx.save();
  auto rep = apply(fx, plan);
  CHECK(rep.applied.size() == 14);
  CHECK(rep.skipped.size() == 1);
  CHECK(row_on_disk(fx, "agent:main:explicit:dms3")["archiveReason"] == boost::json::value("age-retention"));
  CHECK_FALSE(row_on_disk(fx, "agent:main:explicit:dms1").contains("archivedAt"));
  CHECK(exists(fx.path("s1.jsonl")));
  // A warn plan is never applied.
  manual_clock clock(fixture_now);
  storage::session_store_file file(storage::posix_fs(), clock, fx.store_path());
  REQUIRE(file.load().ok());
  auto warn_plan = fx.plan(maintenance_settings{});
  auto refused = actors::apply_plan(storage::posix_fs(), file, fx.dir(), warn_plan);
  CHECK(refused.error.code() == errc::invalid_argument);
}

TEST_CASE("plan applier: a file that cannot be stat'ed stops the scan with an error naming it", "[maintenance]") {
  struct failing_fs : storage::forwarding_fs {
    using forwarding_fs::forwarding_fs;
    result<storage::file_info> lstat(const std::string& p) override {
      if (p.find("bad.jsonl") != std::string::npos) return storage::errno_status(EACCES, "lstat", p);
      return forwarding_fs::lstat(p);
    }
  };
  sessions_fixture fx;
  fx.transcript("bad", 10, 0);
  failing_fs f(storage::posix_fs());
  auto listing = actors::scan_sessions_dir(f, fx.dir());
  REQUIRE_FALSE(listing.ok());
  CHECK(listing.error().message().find("bad.jsonl") != std::string::npos);
}

}  // namespace sessionrt::testing

TEST_CASE("maintenance_row: the transcript a row names and the other session its sessionFile keeps referenced") {
  const std::string dir = "/state/agents/main/sessions";
  const std::string id = "11111111-0000-4000-8000-000000000001", other = "22222222-0000-4000-8000-000000000002";
  auto row = [&](boost::json::object o) { return sessionrt::actors::maintenance_row_of("agent:main:direct:u1", sessionrt::session_entry(std::move(o)), dir); };
  // Its own <id>.jsonl, in the dir.
  auto own = row({{"sessionId", id}, {"sessionFile", dir + "/" + id + ".jsonl"}, {"label", "L"}, {"model", "m1"}});
  CHECK(own.key() == "agent:main:direct:u1");
  CHECK(own.session_id() == id);
  CHECK(own.transcript_name() == id + ".jsonl");
  CHECK(own.other_file_session_id().empty());
  CHECK(own.label() == "L");
  CHECK(own.model() == "m1");
  // A topic transcript of its own session: named as is, no other session.
  auto topic = row({{"sessionId", id}, {"sessionFile", id + "-topic-t1.jsonl"}, {"modelOverride", "m2"}, {"model", "m1"}});
  CHECK(topic.transcript_name() == id + "-topic-t1.jsonl");
  CHECK(topic.other_file_session_id().empty());
  CHECK(topic.model() == "m2");
  // The transcript of another session: that session stays referenced.
  auto shared = row({{"sessionId", id}, {"sessionFile", dir + "/" + other + ".jsonl"}});
  CHECK(shared.transcript_name() == other + ".jsonl");
  CHECK(shared.other_file_session_id() == other);
  CHECK(shared.label().empty());
  // A sessionFile outside the dir: the row's transcript here is <id>.jsonl.
  auto elsewhere = row({{"sessionId", id}, {"sessionFile", "/elsewhere/" + other + ".jsonl"}});
  CHECK(elsewhere.transcript_name() == id + ".jsonl");
  CHECK(elsewhere.other_file_session_id().empty());
  // Neither.
  auto bare = row({{"updatedAt", 5}});
  CHECK(bare.session_id().empty());
  CHECK(bare.transcript_name().empty());
  CHECK(bare.updated_at == std::optional<std::int64_t>(5));
}
