// Summarizer requests [R§6.4]. Every kJs* literal below was produced with node 20 from the
// installed pi-coding-agent 0.73.1: `serializeConversation(convertToLlm(msgs))`, and the
// requests `generateSummary` / `compact` sent to a registered pi-ai faux provider (which
// recorded systemPrompt, the user text and maxTokens), for the same messages as built here.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "actors/session/summary_prompt.hpp"
#include "messages/transcript_entry.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
constexpr std::int64_t kT0 = 1767225600000;

const std::string kJsSerialized = R"JS([User]: List files in /tmp — ünïcode ✓

[Assistant thinking]: Use ls.

[Assistant]: Listing ✓

[Assistant tool calls]: exec(1="a", 2="b", command="ls /tmp", nested={"k":[1,2.5,"é"]})

[Tool result]: a.txt
b.txt

[User]: Ran `git status`
(no output)

Command exited with code 1

[User]: hidden note

[User]: The following is a summary of a branch that this conversation came back from:

<summary>
Tried X</summary>

[User]: The conversation history before this point was compacted into the following summary:

<summary>
Old
</summary>

[Assistant]: Done.
Second line)JS";

const std::string kJsPlainRequest = R"JS(<conversation>
[User]: List files in /tmp — ünïcode ✓

[Assistant thinking]: Use ls.

[Assistant]: Listing ✓

[Assistant tool calls]: exec(1="a", 2="b", command="ls /tmp", nested={"k":[1,2.5,"é"]})

[Tool result]: a.txt
b.txt
</conversation>

The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages.)JS";

const std::string kJsUpdateRequest = R"JS(<conversation>
[User]: List files in /tmp — ünïcode ✓
</conversation>

<previous-summary>
## Goal
Old goal
</previous-summary>

The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages.

Additional focus: Focus on files)JS";

const std::string kJsSplitHistoryRequest = R"JS(<conversation>
[User]: first task

[Assistant]: done first
</conversation>

The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages.)JS";

// The 800-char tool result is written as @@R800@@ here and expanded below.
const std::string kJsSplitPrefixRequestTemplate = R"JS(<conversation>
[User]: second task

[Assistant tool calls]: read(path="README.md")

[Tool result]: @@R800@@
</conversation>

This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix.)JS";

const std::string kJsSplitSummary = R"JS(HISTORY SUMMARY

---

**Turn Context (split turn):**

PREFIX SUMMARY

<read-files>
README.md
</read-files>)JS";

const std::string kJsNoHistorySplitSummary = R"JS(No prior history.

---

**Turn Context (split turn):**

PREFIX SUMMARY

<read-files>
src/a.cpp
</read-files>)JS";

const std::string kJsSystemPrompt =
    "You are a context summarization assistant. Your task is to read a conversation between a user and an AI "
    "coding assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue "
    "the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

boost::json::object tool_call(std::string_view id, std::string_view name, boost::json::object args) {
  return {{"type", "toolCall"}, {"id", id}, {"name", name}, {"arguments", std::move(args)}};
}

boost::json::object assistant(boost::json::array content, std::string stop = "stop") {
  assistant_fields a;
  a.content = std::move(content);
  a.model = "m";
  a.stop_reason = std::move(stop);
  a.timestamp_ms = kT0;
  return assistant_message(a);
}

std::vector<boost::json::object> conversation() {
  return {
      user_message("List files in /tmp — ünïcode ✓", kT0),
      assistant({boost::json::object{{"type", "thinking"}, {"thinking", "Use ls."}}, text_block("Listing ✓"),
                 tool_call("t1", "exec",
                           {{"command", "ls /tmp"},
                            {"2", "b"},
                            {"1", "a"},
                            {"nested", boost::json::object{{"k", boost::json::array{1, 2.5, "é"}}}}})}),
      tool_result_message("t1", "exec", {text_block("a.txt\nb.txt")}, false, kT0),
      boost::json::object{{"role", "bashExecution"}, {"command", "git status"}, {"output", ""}, {"exitCode", 1},
                          {"cancelled", false},      {"truncated", false},      {"timestamp", kT0}},
      boost::json::object{
          {"role", "custom"}, {"customType", "note"}, {"content", "hidden note"}, {"display", false}, {"timestamp", kT0}},
      boost::json::object{{"role", "branchSummary"}, {"summary", "Tried X"}, {"fromId", "abc"}, {"timestamp", kT0}},
      boost::json::object{{"role", "compactionSummary"}, {"summary", "Old"}, {"tokensBefore", 1}, {"timestamp", kT0}},
      assistant({text_block("Done."), text_block("Second line")}),
  };
}

