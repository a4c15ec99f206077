#include "actors/session/summary_prompt.hpp"

#include <algorithm>
#include <cmath>

#include "actors/session/token_estimate.hpp"
#include "messages/ascii_text.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::actors {

// Texts copied verbatim (by script) from pi-coding-agent 0.73.1 dist/core/compaction/.
const std::string_view kSummarizationSystemPrompt =
    R"PROMPT(You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.)PROMPT";

const std::string_view kSummarizationPrompt =
    R"PROMPT(The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

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

Keep each section concise. Preserve exact file paths, function names, and error messages.)PROMPT";

const std::string_view kUpdateSummarizationPrompt =
    R"PROMPT(The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

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

Keep each section concise. Preserve exact file paths, function names, and error messages.)PROMPT";

const std::string_view kTurnPrefixSummarizationPrompt =
    R"PROMPT(This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix.)PROMPT";

// OpenClaw src/agents/compaction.ts (identifierPolicy "strict").
const std::string_view kIdentifierPreservationInstructions =
    "Preserve all opaque identifiers exactly as written (no shortening or reconstruction), including UUIDs, "
    "hashes, IDs, hostnames, IPs, ports, URLs, and file names.";

const std::string_view kSplitTurnSeparator = "\n\n---\n\n**Turn Context (split turn):**\n\n";
const std::string_view kNoPriorHistory = "No prior history.";

