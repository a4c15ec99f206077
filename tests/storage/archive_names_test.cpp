#include <catch2/catch.hpp>

#include "storage/archive_names.hpp"
#include "storage/system_clock.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using sessionrt::testing::temp_dir;

namespace {
constexpr std::int64_t kNow = 1796002475418;  // 2026-11-30T01:34:35.418Z
const std::string kId = "3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44";
const std::string kUuid = "0b9c2f4e-8d1a-4c3b-9e7f-112233445566";
}  // namespace

TEST_CASE("archive names are built as OpenClaw builds them and classified back") {
  const std::string file = kId + ".jsonl";

  SECTION("reset / deleted archives") {
    CHECK(archive_name(file, archive_reason::reset, kNow) == file + ".reset.2026-11-30T01-34-35.418Z");
    CHECK(archive_name("/s/" + file, archive_reason::deleted, kNow) == "/s/" + file + ".deleted.2026-11-30T01-34-35.418Z");
    for (auto reason : {archive_reason::reset, archive_reason::deleted}) {
      auto a = classify(archive_name(file, reason, kNow));
      CHECK(a.kind == (reason == archive_reason::reset ? artifact_kind::reset_archive : artifact_kind::deleted_archive));
      CHECK(a.base == file);
      CHECK(a.reason == archive_reason_name(reason));
      CHECK(a.timestamp_ms == kNow);
      CHECK(is_archive_kind(a.kind));
    }
    // the reference's example, and the seconds-only form the recognizer also accepts
    auto ex = classify("3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44.jsonl.reset.2026-07-20T04-00-01.123Z");
    CHECK(ex.kind == artifact_kind::reset_archive);
    CHECK(ex.timestamp_ms == 1784520001123);
    CHECK(classify("x.jsonl.deleted.2026-07-20T04-00-01Z").timestamp_ms == 1784520001000);
    // the last marker decides
    auto nested = classify("x.jsonl.reset.2026-07-20T04-00-01Z.deleted.2026-07-21T04-00-01.000Z");
    CHECK(nested.kind == artifact_kind::deleted_archive);
    CHECK(nested.base == "x.jsonl.reset.2026-07-20T04-00-01Z");
  }
  SECTION("legacy .bak.<ts> and sessions.json.bak.<N>") {
    auto bak = classify(legacy_bak_archive_name("sessions.json", kNow));
    CHECK(bak.kind == artifact_kind::legacy_bak_archive);
    CHECK(bak.base == "sessions.json");
    CHECK(bak.timestamp_ms == kNow);
    CHECK(store_legacy_backup_name("sessions.json", 3) == "sessions.json.bak.3");
    auto n = classify("sessions.json.bak.3");
    CHECK(n.kind == artifact_kind::store_legacy_backup);
    CHECK(n.detail == "3");
    CHECK(is_archive_kind(n.kind));
  }
  SECTION("repair backup <file>.bak-<pid>-<ms>") {
    CHECK(repair_backup_name("abc.jsonl", 4242, 1767225600123) == "abc.jsonl.bak-4242-1767225600123");
    auto r = classify("abc.jsonl.bak-4242-1767225600123");
    CHECK(r.kind == artifact_kind::repair_backup);
    CHECK(r.base == "abc.jsonl");
    CHECK(r.detail == "4242");
    CHECK(r.timestamp_ms == 1767225600123);
    CHECK_FALSE(is_archive_kind(r.kind));
  }
  SECTION("corrupt transcript backup") {
    const std::string name = corrupt_backup_name(file, kNow, "1a2b3c4d");
    CHECK(name == file + ".corrupt-2026-11-30T01-34-35-418Z-1a2b3c4d.jsonl");
    auto c = classify(name);
    CHECK(c.kind == artifact_kind::corrupt_backup);
    CHECK(c.base == file);
    CHECK(c.timestamp_ms == kNow);
    CHECK(c.detail == "1a2b3c4d");
  }
  SECTION("lines a repair removed") {
    const std::string name = dropped_lines_name(file, kNow);
    CHECK(name == file + ".dropped-2026-11-30T01-34-35-418Z.jsonl");
    auto d = classify(name);
    CHECK(d.kind == artifact_kind::dropped_lines);
    CHECK(d.base == file);
    CHECK(d.timestamp_ms == kNow);
    CHECK(is_archive_kind(d.kind));  // the disk budget may delete it, oldest first
    CHECK_FALSE(is_transcript_kind(d.kind));
    CHECK(classify(file + ".dropped-yesterday.jsonl").kind != artifact_kind::dropped_lines);
  }
  SECTION("store quarantine and temps") {
    CHECK(store_quarantine_name("sessions.json", kNow) == "sessions.json.corrupt-2026-11-30T01-34-35.418Z");
    auto q = classify(store_quarantine_name("sessions.json", kNow));
    CHECK(q.kind == artifact_kind::store_quarantine);
    CHECK(q.timestamp_ms == kNow);
    auto t1 = classify(store_temp_name("sessions.json", 4242, kUuid));
    CHECK(store_temp_name("sessions.json", 4242, kUuid) == "sessions.json.4242." + kUuid + ".tmp");
    CHECK(t1.kind == artifact_kind::store_temp);
    CHECK(t1.detail == kUuid);
    CHECK(classify(store_temp_name("sessions.json", std::nullopt, kUuid)).kind == artifact_kind::store_temp);
    CHECK(is_stale_store_temp(t1, kNow - 300001, kNow));
    CHECK_FALSE(is_stale_store_temp(t1, kNow - 300000, kNow));
    CHECK_FALSE(is_stale_store_temp(classify("sessions.json"), 0, kNow));
    auto repair_temp = classify("abc.jsonl.repair.4242." + kUuid + ".tmp");
    CHECK(repair_temp.kind == artifact_kind::temp);
    CHECK(repair_temp.base == "abc.jsonl.repair");
  }
  SECTION("transcript kinds and sidecars") {
    auto p = classify(file);
    CHECK(p.kind == artifact_kind::primary_transcript);
    CHECK(p.session_id == kId);
    auto topic = classify(kId + "-topic-%2D100%2F5.jsonl");
    CHECK(topic.kind == artifact_kind::topic_transcript);
    CHECK(topic.session_id == kId);
    CHECK(topic.detail == "%2D100%2F5");
    auto succ = classify("2026-11-30T01-31-20-053Z_" + kId + ".jsonl");
    CHECK(succ.kind == artifact_kind::successor_transcript);
    CHECK(succ.session_id == kId);
    CHECK(succ.timestamp_ms == 1796002280053);
    CHECK(checkpoint_transcript_name(kId, kUuid) == kId + ".checkpoint." + kUuid + ".jsonl");
    auto cp = classify(checkpoint_transcript_name(kId, kUuid));
    CHECK(cp.kind == artifact_kind::checkpoint_transcript);
    CHECK(cp.base == file);
    CHECK(cp.detail == kUuid);
    auto tr = classify(trajectory_name(kId));
    CHECK(trajectory_name(kId) == kId + ".trajectory.jsonl");
    CHECK(tr.kind == artifact_kind::trajectory);
    CHECK(tr.base == file);
    auto tp = classify(trajectory_pointer_name(kId));
    CHECK(trajectory_pointer_name(kId) == kId + ".trajectory-path.json");
    CHECK(tp.kind == artifact_kind::trajectory_pointer);
    CHECK(tp.session_id == kId);
    auto lock = classify(write_lock_name(file));
    CHECK(lock.kind == artifact_kind::write_lock);
    CHECK(lock.base == file);
    CHECK(classify("sessions.json").kind == artifact_kind::store);
    for (auto k : {p.kind, topic.kind, succ.kind, cp.kind}) CHECK(is_transcript_kind(k));
    for (auto k : {tr.kind, tp.kind, lock.kind}) CHECK_FALSE(is_transcript_kind(k));
  }
}

