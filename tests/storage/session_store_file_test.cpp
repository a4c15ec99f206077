// session_store_file: byte-exact round trips, normalization reports, corruption quarantine and
// rebuild, fault injection on save, limits, check / rewrite.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "messages/iso_time.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "storage/durable_file.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/session_store_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using sessionrt::testing::exists;
using sessionrt::testing::list_names;
using sessionrt::testing::read_text;
using sessionrt::testing::temp_dir;
using sessionrt::testing::write_text;

namespace {

constexpr std::int64_t kNow = 1789041600000;  // 2026-09-10T12:00:00.000Z

std::string vector_text() { return read_text(testing::vectors_dir() + "/oc_legacy_sessions.json"); }

std::vector<std::string> field_names(const session_entry& e) {
  std::vector<std::string> names;
  for (const auto& kv : e.json()) names.emplace_back(kv.key());
  return names;
}

bool has_change(const std::vector<store_change>& changes, const std::string& key, const std::string& what) {
  return std::any_of(changes.begin(), changes.end(),
                     [&](const store_change& c) { return c.key == key && c.what == what && !c.why.empty(); });
}

bool has_tmp_file(const std::string& dir) {
  auto names = list_names(dir);
  return std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.find(".tmp") != std::string::npos; });
}

std::string header_line(const std::string& id, const std::string& iso, const std::string& session_key = "") {
  boost::json::object h{{"type", "session"}, {"version", 3}, {"id", id}, {"timestamp", iso}, {"cwd", "/w"}};
  if (!session_key.empty()) h["sessionKey"] = session_key;
  return json::to_compact(h) + "\n";
}

void write_transcript(const std::string& dir, const std::string& name, const std::string& header) {
  write_text(dir + "/" + name,
             header + R"({"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-09-10T11:00:00.000Z"})" "\n");
}

void set_age(const std::string& path, int minutes_ago) {
  std::filesystem::last_write_time(path,
                                   std::filesystem::file_time_type::clock::now() - std::chrono::minutes(minutes_ago));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Round trips

TEST_CASE("store file: the OpenClaw vector loads and saves to identical bytes") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  const std::string original = vector_text();
  REQUIRE(original.back() == '\n');
  write_text(path, original);

  manual_clock clk(kNow);
  session_store_file file(posix_fs(), clk, path);
  auto report = file.load();
  REQUIRE(report.ok());
  CHECK(report->file_existed);
  CHECK(report->entry_count == 3);
  CHECK(report->changes.empty());
  CHECK_FALSE(report->quarantine.has_value());
  CHECK(report->trailing_newline);
  CHECK(serialize_store(file.store(), file.trailing_newline()) == original);

  // Unchanged: save does not even write.
  faulty_fs counting(posix_fs());
  session_store_file counted(counting, clk, path);
  REQUIRE(counted.load().ok());
  REQUIRE(counted.save().ok());
  CHECK(counting.count(fs_op::rename) == 0);

  // A rewrite through load + save keeps the bytes.
  auto rewritten = rewrite_store_file(posix_fs(), clk, path);
  REQUIRE(rewritten.ok());
  CHECK(read_text(path) == original);
}

// Boost.JSON 1.81 alone does not round doubles correctly (about one 17-digit double in ten came
// back one ulp off, found by the store fuzzer); json_reader re-reads them with std::from_chars.
TEST_CASE("store file: a 17-digit double survives a rewrite") {
  const std::string text = "{\n  \"k\": {\n    \"estimatedCostUsd\": 0.9936527282127801\n  }\n}\n";
  auto parsed = load_from_text(text);
  REQUIRE(parsed.ok());
  CHECK(serialize_store(parsed->store, parsed->trailing_newline) == text);
}