// The plan pi's prepareCompaction makes for the split-turn path of compaction_planner_test
// (keepRecentTokens 300): history c1..c2, prefix c3..c5, first kept c6.
compaction_plan split_turn_plan() {
  compaction_plan plan;
  plan.first_kept_entry_id = "c6";
  plan.is_split_turn = true;
  plan.turn_start_index = 2;
  plan.messages_to_summarize = {user_message("first task", kT0), assistant({text_block("done first")})};
  plan.turn_prefix_messages = {
      user_message("second task", kT0), assistant({tool_call("k1", "read", {{"path", "README.md"}})}, "toolUse"),
      tool_result_message("k1", "read", {text_block(std::string(800, 'r'))}, false, kT0)};
  plan.read_files = {"README.md"};
  return plan;
}

std::string replace_marker(std::string text, std::string_view marker, const std::string& with) {
  text.replace(text.find(marker), marker.size(), with);
  return text;
}
}  // namespace

TEST_CASE("serialize_conversation: the exact text pi sends for a small conversation") {
  auto messages = conversation();
  CHECK(serialize_conversation(convert_to_llm(messages)) == kJsSerialized);
}

TEST_CASE("tool results are cut at 2000 chars with the truncation marker") {
  auto result = tool_result_message("t", "x", {text_block(std::string(1500, 'a')), text_block(std::string(1000, 'b'))},
                                    false, kT0);
  std::vector<boost::json::object> llm{result};
  // node: "[Tool result]: " + "a"*1500 + "b"*500 + "\n\n[... 500 more characters truncated]"
  CHECK(serialize_conversation(llm) == "[Tool result]: " + std::string(1500, 'a') + std::string(500, 'b') +
                                           "\n\n[... 500 more characters truncated]");
  CHECK(truncate_for_summary(std::string(2000, 'a')) == std::string(2000, 'a'));
  // Lengths are UTF-16 units: 1999 'a' + an emoji (2 units) + 'b' is 2002 long; the emoji
  // straddles the cut and is dropped whole (JS would keep its high surrogate).
  CHECK(truncate_for_summary(std::string(1999, 'a') + "😀b") ==
        std::string(1999, 'a') + "\n\n[... 2 more characters truncated]");
}

TEST_CASE("history request: system prompt, conversation, SUMMARIZATION_PROMPT, 0.8 * reserve") {
  auto messages = conversation();
  summary_options options;
  options.reserve_tokens = 20000;
  auto request = history_summary_request(std::span(messages).first(3), std::nullopt, options);
  CHECK(request.system_prompt == kJsSystemPrompt);
  CHECK(request.user_text == kJsPlainRequest);
  CHECK(request.max_tokens == 16000);  // node: 16000

  options.model_max_tokens = 3000;  // [R§6.4]: capped at the model's maxTokens (pi 0.73.1 does not cap)
  CHECK(history_summary_request(std::span(messages).first(3), std::nullopt, options).max_tokens == 3000);
}

TEST_CASE("update request: previous-summary block, UPDATE prompt and the custom focus") {
  auto messages = conversation();
  summary_options options;
  options.reserve_tokens = 2000;
  options.custom_instructions = "Focus on files";
  auto request = history_summary_request(std::span(messages).first(1), std::string("## Goal\nOld goal"), options);
  CHECK(request.user_text == kJsUpdateRequest);
  CHECK(request.max_tokens == 1600);  // node: 1600
  // An empty previous summary is no previous summary (JS falsy).
  options.custom_instructions.reset();
  auto fresh = history_summary_request(std::span(messages).first(1), std::string(), options);
  CHECK(fresh.user_text.find("<previous-summary>") == std::string::npos);
  CHECK(fresh.user_text.ends_with(kSummarizationPrompt));
}