TEST_CASE("names that only look like artifacts are not recognized as them") {
  for (const char* name : {"x.jsonl.reset.2026-11-30", "x.jsonl.reset.2026-11-30T01:31:20.053Z",
                           "x.jsonl.reset.2026-11-30T01-31-20.05Z", "x.jsonl.deleted.", "x.jsonl.reset.2026-13-30T01-31-20Z",
                           ".reset.2026-11-30T01-31-20Z", "x.jsonl.bak.2026", "sessions.json.bak.", "sessions.json.bak.12a",
                           "sessions.json.corrupt-yesterday", "sessions.json.4242.not-a-uuid.tmp", "x.jsonl.bak-12-",
                           "x.jsonl.bak--5", "a/b.jsonl", "../x.jsonl", "", ".", "..", ".jsonl", "x.txt",
                           "x.jsonl.lock.old", "x.trajectory-path.json.bak", "-x.jsonl", "x.jsonl.reset.2026-11-30T01-31-20.053Z.gz"}) {
    INFO(name);
    CHECK(classify(name).kind == artifact_kind::unknown);
  }
  // A broken corrupt-backup suffix is not a corrupt backup (it is, syntactically, a transcript).
  CHECK(classify("x.jsonl.corrupt-2026-11-30T01-31-20-053Z-XYZ12345.jsonl").kind != artifact_kind::corrupt_backup);
  CHECK(classify("x.jsonl.corrupt-2026-11-30T01:31:20.053Z-1a2b3c4d.jsonl").kind != artifact_kind::corrupt_backup);
  CHECK(classify("2026-11-30T01-31-20.053Z_abc.jsonl").kind != artifact_kind::successor_transcript);
  CHECK(classify("abc-topic-.jsonl").kind != artifact_kind::topic_transcript);
  CHECK(classify("abc-topic-a b.jsonl").kind == artifact_kind::unknown);
  CHECK(classify("abc.checkpoint.nope.jsonl").kind == artifact_kind::unknown);
}

