#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "actors/session/memory_flush_planner.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_reader.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

session_entry entry_from(const char* json_text) {
  auto parsed = json::parse_object(json_text);
  REQUIRE(parsed.ok());
  return session_entry(std::move(*parsed));
}

std::vector<std::string> keys_of(const session_entry& e) {
  std::vector<std::string> keys;
  for (const auto& kv : e.json()) keys.emplace_back(kv.key());
  return keys;
}

std::int64_t at(const char* iso) {
  const auto ms = parse_iso_ms(iso);
  REQUIRE(ms);
  return *ms;
}

// [R§7.1], verbatim, with YYYY-MM-DD already replaced by the test date.
std::string default_prompt_for(const std::string& date) {
  return "Pre-compaction memory flush. Store durable memories only in memory/" + date +
         ".md (create memory/ if needed). Treat workspace bootstrap/reference files such as "
         "MEMORY.md, DREAMS.md, SOUL.md, TOOLS.md, and AGENTS.md as read-only during this flush; "
         "never overwrite, replace, or edit them. If memory/" + date +
         ".md already exists, APPEND new content only and do not overwrite existing entries. Do "
         "NOT create timestamped variant files (e.g., " + date + "-HHMM.md); always use the "
         "canonical " + date + ".md filename. If nothing to store, reply with NO_REPLY.";
}

std::string default_system_prompt_for(const std::string& date) {
  return "Pre-compaction memory flush turn. The session is near auto-compaction; capture durable "
         "memories to disk. Store durable memories only in memory/" + date +
         ".md (create memory/ if needed). Treat workspace bootstrap/reference files such as "
         "MEMORY.md, DREAMS.md, SOUL.md, TOOLS.md, and AGENTS.md as read-only during this flush; "
         "never overwrite, replace, or edit them. If memory/" + date +
         ".md already exists, APPEND new content only and do not overwrite existing entries. You "
         "may reply, but usually NO_REPLY is correct.";
}

const std::string target_hint =
    "Store durable memories only in memory/YYYY-MM-DD.md (create memory/ if needed).";
const std::string append_hint =
    "If memory/YYYY-MM-DD.md already exists, APPEND new content only and do not overwrite "
    "existing entries.";
const std::string read_only_hint =
    "Treat workspace bootstrap/reference files such as MEMORY.md, DREAMS.md, SOUL.md, TOOLS.md, "
    "and AGENTS.md as read-only during this flush; never overwrite, replace, or edit them.";

}  // namespace

TEST_CASE("flush threshold is contextWindow - reserveTokensFloor - softThresholdTokens") {
  const memory_flush_settings defaults;
  CHECK(flush_threshold(200000, 20000, defaults) == 176000);
  CHECK(flush_threshold(0, 20000, defaults) == 176000);  // unknown window: 200000
  CHECK(flush_threshold(128000, 20000, defaults) == 104000);
  CHECK(flush_threshold(16000, 20000, defaults) == 0);  // never negative
  memory_flush_settings custom;
  custom.soft_threshold_tokens = 10000;
  CHECK(flush_threshold(200000, 30000, custom) == 160000);
}

