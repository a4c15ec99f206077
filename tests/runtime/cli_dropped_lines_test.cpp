// What a transcript repair removed is kept in <file>.dropped-<ts>.jsonl: `sessionrt status`
// lists those files (text and --json), and the disk budget counts them and deletes them like
// archives when the directory is over budget, oldest first.
#include <catch2/catch.hpp>

#include "storage/archive_names.hpp"
#include "tests/runtime/cli_test_support.hpp"

namespace sessionrt::testing {

TEST_CASE("cli status lists the files that keep what repairs removed", "[cli]") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", 60 * 1000);
  fx.transcript("m1", 300, 0);
  const std::string kept = storage::dropped_lines_name("m1.jsonl", fixture_now - day);
  fx.file(kept, 1500, day);
  fx.save();

  auto r = run_cli_args({"status", "--state-dir", fx.state_dir()});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("Repairs kept 1 file(s) of removed lines"));
  CHECK_THAT(r.out, Catch::Contains(fx.path(kept) + " (1.5 KB)"));

  auto j = run_cli_args({"status", "--json", "--state-dir", fx.state_dir()}).json();
  const auto& disk = j.at("stores").as_array().at(0).as_object().at("disk").as_object();
  const auto& dropped = disk.at("droppedLines").as_array();
  REQUIRE(dropped.size() == 1);
  CHECK(dropped.at(0).as_object().at("path").as_string() == fx.path(kept));
  CHECK(dropped.at(0).as_object().at("bytes").as_int64() == 1500);
  CHECK(disk.at("archiveBytes").as_int64() == 1500);

  // None: no such line.
  sessions_fixture clean;
  clean.row("agent:main:main", "m1", 60 * 1000);
  clean.save();
  CHECK_THAT(run_cli_args({"status", "--state-dir", clean.state_dir()}).out, !Catch::Contains("Repairs kept"));
}

TEST_CASE("cli cleanup: the disk budget deletes kept dropped lines, oldest first", "[cli]") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", 60 * 1000);
  fx.transcript("m1", 300, 0);
  const std::string older = storage::dropped_lines_name("m1.jsonl", fixture_now - 3 * day);
  const std::string newer = storage::dropped_lines_name("m1.jsonl", fixture_now - day);
  fx.file(older, 2000, 3 * day);
  fx.file(newer, 2000, day);
  fx.save();
  temp_dir cfg;
  write_text(cfg.file("c.json"), R"({"session": {"maintenance": {"maxDiskBytes": 4000, "highWaterBytes": 3500}}})");
  auto r = run_cli_args({"sessions", "cleanup", "--enforce", "--json", "--state-dir", fx.state_dir(), "--config",
                         cfg.file("c.json")});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_FALSE(exists(fx.path(older)));
  CHECK(exists(fx.path(newer)));
  CHECK(exists(fx.path("m1.jsonl")));
}

}  // namespace sessionrt::testing
