// Transcript file repair [R§8.1, SPEC §6.1]: one case per rule with literal lines, byte
// identity of untouched lines, the pi vectors, torn and NUL-filled tails, CRLF, the abandoned
// header case, the backup/replace protocol and fault injection during it.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/durable_file.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/fs.hpp"
#include "storage/transcript_repair.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using sessionrt::testing::list_names;
using sessionrt::testing::read_text;
using sessionrt::testing::split_lines;
using sessionrt::testing::temp_dir;
using sessionrt::testing::vectors_dir;
using sessionrt::testing::write_text;

namespace {

constexpr std::int64_t kNow = 1767225600123;  // 2026-01-01T00:00:00.123Z

const std::string kHeader =
    R"({"type":"session","version":3,"id":"01a22a13-f275-7438-9fcb-df6c4fc1d0eb","timestamp":"2026-11-30T01:31:20.053Z","cwd":"/w"})";
const std::string kUser =
    R"({"type":"message","id":"9ad2feaa","parentId":null,"timestamp":"2026-11-30T01:31:20.054Z","message":{"role":"user","content":[{"type":"text","text":"List files"}],"timestamp":1767225600000}})";
// Unusual number spellings and unknown fields: a re-serialization would change this line.
const std::string kOddAssistant =
    R"({"type":"message","id":"c252c230","parentId":"9ad2feaa","timestamp":"2026-11-30T01:31:20.054Z","x-unknown":{"b":1,"a":[1.50,2e3,-0]},"message":{"role":"assistant","content":[{"type":"text","text":"caf\u00e9"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1.0,"output":40,"cost":{"total":0.0042000}},"stopReason":"stop","timestamp":1767225601000}})";

repair_options fixed_ids() {
  repair_options o;
  int n = 0;
  o.new_uuid = [n]() mutable { return "00000000-0000-4000-8000-00000000000" + std::to_string(n++); };
  o.file_label = "abc.jsonl";
  return o;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

repaired_text repair(const std::string& text) { return repair_transcript_text(text, kNow, fixed_ids()); }

std::vector<std::string> vector_files() {
  std::vector<std::string> out;
  for (const auto& name : list_names(vectors_dir()))
    if (name.rfind("pi_", 0) == 0 && name.size() > 6 && name.substr(name.size() - 6) == ".jsonl")
      out.push_back(vectors_dir() + "/" + name);
  return out;
}

std::vector<std::string> names_in(const std::string& dir) { return list_names(dir); }

// Forwards to another fs; when the repair opens its backup, another "writer" appends a line to
// the transcript (a writer that does not honour the write lock).
class racing_fs final : public forwarding_fs {
 public:
  racing_fs(fs& inner, std::string target, std::string line)
      : forwarding_fs(inner), target_(std::move(target)), line_(std::move(line)) {}
  result<int> open(const std::string& path, int flags, mode_t mode) override {
    if (path.find(".bak-") != std::string::npos) write_text(target_, read_text(target_) + line_);
    return inner_.open(path, flags, mode);
  }

 private:
  std::string target_, line_;
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("repair: unparseable lines are dropped, counted and listed - the rest is kept byte for byte") {
  const std::string bad = R"({"type":"message","id":"x",)";
  auto r = repair(join({kHeader, kUser, bad, kOddAssistant}));
  CHECK(r.report.changed());
  CHECK(r.report.dropped_malformed_lines == 1);
  REQUIRE(r.report.dropped.size() == 1);
  CHECK(r.report.dropped[0].line_no == 3);
  CHECK(r.report.dropped[0].bytes == bad.size());
  CHECK(r.report.dropped[0].reason.find("invalid JSON") != std::string::npos);
  CHECK(r.cleaned_text == join({kHeader, kUser, kOddAssistant}));
}

TEST_CASE("repair: a message entry without a message or with a missing/null/blank role is dropped") {
  const std::string no_message = R"({"type":"message","id":"a1","parentId":null,"timestamp":"t"})";
  const std::string null_role = R"({"type":"message","id":"a2","message":{"role":null,"content":"hi"}})";
  const std::string blank_role = R"({"type":"message","id":"a3","message":{"role":" \u00a0","content":"hi"}})";
  const std::string no_role = R"({"type":"message","id":"a4","message":{"content":"hi"}})";
  auto r = repair(join({kHeader, no_message, null_role, kUser, blank_role, no_role}));
  CHECK(r.report.dropped_malformed_lines == 4);
  REQUIRE(r.report.dropped.size() == 4);
  CHECK(r.report.dropped[0].line_no == 2);
  CHECK(r.report.dropped[1].line_no == 3);
  CHECK(r.report.dropped[2].line_no == 5);
  CHECK(r.report.dropped[3].line_no == 6);
  CHECK(r.cleaned_text == join({kHeader, kUser}));
}

TEST_CASE("repair: an empty error assistant turn gets the placeholder text - an empty clean stop does not") {
  const std::string empty_error =
      R"({"type":"message","id":"e1","parentId":"9ad2feaa","timestamp":"2026-11-30T01:31:20.054Z","message":{"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt","usage":{"input":0},"stopReason":"error","errorMessage":"boom","timestamp":1.50}})";
  const std::string empty_stop =
      R"({"type":"message","id":"e2","parentId":"e1","timestamp":"2026-11-30T01:31:20.054Z","message":{"role":"assistant","content":[],"stopReason":"stop","timestamp":1}})";
  auto r = repair(join({kHeader, kUser, empty_error, empty_stop}));
  CHECK(r.report.rewrote_assistant_messages == 1);
  const auto lines = split_lines(r.cleaned_text);
  REQUIRE(lines.size() == 4);
  CHECK(lines[2] ==
        R"({"type":"message","id":"e1","parentId":"9ad2feaa","timestamp":"2026-11-30T01:31:20.054Z","message":{"role":"assistant","content":[{"type":"text","text":"[assistant turn failed before producing content]"}],"api":"openai-responses","provider":"openai","model":"gpt","usage":{"input":0},"stopReason":"error","errorMessage":"boom","timestamp":1.5}})");
  CHECK(lines[3] == empty_stop);
}

TEST_CASE("repair: image blocks with corrupted base64 and an image mime become a text block") {
  const std::string img =
      R"({"type":"message","id":"i1","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"shot","content":[)"
      R"({"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},)"       // valid: kept
      R"({"type":"image","data":"iVBO Rw0K\nGgo=","mimeType":"image/png"},)"    // whitespace is skipped: kept
      R"({"type":"image","data":"not base64!","mimeType":"image/png"},)"         // bad char
      R"({"type":"image","data":"iVBORw0K\u00e9","mediaType":" IMAGE/jpeg"},)"   // non-ASCII, mediaType
      R"({"type":"image","data":"iVBORw0KG","media_type":"image/webp"},)"        // 1 sextet left over
      R"({"type":"image","data":"iVB=Rw0K","mimeType":"image/png"},)"            // data after '='
      R"({"type":"image","data":"","mimeType":"image/png"},)"                    // empty
      R"({"type":"image","data":"iVBORw0KGg","mimeType":"image/png"},)"          // unpadded, 2 sextets: kept
      R"({"type":"image","data":"not base64!","mimeType":"application/pdf"},)"   // not an image mime: kept
      R"({"type":"image","data":"not base64!"})"                                 // no mime: kept
      R"(],"isError":false,"timestamp":1}})";
  auto r = repair(join({kHeader, img}));
  CHECK(r.report.removed_corrupted_image_blocks == 5);
  const auto lines = split_lines(r.cleaned_text);
  REQUIRE(lines.size() == 2);
  const std::string t = R"({"type":"text","text":"[image omitted: corrupted base64 payload]"})";
  CHECK(lines[1] ==
        R"({"type":"message","id":"i1","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"shot","content":[)"
        R"({"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},)"
        R"({"type":"image","data":"iVBO Rw0K\nGgo=","mimeType":"image/png"},)" +
            t + "," + t + "," + t + "," + t + "," + t + "," +
            R"({"type":"image","data":"iVBORw0KGg","mimeType":"image/png"},)"
            R"({"type":"image","data":"not base64!","mimeType":"application/pdf"},)"
            R"({"type":"image","data":"not base64!"})"
            R"(],"isError":false,"timestamp":1}})");
}