TEST_CASE("flush trigger table [R§7.2]") {
  struct row {
    const char* name;
    const char* entry;
    flush_inputs in;
    bool run;
    flush_reason reason;
    std::int64_t token_count;
    bool read_transcript;
  };
  const auto in = [](std::int64_t estimate, std::optional<std::int64_t> transcript,
                     std::int64_t output, std::int64_t bytes) {
    flush_inputs i;
    i.context_window = 200000;
    i.prompt_estimate = estimate;
    i.transcript_prompt_tokens = transcript;
    i.last_output_tokens = output;
    i.transcript_bytes = bytes;
    return i;
  };
  flush_inputs heartbeat = in(100, std::nullopt, 0, 0);
  heartbeat.is_heartbeat = true;
  flush_inputs read_only = in(100, std::nullopt, 0, 0);
  read_only.workspace_writable = false;
  flush_inputs unknown_window = in(500, std::nullopt, 0, 0);
  unknown_window.context_window = 0;

  const std::vector<row> rows = {
      {"fresh persisted tokens cross the threshold",
       R"({"totalTokens":175000,"totalTokensFresh":true,"compactionCount":0})",
       in(1000, std::nullopt, 0, 0), true, flush_reason::threshold_crossed, 176000, true},
      {"fresh persisted just below the threshold",
       R"({"totalTokens":174000,"totalTokensFresh":true})", in(1000, std::nullopt, 999, 0), false,
       flush_reason::below_threshold, 175999, true},
      {"fresh persisted far below: no transcript read needed",
       R"({"totalTokens":50000,"totalTokensFresh":true})", in(1000, std::nullopt, 0, 0), false,
       flush_reason::below_threshold, 51000, false},
      {"within 8192 of the threshold: read the transcript",
       R"({"totalTokens":166808,"totalTokensFresh":true})", in(1000, std::nullopt, 0, 0), false,
       flush_reason::below_threshold, 167808, true},
      {"stale persisted tokens are ignored",
       R"({"totalTokens":190000,"totalTokensFresh":false})", in(1000, std::nullopt, 0, 0), false,
       flush_reason::below_threshold, 0, true},
      {"legacy entry without totalTokensFresh counts as stale",
       R"({"totalTokens":190000})", in(1000, std::nullopt, 0, 0), false,
       flush_reason::below_threshold, 0, true},
      {"stale persisted, transcript tokens cross",
       R"({"totalTokens":190000,"totalTokensFresh":false})", in(1000, 170000, 5000, 0), true,
       flush_reason::threshold_crossed, 176000, true},
      {"transcript prompt tokens larger than fresh persisted win",
       R"({"totalTokens":100000,"totalTokensFresh":true})", in(2000, 172000, 2000, 0), true,
       flush_reason::threshold_crossed, 176000, false},
      {"fresh persisted larger than transcript prompt tokens win",
       R"({"totalTokens":175500,"totalTokensFresh":true})", in(500, 120000, 0, 0), true,
       flush_reason::threshold_crossed, 176000, true},
      {"forced by transcript bytes (2 MiB)", R"({"totalTokens":1000,"totalTokensFresh":true})",
       in(10, std::nullopt, 0, 2097152), true, flush_reason::transcript_too_large, 1010, false},
      {"one byte under the force limit", R"({"totalTokens":1000,"totalTokensFresh":true})",
       in(10, std::nullopt, 0, 2097151), false, flush_reason::below_threshold, 1010, false},
      {"already flushed this cycle", R"({"totalTokens":180000,"totalTokensFresh":true,
         "compactionCount":2,"memoryFlushCompactionCount":2})",
       in(100, std::nullopt, 0, 0), false, flush_reason::already_flushed, 180100, true},
      {"already flushed also blocks the byte trigger",
       R"({"totalTokens":1000,"totalTokensFresh":true,"memoryFlushCompactionCount":0})",
       in(10, std::nullopt, 0, 5000000), false, flush_reason::already_flushed, 1010, false},
      {"missing compactionCount counts as 0 for the cycle",
       R"({"totalTokens":180000,"totalTokensFresh":true,"memoryFlushCompactionCount":0})",
       in(100, std::nullopt, 0, 0), false, flush_reason::already_flushed, 180100, true},
      {"new cycle after compaction: flush again", R"({"totalTokens":180000,"totalTokensFresh":true,
         "compactionCount":3,"memoryFlushCompactionCount":2})",
       in(100, std::nullopt, 0, 0), true, flush_reason::threshold_crossed, 180100, true},
      {"heartbeat runs never flush", R"({"totalTokens":190000,"totalTokensFresh":true})", heartbeat,
       false, flush_reason::heartbeat, 0, false},
      {"read-only workspace: a due flush is skipped, counted", R"({"totalTokens":190000,"totalTokensFresh":true})",
       read_only, false, flush_reason::read_only_workspace, 190100, true},
      {"read-only workspace below the threshold: simply not due", R"({"totalTokens":1000,"totalTokensFresh":true})",
       read_only, false, flush_reason::below_threshold, 1100, false},
      {"context past the window: compaction first", "{}", in(100, 199950, 0, 0), false,
       flush_reason::context_over_window, 200050, true},
      {"context just inside the window: the flush runs", "{}", in(100, 199899, 0, 0), true,
       flush_reason::threshold_crossed, 199999, true},
      {"unknown context window uses 200000", R"({"totalTokens":175500,"totalTokensFresh":true})",
       unknown_window, true, flush_reason::threshold_crossed, 176000, true},
  };
  for (const auto& r : rows) {
    INFO(r.name);
    const auto d = decide_flush(entry_from(r.entry), r.in, memory_flush_settings{});
    CHECK(d.run == r.run);
    CHECK(flush_reason_name(d.reason) == std::string(flush_reason_name(r.reason)));
    CHECK(d.token_count == r.token_count);
    CHECK(d.threshold == 176000);
    CHECK(d.read_transcript == r.read_transcript);
    // Due: the flush runs, or a trigger held but the workspace or the window stopped it.
    CHECK(d.due == (r.run || r.reason == flush_reason::read_only_workspace ||
                    r.reason == flush_reason::context_over_window));
  }
}

