// The damage scan's rules judged on values (message_line_passes_scan, what a writer knows of its
// own lines) against the scan of the text the writer wrote (what an open reads), and the scan's
// blank rule on text with no ASCII letter.
#include <catch2/catch.hpp>

#include <random>

#include <boost/json.hpp>

#include "messages/transcript_entry.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/transcript_damage_scan.hpp"
#include "storage/transcript_file.hpp"
#include "storage/transcript_repair.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

// What the writer makes of `message` (transcript_file::append_message on a new file) and its
// verdict on the lines it appended (clean_stamp: set when it judged them clean).
struct written {
  std::string text;
  bool judged_clean = false;
};
written write(const boost::json::object& message) {
  manual_clock clk(1796000000000);
  memory_fs files(clk);
  REQUIRE(ensure_dir(files, "/t").ok());
  header_fields h;
  h.id = "s";
  h.timestamp_ms = clk.now_ms();
  h.cwd = "/w";
  auto t = transcript_file::create(files, clk, "/t/s.jsonl", h);
  REQUIRE(t.ok());
  REQUIRE((*t)->append_message(message).ok());
  REQUIRE((*t)->flush().ok());
  written out;
  out.judged_clean = (*t)->clean_stamp().has_value();
  out.text = read_file(files, "/t/s.jsonl", 64u << 20).value();
  return out;
}

bool scan_passes(const boost::json::object& message) { return !scan_transcript_text(write(message).text).needs_repair(); }

boost::json::value nested(int levels) {
  boost::json::value v = 1;
  for (int i = 0; i < levels; ++i) v = boost::json::object{{"k", std::move(v)}};
  return v;
}

// A message drawn from the values each rule reads, mostly well-formed.
boost::json::object draw_message(std::mt19937& rng) {
  auto pick = [&](auto&&... options) {
    const boost::json::value all[] = {boost::json::value(options)...};
    return all[std::uniform_int_distribution<std::size_t>(0, sizeof...(options) - 1)(rng)];
  };
  auto chance = [&](int percent) { return std::uniform_int_distribution<int>(0, 99)(rng) < percent; };
  const std::string cjk = "\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xb8\x96\xe7\x95\x8c";  // 你好世界
  auto text = [&] {
    return pick("", " ", "hi", cjk, cjk + cjk + cjk + cjk + cjk + cjk, "\xe3\x80\x80", "\xc2\xa0 \xc2\xa0", " x ",
                std::string(80, ' ') + cjk);
  };
  boost::json::object m;
  if (chance(95)) m["role"] = chance(90) ? pick("user", "assistant", "toolResult") : pick("", " ", 7, nullptr);
  if (chance(30)) {
    m["content"] = text();
  } else if (chance(95)) {
    boost::json::array blocks;
    const int n = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int i = 0; i < n; ++i) {
      boost::json::object b;
      switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
        case 0:
          b = {{"type", "text"}, {"text", text()}};
          break;
        case 1:
          b = {{"type", "image"}, {"data", pick("aGk=", "aGk", "a", "!!", "", 5)}};
          b[pick("mimeType", "mediaType", "media_type").as_string()] = pick("image/png", " IMAGE/jpeg", "text/plain");
          break;
        case 2:
          b = {{"type", "toolCall"}, {"id", "c1"}, {"name", "read"}, {"arguments", nested(chance(10) ? 70 : 2)}};
          break;
        default:
          blocks.emplace_back(text());  // not an object: no rule reads it
          continue;
      }
      blocks.emplace_back(std::move(b));
    }
    m["content"] = std::move(blocks);
  }
  if (chance(50)) m["stopReason"] = pick("stop", "error", "toolUse", "errors");
  if (chance(20)) m["api"] = pick("openai-chatgpt-responses", "openai-responses");
  if (chance(20)) m["provider"] = pick(" openclaw ", "openai", "openclaw2");
  if (chance(5)) m["details"] = nested(70);
  return m;
}

}  // namespace

