// Contexts built from the reference vectors and from crafted trees equal what pi builds.
#include <catch2/catch.hpp>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/context_builder.hpp"
#include "storage/fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

std::unique_ptr<transcript_reader> open_reader(const std::string& path) {
  auto r = transcript_reader::open(posix_fs(), path);
  REQUIRE(r.ok());
  return std::move(*r);
}

std::string write_lines(const testing::temp_dir& dir, const std::string& name, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  testing::write_text(dir.file(name), text);
  return dir.file(name);
}

const char* kHeader = R"({"type":"session","version":3,"id":"s1","timestamp":"2026-11-30T01:00:00.000Z","cwd":"/w"})";

std::string msg(const char* id, const char* parent, const char* role, const char* text) {
  std::string p = parent ? std::string("\"") + parent + "\"" : "null";
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":)" + p +
         R"(,"timestamp":"2026-11-30T01:00:00.000Z","message":{"role":")" + role + R"(","content":")" + text +
         R"(","timestamp":1})" + "}";
}

std::vector<std::string> texts(const session_context& c) {
  std::vector<std::string> out;
  for (const auto& m : c.messages) {
    const auto& o = m.as_object();
    if (auto* ct = o.if_contains("content"); ct && ct->is_string())
      out.emplace_back(ct->as_string());
    else if (auto* s = o.if_contains("summary"))
      out.push_back(std::string("[") + std::string(o.at("role").as_string()) + "] " + std::string(s->as_string()));
  }
  return out;
}

}  // namespace

TEST_CASE("every pi vector: our context equals the one pi built") {
  int checked = 0;
  for (const auto& name : testing::list_names(testing::vectors_dir())) {
    if (name.rfind("pi_", 0) != 0 || name.size() < 6 || name.substr(name.size() - 6) != ".jsonl") continue;
    const std::string base = name.substr(0, name.size() - 6);
    auto gold = json::parse_object(testing::read_text(testing::vectors_dir() + "/" + base + ".context.json"));
    REQUIRE(gold.ok());
    auto rd = open_reader(testing::vectors_dir() + "/" + name);
    auto ctx = build_context(*rd);
    REQUIRE(ctx.ok());
    INFO(name);
    CHECK(*ctx->leaf_id == std::string(gold->at("leafId").as_string()));
    CHECK(json::to_compact(ctx->to_json()) == json::to_compact(gold->at("context")));
    if (const auto* alt = gold->if_contains("alternate")) {
      auto actx = build_context(*rd, leaf_selector::of(std::string(alt->at("leafId").as_string())));
      REQUIRE(actx.ok());
      CHECK(json::to_compact(actx->to_json()) == json::to_compact(alt->at("context")));
    }
    ++checked;
  }
  CHECK(checked == 4);
}

TEST_CASE("an explicit null leaf gives an empty context - an unknown leaf id falls back to the last entry") {
  testing::temp_dir dir;
  auto path = write_lines(dir, "a.jsonl", {kHeader, msg("a1", nullptr, "user", "hi"), msg("a2", "a1", "assistant", "yo")});
  auto rd = open_reader(path);
  auto none = build_context(*rd, leaf_selector::nothing());
  REQUIRE(none.ok());
  CHECK(none->messages.empty());
  CHECK(json::to_compact(none->to_json()) == R"({"messages":[],"thinkingLevel":"off","model":null})");
  auto unknown = build_context(*rd, leaf_selector::of("zzzzzzzz"));
  REQUIRE(unknown.ok());
  CHECK(texts(*unknown) == std::vector<std::string>{"hi", "yo"});
}

