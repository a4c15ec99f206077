// Opening a session's transcript: creation, repair of what a crash mid-write leaves, and no
// second check of a file this runtime closed clean and nobody changed since.
#include <catch2/catch.hpp>

#include <fstream>

#include <boost/json.hpp>

#include "messages/json_reader.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/transcript_open.hpp"
#include "storage/verified_transcripts.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {
void append_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

header_fields header() {
  header_fields h;
  h.id = "s";
  h.timestamp_ms = 1796000000000;
  h.cwd = "/w";
  return h;
}
}  // namespace

TEST_CASE("a missing transcript is created - an existing healthy one is opened without a repair") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  auto a = open_or_create_transcript(posix_fs(), clk, dir.file("s.jsonl"), header(), {});
  REQUIRE(a.ok());
  CHECK(a->created);
  auto id = a->file->append_message(user_message("hi", 1));
  REQUIRE(id.ok());
  a->file.reset();
  auto b = open_or_create_transcript(posix_fs(), clk, dir.file("s.jsonl"), header(), {});
  REQUIRE(b.ok());
  CHECK_FALSE(b->created);
  CHECK_FALSE(b->repair.has_value());
  CHECK(b->file->leaf_id() == std::optional<std::string>(*id));
}

TEST_CASE("a crash in the middle of writing a line: the next open repairs the torn tail and keeps every synced entry") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("t.jsonl");
  std::vector<std::string> synced;
  for (std::size_t keep : {1u, 40u, 300u}) {
    faulty_fs f(posix_fs());
    transcript_options o;
    o.mode = durability::sync;
    auto t = open_or_create_transcript(f, clk, path, header(), o);
    REQUIRE(t.ok());
    for (int i = 0; i < 3; ++i) {
      auto id = t->file->append_message(user_message("entry " + std::to_string(i), i));
      REQUIRE(id.ok());
      REQUIRE(t->file->commit().ok());
      synced.push_back(*id);
    }
    f.crash_at_write(1, keep);  // the next write puts `keep` bytes on disk, then the process is dead
    REQUIRE(t->file->append_message(user_message(std::string(500, 'x'), 9)).ok());
    CHECK_FALSE(t->file->commit().ok());
    t->file.reset();
    auto re = open_or_create_transcript(posix_fs(), clk, path, header(), o);
    REQUIRE(re.ok());
    REQUIRE(re->repair.has_value());
    CHECK(re->repair->torn_tail_bytes == keep);
    REQUIRE(re->file->reader().index_all().ok());
    for (const auto& id : synced) CHECK(re->file->reader().index().find(id).has_value());
    re->file.reset();
    for (const auto& line : testing::split_lines(testing::read_text(path))) CHECK(json::parse_object(line).ok());
  }
  CHECK(synced.size() == 9);
}

TEST_CASE("a NUL-filled tail (power loss after the size grew) is dropped on open") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("z.jsonl");
  {
    auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
    REQUIRE(t.ok());
    REQUIRE(t->file->append_message(user_message("kept", 1)).ok());
  }
  testing::write_text(path, testing::read_text(path) + std::string(4096, '\0'));
  auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
  REQUIRE(t.ok());
  REQUIRE(t->repair.has_value());
  CHECK(t->repair->changed());
  auto ctx = t->file->context();
  REQUIRE(ctx.ok());
  CHECK(ctx->messages.size() == 1);
}

// --- repair on every open for a run, not only after a torn tail [R§8.1] ---

namespace {

const char* kHeaderLine = R"({"type":"session","version":3,"id":"s","timestamp":"2026-11-30T01:00:00.000Z","cwd":"/w"})";

std::string entry(const std::string& id, const std::string& parent, const std::string& message) {
  return R"({"type":"message","id":")" + id + R"(","parentId":)" + (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"timestamp":"2026-11-30T01:00:01.000Z","message":)" + message + "}";
}