// Found by the store fuzzer: a number past a double's range reads as infinity, which is written
// as null (as JSON.stringify does), so the next load changed the row again.
TEST_CASE("store file: an updatedAt past a double's range is set to 0 at once, and a reload changes nothing") {
  const std::string text = "{\n  \"k\": {\n    \"sessionId\": \"0a1b2c00000000003\",\n    \"updatedAt\": 10817e890\n  }\n}\n";
  auto first = load_from_text(text);
  REQUIRE(first.ok());
  REQUIRE(first->changes.size() == 1);
  CHECK(first->changes[0].what == "set updatedAt to 0");
  const std::string bytes = serialize_store(first->store, first->trailing_newline);
  CHECK(bytes.find("\"updatedAt\": 0") != std::string::npos);
  auto second = load_from_text(bytes);
  REQUIRE(second.ok());
  CHECK(second->changes.empty());
}

TEST_CASE("store file: no trailing newline stays without one") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  std::string original = vector_text();
  original.pop_back();
  write_text(path, original);

  manual_clock clk(kNow);
  session_store_file file(posix_fs(), clk, path);
  auto report = file.load();
  REQUIRE(report.ok());
  CHECK_FALSE(report->trailing_newline);
  file.store().find_for_update("cron:nightly-report")->set_total_tokens(7);
  REQUIRE(file.save().ok());
  const std::string saved = read_text(path);
  CHECK(saved.back() == '}');
  CHECK(saved.size() == original.size());  // "0" -> "7"
  CHECK(saved.find("\"totalTokens\": 7,\n    \"delivery\"") != std::string::npos);
}

TEST_CASE("store file: unknown fields stay in place - set keeps position, new appends, clear removes") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  write_text(path, vector_text());
  manual_clock clk(kNow);
  session_store_file file(posix_fs(), clk, path);
  REQUIRE(file.load().ok());
  const auto before = field_names(*file.store().find("agent:main:main"));
  REQUIRE(before.back() == "delivery");

  session_entry* row = file.store().find_for_update("agent:main:main");
  row->set_input_tokens(1);        // existing: keeps its place
  row->set_last_channel("telegram");  // new: appended
  row->clear_display_name();       // cleared: gone, others keep order
  REQUIRE(file.save().ok());

  session_store_file reread(posix_fs(), clk, path);
  REQUIRE(reread.load().ok());
  std::vector<std::string> expected = before;
  expected.erase(std::find(expected.begin(), expected.end(), "displayName"));
  expected.push_back("lastChannel");
  const session_entry& e = *reread.store().find("agent:main:main");
  CHECK(field_names(e) == expected);
  CHECK(e.input_tokens() == 1);
  CHECK(e.json().at("delivery") == boost::json::value(boost::json::object{{"kind", "none"}}));
  // The other rows are untouched, byte for byte.
  const std::string text = read_text(path);
  const std::string original = vector_text();
  const auto second_row = original.find("  \"agent:main:telegram:group:-100123\"");
  CHECK(text.substr(text.find("  \"agent:main:telegram:group:-100123\"")) == original.substr(second_row));
  CHECK(reread.store().size() == 3);
}

TEST_CASE("store file: a missing file is an empty store - the first save creates dir 0700 and file 0600") {
  temp_dir dir;
  const std::string sessions_dir = dir.path() + "/agents/main/sessions";
  const std::string path = sessions_dir + "/sessions.json";
  manual_clock clk(kNow);
  session_store_file file(posix_fs(), clk, path);
  auto report = file.load();
  REQUIRE(report.ok());
  CHECK_FALSE(report->file_existed);
  CHECK(file.store().empty());
  CHECK_FALSE(exists(path));  // loading writes nothing

  session_entry e;
  e.set_session_id("s1");
  e.set_updated_at(kNow);
  file.store().upsert("agent:main:main", e);
  REQUIRE(file.save().ok());
  CHECK(read_text(path) == "{\n  \"agent:main:main\": {\n    \"sessionId\": \"s1\",\n    \"updatedAt\": 1789041600000\n  }\n}\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(sessions_dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0077) == 0);
  CHECK_FALSE(has_tmp_file(sessions_dir));
}

TEST_CASE("store file: save writes only when the text changed - durable=false skips fsync") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  write_text(path, vector_text());
  manual_clock clk(kNow);
  faulty_fs counting(posix_fs());
  store_file_options opt;
  opt.durable = false;
  session_store_file file(counting, clk, path, opt);
  REQUIRE(file.load().ok());
  file.store().find_for_update("cron:nightly-report")->set_label("nightly");
  REQUIRE(file.save().ok());
  CHECK(counting.count(fs_op::rename) == 1);
  CHECK(counting.count(fs_op::fsync) == 0);
  REQUIRE(file.save().ok());
  (void)file.store().find_for_update("cron:nightly-report");  // looked at, not changed
  REQUIRE(file.save().ok());
  CHECK(counting.count(fs_op::rename) == 1);

  session_store_file durable(counting, clk, path);
  REQUIRE(durable.load().ok());
  durable.store().erase("cron:nightly-report");
  REQUIRE(durable.save().ok());
  CHECK(counting.count(fs_op::rename) == 2);
  CHECK(counting.count(fs_op::fsync) == 2);  // the temp file and the directory
}