TEST_CASE("compaction: summary first, kept entries from firstKeptEntryId, then the rest") {
  testing::temp_dir dir;
  auto path = write_lines(
      dir, "c.jsonl",
      {kHeader, msg("e1", nullptr, "user", "one"), msg("e2", "e1", "assistant", "two"), msg("e3", "e2", "user", "three"),
       msg("e4", "e3", "assistant", "four"),
       R"({"type":"compaction","id":"c1","parentId":"e4","timestamp":"2026-11-30T01:00:00.000Z","summary":"S","firstKeptEntryId":"e3","tokensBefore":10})",
       msg("e5", "c1", "user", "five")});
  auto rd = open_reader(path);
  auto ctx = build_context(*rd);
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"[compactionSummary] S", "three", "four", "five"});
  // node: new Date("2026-11-30T01:00:00.000Z").getTime() == 1796000400000
  CHECK(ctx->messages[0].as_object().at("timestamp").as_int64() == 1796000400000);
}

TEST_CASE("a compaction whose firstKeptEntryId is not on the path keeps nothing before it") {
  testing::temp_dir dir;
  auto path = write_lines(
      dir, "c.jsonl",
      {kHeader, msg("e1", nullptr, "user", "one"),
       R"({"type":"compaction","id":"c1","parentId":"e1","timestamp":"2026-11-30T01:00:00.000Z","summary":"S","firstKeptEntryId":"gone","tokensBefore":10})",
       msg("e2", "c1", "user", "two")});
  auto rd = open_reader(path);
  auto ctx = build_context(*rd);
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"[compactionSummary] S", "two"});
}

TEST_CASE("custom messages and branch summaries enter the context - labels, custom, session_info do not") {
  testing::temp_dir dir;
  auto path = write_lines(
      dir, "b.jsonl",
      {kHeader, msg("e1", nullptr, "user", "one"),
       R"({"type":"custom","customType":"model-snapshot","data":{"x":1},"id":"k1","parentId":"e1","timestamp":"2026-11-30T01:00:00.000Z"})",
       R"({"type":"custom_message","customType":"note","content":"hidden","display":false,"id":"k2","parentId":"k1","timestamp":"2026-11-30T01:00:00.000Z"})",
       R"({"type":"label","id":"l1","parentId":"k2","timestamp":"2026-11-30T01:00:00.000Z","targetId":"e1","label":"x"})",
       R"({"type":"session_info","id":"i1","parentId":"l1","timestamp":"2026-11-30T01:00:00.000Z","name":"n"})",
       R"({"type":"branch_summary","id":"b1","parentId":"i1","timestamp":"2026-11-30T01:00:00.000Z","fromId":"e1","summary":"B"})",
       R"({"type":"branch_summary","id":"b2","parentId":"b1","timestamp":"2026-11-30T01:00:00.000Z","fromId":"e1","summary":""})",
       R"({"type":"thinking_level_change","id":"t1","parentId":"b2","timestamp":"2026-11-30T01:00:00.000Z","thinkingLevel":"high"})",
       R"({"type":"model_change","id":"m1","parentId":"t1","timestamp":"2026-11-30T01:00:00.000Z","provider":"openai","modelId":"gpt"})"});
  auto rd = open_reader(path);
  auto ctx = build_context(*rd);
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"one", "hidden", "[branchSummary] B"});
  CHECK(json::to_compact(ctx->messages[1]) ==
        R"({"role":"custom","customType":"note","content":"hidden","display":false,"timestamp":1796000400000})");
  CHECK(ctx->thinking_level->as_string() == "high");
  CHECK(json::to_compact(ctx->model) == R"({"provider":"openai","modelId":"gpt"})");
}

TEST_CASE("OpenClaw leaf controls and side appends decide the active leaf") {
  testing::temp_dir dir;
  auto path = write_lines(
      dir, "l.jsonl",
      {kHeader, msg("e1", nullptr, "user", "one"), msg("e2", "e1", "assistant", "two"), msg("e3", "e1", "assistant", "alt"),
       R"({"type":"leaf","id":"f1","parentId":"e3","timestamp":"2026-11-30T01:00:00.000Z","targetId":"e2"})",
       R"({"type":"message","id":"s1","parentId":"e2","timestamp":"2026-11-30T01:00:00.000Z","appendMode":"side","message":{"role":"assistant","content":"mirror","timestamp":1}})"});
  auto rd = open_reader(path);
  auto ctx = build_context(*rd);
  REQUIRE(ctx.ok());
  CHECK(*ctx->leaf_id == "e2");
  CHECK(texts(*ctx) == std::vector<std::string>{"one", "two"});
}