TEST_CASE("flush trigger: disabled settings and a 0 byte limit") {
  const auto big = entry_from(R"({"totalTokens":190000,"totalTokensFresh":true})");
  flush_inputs in;
  in.context_window = 200000;
  memory_flush_settings disabled;
  disabled.enabled = false;
  CHECK(decide_flush(big, in, disabled).reason == flush_reason::disabled);
  CHECK_FALSE(decide_flush(big, in, disabled).run);

  const auto small = entry_from(R"({"totalTokens":1000,"totalTokensFresh":true})");
  in.transcript_bytes = 50 * 1024 * 1024;
  memory_flush_settings no_force;
  no_force.force_flush_transcript_bytes = 0;  // 0 disables the byte trigger
  CHECK_FALSE(decide_flush(small, in, no_force).run);
  CHECK(decide_flush(small, in, memory_flush_settings{}).run);
}

TEST_CASE("transcript prompt tokens are adopted when larger or when persisted is stale") {
  auto fresh = entry_from(R"({"sessionId":"s","totalTokens":100000,"totalTokensFresh":true})");
  CHECK_FALSE(adopt_transcript_prompt_tokens(fresh, 90000));
  CHECK_FALSE(adopt_transcript_prompt_tokens(fresh, std::nullopt));
  CHECK(*fresh.total_tokens() == 100000);
  CHECK(adopt_transcript_prompt_tokens(fresh, 120000));
  CHECK(*fresh.total_tokens() == 120000);

  auto stale = entry_from(R"({"totalTokens":150000,"totalTokensFresh":false,"label":"x"})");
  CHECK(adopt_transcript_prompt_tokens(stale, 90000));
  CHECK(*stale.total_tokens() == 90000);
  CHECK(*stale.total_tokens_fresh());
  CHECK(keys_of(stale) == std::vector<std::string>{"totalTokens", "totalTokensFresh", "label"});

  auto none = entry_from(R"({"sessionId":"s"})");
  CHECK(adopt_transcript_prompt_tokens(none, 5));
  CHECK(keys_of(none) == std::vector<std::string>{"sessionId", "totalTokens", "totalTokensFresh"});
}

TEST_CASE("default flush plan: date in the user's zone, not UTC, across midnight") {
  const std::int64_t now = at("2026-11-30T15:30:00Z");  // 00:30 on Dec 1st in Tokyo

  auto tokyo = build_flush_plan(memory_flush_settings{}, now, "Asia/Tokyo");
  REQUIRE(tokyo.ok());
  CHECK(tokyo->date_stamp == "2026-12-01");
  CHECK(tokyo->relative_path == "memory/2026-12-01.md");
  CHECK(tokyo->prompt == default_prompt_for("2026-12-01") +
                             "\nCurrent time: Tuesday, December 1st, 2026 - 00:30 (Asia/Tokyo)"
                             "\nReference UTC: 2026-11-30 15:30 UTC");
  CHECK(tokyo->system_prompt == default_system_prompt_for("2026-12-01"));
  CHECK(tokyo->model.empty());

  auto utc = build_flush_plan(memory_flush_settings{}, now, "UTC");
  REQUIRE(utc.ok());
  CHECK(utc->date_stamp == "2026-11-30");
  CHECK(utc->relative_path == "memory/2026-11-30.md");
  CHECK(utc->prompt == default_prompt_for("2026-11-30") +
                           "\nCurrent time: Monday, November 30th, 2026 - 15:30 (UTC)"
                           "\nReference UTC: 2026-11-30 15:30 UTC");
  CHECK(utc->system_prompt == default_system_prompt_for("2026-11-30"));

  // One minute before midnight in Tokyo both zones agree on the day.
  auto before = build_flush_plan(memory_flush_settings{}, at("2026-11-30T14:59:00Z"), "Asia/Tokyo");
  REQUIRE(before.ok());
  CHECK(before->date_stamp == "2026-11-30");

  CHECK(build_flush_plan(memory_flush_settings{}, now, "")->date_stamp == "2026-11-30");
}