TEST_CASE("store file: a one-row change in 1,000 rows saves the same bytes as a one-shot serialization") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  manual_clock clk(kNow);
  {
    session_store_file file(posix_fs(), clk, path);
    REQUIRE(file.load().ok());
    for (int i = 0; i < 1000; ++i) {
      session_entry e;
      e.set_session_id("id-" + std::to_string(i));
      e.set_updated_at(kNow + i);
      e.set_display_name("r\u00e9union " + std::to_string(i));
      e.json()["delivery"] = boost::json::object{{"kind", "none"}};
      file.store().upsert("agent:main:chat:" + std::to_string(i), std::move(e));
    }
    REQUIRE(file.save().ok());
  }
  session_store_file file(posix_fs(), clk, path);
  REQUIRE(file.load().ok());
  REQUIRE(file.save().ok());  // fills the per-row cache; nothing to write
  session_entry* row = file.store().find_for_update("agent:main:chat:777");
  row->set_updated_at(kNow + 5000);
  row->clear_display_name();
  row->set_label("changed");
  REQUIRE(file.save().ok());

  boost::json::object whole;
  for (const auto& r : file.store()) whole[r.key] = r.entry.json();
  CHECK(read_text(path) == json::to_pretty(whole) + "\n");
  auto reread = json::parse_object(read_text(path));
  REQUIRE(reread.ok());
  CHECK(reread->size() == 1000);
  CHECK(reread->at("agent:main:chat:777").at("label") == "changed");

  // A store put in place of the loaded one is written, whatever its history.
  file.store() = storage::session_store();
  REQUIRE(file.save().ok());
  CHECK(read_text(path) == "{}\n");
}

// ---------------------------------------------------------------------------------------------
// Normalization [R§2.3]