TEST_CASE("repair: blank user string content becomes (continue)") {
  const std::string blank =
      R"({"type":"message","id":"u1","parentId":null,"timestamp":"t","message":{"role":"user","content":" \n\t\u3000","timestamp":1}})";
  const std::string zero_width =  // U+200B is not whitespace for JavaScript's trim()
      R"({"type":"message","id":"u2","parentId":"u1","timestamp":"t","message":{"role":"user","content":"\u200b","timestamp":1}})";
  auto r = repair(join({kHeader, blank, zero_width}));
  CHECK(r.report.rewrote_user_messages == 1);
  CHECK(r.report.dropped_blank_user_messages == 0);
  CHECK(r.cleaned_text ==
        join({kHeader,
              R"j({"type":"message","id":"u1","parentId":null,"timestamp":"t","message":{"role":"user","content":"(continue)","timestamp":1}})j",
              zero_width}));
}

TEST_CASE("repair: user array content loses blank text blocks - an emptied one gets a (continue) block") {
  const std::string mixed =
      R"({"type":"message","id":"u1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"  "},{"type":"text","text":"hi"},{"type":"text","text":""}],"timestamp":1}})";
  const std::string all_blank =
      R"({"type":"message","id":"u2","parentId":"u1","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"\u00a0"}],"timestamp":2}})";
  const std::string empty =
      R"({"type":"message","id":"u3","parentId":"u2","timestamp":"t","message":{"role":"user","content":[],"timestamp":3}})";
  auto r = repair(join({kHeader, mixed, all_blank, empty, kUser}));
  CHECK(r.report.rewrote_user_messages == 3);
  CHECK(r.cleaned_text ==
        join({kHeader,
              R"({"type":"message","id":"u1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}})",
              R"j({"type":"message","id":"u2","parentId":"u1","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"(continue)"}],"timestamp":2}})j",
              R"j({"type":"message","id":"u3","parentId":"u2","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"(continue)"}],"timestamp":3}})j",
              kUser}));
}