TEST_CASE("dashed ISO timestamps round-trip and are parsed strictly") {
  CHECK(format_dashed_iso_ts(kNow) == "2026-11-30T01-34-35-418Z");
  CHECK(parse_dashed_iso_ts(format_dashed_iso_ts(kNow)) == kNow);
  CHECK(parse_dashed_iso_ts("1970-01-01T00-00-00-000Z") == 0);
  CHECK_FALSE(parse_dashed_iso_ts("2026-11-30T01:34:35.418Z"));
  CHECK_FALSE(parse_dashed_iso_ts("2026-11-30T01-34-35-41xZ"));
  CHECK_FALSE(parse_dashed_iso_ts("2026-11-30T25-34-35-418Z"));
  CHECK_FALSE(parse_dashed_iso_ts("2026-11-30T01-34-35-418"));
}

TEST_CASE("archive_transcript renames and never replaces an older archive") {
  temp_dir dir;
  manual_clock clock(kNow);
  const std::string path = dir.file(kId + ".jsonl");
  testing::write_text(path, "{\"type\":\"session\"}\n");

  SECTION("plain rename") {
    auto archived = archive_transcript(posix_fs(), clock, path, archive_reason::reset);
    REQUIRE(archived.ok());
    CHECK(*archived == path + ".reset.2026-11-30T01-34-35.418Z");
    CHECK_FALSE(testing::exists(path));
    CHECK(testing::read_text(*archived) == "{\"type\":\"session\"}\n");
    CHECK(testing::list_names(dir.path()).size() == 1);
  }
  SECTION("the name is taken: one millisecond later") {
    testing::write_text(path + ".deleted.2026-11-30T01-34-35.418Z", "older");
    auto archived = archive_transcript(posix_fs(), clock, path, archive_reason::deleted);
    REQUIRE(archived.ok());
    CHECK(*archived == path + ".deleted.2026-11-30T01-34-35.419Z");
    CHECK(testing::read_text(path + ".deleted.2026-11-30T01-34-35.418Z") == "older");
    CHECK(classify(testing::list_names(dir.path()).at(1)).timestamp_ms == kNow + 1);
  }
  SECTION("missing source") {
    auto archived = archive_transcript(posix_fs(), clock, dir.file("nope.jsonl"), archive_reason::reset);
    REQUIRE_FALSE(archived.ok());
    CHECK(archived.error().code() == errc::not_found);
    CHECK(archived.error().message().find("nope.jsonl") != std::string::npos);
  }
}
