// Compaction triggers and cut point [R§6.1–6.3]. Cut-point and plan expectations marked
// "node:" were produced with node 20 running pi-coding-agent 0.73.1 `findCutPoint` /
// `prepareCompaction` + `computeFileLists` on the same entries (built in JS with the same
// fields and key order as messages/transcript_entry.hpp builds them).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "actors/session/compaction_planner.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
constexpr std::int64_t kT0 = 1767225600000;

// Entries chained by parentId, one second apart, as a session path.
class path_builder {
 public:
  path_builder& message(std::string id, boost::json::object m) {
    return add(make_message_entry(id, parent(), ts(), std::move(m)), id);
  }
  path_builder& user(std::string id, std::string text) { return message(id, user_message(text, ts())); }
  path_builder& assistant(std::string id, boost::json::array content, std::int64_t input = 0, std::int64_t output = 0,
                          std::string stop = "stop") {
    assistant_fields a{.content = std::move(content),
                       .model = "m",
                       .usage = {.input = input, .output = output},
                       .stop_reason = std::move(stop),
                       .timestamp_ms = ts()};
    return message(id, assistant_message(a));
  }
  path_builder& text_reply(std::string id, std::string text, std::int64_t input = 0, std::int64_t output = 0) {
    return assistant(id, {text_block(text)}, input, output);
  }
  path_builder& tool_result(std::string id, std::string call_id, std::string tool, std::string text) {
    return message(id, tool_result_message(call_id, tool, {text_block(text)}, false, ts()));
  }
  path_builder& entry(boost::json::object e) {
    std::string id(*id_of(e));
    return add(std::move(e), id);
  }
  std::optional<std::string_view> parent() const {
    return last_id_.empty() ? std::nullopt : std::optional<std::string_view>(last_id_);
  }
  std::int64_t ts() const { return kT0 + 1000 * static_cast<std::int64_t>(entries_.size()); }
  std::vector<const boost::json::object*> path() const {
    std::vector<const boost::json::object*> out;
    for (const auto& e : entries_) out.push_back(&e);
    return out;
  }

 private:
  path_builder& add(boost::json::object e, std::string id) {
    entries_.push_back(std::move(e));
    last_id_ = std::move(id);
    return *this;
  }
  std::vector<boost::json::object> entries_;
  std::string last_id_;
};

boost::json::object tool_call(std::string_view id, std::string_view name, boost::json::object args) {
  return {{"type", "toolCall"}, {"id", id}, {"name", name}, {"arguments", std::move(args)}};
}

std::vector<std::string> roles(const std::vector<boost::json::object>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) out.emplace_back(m.at("role").as_string());
  return out;
}

using strings = std::vector<std::string>;

// Three user/assistant pairs of 100 estimated tokens each (400 chars).
path_builder three_pairs() {
  path_builder b;
  b.user("a1", std::string(400, 'x')).text_reply("a2", std::string(400, 'x'));
  b.user("a3", std::string(400, 'x')).text_reply("a4", std::string(400, 'x'));
  b.user("a5", std::string(400, 'x')).text_reply("a6", std::string(400, 'x'));
  return b;
}
}  // namespace

TEST_CASE("effective_reserve: floor raises the reserve, small windows cap it [R§6.1]") {
  compaction_settings s;
  CHECK(effective_reserve(s, 200000) == 20000);  // max(16384, 20000)
  CHECK(effective_reserve(s, 16000) == 8000);    // floor min(20000, 16000-8000); reserve capped to 8000
  CHECK(effective_reserve(s, 0) == 20000);       // unknown window: no cap
  CHECK(effective_reserve(s, 1000) == 500);      // minPrompt = 500, maxReserve = 500
  s.reserve_tokens_floor = 0;                    // floor disabled
  CHECK(effective_reserve(s, 200000) == 16384);
  s.reserve_tokens = 30000;
  CHECK(effective_reserve(s, 200000) == 30000);
  CHECK(effective_reserve(s, 32000) == 24000);  // capped at 32000 - 8000
}