TEST_CASE("repair: openai-chatgpt-responses tool calls without a persisted result get an aborted result") {
  const std::string call =
      R"({"type":"message","id":"a1","parentId":"9ad2feaa","timestamp":"t","message":{"role":"assistant","content":[)"
      R"({"type":"toolCall","id":"call_1","name":"exec","arguments":{}},{"type":"toolCall","id":"call_2","name":"read","arguments":{}},{"type":"toolCall","id":"call_3","arguments":{}}],)"
      R"("api":"openai-chatgpt-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse","timestamp":1}})";
  const std::string result2 =  // persisted later in the file: no synthetic result for call_2
      R"({"type":"message","id":"r2","parentId":"a1","timestamp":"t","message":{"role":"toolResult","toolCallId":"call_2","toolName":"read","content":[],"isError":false,"timestamp":2}})";
  const std::string aborted =  // error/aborted turns are not candidates
      R"({"type":"message","id":"a2","parentId":"r2","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_9","name":"x","arguments":{}}],"api":"openai-chatgpt-responses","provider":"openai","stopReason":"aborted","timestamp":3}})";
  auto r = repair(join({kHeader, kUser, call, result2, aborted}));
  CHECK(r.report.inserted_tool_results == 2);
  CHECK(r.cleaned_text ==
        join({kHeader, kUser, call,
              R"({"type":"message","id":"repair-00000000-0000-4000-8000-000000000000","parentId":"a1","timestamp":"2026-01-01T00:00:00.123Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"exec","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true,"timestamp":1767225600123}})",
              R"({"type":"message","id":"repair-00000000-0000-4000-8000-000000000001","parentId":"a1","timestamp":"2026-01-01T00:00:00.123Z","message":{"role":"toolResult","toolCallId":"call_3","toolName":"unknown","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true,"timestamp":1767225600123}})",
              result2, aborted}));
  // Other APIs are left alone by this rule.
  std::string other = call;
  other.replace(other.find("openai-chatgpt-responses"), 24, "anthropic-messages");
  CHECK_FALSE(repair(join({kHeader, kUser, other})).report.changed());
}