TEST_CASE("malformed lines are skipped and counted - a parent cycle ends the walk") {
  testing::temp_dir dir;
  auto path = write_lines(dir, "m.jsonl",
                          {kHeader, msg("e1", "e2", "user", "one"), "{not json", std::string(16, '\0'),
                           msg("e2", "e1", "assistant", "two")});
  auto rd = open_reader(path);
  auto ctx = build_context(*rd);
  REQUIRE(ctx.ok());
  CHECK(ctx->cycle_detected);
  CHECK(rd->stats().malformed_lines == 2);
  CHECK(texts(*ctx) == std::vector<std::string>{"one", "two"});
}

TEST_CASE("duplicate ids: the later entry wins, as in pi's byId map") {
  testing::temp_dir dir;
  auto path = write_lines(dir, "d.jsonl",
                          {kHeader, msg("e1", nullptr, "user", "old"), msg("e1", nullptr, "user", "new"),
                           msg("e2", "e1", "assistant", "reply")});
  auto rd = open_reader(path);
  auto ctx = build_context(*rd);
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"new", "reply"});
}

TEST_CASE("version 1 and 2 files are migrated in memory") {
  testing::temp_dir dir;
  auto v1 = write_lines(
      dir, "v1.jsonl",
      {R"({"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"})",
       R"({"type":"message","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"a","timestamp":1}})",
       R"({"type":"message","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2}})",
       R"({"type":"message","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"b","timestamp":3}})",
       R"({"type":"compaction","timestamp":"2025-01-01T00:00:00.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":5})",
       R"({"type":"message","timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"hookMessage","content":"h","timestamp":4}})"});
  auto rd = open_reader(v1);
  CHECK(rd->migrated());
  auto ctx = build_context(*rd);
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"[compactionSummary] S", "b", "h"});
  CHECK(std::string(ctx->messages[2].as_object().at("role").as_string()) == "custom");
  CHECK(json::to_compact(ctx->model) == R"({"provider":"p","modelId":"m"})");
}

TEST_CASE("a history page: only the last N messages are parsed, total_messages counts them all") {
  testing::temp_dir dir;
  std::vector<std::string> lines{kHeader};
  std::string parent;
  for (int i = 0; i < 2000; ++i) {
    const std::string id = "m" + std::to_string(i);
    lines.push_back(msg(id.c_str(), parent.empty() ? nullptr : parent.c_str(), i % 2 ? "assistant" : "user",
                        ("text " + std::to_string(i)).c_str()));
    parent = id;
  }
  const std::string path = write_lines(dir, "big.jsonl", lines);
  auto page_reader = open_reader(path);
  auto page = build_context(*page_reader, leaf_selector::active(), 10);
  REQUIRE(page.ok());
  CHECK(page->total_messages == 2000);
  REQUIRE(page->messages.size() == 10);
  CHECK(texts(*page).front() == "text 1990");
  CHECK(texts(*page).back() == "text 1999");
  CHECK(page_reader->stats().lines_parsed <= 20);  // the page, not the session

  auto all_reader = open_reader(path);
  auto all = build_context(*all_reader);
  REQUIRE(all.ok());
  CHECK(all->messages.size() == 2000);
  CHECK(all->total_messages == 2000);
  CHECK(all_reader->stats().lines_parsed >= 2000);
  // A page larger than the context is the context.
  auto big_reader = open_reader(path);
  CHECK(build_context(*big_reader, leaf_selector::active(), 5000)->messages == all->messages);
}