TEST_CASE("should_compact_after_turn: contextTokens > contextWindow - reserve") {
  CHECK_FALSE(should_compact_after_turn(180000, 200000, 20000));
  CHECK(should_compact_after_turn(180001, 200000, 20000));
  CHECK_FALSE(should_compact_after_turn(999999, 0, 20000));  // unknown window
}

TEST_CASE("should_compact_before_turn: projected tokens against window - floor - soft threshold") {
  compaction_settings s;
  preflight_state st;
  st.context_window = 200000;  // threshold 200000 - 20000 - 4000 = 176000
  st.fresh_persisted_total_tokens = 170000;
  st.last_output_tokens = 2000;
  st.prompt_estimate_tokens = 3999;
  CHECK_FALSE(should_compact_before_turn(s, st));
  st.prompt_estimate_tokens = 4000;
  CHECK(should_compact_before_turn(s, st) == preflight_trigger::tokens);

  preflight_state stale;
  stale.context_window = 0;  // unknown: 200000
  stale.stale_persisted_total_tokens = 176000;
  CHECK(should_compact_before_turn(s, stale) == preflight_trigger::tokens);
  stale.stale_persisted_total_tokens = 175999;
  CHECK_FALSE(should_compact_before_turn(s, stale));
  stale.transcript_prompt_tokens = 175000;
  stale.last_output_tokens = 1000;
  CHECK(should_compact_before_turn(s, stale) == preflight_trigger::tokens);

  preflight_state responses;
  responses.context_window = 200000;
  responses.responses_compact_threshold = 190000;  // raises the threshold
  responses.fresh_persisted_total_tokens = 180000;
  CHECK_FALSE(should_compact_before_turn(s, responses));
}

TEST_CASE("should_compact_before_turn: maxActiveTranscriptBytes only with truncateAfterCompaction") {
  compaction_settings s;
  s.max_active_transcript_bytes = 1 << 20;
  preflight_state st;
  st.context_window = 200000;
  st.transcript_bytes = 1 << 20;
  CHECK_FALSE(should_compact_before_turn(s, st));
  s.truncate_after_compaction = true;
  CHECK(should_compact_before_turn(s, st) == preflight_trigger::transcript_bytes);
  st.transcript_bytes = (1 << 20) - 1;
  CHECK_FALSE(should_compact_before_turn(s, st));
  // Both hold: the byte limit names the reason.
  st.transcript_bytes = 1 << 20;
  st.fresh_persisted_total_tokens = 190000;
  CHECK(should_compact_before_turn(s, st) == preflight_trigger::transcript_bytes);
  CHECK(std::string(preflight_reason(preflight_trigger::transcript_bytes)) == "transcript_bytes");
  CHECK(std::string(preflight_reason(preflight_trigger::tokens)) == "preflight");
}

TEST_CASE("cut point keeps keepRecentTokens of recent messages") {
  auto b = three_pairs();
  auto path = b.path();
  // node: findCutPoint(A, 0, 6, 350) -> {firstKeptEntryIndex:2, turnStartIndex:-1, isSplitTurn:false}
  auto c = find_cut_point(path, 0, path.size(), 350);
  CHECK(c.first_kept_entry_index == 2);
  CHECK_FALSE(c.is_split_turn);
  CHECK_FALSE(c.turn_start_index);
  // node: findCutPoint(A, 0, 6, 99999) -> {firstKeptEntryIndex:0, ...}: budget never reached
  CHECK(find_cut_point(path, 0, path.size(), 99999).first_kept_entry_index == 0);

  compaction_settings s;
  s.keep_recent_tokens = 350;
  auto plan = plan_compaction(path, s);
  REQUIRE(plan);
  // node: {"firstKeptEntryId":"a3","isSplitTurn":false,"tokensBefore":0,"summarize":["user","assistant"],"prefix":[]}
  CHECK(plan->first_kept_entry_id == "a3");
  CHECK(roles(plan->messages_to_summarize) == strings{"user", "assistant"});
  CHECK(plan->turn_prefix_messages.empty());
  CHECK(plan->tokens_before == 0);
  CHECK_FALSE(plan->previous_summary);
}