TEST_CASE("repair: a Responses message-tool call followed by a delivery mirror gets an aborted result") {
  const std::string call =
      R"({"type":"message","id":"a1","parentId":"9ad2feaa","timestamp":"t","message":{"role":"assistant","content":[)"
      R"({"type":"toolCall","id":"fc_1","name":" Message ","arguments":{}},{"type":"toolCall","id":"fc_2","name":"exec","arguments":{}}],)"
      R"("api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse","timestamp":1}})";
  const std::string label = R"({"type":"label","id":"l1","parentId":"a1","timestamp":"t","targetId":"a1","label":"x"})";
  const std::string mirror =
      R"({"type":"message","id":"m1","parentId":"a1","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"sent"}],"api":"openai-responses","provider":"openclaw","model":"delivery-mirror","stopReason":"stop","timestamp":2}})";
  auto r = repair(join({kHeader, kUser, call, label, mirror}));
  CHECK(r.report.inserted_tool_results == 1);
  CHECK(r.cleaned_text ==
        join({kHeader, kUser, call,
              R"({"type":"message","id":"repair-00000000-0000-4000-8000-000000000000","parentId":"a1","timestamp":"2026-01-01T00:00:00.123Z","message":{"role":"toolResult","toolCallId":"fc_1","toolName":" Message ","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true,"timestamp":1767225600123}})",
              label, mirror}));
  // Without the mirror as the next message entry, nothing is inserted.
  CHECK_FALSE(repair(join({kHeader, kUser, call, kUser, mirror})).report.changed());
  CHECK_FALSE(repair(join({kHeader, kUser, call})).report.changed());
  // Repairing the output changes nothing (the inserted result now follows the call).
  CHECK_FALSE(repair(r.cleaned_text).report.changed());
}

TEST_CASE("repair: lines that are not changed keep their exact bytes when the file is rewritten") {
  const std::string custom =
      R"({"type":"custom","customType":"x","data":{"n":1.50,"e":1E5,"s":"\u0041\/"},"id":"c1","parentId":null,"timestamp":"t","zzz":null})";
  auto r = repair(join({kHeader, kOddAssistant, "garbage", custom}));
  REQUIRE(r.report.changed());
  CHECK(r.cleaned_text == join({kHeader, kOddAssistant, custom}));
}

TEST_CASE("repair: the pi vectors come out unchanged") {
  const auto files = vector_files();
  REQUIRE(files.size() >= 4);
  for (const auto& path : files) {
    INFO(path);
    const std::string text = read_text(path);
    auto r = repair(text);
    CHECK_FALSE(r.report.changed());
    CHECK_FALSE(r.report.abandoned());
    CHECK(r.report.dropped.empty());
    CHECK(r.cleaned_text == text);
  }
}

TEST_CASE("repair: a torn last line is dropped and counted - the file minus that line remains") {
  for (const auto& path : vector_files()) {
    const std::string text = read_text(path);
    REQUIRE(text.back() == '\n');
    const std::size_t last_start = text.rfind('\n', text.size() - 2) + 1;
    const std::size_t last_len = text.size() - 1 - last_start;  // without its '\n'
    for (std::size_t cut : {std::size_t(1), std::size_t(2), last_len / 3, last_len / 2, last_len - 2, last_len - 1}) {
      INFO(path << " cut after " << cut << " bytes of the last line");
      const std::string torn = text.substr(0, last_start + cut);
      auto r = repair(torn);
      CHECK(r.report.changed());
      CHECK(r.report.torn_tail_lines == 1);
      CHECK(r.report.torn_tail_bytes == cut);
      CHECK(r.report.dropped_malformed_lines == 0);
      REQUIRE(r.report.dropped.size() == 1);
      CHECK(r.report.dropped[0].bytes == cut);
      CHECK(r.report.dropped[0].reason.find("torn") != std::string::npos);
      CHECK(r.cleaned_text == text.substr(0, last_start));
      CHECK(r.report.summary().rfind("session file repaired: dropped 1 malformed line(s),", 0) == 0);
    }
    // A complete last line that only lacks its '\n' is kept, and the '\n' is added.
    auto whole = repair(text.substr(0, text.size() - 1));
    CHECK(whole.report.changed());
    CHECK(whole.report.added_final_newline);
    CHECK(whole.report.dropped.empty());
    CHECK(whole.cleaned_text == text);
  }
}