TEST_CASE("flush plan with an unknown zone is an error naming it") {
  auto plan = build_flush_plan(memory_flush_settings{}, 0, "Mars/Olympus_Mons");
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().code() == errc::invalid_argument);
  CHECK(plan.error().message().find("Mars/Olympus_Mons") != std::string::npos);
}

TEST_CASE("current time block: ordinals and 24-hour clock") {
  CHECK(*format_current_time_block(at("2026-03-02T09:05:00Z"), "Asia/Tokyo") ==
        "Current time: Monday, March 2nd, 2026 - 18:05 (Asia/Tokyo)\n"
        "Reference UTC: 2026-03-02 09:05 UTC");
  CHECK(*format_current_time_block(at("2026-01-03T00:00:00Z"), "UTC") ==
        "Current time: Saturday, January 3rd, 2026 - 00:00 (UTC)\n"
        "Reference UTC: 2026-01-03 00:00 UTC");
  CHECK(format_current_time_block(at("2026-01-11T12:00:00Z"), "UTC")->find("January 11th") !=
        std::string::npos);
  CHECK(format_current_time_block(at("2026-01-21T12:00:00Z"), "UTC")->find("January 21st") !=
        std::string::npos);
}

TEST_CASE("custom flush prompts get the missing safety hints and the NO_REPLY hint") {
  const std::int64_t now = at("2026-11-30T15:30:00Z");
  memory_flush_settings s;
  s.prompt = "  Write down what matters.  ";
  s.system_prompt = "Flush now. " + target_hint + " Reply NO_REPLY when done.";
  s.model = " ollama/llama3 ";
  auto plan = build_flush_plan(s, now, "UTC");
  REQUIRE(plan.ok());

  const auto dated = [](std::string text) {
    for (auto p = text.find("YYYY-MM-DD"); p != std::string::npos; p = text.find("YYYY-MM-DD"))
      text.replace(p, 10, "2026-11-30");
    return text;
  };
  // Order of appending: target, append-only, read-only; then the NO_REPLY hint.
  CHECK(plan->prompt == dated("Write down what matters.\n\n" + target_hint + "\n\n" + append_hint +
                              "\n\n" + read_only_hint +
                              "\n\nIf no user-visible reply is needed, start with NO_REPLY.") +
                            "\nCurrent time: Monday, November 30th, 2026 - 15:30 (UTC)"
                            "\nReference UTC: 2026-11-30 15:30 UTC");
  // Already has the target hint and NO_REPLY: only the two other hints are added.
  CHECK(plan->system_prompt == dated(s.system_prompt + "\n\n" + append_hint + "\n\n" +
                                     read_only_hint));
  CHECK(plan->model == "ollama/llama3");
}

TEST_CASE("hint helpers append only what is missing") {
  CHECK(ensure_no_reply_hint("Say NO_REPLY.") == "Say NO_REPLY.");
  CHECK(ensure_no_reply_hint("Be brief.") ==
        "Be brief.\n\nIf no user-visible reply is needed, start with NO_REPLY.");
  CHECK(ensure_no_reply_hint("say no_reply") ==
        "say no_reply\n\nIf no user-visible reply is needed, start with NO_REPLY.");
  const std::string all = target_hint + " " + read_only_hint + " " + append_hint;
  CHECK(ensure_safety_hints(all) == all);
  CHECK(ensure_safety_hints("") == target_hint + "\n\n" + append_hint + "\n\n" + read_only_hint);
  // The defaults already hold every hint and NO_REPLY.
  CHECK(ensure_no_reply_hint(ensure_safety_hints(default_flush_prompt)) == default_flush_prompt);
  CHECK(ensure_no_reply_hint(ensure_safety_hints(default_flush_system_prompt)) ==
        default_flush_system_prompt);
}

TEST_CASE("a custom prompt with its own Current time line gets no second one") {
  memory_flush_settings s;
  s.prompt = "Flush. NO_REPLY if nothing.\nCurrent time: whenever";
  auto plan = build_flush_plan(s, 0, "UTC");
  REQUIRE(plan.ok());
  CHECK(plan->prompt.find("Reference UTC") == std::string::npos);
  CHECK(plan->prompt.ends_with(read_only_hint));
}

