// session.maintenance.coldStorage: which transcripts a pass compresses (cold_storage_planner),
// and the compression applied through the offline applier.
#include <catch2/catch.hpp>

#include <algorithm>

#include "actors/maintenance/cold_storage_planner.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "storage/cold_transcript.hpp"
#include "tests/actors/maintenance/maintenance_fixture.hpp"

namespace sessionrt::testing {
namespace {

using actors::action_kind;

struct cold_fixture {
  sessions_fixture fx;
  actors::maintenance_settings settings;
  std::vector<actors::maintenance_row> rows;
  actors::dir_index index;

  cold_fixture() {
    settings.cold_storage_enabled = true;
    settings.cold_storage_after_days = 30;
  }
  actors::maintenance_plan plan(std::vector<std::string> preserve = {}, std::size_t max_files = 128,
                                std::uint64_t max_bytes = 64ull << 20) {
    rows = fx.rows();
    index = actors::dir_index::of(fx.listing());
    actors::cold_storage_input in;
    in.rows = &rows;
    in.index = &index;
    in.settings = settings;
    in.now_ms = fixture_now;
    in.preserve_keys = std::move(preserve);
    in.max_files = max_files;
    in.max_bytes = max_bytes;
    return actors::plan_cold_storage(in);
  }
};

std::vector<std::string> files_of(const actors::maintenance_plan& plan, action_kind kind) {
  std::vector<std::string> out;
  for (const auto& a : plan.actions)
    if (a.kind == kind) out.push_back(a.file);
  return out;
}

}  // namespace

TEST_CASE("cold storage plan: the transcripts of rows idle and unwritten for afterDays, oldest first") {
  cold_fixture c;
  auto& fx = c.fx;
  fx.row("agent:main:direct:old", "old", 40 * day);
  fx.transcript("old", 500, 40 * day);
  fx.row("agent:main:direct:older", "older", 46 * day);
  fx.transcript("older", 500, 50 * day);
  // Recently active row, old file: OpenClaw protects the row's session.
  fx.row("agent:main:direct:talked", "talked", 40 * day, {{"lastInteractionAt", fixture_now - day}});
  fx.transcript("talked", 500, 40 * day);
  // Old row, file written recently (a row write that was lost, a tool): left hot.
  fx.row("agent:main:direct:written", "written", 40 * day);
  fx.transcript("written", 500, 2 * day);
  // Running, preserved, shared: left alone.
  fx.row("agent:main:direct:running", "running", 40 * day, {{"status", "running"}});
  fx.transcript("running", 500, 40 * day);
  fx.row("agent:main:direct:kept", "kept", 40 * day);
  fx.transcript("kept", 500, 40 * day);
  fx.row("agent:main:direct:a", "shared", 40 * day);
  fx.row("agent:main:direct:b", "shared", 40 * day);
  fx.transcript("shared", 500, 40 * day);
  // A row whose transcript is compressed already; one without a transcript.
  fx.row("agent:main:direct:cold", "cold", 40 * day);
  fx.transcript("cold", 500, 40 * day);
  REQUIRE(storage::compress_transcript(storage::posix_fs(), fx.path("cold.jsonl"))->done);
  fx.row("agent:main:direct:none", "none", 40 * day);
  fx.save();

  auto plan = c.plan({"agent:main:direct:kept"});
  CHECK(files_of(plan, action_kind::compress_file) == std::vector<std::string>{"older.jsonl", "old.jsonl"});
  CHECK(plan.cold_files == 2);
  CHECK(plan.cold_raw_bytes == read_text(fx.path("old.jsonl")).size() + read_text(fx.path("older.jsonl")).size());
  for (const auto& a : plan.actions) {
    CHECK(a.step == actors::maintenance_step::cold_storage);
    if (a.file == "old.jsonl") {
      CHECK(a.key == "agent:main:direct:old");
      CHECK(a.session_id == "old");
      CHECK(a.updated_at == fixture_now - 40 * day);
      CHECK(a.mtime_ms == fixture_now - 40 * day);
    }
  }
  // afterDays moves the cutoff; disabled plans nothing.
  c.settings.cold_storage_after_days = 45;
  CHECK(files_of(c.plan({"agent:main:direct:kept"}), action_kind::compress_file) == std::vector<std::string>{"older.jsonl"});
  c.settings.cold_storage_enabled = false;
  CHECK(c.plan().actions.empty());
}

TEST_CASE("cold storage plan: at most max files and bytes per pass, but always one file") {
  cold_fixture c;
  for (int i = 0; i < 5; ++i) {
    const std::string id = "s" + std::to_string(i);
    c.fx.row("agent:main:direct:" + id, id, 40 * day);
    c.fx.transcript(id, 1000, (40 + i) * day);
  }
  c.fx.save();
  CHECK(c.plan({}, 2).cold_files == 2);
  auto bytes = c.plan({}, 128, 2500);
  CHECK(files_of(bytes, action_kind::compress_file) == std::vector<std::string>{"s4.jsonl", "s3.jsonl"});
  CHECK(c.plan({}, 128, 10).cold_files == 1);  // larger than the budget: alone
}

TEST_CASE("cold storage plan: a leftover .zst beside its .jsonl and stale move temps are deleted") {
  cold_fixture c;
  auto& fx = c.fx;
  fx.row("agent:main:direct:x", "x", 40 * day);
  fx.transcript("x", 500, 40 * day);
  fx.file("x.jsonl.zst", 100, 40 * day);  // both forms: the .jsonl is the transcript
  fx.file("y.jsonl.zst.4242.0b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.tmp", 100, 2 * day);
  fx.file("y.jsonl.4242.1b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.tmp", 100, 2 * day);
  fx.file("z.jsonl.zst.4242.2b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.tmp", 100, 0);  // young: a move in flight
  fx.file("notes.4242.3b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.tmp", 100, 2 * day);  // not a transcript's
  fx.save();
  auto plan = c.plan();
  CHECK(files_of(plan, action_kind::compress_file).empty());  // next pass, once the leftover is gone
  auto deleted = files_of(plan, action_kind::delete_file);
  std::sort(deleted.begin(), deleted.end());
  CHECK(deleted == std::vector<std::string>{"x.jsonl.zst", "y.jsonl.4242.1b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.tmp",
                                            "y.jsonl.zst.4242.0b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.tmp"});
}

TEST_CASE("cold storage plan applied offline: the transcript becomes a readable .zst, a changed one is skipped") {
  cold_fixture c;
  c.fx.row("agent:main:direct:a", "a", 40 * day);
  c.fx.transcript("a", 5000, 40 * day);
  c.fx.row("agent:main:direct:b", "b", 40 * day);
  c.fx.transcript("b", 5000, 41 * day);
  c.fx.save();
  c.settings.mode = actors::maintenance_mode::enforce;
  auto plan = c.plan();
  REQUIRE(plan.cold_files == 2);
  const std::string a_text = read_text(c.fx.path("a.jsonl"));
  write_text(c.fx.path("b.jsonl"), read_text(c.fx.path("b.jsonl")) + "\n");  // written since the plan
  manual_clock clock(fixture_now);
  storage::session_store_file file(storage::posix_fs(), clock, c.fx.store_path());
  REQUIRE(file.load().ok());
  auto rep = actors::apply_plan(storage::posix_fs(), file, c.fx.dir(), plan);
  REQUIRE(rep.error.ok());
  REQUIRE(rep.applied.size() == 1);
  CHECK(rep.applied[0].file == "a.jsonl");
  REQUIRE(rep.skipped.size() == 1);
  CHECK_THAT(rep.skipped[0], Catch::Contains("b.jsonl"));
  CHECK_FALSE(exists(c.fx.path("a.jsonl")));
  CHECK(storage::read_transcript_bytes(storage::posix_fs(), c.fx.path("a.jsonl"), 1 << 20).value() == a_text);
  CHECK(exists(c.fx.path("b.jsonl")));
  CHECK_FALSE(exists(c.fx.path("b.jsonl.zst")));
}

}  // namespace sessionrt::testing