TEST_CASE("store file: every migration and normalization is applied and reported") {
  const std::string text = R"({
  "bad:number": 5,
  "bad:unsafe": {"sessionId": "../etc/passwd", "updatedAt": 1},
  "legacy": {"sessionId": "abc", "updatedAt": 1, "provider": "telegram", "lastProvider": "slack", "room": "#general"},
  "legacy:room-kept": {"sessionId": "abd", "groupChannel": "#g", "room": "#old"},
  "id:not-transcript": {"sessionId": "a:b@c", "updatedAt": 2},
  "id:with-file": {"sessionId": "a:b@c", "sessionFile": "/s/a.jsonl"},
  "file:not-string": {"sessionId": "s1", "sessionFile": 42},
  "updated:string": {"sessionId": "s2", "updatedAt": "yesterday", "label": "x"},
  "updated:negative": {"sessionId": "s3", "updatedAt": -5},
  "pending": {"sessionId": "s4", "pendingFinalDelivery": "yes", "pendingFinalDeliveryAttemptCount": 1.5,
              "pendingFinalDeliveryContext": {"channel": "telegram"},
              "restartRecoveryDeliveryContext": {"channel": "telegram", "to": "telegram:1"}},
  "pending:true": {"sessionId": "s5", "pendingFinalDelivery": true},
  "model:trim": {"sessionId": "s6", "modelProvider": " anthropic ", "model": "\u00a0claude-sonnet-4-5\n"},
  "model:empty": {"sessionId": "s7", "model": "  ", "modelProvider": "anthropic"},
  "skills": {"sessionId": "s8", "skillsSnapshot": {"prompt": "p", "resolvedSkills": [{"name": "x"}], "version": 2}}
})";
  auto parsed = load_from_text(text);
  REQUIRE(parsed.ok());
  const auto& ch = parsed->changes;
  const auto& s = parsed->store;

  CHECK(has_change(ch, "bad:number", "removed the entry"));
  CHECK(has_change(ch, "bad:unsafe", "removed the entry"));
  CHECK_FALSE(s.contains("bad:number"));
  CHECK_FALSE(s.contains("bad:unsafe"));

  CHECK(has_change(ch, "legacy", "renamed provider to channel"));
  CHECK(has_change(ch, "legacy", "renamed lastProvider to lastChannel"));
  CHECK(has_change(ch, "legacy", "renamed room to groupChannel"));
  CHECK(field_names(*s.find("legacy")) == std::vector<std::string>{"sessionId", "updatedAt", "channel", "lastChannel",
                                                                     "groupChannel"});
  CHECK(s.find("legacy")->channel() == "telegram");
  CHECK(has_change(ch, "legacy:room-kept", "removed room"));
  CHECK(s.find("legacy:room-kept")->json().at("groupChannel") == "#g");

  CHECK(has_change(ch, "id:not-transcript", "removed sessionId"));
  CHECK_FALSE(s.find("id:not-transcript")->has("sessionId"));
  CHECK(s.find("id:with-file")->session_id() == "a:b@c");

  CHECK(has_change(ch, "file:not-string", "removed sessionFile"));
  CHECK_FALSE(s.find("file:not-string")->has("sessionFile"));

  CHECK(has_change(ch, "updated:string", "set updatedAt to 0"));
  CHECK(field_names(*s.find("updated:string")) == std::vector<std::string>{"sessionId", "updatedAt", "label"});
  CHECK(s.find("updated:string")->updated_at() == 0);
  CHECK(has_change(ch, "updated:negative", "set updatedAt to 0"));

  CHECK(has_change(ch, "pending", "removed pendingFinalDelivery"));
  CHECK(has_change(ch, "pending", "removed pendingFinalDeliveryAttemptCount"));
  CHECK(has_change(ch, "pending", "removed pendingFinalDeliveryContext"));
  CHECK_FALSE(has_change(ch, "pending", "removed restartRecoveryDeliveryContext"));
  CHECK(field_names(*s.find("pending")) == std::vector<std::string>{"sessionId", "restartRecoveryDeliveryContext"});
  CHECK(s.find("pending:true")->json().at("pendingFinalDelivery") == true);

  CHECK(has_change(ch, "model:trim", "trimmed model"));
  CHECK(has_change(ch, "model:trim", "trimmed modelProvider"));
  CHECK(s.find("model:trim")->model() == "claude-sonnet-4-5");
  CHECK(s.find("model:trim")->model_provider() == "anthropic");
  CHECK(field_names(*s.find("model:trim")) == std::vector<std::string>{"sessionId", "modelProvider", "model"});
  CHECK(has_change(ch, "model:empty", "removed model and modelProvider"));
  CHECK(field_names(*s.find("model:empty")) == std::vector<std::string>{"sessionId"});

  CHECK(has_change(ch, "skills", "removed skillsSnapshot.resolvedSkills"));
  CHECK(json::to_compact(s.find("skills")->json().at("skillsSnapshot")) == R"({"prompt":"p","version":2})");

  // Nothing else was touched, and a second pass finds nothing to do.
  CHECK(ch.size() == 17);
  auto again = load_from_text(serialize_store(s, true));
  REQUIRE(again.ok());
  CHECK(again->changes.empty());
}