TEST_CASE("flush success patches the row in place and clears the failure fields") {
  auto e = entry_from(R"({"sessionId":"s1","memoryFlushLastFailedAt":5,"compactionCount":4,
    "memoryFlushFailureCount":2,"memoryFlushLastFailureError":"boom","updatedAt":7})");
  apply_flush_success(e, 1000, 4);
  CHECK(keys_of(e) == std::vector<std::string>{"sessionId", "compactionCount",
                                               "memoryFlushFailureCount", "updatedAt",
                                               "memoryFlushAt", "memoryFlushCompactionCount"});
  CHECK(*e.memory_flush_at() == 1000);
  CHECK(*e.memory_flush_compaction_count() == 4);
  CHECK(*e.memory_flush_failure_count() == 0);
  // The next decision in the same cycle sees "already flushed".
  flush_inputs in;
  in.transcript_bytes = 10 * 1024 * 1024;
  CHECK(decide_flush(e, in, memory_flush_settings{}).reason == flush_reason::already_flushed);
}

TEST_CASE("flush failures count to 3, then the cycle is skipped with a notice") {
  auto e = entry_from(R"({"sessionId":"s1","compactionCount":2})");
  CHECK_FALSE(apply_flush_failure(e, 100, "model timeout"));
  CHECK(*e.memory_flush_failure_count() == 1);
  CHECK(*e.memory_flush_last_failed_at() == 100);
  CHECK(*e.memory_flush_last_failure_error() == "model timeout");
  CHECK_FALSE(e.memory_flush_compaction_count());

  CHECK_FALSE(apply_flush_failure(e, 200, "model timeout again"));
  CHECK(*e.memory_flush_failure_count() == 2);
  CHECK(*e.memory_flush_last_failed_at() == 200);

  const auto notice = apply_flush_failure(e, 300, "third");
  REQUIRE(notice);
  CHECK(*notice ==
        "⚠️ Memory flush failed after 3 attempts; skipping for this cycle. It will retry after "
        "the next compaction.");
  CHECK(*e.memory_flush_failure_count() == 3);
  CHECK(*e.memory_flush_at() == 300);
  CHECK(*e.memory_flush_compaction_count() == 2);
  CHECK(keys_of(e) == std::vector<std::string>{"sessionId", "compactionCount",
                                               "memoryFlushFailureCount", "memoryFlushLastFailedAt",
                                               "memoryFlushLastFailureError", "memoryFlushAt",
                                               "memoryFlushCompactionCount"});
  flush_inputs in;
  in.transcript_bytes = 10 * 1024 * 1024;
  CHECK(decide_flush(e, in, memory_flush_settings{}).reason == flush_reason::already_flushed);

  // A success afterwards resets the count.
  apply_flush_success(e, 400, 3);
  CHECK(*e.memory_flush_failure_count() == 0);
  CHECK_FALSE(e.memory_flush_last_failure_error());
}

TEST_CASE("flush failure errors are truncated to 200 UTF-16 units") {
  auto e = entry_from("{}");
  const std::string exact(200, 'x');
  apply_flush_failure(e, 1, exact);
  CHECK(*e.memory_flush_last_failure_error() == exact);

  apply_flush_failure(e, 2, std::string(201, 'y'));
  CHECK(*e.memory_flush_last_failure_error() == std::string(199, 'y') + "…");

  // "é" is one UTF-16 unit in two UTF-8 bytes: 250 of them keep 199 + "…".
  std::string accents;
  for (int i = 0; i < 250; ++i) accents += "é";
  apply_flush_failure(e, 3, accents);
  std::string kept;
  for (int i = 0; i < 199; ++i) kept += "é";
  CHECK(*e.memory_flush_last_failure_error() == kept + "…");
}

TEST_CASE("a new session clears every memoryFlush field") {
  auto e = entry_from(R"({"sessionId":"s1","memoryFlushAt":1,"compactionCount":3,
    "memoryFlushCompactionCount":3,"memoryFlushFailureCount":1,"memoryFlushLastFailedAt":2,
    "memoryFlushLastFailureError":"x","memoryFlushContextHash":"abc","updatedAt":9})");
  clear_flush_fields(e);
  CHECK(keys_of(e) == std::vector<std::string>{"sessionId", "compactionCount", "updatedAt"});
}