TEST_CASE("cut point never lands on a toolResult: a tool call stays with its result") {
  path_builder b;
  b.user("b1", "please run");
  b.assistant("b2", {text_block("reading"), tool_call("c1", "read", {{"path", "src/a.cpp"}})}, 0, 0, "toolUse");
  b.tool_result("b3", "c1", "read", std::string(4000, 'z'));  // 1000 tokens: the budget is reached here
  b.text_reply("b4", "done").user("b5", "next").text_reply("b6", "ok");
  auto path = b.path();
  // node: findCutPoint(B, 0, 6, 1000) -> {firstKeptEntryIndex:3, turnStartIndex:0, isSplitTurn:true}
  auto c = find_cut_point(path, 0, path.size(), 1000);
  CHECK(c.first_kept_entry_index == 3);
  CHECK(c.is_split_turn);
  CHECK(c.turn_start_index == 0u);

  compaction_settings s;
  s.keep_recent_tokens = 1000;
  auto plan = plan_compaction(path, s);
  REQUIRE(plan);
  // node: {"firstKeptEntryId":"b4","isSplitTurn":true,"summarize":[],"prefix":["user","assistant","toolResult"],
  //        "readFiles":["src/a.cpp"],"modifiedFiles":[]}
  CHECK(plan->first_kept_entry_id == "b4");
  CHECK(plan->messages_to_summarize.empty());
  CHECK(roles(plan->turn_prefix_messages) == strings{"user", "assistant", "toolResult"});
  CHECK(plan->read_files == strings{"src/a.cpp"});
  CHECK(plan->modified_files.empty());

  // No keep budget ever puts the cut on the toolResult.
  for (std::int64_t keep = 0; keep < 1100; keep += 7) {
    auto k = find_cut_point(path, 0, path.size(), keep).first_kept_entry_index;
    INFO("keep " << keep);
    CHECK(*role_of(*path[k]) != "toolResult");
  }
}

TEST_CASE("split turn: the cut inside a turn reports the user message that started it") {
  path_builder b;
  b.user("c1", "first task").text_reply("c2", "done first");
  b.user("c3", "second task");
  b.assistant("c4", {tool_call("k1", "read", {{"path", "README.md"}})}, 0, 0, "toolUse");
  b.tool_result("c5", "k1", "read", std::string(800, 'r'));
  b.assistant("c6", {tool_call("k2", "edit", {{"path", "src/main.cpp"}, {"oldText", "a"}, {"newText", "b"}})}, 0, 0,
              "toolUse");
  b.tool_result("c7", "k2", "edit", std::string(800, 'e'));
  b.text_reply("c8", "second done", 3000, 40);
  auto path = b.path();
  // node: findCutPoint(C, 0, 8, 300) -> {firstKeptEntryIndex:5, turnStartIndex:2, isSplitTurn:true}
  auto c = find_cut_point(path, 0, path.size(), 300);
  CHECK(c.first_kept_entry_index == 5);
  CHECK(c.is_split_turn);
  CHECK(c.turn_start_index == 2u);

  compaction_settings s;
  s.keep_recent_tokens = 300;
  auto plan = plan_compaction(path, s);
  REQUIRE(plan);
  // node: {"firstKeptEntryId":"c6","isSplitTurn":true,"tokensBefore":3040,"summarize":["user","assistant"],
  //        "prefix":["user","assistant","toolResult"],"readFiles":["README.md"],"modifiedFiles":[]}
  CHECK(plan->first_kept_entry_id == "c6");
  CHECK(plan->tokens_before == 3040);
  CHECK(roles(plan->messages_to_summarize) == strings{"user", "assistant"});
  CHECK(roles(plan->turn_prefix_messages) == strings{"user", "assistant", "toolResult"});
  CHECK(plan->read_files == strings{"README.md"});  // the edit of src/main.cpp is kept, not summarized
  CHECK(plan->modified_files.empty());

  // node (A, keep 250): {firstKeptEntryIndex:3, turnStartIndex:2, isSplitTurn:true}
  auto a = three_pairs();
  auto ap = a.path();
  auto ac = find_cut_point(ap, 0, ap.size(), 250);
  CHECK(ac.first_kept_entry_index == 3);
  CHECK(ac.turn_start_index == 2u);
}

