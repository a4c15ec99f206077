// Start-up reconciliation: a transcript newer than its key's row (the row write was lost in a
// crash) is adopted; everything else is left alone.
#include <catch2/catch.hpp>

#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/store_reconcile.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {
// A transcript holding only its header, named <id>.jsonl unless `name` is given.
void write_transcript(const testing::temp_dir& dir, const std::string& id, std::int64_t ts,
                      std::optional<std::string> key, std::optional<std::string> parent = std::nullopt,
                      const std::string& name = "") {
  header_fields h;
  h.id = id;
  h.timestamp_ms = ts;
  h.cwd = std::string("/w");  // (a plain "/w" trips GCC 12's -Wmaybe-uninitialized false positive at -O3)
  h.session_key = std::move(key);
  h.parent_session = std::move(parent);
  testing::write_text(dir.file(name.empty() ? id + ".jsonl" : name), json::to_compact(make_header(h)) + "\n");
}
session_entry row(const std::string& id, std::int64_t started) {
  session_entry e;
  e.set_session_id(id);
  e.set_updated_at(started);
  e.set_session_started_at(started);
  e.set_label("kept");
  e.set_compaction_count(3);
  e.set_total_tokens(5000);
  e.set_status("done");
  e.set_model("gpt-x");
  e.json()["goal"] = "the old session's goal";
  return e;
}
}  // namespace

TEST_CASE("reconcile: a newer transcript of a key replaces the row's session, and a missing row is created") {
  testing::temp_dir dir;
  session_store store;
  store.upsert("agent:main:main", row("old-id", 1000));
  write_transcript(dir, "old-id", 1000, "agent:main:main");
  write_transcript(dir, "new-id", 2000, "agent:main:main");           // the lost rollover
  write_transcript(dir, "other-id", 3000, "agent:main:discord:direct:x");  // the lost first row
  write_transcript(dir, "stale-id", 500, "agent:main:main");          // older than the row: ignored
  write_transcript(dir, "nokey-id", 4000, std::nullopt);              // no key: ignored
  testing::write_text(dir.file("new-id.jsonl.reset.2026-11-30T01-00-00.000Z"), "archive");
  auto rep = reconcile_store(posix_fs(), store, dir.path());
  REQUIRE(rep.ok());
  REQUIRE(rep->adopted.size() == 2);
  const auto* main = store.find("agent:main:main");
  REQUIRE(main);
  CHECK(main->session_id() == std::optional<std::string_view>("new-id"));
  CHECK(main->session_started_at() == std::optional<std::int64_t>(2000));
  CHECK(main->label() == std::optional<std::string_view>("kept"));  // preferences survive
  // As the lost rollover would have left it: counters start over, the old run's caches go,
  // the usage lineage names both sessions.
  CHECK(main->compaction_count() == std::optional<std::int64_t>(0));
  CHECK(main->total_tokens() == std::optional<std::int64_t>(0));
  CHECK(main->total_tokens_fresh() == std::optional<bool>(true));
  for (const char* gone : {"status", "model", "goal"}) CHECK_FALSE(main->has(gone));
  CHECK(main->usage_family_key() == std::optional<std::string_view>("agent:main:main"));
  CHECK(main->usage_family_session_ids() == std::vector<std::string>{"old-id", "new-id"});
  CHECK(main->session_file() == std::optional<std::string_view>(dir.file("new-id.jsonl")));
  const auto* other = store.find("agent:main:discord:direct:x");
  REQUIRE(other);
  CHECK(other->session_id() == std::optional<std::string_view>("other-id"));
  CHECK(other->compaction_count() == std::optional<std::int64_t>(0));  // as a first turn's row
  CHECK_FALSE(other->has("usageFamilyKey"));
  CHECK(store.size() == 2);
}

TEST_CASE("reconcile: nothing to do when every transcript is referenced") {
  testing::temp_dir dir;
  session_store store;
  store.upsert("agent:main:main", row("a", 1000));
  write_transcript(dir, "a", 1000, "agent:main:main");
  auto rep = reconcile_store(posix_fs(), store, dir.path());
  REQUIRE(rep.ok());
  CHECK(rep->adopted.empty());
  CHECK(rep->scanned == 0);
}

TEST_CASE("reconcile: a successor transcript (truncateAfterCompaction) whose row write was lost is adopted") {
  const std::string name = "2026-11-30T01-00-00-000Z_succ-id.jsonl";
  auto adopt = [&](const testing::temp_dir& dir, std::optional<std::string> parent) {
    session_store store;
    store.upsert("agent:main:main", row("old-id", 1000));
    write_transcript(dir, "old-id", 1000, "agent:main:main");
    write_transcript(dir, "succ-id", 2000, "agent:main:main", std::move(parent), name);
    auto rep = reconcile_store(posix_fs(), store, dir.path());
    REQUIRE(rep.ok());
    REQUIRE(rep->adopted.size() == 1);
    const auto* main = store.find("agent:main:main");
    REQUIRE(main);
    CHECK(main->session_id() == std::optional<std::string_view>("succ-id"));
    CHECK(main->session_file() == std::optional<std::string_view>(dir.file(name)));
    CHECK(main->usage_family_session_ids() == std::vector<std::string>{"old-id", "succ-id"});
    return *main;
  };
  SECTION("it continues the row's session: the lost write was the compaction's") {
    testing::temp_dir dir;
    const session_entry e = adopt(dir, dir.file("old-id.jsonl"));
    CHECK(e.compaction_count() == std::optional<std::int64_t>(4));  // 3 + this compaction
    CHECK(e.session_started_at() == std::optional<std::int64_t>(1000));  // the same session goes on
    CHECK(e.total_tokens_fresh() == std::optional<bool>(false));  // re-read from the transcript
    CHECK(e.model() == std::optional<std::string_view>("gpt-x"));  // run state kept
  }
  SECTION("its parent is not the row's session: a new session as a rollover starts it") {
    testing::temp_dir dir;
    const session_entry e = adopt(dir, dir.file("someone-else.jsonl"));
    CHECK(e.compaction_count() == std::optional<std::int64_t>(0));
    CHECK(e.session_started_at() == std::optional<std::int64_t>(2000));
    CHECK_FALSE(e.has("model"));
  }
}