TEST_CASE("repair: a NUL-filled tail (power loss) is dropped and counted") {
  for (const auto& path : vector_files()) {
    INFO(path);
    const std::string text = read_text(path);
    auto r = repair(text + std::string(4096, '\0'));
    CHECK(r.report.torn_tail_bytes == 4096);
    CHECK(r.cleaned_text == text);
    // Zeros in place of a whole appended line, after which more lines were appended.
    auto mid = repair(text + std::string(100, '\0') + "\n" + kUser + "\n");
    CHECK(mid.report.dropped_malformed_lines == 1);
    CHECK(mid.cleaned_text == text + kUser + "\n");
  }
}

TEST_CASE("repair: CRLF line endings are accepted - a rewrite writes LF") {
  const std::string lf = join({kHeader, kUser, kOddAssistant});
  std::string crlf;
  for (char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  auto clean = repair(crlf);
  CHECK_FALSE(clean.report.changed());
  CHECK(clean.cleaned_text == crlf);
  auto r = repair(crlf + "{broken\r\n" + kUser + "\r\n\r\n");
  CHECK(r.report.dropped_malformed_lines == 1);
  CHECK(r.report.blank_lines == 1);
  CHECK(r.cleaned_text == lf + kUser + "\n");
}

TEST_CASE("repair: a file whose first readable line is not a session header is abandoned") {
  auto r = repair(join({"{oops", kUser, kHeader}));
  CHECK(r.report.abandoned());
  CHECK_FALSE(r.report.changed());
  CHECK(r.report.abandoned_reason.find("line 2") != std::string::npos);
  const std::string only_garbage = std::string(64, '\0');
  CHECK(repair(only_garbage).report.abandoned());
  // Empty and blank-line-only files are fine: nothing to do.
  CHECK_FALSE(repair("").report.changed());
  CHECK_FALSE(repair("\n\n").report.abandoned());
  // A header with an empty id is not a header.
  CHECK(repair(join({R"({"type":"session","id":""})", kUser})).report.abandoned());
}

TEST_CASE("repair: the output of a repair repairs to itself") {
  const std::string messy = join({kHeader, "x", R"({"type":"message","message":{"role":""}})",
                                  R"({"type":"message","id":"u","message":{"role":"user","content":"  "}})", kUser}) +
                            R"({"type":"mess)";
  auto first = repair(messy);
  REQUIRE(first.report.changed());
  auto second = repair(first.cleaned_text);
  CHECK_FALSE(second.report.changed());
  CHECK(second.cleaned_text == first.cleaned_text);
}

TEST_CASE("repair: summary() is the sentence of R§8.1") {
  auto r = repair(join({kHeader, "x", R"({"type":"message","id":"u","message":{"role":"user","content":""}})"}));
  CHECK(r.report.summary() ==
        "session file repaired: dropped 1 malformed line(s), rewrote 0 assistant message(s), dropped 0 blank user "
        "message(s), rewrote 1 user message(s), removed 0 corrupted image block(s), inserted 0 missing tool "
        "result(s) (abc.jsonl)");
}

// --- the file ---

TEST_CASE("repair file: rewrite protocol leaves no backup, keeps the mode, writes the cleaned text") {
  temp_dir dir;
  const std::string file = dir.file("abc.jsonl");
  for (mode_t mode : {mode_t(0600), mode_t(0640), mode_t(0666)}) {
    INFO("mode " << mode);
    const std::string torn = R"({"type":"mes)";
    write_text(file, join({kHeader, "{torn mid-file", kOddAssistant}) + torn);
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    manual_clock clk(kNow);
    auto r = repair_transcript_file(posix_fs(), clk, file, fixed_ids());
    REQUIRE(r.ok());
    CHECK(r->changed());
    CHECK(r->dropped_malformed_lines == 1);
    CHECK(r->torn_tail_bytes == torn.size());
    CHECK_FALSE(r->backup_path);
    CHECK(r->file == "abc.jsonl");
    CHECK(read_text(file) == join({kHeader, kOddAssistant}));
    CHECK(mode_of(file) == mode);
    // The removed lines, byte for byte, the torn tail included, beside the file with its mode.
    const std::string kept = file + ".dropped-2026-01-01T00-00-00-123Z.jsonl";
    REQUIRE(r->dropped_path == std::optional<std::string>(kept));
    CHECK(read_text(kept) == "{torn mid-file\n" + torn + "\n");
    CHECK(mode_of(kept) == mode);
    CHECK_THAT(r->summary(), Catch::EndsWith("; the removed lines are kept in " + kept));
    CHECK(names_in(dir.path()) == std::vector<std::string>{"abc.jsonl", path_basename(kept)});
    REQUIRE(::unlink(kept.c_str()) == 0);
    // A second pass finds nothing to do and does not touch the file.
    auto again = repair_transcript_file(posix_fs(), clk, file);
    REQUIRE(again.ok());
    CHECK_FALSE(again->changed());
  }
}