TEST_CASE("split turn: two requests, and the answers joined with the split-turn marker and file tags") {
  auto plan = split_turn_plan();
  summary_options options;
  options.reserve_tokens = 20000;
  auto requests = summary_requests_for(plan, options);
  REQUIRE(requests.history);
  REQUIRE(requests.turn_prefix);
  CHECK(requests.history->user_text == kJsSplitHistoryRequest);
  CHECK(requests.history->max_tokens == 16000);  // node: 16000
  CHECK(requests.turn_prefix->user_text ==
        replace_marker(kJsSplitPrefixRequestTemplate, "@@R800@@", std::string(800, 'r')));
  CHECK(requests.turn_prefix->max_tokens == 10000);  // node: 10000
  CHECK(requests.turn_prefix->system_prompt == kJsSystemPrompt);
  // node: compact() with the faux model answering "HISTORY SUMMARY" / "PREFIX SUMMARY"
  CHECK(assemble_summary(plan, "HISTORY SUMMARY", "PREFIX SUMMARY") == kJsSplitSummary);
  CHECK(join_split_turn_summary("H", "P") == "H\n\n---\n\n**Turn Context (split turn):**\n\nP");

  // A split turn with nothing before it asks only for the prefix; history is "No prior history."
  plan.messages_to_summarize.clear();
  plan.read_files = {"src/a.cpp"};
  auto prefix_only = summary_requests_for(plan, options);
  CHECK_FALSE(prefix_only.history);
  CHECK(prefix_only.turn_prefix);
  CHECK(assemble_summary(plan, std::nullopt, "PREFIX SUMMARY") == kJsNoHistorySplitSummary);  // node: compact(B)
}

TEST_CASE("file operation tags follow the summary") {
  std::vector<std::string> read{"a.md", "b.md"}, modified{"src/x.cpp"};
  CHECK(format_file_operations(read, modified) ==
        "\n\n<read-files>\na.md\nb.md\n</read-files>\n\n<modified-files>\nsrc/x.cpp\n</modified-files>");
  CHECK(format_file_operations({}, modified) == "\n\n<modified-files>\nsrc/x.cpp\n</modified-files>");
  CHECK(format_file_operations({}, {}).empty());
  compaction_plan plan;
  plan.modified_files = modified;
  CHECK(assemble_summary(plan, "S", std::nullopt) == "S\n\n<modified-files>\nsrc/x.cpp\n</modified-files>");
}

TEST_CASE("OpenClaw identifier policy folds into the custom instructions") {
  summary_options options;
  CHECK_FALSE(effective_custom_instructions(options));  // plain pi, nothing to add
  options.custom_instructions = "Keep the API names";
  CHECK(effective_custom_instructions(options) == std::optional<std::string>("Keep the API names"));

  options.identifiers = identifier_policy::strict;
  CHECK(effective_custom_instructions(options) ==
        std::string(kIdentifierPreservationInstructions) + "\n\nAdditional focus:\nKeep the API names");
  options.custom_instructions = "  ";
  CHECK(effective_custom_instructions(options) == std::optional<std::string>(kIdentifierPreservationInstructions));
  options.identifiers = identifier_policy::off;
  CHECK_FALSE(effective_custom_instructions(options));
  options.custom_instructions = "Keep the API names";
  CHECK(effective_custom_instructions(options) == std::optional<std::string>("Additional focus:\nKeep the API names"));
  options.identifiers = identifier_policy::custom;
  options.identifier_instructions = "Keep ticket ids.";
  CHECK(effective_custom_instructions(options) ==
        std::optional<std::string>("Keep ticket ids.\n\nAdditional focus:\nKeep the API names"));

  auto messages = conversation();
  options.identifiers = identifier_policy::strict;
  options.custom_instructions.reset();
  auto request = history_summary_request(std::span(messages).first(1), std::nullopt, options);
  CHECK(request.user_text.ends_with(std::string(kSummarizationPrompt) + "\n\nAdditional focus: " +
                                    std::string(kIdentifierPreservationInstructions)));
}