const std::string kUser = R"({"role":"user","content":"hello","timestamp":1})";
const std::string kAssistant =
    R"({"role":"assistant","content":[{"type":"text","text":"hi there"}],"api":"anthropic-messages","provider":"anthropic","model":"m","stopReason":"stop","timestamp":2})";

std::string file_of(const std::vector<std::string>& lines) {
  std::string text = std::string(kHeaderLine) + "\n";
  for (const auto& l : lines) text += l + "\n";
  return text;
}

bool has_backup(const testing::temp_dir& dir) {
  for (const auto& n : testing::list_names(dir.path()))
    if (n.find(".bak-") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("open for a run: a clean-tailed file is repaired - malformed middle line, blank user, empty error turn, bad image") {
  const std::vector<std::pair<std::string, std::string>> damage = {
      {"malformed", R"({"type":"message","id":"b1","parentId":"a1","message":{"role":"user","con)"},
      {"blank user", entry("b1", "a1", R"({"role":"user","content":"   ","timestamp":3})")},
      {"empty error", entry("b1", "a1", R"({"role":"assistant","content":[],"stopReason":"error","timestamp":3})")},
      {"bad image", entry("b1", "a1", R"({"role":"user","content":[{"type":"image","data":"@@not base64@@","mimeType":"image/png"}],"timestamp":3})")},
      {"no role", entry("b1", "a1", R"({"content":"x"})")},
  };
  for (const auto& [what, line] : damage) {
    INFO(what);
    testing::temp_dir dir;
    manual_clock clk(1796000000000);
    const auto path = dir.file("s.jsonl");
    testing::write_text(path, file_of({entry("u1", "", kUser), entry("a1", "u1", kAssistant), line,
                                       entry("c1", what == "malformed" ? "a1" : "b1", kUser)}));
    auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
    REQUIRE(t.ok());
    REQUIRE(t->repair.has_value());
    CHECK(t->repair->changed());
    CHECK(t->repair->summary().rfind("session file repaired: ", 0) == 0);
    CHECK(t->repair->summary().find("(s.jsonl)") != std::string::npos);
    CHECK_FALSE(t->repair->backup_path.has_value());
    CHECK_FALSE(has_backup(dir));  // backup written, then removed after the replace
    // The repaired file: every line parses, nothing is left for a second open to repair.
    for (const auto& l : testing::split_lines(testing::read_text(path))) CHECK(json::parse_object(l).ok());
    t->file.reset();
    auto again = open_or_create_transcript(posix_fs(), clk, path, header(), {});
    REQUIRE(again.ok());
    CHECK_FALSE(again->repair.has_value());
  }
}

TEST_CASE("open for a run: a healthy file is read once and not rewritten (images, non-ASCII, blank assistant text)") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("s.jsonl");
  const std::string text = file_of(
      {entry("u1", "", R"({"role":"user","content":[{"type":"text","text":"日本語 ✓"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1})"),
       entry("a1", "u1", kAssistant),
       entry("a2", "a1", R"({"role":"assistant","content":[],"stopReason":"stop","timestamp":3})"),
       R"({"type":"custom","customType":"x","data":{"content":""},"id":"c1","parentId":"a2","timestamp":"2026-11-30T01:00:02.000Z"})"});
  testing::write_text(path, text);
  auto before = posix_fs().stat(path);
  REQUIRE(before.ok());
  auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
  REQUIRE(t.ok());
  CHECK_FALSE(t->repair.has_value());
  CHECK(t->checked_bytes == text.size());
  auto after = posix_fs().stat(path);
  REQUIRE(after.ok());
  CHECK(after->ino == before->ino);
  CHECK(testing::read_text(path) == text);
  // Appends afterwards are trusted: the open's check is the only scan.
  REQUIRE(t->file->append_message(user_message("more", 4)).ok());
  REQUIRE(t->file->commit().ok());
}

TEST_CASE("open for a run: a corrupt header is recovered as <file>.corrupt-..., the parseable lines kept") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("s.jsonl");
  const std::string original = std::string("{\"type\":\"sess") + "\n" + entry("u1", "", kUser) + "\n" + "garbage\n" +
                               entry("a1", "u1", kAssistant) + "\n";
  testing::write_text(path, original);
  auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
  REQUIRE(t.ok());
  REQUIRE(t->repair.has_value());
  CHECK(t->repair->synthesized_header);
  REQUIRE(t->repair->corrupt_backup_path.has_value());
  const std::string name = path_basename(*t->repair->corrupt_backup_path);
  CHECK(classify(name).kind == artifact_kind::corrupt_backup);
  CHECK(testing::read_text(*t->repair->corrupt_backup_path) == original);
  CHECK(t->repair->dropped_malformed_lines == 2);
  CHECK(t->repair->summary().find("the original is kept at") != std::string::npos);
  CHECK(t->file->header().at("id") == "s");
  auto ctx = t->file->context();
  REQUIRE(ctx.ok());
  CHECK(ctx->messages.size() == 2);
}