TEST_CASE("repair file: a backup that cannot be removed is kept and reported") {
  temp_dir dir;
  const std::string file = dir.file("abc.jsonl");
  const std::string original = join({kHeader, "garbage", kUser});
  write_text(file, original);
  REQUIRE(::chmod(file.c_str(), 0640) == 0);
  faulty_fs ffs(posix_fs());
  ffs.fail_nth(fs_op::unlink, 2, EIO);  // 1: the temp of the dropped-lines file, 2: the backup
  manual_clock clk(kNow);
  auto r = repair_transcript_file(ffs, clk, file);
  REQUIRE(r.ok());
  REQUIRE(r->backup_path);
  CHECK(r->backup_path->rfind(file + ".bak-", 0) == 0);
  CHECK(r->backup_path->size() > std::string(".bak--1767225600123").size());
  CHECK(r->backup_path->substr(r->backup_path->size() - 14) == "-1767225600123");
  CHECK(read_text(*r->backup_path) == original);
  CHECK(mode_of(*r->backup_path) == 0640);
  CHECK(read_text(file) == join({kHeader, kUser}));
}

TEST_CASE("repair file: a file without a header is left untouched with an error naming it") {
  temp_dir dir;
  const std::string file = dir.file("nohead.jsonl");
  const std::string original = join({kUser, kOddAssistant, "garbage"});
  write_text(file, original);
  manual_clock clk(kNow);
  auto r = repair_transcript_file(posix_fs(), clk, file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::corrupt);
  CHECK(r.error().message().find(file) != std::string::npos);
  CHECK(r.error().message().find("session header") != std::string::npos);
  CHECK(read_text(file) == original);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"nohead.jsonl"});
}

TEST_CASE("repair file: over the size limit is refused with the limit named") {
  temp_dir dir;
  const std::string file = dir.file("big.jsonl");
  write_text(file, join({kHeader, "garbage"}));
  repair_options opt;
  opt.max_file_bytes = 100;
  manual_clock clk(kNow);
  auto r = repair_transcript_file(posix_fs(), clk, file, opt);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::limit_exceeded);
  CHECK(r.error().message().find("100 bytes") != std::string::npos);
  CHECK(r.error().message().find(file) != std::string::npos);
}

TEST_CASE("repair file: ENOSPC/EIO during backup, temp write or rename leave the original byte-identical") {
  struct fault {
    const char* what;
    fs_op op;
    int nth;
  };
  const fault faults[] = {
      {"backup write", fs_op::write, 1},
      {"dropped-lines write", fs_op::write, 2},
      {"dropped-lines fsync", fs_op::fsync, 1},
      {"dropped-lines link", fs_op::link, 1},
      {"dropped-lines directory fsync", fs_op::fsync, 2},
      {"temp write", fs_op::write, 3},
      {"temp fsync", fs_op::fsync, 3},
      {"rename", fs_op::rename, 1},
  };
  for (const auto& f : faults) {
    for (int err : {ENOSPC, EIO}) {
      INFO(f.what << " errno " << err);
      temp_dir dir;
      const std::string file = dir.file("abc.jsonl");
      const std::string original = join({kHeader, "garbage", kOddAssistant}) + "{\"torn";
      write_text(file, original);
      faulty_fs ffs(posix_fs());
      ffs.fail_nth(f.op, f.nth, err);
      manual_clock clk(kNow);
      auto r = repair_transcript_file(ffs, clk, file);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().code() == (err == ENOSPC ? errc::no_space : errc::io_error));
      CHECK(r.error().message().find(file) != std::string::npos);
      CHECK(r.error().message().find("left as it is") != std::string::npos);
      CHECK(read_text(file) == original);
      CHECK(names_in(dir.path()) == std::vector<std::string>{"abc.jsonl"});  // no backup, no temp, no dropped lines
    }
  }
}

