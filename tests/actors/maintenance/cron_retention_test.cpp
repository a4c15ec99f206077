// Cron retention: the run log trimmed to keepLines past maxBytes, the run-row reaper [R§5.6].
#include <catch2/catch.hpp>

#include <filesystem>

#include "actors/maintenance/cron_retention.hpp"
#include "tests/actors/maintenance/maintenance_fixture.hpp"

namespace sessionrt::testing {

TEST_CASE("cron run log: trimmed to the last keepLines non-empty lines once over maxBytes", "[maintenance][cron]") {
  actors::cron_settings s;
  CHECK(s.run_log_max_bytes == 2000000);
  CHECK(s.run_log_keep_lines == 2000);
  CHECK(*s.session_retention_ms == day);
  s.run_log_max_bytes = 40;
  s.run_log_keep_lines = 2;
  CHECK_FALSE(actors::trim_run_log("{\"n\":1}\n{\"n\":2}\n", s));  // under maxBytes: untouched
  std::string text = "{\"n\":1}\n\n{\"n\":2}\n{\"n\":3}\n   \n{\"n\":4}\n{\"n\":5}";
  auto trimmed = actors::trim_run_log(text, s);
  REQUIRE(trimmed);
  CHECK(*trimmed == "{\"n\":4}\n{\"n\":5}\n");

  temp_dir tmp;
  auto path = actors::run_log_path(tmp.path(), "job1");
  REQUIRE(path.ok());
  CHECK(*path == tmp.path() + "/runs/job1.jsonl");
  CHECK_FALSE(actors::run_log_path(tmp.path(), "../x").ok());
  std::filesystem::create_directories(tmp.path() + "/runs");
  CHECK_FALSE(*actors::trim_run_log_file(storage::posix_fs(), *path, s));  // missing: nothing to do
  write_text(*path, text);
  auto done = actors::trim_run_log_file(storage::posix_fs(), *path, s);
  REQUIRE(done.ok());
  CHECK(*done);
  CHECK(read_text(*path) == "{\"n\":4}\n{\"n\":5}\n");
  CHECK((std::filesystem::status(*path).permissions() & std::filesystem::perms::all) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  CHECK_FALSE(*actors::trim_run_log_file(storage::posix_fs(), *path, s));  // now under maxBytes
}

TEST_CASE("cron reaper: old run rows go and their transcripts are archived, base rows and running jobs stay",
          "[maintenance][cron]") {
  sessions_fixture fx;
  fx.row("agent:main:cron:job1", "r3", 2 * day);  // the base row points at the latest run
  fx.row("agent:main:cron:job1:run:r1", "r1", 3 * day);
  fx.row("agent:main:cron:job1:run:r2", "r2", 26 * 3600 * 1000);
  fx.row("agent:main:cron:job1:run:r3", "r3", 2 * day);  // shares its transcript with the base row
  fx.row("agent:main:cron:job2:run:r4", "r4", 3 * day);  // running: preserved
  fx.row("agent:main:cron:job1:run:r5", "r5", 3600 * 1000);  // recent
  for (const char* id : {"r1", "r2", "r3", "r4", "r5"}) fx.transcript(id, 100, day);
  const auto old_deleted = storage::archive_name("r0.jsonl", storage::archive_reason::deleted, fixture_now - 2 * day);
  const auto new_deleted = storage::archive_name("q.jsonl", storage::archive_reason::deleted, fixture_now - 3600 * 1000);
  fx.file(old_deleted, 10, day);
  fx.file(new_deleted, 10, day);
  fx.save();
  auto rows = fx.rows();
  auto files = fx.listing();
  actors::cron_settings s;
  auto plan = actors::plan_cron_reaper(rows, files, s, fixture_now, {"agent:main:cron:job2:run:r4"});
  std::vector<std::string> removed;
  for (const auto& a : plan.actions)
    if (a.kind == actors::action_kind::remove_row) removed.push_back(a.key);
  CHECK(removed == std::vector<std::string>{"agent:main:cron:job1:run:r1", "agent:main:cron:job1:run:r2",
                                            "agent:main:cron:job1:run:r3"});
  CHECK(actors::row_label_in(plan, "agent:main:cron:job1:run:r1") == std::string("reap-cron-run"));

  manual_clock clock(fixture_now);
  storage::session_store_file file(storage::posix_fs(), clock, fx.store_path());
  REQUIRE(file.load().ok());
  auto rep = actors::apply_plan(storage::posix_fs(), file, fx.dir(), plan);
  REQUIRE(rep.error.ok());
  auto names = list_names(fx.dir());
  CHECK_FALSE(exists(fx.path("r1.jsonl")));
  CHECK(has_name_starting(names, "r1.jsonl.deleted."));
  CHECK(has_name_starting(names, "r2.jsonl.deleted."));
  CHECK(exists(fx.path("r3.jsonl")));  // the base row still uses it
  CHECK(exists(fx.path("r4.jsonl")));
  CHECK_FALSE(exists(fx.path(old_deleted)));
  CHECK(exists(fx.path(new_deleted)));
  auto keys = fx.keys_on_disk();
  CHECK(keys == std::vector<std::string>{"agent:main:cron:job1", "agent:main:cron:job2:run:r4",
                                         "agent:main:cron:job1:run:r5"});

  s.session_retention_ms.reset();  // cron.sessionRetention: false
  CHECK(actors::plan_cron_reaper(fx.rows(), fx.listing(), s, fixture_now + 100 * day).actions.empty());
}

}  // namespace sessionrt::testing