TEST_CASE("store file: invalid UTF-8 and a byte order mark are repaired and reported") {
  std::string text = "\xEF\xBB\xBF{\"k\": {\"sessionId\": \"s\", \"label\": \"caf\xE9 \xF0\x9F\x98\"}}";
  auto parsed = load_from_text(text);
  REQUIRE(parsed.ok());
  CHECK(has_change(parsed->changes, "", "removed a UTF-8 byte order mark"));
  CHECK(has_change(parsed->changes, "", "replaced 2 invalid UTF-8 sequences with U+FFFD"));
  CHECK(parsed->store.find("k")->label() == "caf\xEF\xBF\xBD \xEF\xBF\xBD");
}

// ---------------------------------------------------------------------------------------------
// Corruption: quarantine and rebuild

TEST_CASE("store file: unusable files are set aside with their bytes, never overwritten") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "this is not json"},
      {"array", "[]"},
      {"null", "null"},
      {"empty", ""},
      {"truncated", "{\n  \"agent:main:main\": {\n    \"sessionId\": \"0a1b\",\n    \"updat"},
  };
  for (const auto& [name, bytes] : cases) {
    SECTION(name) {
      temp_dir dir;
      const std::string path = dir.file("sessions.json");
      write_text(path, bytes);
      write_transcript(dir.path(), "5d1e0f9a-1111-4222-8333-444455556666.jsonl",
                       header_line("5d1e0f9a-1111-4222-8333-444455556666", "2026-09-10T10:00:00.000Z"));
      manual_clock clk(kNow);
      session_store_file file(posix_fs(), clk, path);
      auto report = file.load();
      REQUIRE(report.ok());
      REQUIRE(report->quarantine.has_value());
      const store_quarantine& q = *report->quarantine;
      CHECK(q.quarantined_path == path + ".corrupt-" + format_archive_ts(kNow));
      CHECK(read_text(q.quarantined_path) == bytes);
      CHECK_FALSE(q.cause.empty());
      // The original path holds the rebuilt store, durably written, never a silent "{}".
      auto reread = json::parse_object(read_text(path));
      REQUIRE(reread.ok());
      CHECK(reread->size() == 1);
      REQUIRE(q.rows_from_headers.size() == 1);
      CHECK(q.rows_from_headers[0].key == "agent:main:recovered:5d1e0f9a-1111-4222-8333-444455556666");
      CHECK(file.store().size() == 1);
    }
  }
}