namespace {

constexpr std::string_view kCompactionSummaryPrefix =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
constexpr std::string_view kCompactionSummarySuffix = "\n</summary>";
constexpr std::string_view kBranchSummaryPrefix =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
constexpr std::string_view kBranchSummarySuffix = "</summary>";

// JavaScript truthiness of an optional JSON member.
bool truthy(const boost::json::value* v) {
  if (v == nullptr || v->is_null()) return false;
  if (const auto* b = v->if_bool()) return *b;
  if (v->is_number()) {
    double d = v->to_number<double>();
    return d != 0 && !std::isnan(d);
  }
  if (const auto* s = v->if_string()) return !s->empty();
  return true;
}

std::string string_member(const boost::json::object& o, std::string_view key) {
  return std::string(json::get_string(o, key).value_or(""));
}

// `${value}` for the scalar kinds an exit code can hold.
std::string template_text(const boost::json::value& v) {
  std::string out;
  if (const auto* s = v.if_string()) out.assign(s->begin(), s->end());
  else if (v.is_number()) json::append_number(out, v.to_number<double>());
  else if (const auto* b = v.if_bool()) out = *b ? "true" : "false";
  return out;
}

// pi bashExecutionToText.
std::string bash_execution_text(const boost::json::object& m) {
  std::string text = "Ran `" + string_member(m, "command") + "`\n";
  if (truthy(json::find(m, "output")))
    text += "```\n" + string_member(m, "output") + "\n```";
  else
    text += "(no output)";
  const auto* exit_code = json::find(m, "exitCode");
  bool failed = exit_code != nullptr && !exit_code->is_null() && !(exit_code->is_number() && exit_code->to_number<double>() == 0);
  if (truthy(json::find(m, "cancelled")))
    text += "\n\n(command cancelled)";
  else if (failed)
    text += "\n\nCommand exited with code " + template_text(*exit_code);
  if (truthy(json::find(m, "truncated")) && truthy(json::find(m, "fullOutputPath")))
    text += "\n\n[Output truncated. Full output: " + string_member(m, "fullOutputPath") + "]";
  return text;
}

boost::json::object user_text_message(std::string text, const boost::json::object& from) {
  boost::json::object b;
  b["type"] = "text";
  b["text"] = std::move(text);
  boost::json::object m;
  m["role"] = "user";
  m["content"] = boost::json::array{std::move(b)};
  if (const auto* ts = json::find(from, "timestamp")) m["timestamp"] = *ts;
  return m;
}

std::optional<boost::json::object> llm_message_of(const boost::json::object& m) {
  auto role = json::get_string(m, "role").value_or("");
  if (role == "user" || role == "assistant" || role == "toolResult") return m;
  if (role == "bashExecution") {
    if (truthy(json::find(m, "excludeFromContext"))) return std::nullopt;
    return user_text_message(bash_execution_text(m), m);
  }
  if (role == "custom") {
    boost::json::object out;
    out["role"] = "user";
    const auto* content = json::find(m, "content");
    if (content && content->is_string())
      out["content"] = boost::json::array{boost::json::object{{"type", "text"}, {"text", *content}}};
    else
      out["content"] = content ? *content : boost::json::value(nullptr);
    if (const auto* ts = json::find(m, "timestamp")) out["timestamp"] = *ts;
    return out;
  }
  if (role == "branchSummary") {
    std::string text = std::string(kBranchSummaryPrefix) + string_member(m, "summary") + std::string(kBranchSummarySuffix);
    return user_text_message(std::move(text), m);
  }
  if (role == "compactionSummary") {
    std::string text =
        std::string(kCompactionSummaryPrefix) + string_member(m, "summary") + std::string(kCompactionSummarySuffix);
    return user_text_message(std::move(text), m);
  }
  return std::nullopt;
}


// A canonical array index ("0", "17", not "01"), which JavaScript enumerates first.
std::optional<std::uint32_t> array_index_key(std::string_view key) {
  if (key.empty() || key.size() > 10 || (key.size() > 1 && key[0] == '0')) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (n >= 0xFFFFFFFFULL) return std::nullopt;
  return static_cast<std::uint32_t>(n);
}

// Object.entries order: integer keys ascending, then the other keys in insertion order.
std::vector<const boost::json::key_value_pair*> js_entries(const boost::json::object& o) {
  std::vector<const boost::json::key_value_pair*> out;
  for (const auto& kv : o) out.push_back(&kv);
  std::stable_sort(out.begin(), out.end(), [](const auto* a, const auto* b) {
    auto ia = array_index_key(a->key());
    auto ib = array_index_key(b->key());
    if (ia && ib) return *ia < *ib;
    return ia.has_value() && !ib.has_value();
  });
  return out;
}

// name(k=<JSON.stringify(v)>, ...)
std::string tool_call_text(const boost::json::object& block) {
  std::string out = string_member(block, "name") + "(";
  std::string args;
  if (const auto* o = json::get_object(block, "arguments")) {
    for (const auto* kv : js_entries(*o)) {
      if (!args.empty()) args += ", ";
      args.append(kv->key().data(), kv->key().size());
      args += "=";
      json::append_compact(args, kv->value());
    }
  }
  return out + args + ")";
}

std::string joined(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

void serialize_assistant(const boost::json::object& m, std::vector<std::string>& parts) {
  std::vector<std::string> text, thinking, calls;
  if (const auto* blocks = json::get_array(m, "content")) {
    for (const auto& v : *blocks) {
      const auto* b = v.if_object();
      if (b == nullptr) continue;
      auto type = json::get_string(*b, "type").value_or("");
      if (type == "text") text.push_back(string_member(*b, "text"));
      else if (type == "thinking") thinking.push_back(string_member(*b, "thinking"));
      else if (type == "toolCall") calls.push_back(tool_call_text(*b));
    }
  }
  if (!thinking.empty()) parts.push_back("[Assistant thinking]: " + joined(thinking, "\n"));
  if (!text.empty()) parts.push_back("[Assistant]: " + joined(text, "\n"));
  if (!calls.empty()) parts.push_back("[Assistant tool calls]: " + joined(calls, "; "));
}

std::int64_t capped_max_tokens(double fraction, const summary_options& options) {
  auto budget = static_cast<std::int64_t>(std::floor(fraction * static_cast<double>(options.reserve_tokens)));
  if (options.model_max_tokens && *options.model_max_tokens > 0) budget = std::min(budget, *options.model_max_tokens);
  return budget;
}

std::string conversation_block(std::span<const boost::json::object> messages) {
  auto llm = convert_to_llm(messages);
  return "<conversation>\n" + serialize_conversation(llm) + "\n</conversation>\n\n";
}

std::optional<std::string> identifier_preservation(const summary_options& options) {
  switch (options.identifiers.value_or(identifier_policy::strict)) {
    case identifier_policy::off: return std::nullopt;
    case identifier_policy::custom: {
      if (!options.identifier_instructions) break;
      auto custom = ascii_trim(*options.identifier_instructions);
      if (!custom.empty()) return std::string(custom);
      break;
    }
    case identifier_policy::strict: break;
  }
  return std::string(kIdentifierPreservationInstructions);
}

bool has_turn_prefix(const compaction_plan& plan) { return plan.is_split_turn && !plan.turn_prefix_messages.empty(); }

}  // namespace

std::vector<boost::json::object> convert_to_llm(std::span<const boost::json::object> messages) {
  std::vector<boost::json::object> out;
  for (const auto& m : messages)
    if (auto llm = llm_message_of(m)) out.push_back(std::move(*llm));
  return out;
}

std::string serialize_conversation(std::span<const boost::json::object> llm_messages) {
  std::vector<std::string> parts;
  for (const auto& m : llm_messages) {
    auto role = json::get_string(m, "role").value_or("");
    if (role == "user") {
      // content.filter(c => c.type === "text").map(c => c.text).join("")
      auto content = message_text(json::find(m, "content"));
      if (!content.empty()) parts.push_back("[User]: " + content);
    } else if (role == "assistant") {
      serialize_assistant(m, parts);
    } else if (role == "toolResult") {
      auto content = message_text(json::find(m, "content"));
      if (!content.empty()) parts.push_back("[Tool result]: " + truncate_for_summary(content));
    }
  }
  return joined(parts, "\n\n");
}

std::string truncate_for_summary(std::string_view text, std::size_t max_chars) {
  std::size_t length = utf16_length(text);
  if (length <= max_chars) return std::string(text);
  std::size_t units = 0, bytes = 0;
  while (bytes < text.size()) {
    auto c = static_cast<unsigned char>(text[bytes]);
    std::size_t width = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    std::size_t cp_units = width == 4 ? 2 : 1;
    if (units + cp_units > max_chars) break;
    units += cp_units;
    bytes += width;
  }
  bytes = std::min(bytes, text.size());
  return std::string(text.substr(0, bytes)) + "\n\n[... " + std::to_string(length - max_chars) +
         " more characters truncated]";
}

std::optional<std::string> effective_custom_instructions(const summary_options& options) {
  if (!options.identifiers) {
    if (options.custom_instructions && !options.custom_instructions->empty()) return options.custom_instructions;
    return std::nullopt;
  }
  auto custom = options.custom_instructions ? ascii_trim(*options.custom_instructions) : std::string_view();
  auto preservation = identifier_preservation(options);
  if (custom.empty()) return preservation;
  std::string focus = "Additional focus:\n" + std::string(custom);
  return preservation ? *preservation + "\n\n" + focus : focus;
}

summary_request history_summary_request(std::span<const boost::json::object> messages,
                                        const std::optional<std::string>& previous_summary,
                                        const summary_options& options) {
  bool has_previous = previous_summary && !previous_summary->empty();
  std::string prompt(has_previous ? kUpdateSummarizationPrompt : kSummarizationPrompt);
  if (auto custom = effective_custom_instructions(options)) prompt += "\n\nAdditional focus: " + *custom;

  summary_request request;
  request.system_prompt = std::string(kSummarizationSystemPrompt);
  request.max_tokens = capped_max_tokens(0.8, options);
  request.user_text = conversation_block(messages);
  if (has_previous) request.user_text += "<previous-summary>\n" + *previous_summary + "\n</previous-summary>\n\n";
  request.user_text += prompt;
  return request;
}

summary_request turn_prefix_summary_request(std::span<const boost::json::object> messages,
                                            const summary_options& options) {
  summary_request request;
  request.system_prompt = std::string(kSummarizationSystemPrompt);
  request.max_tokens = capped_max_tokens(0.5, options);
  request.user_text = conversation_block(messages) + std::string(kTurnPrefixSummarizationPrompt);
  return request;
}

summary_requests summary_requests_for(const compaction_plan& plan, const summary_options& options) {
  summary_requests out;
  if (!has_turn_prefix(plan) || !plan.messages_to_summarize.empty())
    out.history = history_summary_request(plan.messages_to_summarize, plan.previous_summary, options);
  if (has_turn_prefix(plan)) out.turn_prefix = turn_prefix_summary_request(plan.turn_prefix_messages, options);
  return out;
}

std::string format_file_operations(std::span<const std::string> read_files,
                                   std::span<const std::string> modified_files) {
  auto section = [](std::string_view tag, std::span<const std::string> files) {
    std::string s = "<" + std::string(tag) + ">\n";
    for (std::size_t i = 0; i < files.size(); ++i) s += (i > 0 ? "\n" : "") + files[i];
    return s + "\n</" + std::string(tag) + ">";
  };
  std::vector<std::string> sections;
  if (!read_files.empty()) sections.push_back(section("read-files", read_files));
  if (!modified_files.empty()) sections.push_back(section("modified-files", modified_files));
  return sections.empty() ? std::string() : "\n\n" + joined(sections, "\n\n");
}

std::string join_split_turn_summary(std::string_view history_summary, std::string_view turn_prefix_summary) {
  return std::string(history_summary) + std::string(kSplitTurnSeparator) + std::string(turn_prefix_summary);
}

std::string assemble_summary(const compaction_plan& plan, std::optional<std::string_view> history_answer,
                             std::optional<std::string_view> turn_prefix_answer) {
  std::string summary = has_turn_prefix(plan)
                            ? join_split_turn_summary(history_answer.value_or(kNoPriorHistory),
                                                      turn_prefix_answer.value_or(""))
                            : std::string(history_answer.value_or(""));
  return summary + format_file_operations(plan.read_files, plan.modified_files);
}

}  // namespace sessionrt::actors