TEST_CASE("message_line_passes_scan: the scan's verdict on the line the writer makes, for 5,000 drawn messages") {
  std::mt19937 rng(34);
  std::size_t passed = 0, refused = 0;
  for (int i = 0; i < 5000; ++i) {
    const auto m = draw_message(rng);
    const auto w = write(m);
    const bool judged = message_line_passes_scan(m), scanned = !scan_transcript_text(w.text).needs_repair();
    INFO(boost::json::serialize(m).substr(0, 400));
    CHECK(w.judged_clean == judged);  // the writer asks the same judge
    // Never clean when the scan is not (the next open would skip a repair); the draws keep
    // away from the one place it is stricter (nesting one level short of the parser's limit).
    CHECK(judged == scanned);
    (judged ? passed : refused)++;
  }
  // Both verdicts are exercised.
  CHECK(passed > 500);
  CHECK(refused > 500);
}

TEST_CASE("message_line_passes_scan: one level of nesting short of the parser's limit is refused, the limit itself too") {
  const std::size_t limit = json::parse_limits{}.max_depth;
  // The entry is one level, the message another, the content array and the block two more.
  std::size_t judged_clean = 0;
  for (std::size_t levels : {limit - 6, limit - 5, limit - 4, limit - 3, limit}) {
    boost::json::object m{{"role", "assistant"},
                          {"content", boost::json::array{boost::json::object{
                                          {"type", "toolCall"}, {"arguments", nested(static_cast<int>(levels))}}}}};
    INFO(levels);
    if (!message_line_passes_scan(m)) continue;
    ++judged_clean;
    CHECK(scan_passes(m));
    CHECK(levels < limit);
  }
  CHECK(judged_clean >= 1);  // the deepest clean line is near the limit, not far below it
  boost::json::object shallow{{"role", "assistant"}, {"content", boost::json::array{boost::json::object{
                                                                       {"type", "toolCall"}, {"arguments", nested(3)}}}}};
  CHECK(message_line_passes_scan(shallow));
  boost::json::object deep{{"role", "assistant"}, {"content", boost::json::array{boost::json::object{
                                                                    {"type", "toolCall"}, {"arguments", nested(70)}}}}};
  CHECK_FALSE(message_line_passes_scan(deep));
  CHECK_FALSE(scan_passes(deep));
}

TEST_CASE("entry_line_passes_scan: other entries pass unless nested past the limit - a message entry is refused") {
  boost::json::object compaction{{"type", "compaction"}, {"id", "c"}, {"summary", "s"}, {"details", nested(3)}};
  CHECK(entry_line_passes_scan(compaction));
  compaction["details"] = nested(70);
  CHECK_FALSE(entry_line_passes_scan(compaction));
  CHECK_FALSE(entry_line_passes_scan(boost::json::object{{"type", "message"}, {"id", "m"}}));
  CHECK_FALSE(entry_line_passes_scan(boost::json::object{{"type", "custom"}, {"message", "x"}}));
}

TEST_CASE("damage scan: a value with no ASCII letter is blank only when JavaScript's trim leaves nothing") {
  const std::string cjk = "\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xb8\x96\xe7\x95\x8c";  // 12 bytes, no ASCII
  // 36 and 120 bytes of CJK text: the scan took any such value over 32 bytes for blank.
  for (const std::string& text : {cjk, cjk + cjk + cjk, std::string(10, ' ') + cjk + cjk + cjk + cjk + cjk + cjk +
                                                            cjk + cjk + cjk + cjk}) {
    boost::json::object m{{"role", "user"}, {"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", text}}}}};
    INFO(text);
    CHECK(scan_passes(m));
    CHECK_FALSE(repair_transcript_text(write(m).text, 0).report.changed());
  }
  // U+3000 (ideographic space) and U+00A0 are JavaScript whitespace: blank, and repaired.
  for (const std::string& text : {std::string("\xe3\x80\x80\xe3\x80\x80"), std::string(40, ' ') + "\xc2\xa0"}) {
    boost::json::object m{{"role", "user"}, {"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", text}}}}};
    CHECK_FALSE(scan_passes(m));
    CHECK(repair_transcript_text(write(m).text, 0).report.changed());
  }
}