TEST_CASE("store file: rebuild from transcript headers uses header keys, corrupt text keys, then fallbacks") {
  temp_dir root;
  const std::string dir = root.path() + "/agents/ops/sessions";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/sessions.json";
  const std::string id_a = "aaaaaaaa-0000-4000-8000-000000000001";  // listed in the corrupt text, no header key
  const std::string id_b = "bbbbbbbb-0000-4000-8000-000000000002";  // header names its key
  const std::string id_c = "cccccccc-0000-4000-8000-000000000003";  // listed, no transcript: lost
  const std::string id_d = "dddddddd-0000-4000-8000-000000000004";  // unknown anywhere: fallback key
  // A store cut short mid-write: keys K1..K3 are still readable in its text.
  const std::string corrupt = "{\n  \"agent:ops:telegram:direct:1\": {\n    \"sessionId\": \"" + id_a +
                              "\",\n    \"updatedAt\": 1\n  },\n  \"agent:ops:slack:channel:c2\": {\n    \"sessionId\": \"" +
                              id_b + "\"\n  },\n  \"agent:ops:cron:lost\": {\n    \"sessionId\": \"" + id_c +
                              "\",\n    \"upda";
  write_text(path, corrupt);
  write_transcript(dir, id_a + ".jsonl", header_line(id_a, "2026-09-01T00:00:00.000Z"));
  write_transcript(dir, id_b + ".jsonl", header_line(id_b, "2026-09-02T00:00:00.000Z", "agent:ops:slack:channel:c2"));
  write_transcript(dir, id_d + ".jsonl", header_line(id_d, "2026-09-03T00:00:00.500Z"));
  write_transcript(dir, id_c + ".jsonl.reset.2026-09-01T00-00-00.000Z", header_line(id_c, "2026-08-01T00:00:00.000Z"));
  write_text(dir + "/notes.txt", "not a transcript");
  write_text(dir + "/broken.jsonl", "{not json\n");

  manual_clock clk(kNow);
  session_store_file file(posix_fs(), clk, path);
  auto report = file.load();
  REQUIRE(report.ok());
  REQUIRE(report->quarantine.has_value());
  const store_quarantine& q = *report->quarantine;
  CHECK(q.temp_base_path.empty());
  REQUIRE(q.rows_from_headers.size() == 3);
  CHECK(q.rows_from_headers[0].key == "agent:ops:telegram:direct:1");
  CHECK(q.rows_from_headers[0].key_source == "corrupt file text");
  CHECK(q.rows_from_headers[1].key == "agent:ops:slack:channel:c2");
  CHECK(q.rows_from_headers[1].key_source == "header sessionKey");
  CHECK(q.rows_from_headers[2].key == "agent:ops:recovered:" + id_d);
  CHECK(q.rows_from_headers[2].key_source == "fallback");
  CHECK(q.unrecoverable_keys == std::vector<std::string>{"agent:ops:cron:lost"});
  CHECK(std::any_of(q.notes.begin(), q.notes.end(),
                    [](const store_change& n) { return n.key.find("broken.jsonl") != std::string::npos; }));

  const session_entry* b = file.store().find("agent:ops:slack:channel:c2");
  REQUIRE(b != nullptr);
  CHECK(b->session_id() == id_b);
  CHECK(b->session_started_at() == parse_iso_ms("2026-09-02T00:00:00.000Z"));
  CHECK(b->session_file() == std::filesystem::canonical(dir).string() + "/" + id_b + ".jsonl");
  CHECK(b->updated_at() > 0);
  CHECK(field_names(*b) == std::vector<std::string>{"sessionId", "updatedAt", "sessionStartedAt", "sessionFile"});

  // What was written is what a reload sees.
  session_store_file reread(posix_fs(), clk, path);
  auto again = reread.load();
  REQUIRE(again.ok());
  CHECK_FALSE(again->quarantine.has_value());
  CHECK(again->changes.empty());
  CHECK(reread.store().size() == 3);
}

TEST_CASE("store file: the newest stale temp file that parses is the base of a rebuild") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  const std::string id_a = "aaaaaaaa-0000-4000-8000-000000000001";
  const std::string id_d = "dddddddd-0000-4000-8000-000000000004";
  write_text(path, "{\"half\":");
  const std::string newest = dir.file("sessions.json.4242.0f8e7d6c-5b4a-4938-8271-605f4e3d2c1b.tmp");
  const std::string older = dir.file("sessions.json.1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b.tmp");
  const std::string broken = dir.file("sessions.json.99.aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee.tmp");
  write_text(newest, "{\n  \"agent:main:main\": {\n    \"sessionId\": \"" + id_a + "\",\n    \"updatedAt\": 5\n  }\n}");
  write_text(older, "{\n  \"agent:main:old\": {\n    \"sessionId\": \"x\"\n  }\n}");
  write_text(broken, "{\"cut");
  set_age(older, 30);
  set_age(newest, 10);
  set_age(broken, 1);  // newest of all, but does not parse
  write_transcript(dir.path(), id_a + ".jsonl", header_line(id_a, "2026-09-01T00:00:00.000Z"));
  write_transcript(dir.path(), id_d + ".jsonl", header_line(id_d, "2026-09-03T00:00:00.000Z", "agent:main:main"));

  manual_clock clk(kNow);
  session_store_file file(posix_fs(), clk, path);
  auto report = file.load();
  REQUIRE(report.ok());
  REQUIRE(report->quarantine.has_value());
  const store_quarantine& q = *report->quarantine;
  CHECK(q.temp_base_path == newest);
  CHECK(q.keys_from_temp == std::vector<std::string>{"agent:main:main"});
  CHECK(std::any_of(q.notes.begin(), q.notes.end(), [&](const store_change& n) { return n.key == broken; }));
  // id_a is referenced by the temp row; id_d claims a key the temp row holds: fallback.
  REQUIRE(q.rows_from_headers.size() == 1);
  CHECK(q.rows_from_headers[0].key == "agent:main:recovered:" + id_d);
  CHECK(file.store().find("agent:main:main")->session_id() == id_a);
  CHECK(file.store().find("agent:main:main")->updated_at() == 5);
  CHECK_FALSE(file.store().contains("agent:main:old"));
  CHECK(q.unrecoverable_keys.empty());
  CHECK(std::any_of(q.notes.begin(), q.notes.end(), [](const store_change& n) {
    return n.what == "could not list the keys of the corrupt file";
  }));
}