TEST_CASE("previous compaction: boundary at its firstKeptEntryId, summary and file lists carried over") {
  path_builder b;
  b.user("d1", std::string(40, 'x')).text_reply("d2", std::string(40, 'x'));
  b.user("d3", std::string(40, 'x')).text_reply("d4", std::string(40, 'x'), 900, 10);
  b.entry(make_compaction_entry("d5", b.parent(), b.ts(), "prev summary", "d3", 910,
                                boost::json::object{{"readFiles", boost::json::array{"docs/a.md", "src/x.cpp"}},
                                                    {"modifiedFiles", boost::json::array{"src/y.cpp"}}}));
  b.user("d6", std::string(40, 'x'));
  b.assistant("d7", {tool_call("w1", "write", {{"path", "src/x.cpp"}, {"content", "int main(){}"}})}, 0, 0, "toolUse");
  b.tool_result("d8", "w1", "write", "ok");
  b.text_reply("d9", std::string(40, 'x'), 1500, 20);
  b.user("d10", std::string(400, 'x')).text_reply("d11", std::string(400, 'x'), 2000, 50);
  auto path = b.path();
  // node: findCutPoint(D, 2, 11, 150) -> {firstKeptEntryIndex:9, turnStartIndex:-1, isSplitTurn:false}
  CHECK(find_cut_point(path, 2, path.size(), 150).first_kept_entry_index == 9);

  compaction_settings s;
  s.keep_recent_tokens = 150;
  auto plan = plan_compaction(path, s);
  REQUIRE(plan);
  // node: {"firstKeptEntryId":"d10","isSplitTurn":false,"tokensBefore":2050,"previousSummary":"prev summary",
  //   "summarize":["user","assistant","user","assistant","toolResult","assistant"],"prefix":[],
  //   "readFiles":["docs/a.md"],"modifiedFiles":["src/x.cpp","src/y.cpp"]}
  CHECK(plan->boundary_start == 2);
  CHECK(plan->first_kept_entry_id == "d10");
  CHECK_FALSE(plan->is_split_turn);
  CHECK(plan->tokens_before == 2050);
  CHECK(plan->previous_summary == std::optional<std::string>("prev summary"));
  CHECK(roles(plan->messages_to_summarize) ==
        strings{"user", "assistant", "user", "assistant", "toolResult", "assistant"});
  CHECK(plan->read_files == strings{"docs/a.md"});
  CHECK(plan->modified_files == strings{"src/x.cpp", "src/y.cpp"});
  CHECK(json::to_compact(plan_details_json(*plan)) ==
        R"({"readFiles":["docs/a.md"],"modifiedFiles":["src/x.cpp","src/y.cpp"]})");
}

TEST_CASE("nothing to plan for an empty path or a path ending in a compaction") {
  std::vector<const boost::json::object*> empty;
  CHECK_FALSE(plan_compaction(empty, {}));
  path_builder b;
  b.user("d1", "x").text_reply("d2", "y");
  b.entry(make_compaction_entry("d3", b.parent(), b.ts(), "s", "d1", 10));
  CHECK_FALSE(plan_compaction(b.path(), {}));  // node: prepareCompaction(...) -> undefined
}