TEST_CASE("damage scan: no false negatives against the per-line rules, on the vectors and on mutated lines") {
  std::vector<std::string> lines = {entry("u1", "", kUser), entry("a1", "u1", kAssistant)};
  for (const auto& name : testing::list_names(testing::vectors_dir())) {
    if (name.rfind("pi_", 0) != 0 || name.find(".jsonl") == std::string::npos) continue;
    auto all = testing::split_lines(testing::read_text(testing::vectors_dir() + "/" + name));
    for (std::size_t k = 1; k < all.size(); ++k) lines.push_back(all[k]);
  }
  // Clean files are clean.
  CHECK_FALSE(scan_transcript_text(file_of(lines)).needs_repair());
  // Mutations of each line: whenever the rules would change the file, the scan says so.
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"\"hello\"", "\" \""}, {"\"stop\"", "\"error\""}, {"\"role\":\"user\"", "\"role\":\"\""},
      {"\"text\":\"", "\"text\":\"  \",\"x\":\""}, {"}}", "}"}, {"\"content\":[", "\"content\":[],\"c\":["},
      {"\"role\":\"assistant\"", "\"role\":7"}, {"\"type\":\"text\"", "\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"!\""}};
  std::size_t rule_hits = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    for (const auto& [from, to] : edits) {
      auto at = lines[i].find(from);
      if (at == std::string::npos) continue;
      auto mutated = lines;
      mutated[i].replace(at, from.size(), to);
      const auto text = file_of(mutated);
      const bool changes = repair_transcript_text(text, 0).report.changed();
      INFO(mutated[i]);
      if (changes) {
        ++rule_hits;
        CHECK(scan_transcript_text(text).needs_repair());
      }
    }
  }
  CHECK(rule_hits > 20);
}

TEST_CASE("open for a run: a transcript closed clean and unchanged is not read again, a changed one is scanned") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("s.jsonl");
  verified_transcripts verified;
  open_check check;
  check.verified = &verified;
  auto close_clean = [&](opened_transcript& t) {
    REQUIRE(t.file->sync().ok());  // as a session settles its file before it closes it
    auto s = t.file->clean_stamp();
    REQUIRE(s.has_value());
    verified.note(path, *s);
    t.file.reset();
  };
  auto a = open_or_create_transcript(posix_fs(), clk, path, header(), {}, check);
  REQUIRE(a.ok());
  REQUIRE(a->file->append_message(user_message("hi", 1)).ok());
  REQUIRE(a->file->commit().ok());
  close_clean(*a);

  auto b = open_or_create_transcript(posix_fs(), clk, path, header(), {}, check);
  REQUIRE(b.ok());
  CHECK(b->checked_bytes == 0);  // not scanned
  CHECK_FALSE(b->repair.has_value());
  REQUIRE(b->file->append_message(user_message("again", 2)).ok());
  REQUIRE(b->file->commit().ok());
  close_clean(*b);

  SECTION("another program appends a malformed line: scanned and repaired") {
    append_text(path, "{not json}\n");
    auto c = open_or_create_transcript(posix_fs(), clk, path, header(), {}, check);
    REQUIRE(c.ok());
    CHECK(c->checked_bytes > 0);
    REQUIRE(c->repair.has_value());
    CHECK(testing::read_text(path).find("{not json}") == std::string::npos);
  }
  SECTION("a torn tail left by a crashed writer: scanned and cut") {
    append_text(path, R"({"type":"message","id":"zz")");
    auto c = open_or_create_transcript(posix_fs(), clk, path, header(), {}, check);
    REQUIRE(c.ok());
    CHECK(c->checked_bytes > 0);
    REQUIRE(c->repair.has_value());
    CHECK(c->repair->torn_tail_bytes > 0);
  }
  SECTION("taken once: the open after one that skipped the scan scans again unless noted again") {
    auto c = open_or_create_transcript(posix_fs(), clk, path, header(), {}, check);
    REQUIRE(c.ok());
    CHECK(c->checked_bytes == 0);
    c->file.reset();  // closed without a note
    auto d = open_or_create_transcript(posix_fs(), clk, path, header(), {}, check);
    REQUIRE(d.ok());
    CHECK(d->checked_bytes > 0);
  }
  SECTION("without the memo every open scans") {
    auto c = open_or_create_transcript(posix_fs(), clk, path, header(), {});
    REQUIRE(c.ok());
    CHECK(c->checked_bytes > 0);
  }
}