TEST_CASE("store file: transcripts claiming one key: the newest header wins, the others are reported") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  write_text(path, "]");
  const std::string old_id = "0a000000-0000-4000-8000-000000000001";
  const std::string new_id = "0b000000-0000-4000-8000-000000000002";
  write_transcript(dir.path(), new_id + ".jsonl", header_line(new_id, "2026-09-05T00:00:00.000Z", "agent:main:main"));
  write_transcript(dir.path(), old_id + ".jsonl", header_line(old_id, "2026-09-01T00:00:00.000Z", "agent:main:main"));
  manual_clock clk(kNow);
  session_store_file file(posix_fs(), clk, path);
  auto report = file.load();
  REQUIRE(report.ok());
  const store_quarantine& q = *report->quarantine;
  CHECK(file.store().find("agent:main:main")->session_id() == new_id);
  CHECK(file.store().find("agent:main:recovered:" + old_id)->session_id() == old_id);
  CHECK(std::any_of(q.notes.begin(), q.notes.end(), [&](const store_change& n) {
    return n.key.find(old_id) != std::string::npos && n.why.find("also claims key agent:main:main") != std::string::npos;
  }));
}

TEST_CASE("store file: a second quarantine in the same millisecond does not replace the first") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  manual_clock clk(kNow);
  write_text(path, "first");
  session_store_file a(posix_fs(), clk, path);
  REQUIRE(a.load().ok());
  write_text(path, "second");
  session_store_file b(posix_fs(), clk, path);
  auto report = b.load();
  REQUIRE(report.ok());
  const std::string stem = path + ".corrupt-" + format_archive_ts(kNow);
  CHECK(report->quarantine->quarantined_path == stem + "-1");
  CHECK(read_text(stem) == "first");
  CHECK(read_text(stem + "-1") == "second");
}

TEST_CASE("store file: when setting aside or rebuilding fails, the corrupt file stays where it was") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  write_text(path, "garbage");
  manual_clock clk(kNow);
  faulty_fs faulty(posix_fs());

  SECTION("rename to the quarantine name fails") {
    faulty.fail_nth(fs_op::rename, 1, EIO);
    session_store_file file(faulty, clk, path);
    auto report = file.load();
    REQUIRE_FALSE(report.ok());
    CHECK(report.error().code() == errc::io_error);
    CHECK(report.error().message().find("could not be set aside") != std::string::npos);
    CHECK(report.error().message().find(path) != std::string::npos);
  }
  SECTION("writing the rebuilt store fails") {
    faulty.space_left(0);
    session_store_file file(faulty, clk, path);
    auto report = file.load();
    REQUIRE_FALSE(report.ok());
    CHECK(report.error().code() == errc::no_space);
    CHECK(report.error().message().find("put back in place") != std::string::npos);
  }
  CHECK(read_text(path) == "garbage");
  CHECK(list_names(dir.path()) == std::vector<std::string>{"sessions.json"});
}

// ---------------------------------------------------------------------------------------------
// Faults during save