TEST_CASE("repair file: a file that changes during the repair is not overwritten") {
  temp_dir dir;
  const std::string file = dir.file("abc.jsonl");
  write_text(file, join({kHeader, "garbage", kUser}));
  racing_fs racing(posix_fs(), file, kOddAssistant + "\n");
  manual_clock clk(kNow);
  auto r = repair_transcript_file(racing, clk, file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::cancelled);
  CHECK(r.error().message().find(file) != std::string::npos);
  CHECK(read_text(file) == join({kHeader, "garbage", kUser, kOddAssistant}));  // the other writer's line survives
  CHECK(names_in(dir.path()) == std::vector<std::string>{"abc.jsonl"});
}

TEST_CASE("repair file: replaced but the directory sync failed: the original stays in the backup") {
  temp_dir dir;
  const std::string file = dir.file("abc.jsonl");
  const std::string original = join({kHeader, "garbage", kUser});
  write_text(file, original);
  faulty_fs ffs(posix_fs());
  ffs.fail_nth(fs_op::fsync, 4, EIO);  // the dropped-lines file and its directory, the temp file, the directory
  manual_clock clk(kNow);
  auto r = repair_transcript_file(ffs, clk, file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::io_error);
  CHECK(r.error().message().find(file) != std::string::npos);
  CHECK(read_text(file) == join({kHeader, kUser}));
  const auto names = names_in(dir.path());
  REQUIRE(names.size() == 3);
  CHECK(names[1].rfind("abc.jsonl.bak-", 0) == 0);
  CHECK(names[2].rfind("abc.jsonl.dropped-", 0) == 0);
  CHECK(r.error().message().find(names[1]) != std::string::npos);
  CHECK(read_text(dir.file(names[1])) == original);
}

TEST_CASE("repair file: a disk that fills up part-way through the backup leaves the original") {
  temp_dir dir;
  const std::string file = dir.file("abc.jsonl");
  const std::string original = join({kHeader, "garbage", kOddAssistant, kUser});
  write_text(file, original);
  faulty_fs ffs(posix_fs());
  ffs.space_left(original.size() / 2);
  manual_clock clk(kNow);
  auto r = repair_transcript_file(ffs, clk, file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::no_space);
  CHECK(read_text(file) == original);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"abc.jsonl"});
}

TEST_CASE("tail check: clean, torn and NUL-filled tails") {
  temp_dir dir;
  const std::string file = dir.file("t.jsonl");
  const std::string text = read_text(vector_files().front());

  write_text(file, text);
  auto clean = check_transcript_tail(posix_fs(), file);
  REQUIRE(clean.ok());
  CHECK(clean->clean());
  CHECK(clean->size == text.size());

  write_text(file, text + R"({"type":"mess)");
  auto torn = check_transcript_tail(posix_fs(), file);
  REQUIRE(torn.ok());
  CHECK_FALSE(torn->clean());
  CHECK_FALSE(torn->ends_with_newline);

  write_text(file, text + std::string(4096, '\0') + "\n");
  auto nul = check_transcript_tail(posix_fs(), file);
  REQUIRE(nul.ok());
  CHECK(nul->has_nul);
  CHECK_FALSE(nul->clean());
  CHECK(nul->checked_bytes == 4096);

  // The repair makes the tail clean.
  write_text(file, text + std::string(4096, '\0'));
  manual_clock clk(kNow);
  auto r = repair_transcript_file(posix_fs(), clk, file);
  REQUIRE(r.ok());
  CHECK(r->torn_tail_bytes == 4096);
  CHECK(read_text(file) == text);
  CHECK(check_transcript_tail(posix_fs(), file)->clean());

  write_text(file, "");
  CHECK(check_transcript_tail(posix_fs(), file)->clean());
  CHECK(check_transcript_tail(posix_fs(), dir.file("missing.jsonl")).error().code() == errc::not_found);
}