TEST_CASE("clean_stamp: nothing while lines are buffered or the file does not end where the writer does") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("s.jsonl");
  transcript_options o;
  o.mode = durability::batch;
  auto t = open_or_create_transcript(posix_fs(), clk, path, header(), o);
  REQUIRE(t.ok());
  REQUIRE(t->file->append_message(user_message("buffered", 1)).ok());
  REQUIRE(t->file->pending_bytes() > 0);
  CHECK_FALSE(t->file->clean_stamp().has_value());
  REQUIRE(t->file->flush().ok());
  auto s = t->file->clean_stamp();
  REQUIRE(s.has_value());
  CHECK(s->size == testing::read_text(path).size());
  append_text(path, "x");  // someone else's byte after the writer's end
  CHECK_FALSE(t->file->clean_stamp().has_value());
}

namespace {
// `path` opened (created when missing) with a user line appended and synced.
opened_transcript open_and_say_hi(manual_clock& clk, const std::string& path) {
  auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
  REQUIRE(t.ok());
  REQUIRE(t->file->append_message(user_message("hi", 1)).ok());
  REQUIRE(t->file->sync().ok());
  return std::move(*t);
}
}  // namespace

TEST_CASE("clean_stamp: nothing when the writer itself stored a line the open's repair would change") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("s.jsonl");
  auto t = open_and_say_hi(clk, path);
  CHECK(t.file->clean_stamp().has_value());
  // A failed call's error turn: the repair rules look at those, so the next open must scan.
  auto error_turn = boost::json::parse(
                        R"({"role":"assistant","content":[{"type":"text","text":"x"}],"stopReason":"error","timestamp":2})")
                        .as_object();
  REQUIRE(t.file->append_message(error_turn).ok());
  REQUIRE(t.file->sync().ok());
  CHECK_FALSE(t.file->clean_stamp().has_value());
}

TEST_CASE("clean_stamp: the first line a writer appends to an existing file is judged like the others") {
  // A read-back of the writer's bytes took its first line for the file's header and skipped
  // the rules on it; the judgement at the append has no first line.
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("s.jsonl");
  (void)open_and_say_hi(clk, path);  // closed when it goes
  auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
  REQUIRE(t.ok());
  CHECK(t->file->clean_stamp().has_value());  // nothing appended: the open checked the file
  auto blank = boost::json::parse(R"({"role":"user","content":[{"type":"text","text":"  "}],"timestamp":2})").as_object();
  REQUIRE(t->file->append_message(blank).ok());
  REQUIRE(t->file->sync().ok());
  CHECK_FALSE(t->file->clean_stamp().has_value());
  CHECK(scan_transcript_for_damage(posix_fs(), path).value().needs_repair());
}