TEST_CASE("store file: a failed save names path and cause and keeps the previous file") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  const std::string original = vector_text();
  write_text(path, original);
  manual_clock clk(kNow);
  faulty_fs faulty(posix_fs());
  session_store_file file(faulty, clk, path);
  REQUIRE(file.load().ok());
  file.store().find_for_update("agent:main:main")->set_label(std::string(5000, 'x'));

  errc expected = errc::io_error;
  std::string cause = "Input/output error";
  SECTION("ENOSPC") {
    faulty.space_left(100);
    expected = errc::no_space;
    cause = "No space left on device";
  }
  SECTION("EIO on write") { faulty.fail_nth(fs_op::write, 1, EIO); }
  SECTION("EIO on fsync") { faulty.fail_nth(fs_op::fsync, 1, EIO); }
  SECTION("EIO on rename") { faulty.fail_nth(fs_op::rename, 1, EIO); }

  status st = file.save();
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == expected);
  CHECK(st.message().find(path) != std::string::npos);
  CHECK(st.message().find(cause) != std::string::npos);
  CHECK(read_text(path) == original);
  CHECK_FALSE(has_tmp_file(dir.path()));
  session_store_file reread(posix_fs(), clk, path);
  REQUIRE(reread.load().ok());
  CHECK_FALSE(reread.store().find("agent:main:main")->label().has_value());

  // The change is not forgotten: the next save writes it.
  faulty.clear();
  REQUIRE(file.save().ok());
  CHECK(read_text(path).find(std::string(5000, 'x')) != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Limits

TEST_CASE("store file: size and depth limits are errors that leave the file alone") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  manual_clock clk(kNow);
  store_file_options opt;
  std::string text;
  std::string limit_words;
  SECTION("size") {
    text = vector_text();
    opt.max_bytes = 1000;
    limit_words = "limit of 1000 bytes";
  }
  SECTION("depth") {
    text = R"({"k": {"sessionId": "s", "deep": {"a": {"b": {"c": {}}}}}})";
    opt.max_depth = 4;
    limit_words = "limit of 4 levels";
  }
  write_text(path, text);
  session_store_file file(posix_fs(), clk, path, opt);
  auto report = file.load();
  REQUIRE_FALSE(report.ok());
  CHECK(report.error().code() == errc::limit_exceeded);
  CHECK(report.error().message().find(limit_words) != std::string::npos);
  CHECK(report.error().message().find("not set aside as corrupt") != std::string::npos);
  CHECK(report.error().message().find(path) != std::string::npos);
  CHECK(read_text(path) == text);
  CHECK(list_names(dir.path()) == std::vector<std::string>{"sessions.json"});
}

// ---------------------------------------------------------------------------------------------
// check / rewrite

TEST_CASE("store file: check reports without changing anything") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  write_text(path, vector_text());
  auto clean = check_store_file(posix_fs(), path);
  REQUIRE(clean.ok());
  CHECK(clean->parse_status.ok());
  CHECK(clean->entry_count == 3);
  CHECK(clean->problems.empty());
  CHECK(clean->trailing_newline);
  CHECK(clean->canonical);

  const std::string messy = R"({"a":{"sessionId":"s","provider":"x"},"b":[]})";
  write_text(path, messy);
  auto report = check_store_file(posix_fs(), path);
  REQUIRE(report.ok());
  CHECK(report->entry_count == 1);
  CHECK(has_change(report->problems, "a", "renamed provider to channel"));
  CHECK(has_change(report->problems, "b", "removed the entry"));
  CHECK_FALSE(report->trailing_newline);
  CHECK_FALSE(report->canonical);
  CHECK(read_text(path) == messy);

  write_text(path, "{oops");
  auto corrupt = check_store_file(posix_fs(), path);
  REQUIRE(corrupt.ok());
  CHECK(corrupt->parse_status.code() == errc::corrupt);
  CHECK(list_names(dir.path()) == std::vector<std::string>{"sessions.json"});

  auto missing = check_store_file(posix_fs(), dir.file("nope.json"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == errc::not_found);
}

TEST_CASE("store file: rewrite turns a compact file into the reference layout") {
  temp_dir dir;
  const std::string path = dir.file("sessions.json");
  auto parsed = json::parse(vector_text());
  REQUIRE(parsed.ok());
  write_text(path, json::to_compact(*parsed));
  manual_clock clk(kNow);
  auto report = rewrite_store_file(posix_fs(), clk, path);
  REQUIRE(report.ok());
  std::string expected = vector_text();
  expected.pop_back();  // the compact file had no trailing newline; the rewrite keeps that
  CHECK(read_text(path) == expected);
}