TEST_CASE("non-message entries just before the cut move with the kept tail") {
  path_builder b;
  b.user("e1", std::string(400, 'x')).text_reply("e2", std::string(400, 'x'));
  b.entry(make_model_change_entry("e3", b.parent(), b.ts(), "openai", "gpt-5.5"));
  b.entry(make_label_entry("e4", b.parent(), b.ts(), "e1", "start"));
  b.user("e5", std::string(400, 'x')).text_reply("e6", std::string(400, 'x'));
  auto path = b.path();
  // node: findCutPoint(E, 0, 6, 200) -> {firstKeptEntryIndex:2, turnStartIndex:0, isSplitTurn:true}
  // (pi treats the model_change as the cut entry; it is no user message, so it reports a split
  // turn starting at e1 with e1/e2 as the prefix.)
  auto c = find_cut_point(path, 0, path.size(), 200);
  CHECK(c.first_kept_entry_index == 2);
  CHECK(c.turn_start_index == 0u);
  CHECK(c.is_split_turn);
  compaction_settings s;
  s.keep_recent_tokens = 200;
  auto plan = plan_compaction(path, s);
  REQUIRE(plan);
  CHECK(plan->first_kept_entry_id == "e3");  // node: "e3"
  CHECK(plan->messages_to_summarize.empty());
  CHECK(roles(plan->turn_prefix_messages) == strings{"user", "assistant"});

  // A custom_message is pulled back too and, being a turn start itself, gives an empty prefix.
  path_builder g;
  g.user("g1", std::string(400, 'x')).text_reply("g2", std::string(400, 'x'));
  g.entry(make_custom_message_entry("g3", g.parent(), g.ts(), "note", "hint", false));
  g.user("g4", std::string(400, 'x')).text_reply("g5", std::string(400, 'x'));
  auto gp = g.path();
  // node: findCutPoint(G, 0, 5, 200) -> {firstKeptEntryIndex:2, turnStartIndex:2, isSplitTurn:true}
  auto gc = find_cut_point(gp, 0, gp.size(), 200);
  CHECK(gc.first_kept_entry_index == 2);
  CHECK(gc.turn_start_index == 2u);
  auto gplan = plan_compaction(gp, s);
  REQUIRE(gplan);
  // node: {"firstKeptEntryId":"g3","isSplitTurn":true,"summarize":["user","assistant"],"prefix":[]}
  CHECK(gplan->first_kept_entry_id == "g3");
  CHECK(roles(gplan->messages_to_summarize) == strings{"user", "assistant"});
  CHECK(gplan->turn_prefix_messages.empty());
}

TEST_CASE("plan on a transcript written by pi (vector pi_03_compaction)") {
  std::vector<boost::json::object> entries;
  for (const auto& line : testing::split_lines(testing::read_text(testing::vectors_dir() + "/pi_03_compaction.jsonl"))) {
    auto v = json::parse_object(line);
    REQUIRE(v.ok());
    entries.push_back(std::move(v).value());
  }
  std::vector<const boost::json::object*> path;
  for (std::size_t i = 1; i < entries.size(); ++i) path.push_back(&entries[i]);  // skip the header

  compaction_settings s;
  auto plan = plan_compaction(path, s);
  REQUIRE(plan);
  // node: {"firstKeptEntryId":"a750f4a7","isSplitTurn":false,"tokensBefore":1290,"previousSummary":"## Goal\n...",
  //        "summarize":[],"prefix":[],"readFiles":["docs/design.md"],"modifiedFiles":[]}
  CHECK(plan->first_kept_entry_id == "a750f4a7");
  CHECK(plan->tokens_before == 1290);
  CHECK(plan->messages_to_summarize.empty());
  CHECK(plan->read_files == strings{"docs/design.md"});
  REQUIRE(plan->previous_summary);
  CHECK(plan->previous_summary->rfind("## Goal\nPort session persistence to C++.", 0) == 0);

  s.keep_recent_tokens = 10;
  auto tight = plan_compaction(path, s);
  REQUIRE(tight);
  // node: {"firstKeptEntryId":"8a7da4b5","isSplitTurn":true,"summarize":["user","assistant"],"prefix":["user"]}
  CHECK(tight->first_kept_entry_id == "8a7da4b5");
  CHECK(tight->is_split_turn);
  CHECK(roles(tight->messages_to_summarize) == strings{"user", "assistant"});
  CHECK(roles(tight->turn_prefix_messages) == strings{"user"});
}
