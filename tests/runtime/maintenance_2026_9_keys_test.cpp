// OpenClaw 2026.9's session.maintenance keys: archiveDashboardAfter, preserveRecent and
// coldStorage {enabled, afterDays} are read (no unknown-key warning) with OpenClaw's defaults
// and shown by `config show`, and preserveRecent keeps recently active rows from the age and
// count steps. (archiveDashboardAfter and coldStorage applied: tests/actors/maintenance/
// dashboard_archive_test.cpp, cold_storage_planner_test.cpp, tests/runtime/cold_storage_runtime_test.cpp.)
#include <catch2/catch.hpp>

#include "actors/maintenance/maintenance_planner.hpp"
#include "runtime/config.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {
const env_lookup no_env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
constexpr std::int64_t kDay = actors::day_ms;
}  // namespace

TEST_CASE("config: session.maintenance archiveDashboardAfter, preserveRecent and coldStorage are read", "[config]") {
  auto defaults = load_config_text("{}", no_env);
  REQUIRE(defaults.ok());
  const auto& d = defaults->settings.maintenance;
  CHECK(d.archive_dashboard_after_ms == 7 * kDay);  // OpenClaw's DEFAULT_DASHBOARD_ARCHIVE_AFTER_MS
  CHECK_FALSE(d.preserve_recent_ms.has_value());
  CHECK_FALSE(d.cold_storage_enabled);
  CHECK(d.cold_storage_after_days == 30);

  auto set = load_config_text(R"({"session": {"maintenance": {"archiveDashboardAfter": "14d", "preserveRecent": "3d",
                                   "coldStorage": {"enabled": true, "afterDays": 10}}}})",
                              no_env);
  REQUIRE(set.ok());
  CHECK(set->warnings.empty());
  const auto& m = set->settings.maintenance;
  CHECK(m.archive_dashboard_after_ms == 14 * kDay);
  CHECK(m.preserve_recent_ms == 3 * kDay);
  CHECK(m.cold_storage_enabled);
  CHECK(m.cold_storage_after_days == 10);

  auto off = load_config_text(R"({"session": {"maintenance": {"archiveDashboardAfter": false, "preserveRecent": false}}})",
                              no_env);
  REQUIRE(off.ok());
  CHECK(off->warnings.empty());
  CHECK_FALSE(off->settings.maintenance.archive_dashboard_after_ms.has_value());
  auto zero = load_config_text(R"({"session": {"maintenance": {"archiveDashboardAfter": 0}}})", no_env);
  REQUIRE(zero.ok());
  CHECK_FALSE(zero->settings.maintenance.archive_dashboard_after_ms.has_value());

  auto zero_text = load_config_text(R"({"session": {"maintenance": {"archiveDashboardAfter": "0"}}})", no_env);
  REQUIRE(zero_text.ok());
  CHECK_FALSE(zero_text->settings.maintenance.archive_dashboard_after_ms.has_value());

  // As `config show` prints them.
  const auto shown = settings_to_json(set->settings);
  const auto& maintenance = shown.at("session").at("maintenance").as_object();
  CHECK(maintenance.at("archiveDashboardAfter") == "14d");
  CHECK(maintenance.at("coldStorage") == boost::json::value(boost::json::object{{"enabled", true}, {"afterDays", 10}}));
  CHECK(settings_to_json(off->settings).at("session").at("maintenance").at("archiveDashboardAfter") == false);

  CHECK_FALSE(load_config_text(R"({"session": {"maintenance": {"coldStorage": {"afterDays": 0}}}})", no_env).ok());
  CHECK_FALSE(load_config_text(R"({"session": {"maintenance": {"coldStorage": {"afterDays": 1.5}}}})", no_env).ok());
  CHECK_FALSE(load_config_text(R"({"session": {"maintenance": {"coldStorage": {"enabled": "yes"}}}})", no_env).ok());
  CHECK_FALSE(load_config_text(R"({"session": {"maintenance": {"coldStorage": {"later": 1}}}})", no_env)->warnings.empty());
}

TEST_CASE("preserveRecent keeps recently active interactive rows from the stale and cap steps, not synthetic ones") {
  const std::int64_t now = 1796011140000;
  auto entry = [](std::int64_t updated, std::optional<std::int64_t> interacted = std::nullopt) {
    session_entry e;
    e.set_updated_at(updated);
    if (interacted) e.json()["lastInteractionAt"] = *interacted;
    return e;
  };
  std::vector<actors::maintenance_row> rows;
  // Stale by updatedAt, but the user interacted yesterday.
  rows.push_back(actors::maintenance_row_of("agent:main:explicit:a", entry(now - 40 * kDay, now - kDay)));
  // Stale and idle.
  rows.push_back(actors::maintenance_row_of("agent:main:explicit:b", entry(now - 40 * kDay)));
  // A synthetic row active yesterday: still eligible.
  rows.push_back(actors::maintenance_row_of("agent:main:cron:job1", entry(now - 40 * kDay, now - kDay)));
  std::vector<actors::dir_file> files;
  actors::planner_input in;
  in.rows = &rows;
  in.files = &files;
  in.now_ms = now;
  in.settings.mode = actors::maintenance_mode::enforce;
  in.settings.preserve_recent_ms = 7 * kDay;
  auto plan = actors::plan_maintenance(in);
  std::vector<std::string> removed, archived;
  for (const auto& a : plan.actions)
    (a.kind == actors::action_kind::remove_row ? removed : archived).push_back(a.key);
  CHECK(removed == std::vector<std::string>{"agent:main:cron:job1"});
  CHECK(archived == std::vector<std::string>{"agent:main:explicit:b"});  // in place (OpenClaw 2026.9)

  in.settings.preserve_recent_ms.reset();  // unset: the usual oldest-first policy
  auto plain = actors::plan_maintenance(in);
  CHECK(plain.pruned == 1);
  CHECK(plain.age_archived == 2);
}
