#include "storage/transcript_repair.hpp"

#include "messages/base64_rule.hpp"

#include <algorithm>
#include <cctype>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <unordered_set>
#include <utility>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/js_text.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::storage {
namespace {

// Texts OpenClaw writes, byte for byte (a repaired entry must read like a live one).
constexpr std::string_view kFailedAssistantText = "[assistant turn failed before producing content]";
constexpr std::string_view kCorruptedImageText = "[image omitted: corrupted base64 payload]";
constexpr std::string_view kBlankUserText = "(continue)";
constexpr std::string_view kMissingToolResultText = "aborted";

boost::json::array single_text_block(std::string_view text) {
  boost::json::array a;
  a.push_back(text_block(text));
  return a;
}

bool is_field(const boost::json::object& o, std::string_view key, std::string_view want) {
  auto v = json::get_string(o, key);
  return v && *v == want;
}

// --- images ---

// `^image\/` case-insensitively after trim(): the mime test of [R§8.1].
bool is_image_mime(const boost::json::value* v) {
  if (!v || !v->is_string()) return false;
  std::string_view s = js_trim(v->get_string());
  constexpr std::string_view prefix = "image/";
  if (s.size() < prefix.size()) return false;
  for (std::size_t k = 0; k < prefix.size(); ++k)
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(s[k]))) != prefix[k]) return false;
  return true;
}

bool is_corrupted_image_block(const boost::json::value& block) {
  if (!block.is_object()) return false;
  const auto& b = block.get_object();
  if (!is_field(b, "type", "image")) return false;
  const auto* data = b.if_contains("data");
  if (!data || !data->is_string()) return false;
  if (!is_image_mime(b.if_contains("mimeType")) && !is_image_mime(b.if_contains("mediaType")) &&
      !is_image_mime(b.if_contains("media_type")))
    return false;
  return !is_valid_base64(data->get_string());
}

// --- one kept line and the facts the tool-result passes need ---

struct tool_call {
  std::string id;
  std::optional<std::string> name;
};

struct kept_entry {
  std::size_t line_no = 0;     // 0 for an inserted entry
  std::string_view raw;        // the line as it was (no line ending)
  std::string rewritten;       // the new line when `changed`
  bool changed = false;
  bool is_header = false;      // {type:"session", id:<non-empty string>}
  bool is_message = false;     // type "message" with an object `message`
  std::optional<std::string> id;
  std::optional<std::string> role, api, provider, model, stop_reason;
  std::optional<std::string> tool_result_id;  // toolResult: toolCallId | toolUseId
  std::vector<tool_call> tool_calls;          // assistant: toolCall | toolUse | functionCall blocks
};

std::optional<std::string> opt_string(const boost::json::object& o, std::string_view key) {
  auto v = json::get_string(o, key);
  return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

std::optional<std::string> non_empty_string(const boost::json::object& o, std::string_view key) {
  auto v = json::get_string(o, key);
  return v && !v->empty() ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

void collect_facts(const boost::json::value& v, kept_entry& e) {
  if (!v.is_object()) return;
  const auto& o = v.get_object();
  e.id = opt_string(o, "id");
  e.is_header = is_field(o, "type", "session") && e.id && !e.id->empty();
  if (!is_field(o, "type", "message")) return;
  const auto* m = json::get_object(o, "message");
  if (!m) return;
  e.is_message = true;
  e.role = opt_string(*m, "role");
  if (e.role == "toolResult") {
    e.tool_result_id = non_empty_string(*m, "toolCallId");
    if (!e.tool_result_id) e.tool_result_id = non_empty_string(*m, "toolUseId");
    return;
  }
  if (e.role != "assistant") return;
  e.api = opt_string(*m, "api");
  e.provider = opt_string(*m, "provider");
  e.model = opt_string(*m, "model");
  e.stop_reason = opt_string(*m, "stopReason");
  if (const auto* content = json::get_array(*m, "content")) {
    for (const auto& block : *content) {
      if (!block.is_object()) continue;
      const auto& b = block.get_object();
      auto id = non_empty_string(b, "id");
      auto type = json::get_string(b, "type");
      if (!id || !type || (*type != "toolCall" && *type != "toolUse" && *type != "functionCall")) continue;
      e.tool_calls.push_back({std::move(*id), opt_string(b, "name")});
    }
  }
}

// The per-line rules of [R§8.1] on a parsed line. Returns a drop reason, or nothing to keep
// the (possibly rewritten) value; `changed` says whether it was rewritten.
std::optional<std::string> apply_line_rules(boost::json::value& v, repair_report& rep, bool& changed) {
  if (!v.is_object()) return std::nullopt;  // opaque records are kept verbatim [R§3.3]
  auto& o = v.get_object();
  if (!is_field(o, "type", "message")) return std::nullopt;
  auto* mv = o.if_contains("message");
  boost::json::object* m = mv && mv->is_object() ? &mv->get_object() : nullptr;
  auto role = m ? json::get_string(*m, "role") : std::nullopt;
  if (!m) return std::string("message entry without a message object");
  if (!role || js_trim(*role).empty()) return std::string("message entry without a role (missing or blank)");
  const std::string role_s(*role);

  if (role_s == "assistant") {
    const auto* content = json::get_array(*m, "content");
    if (content && content->empty() && is_field(*m, "stopReason", "error")) {
      json::set(*m, "content", single_text_block(kFailedAssistantText));
      ++rep.rewrote_assistant_messages;
      changed = true;
      return std::nullopt;
    }
  }

  if (auto* content = m->if_contains("content"); content && content->is_array()) {
    for (auto& block : content->get_array()) {
      if (!is_corrupted_image_block(block)) continue;
      block = text_block(kCorruptedImageText);
      ++rep.removed_corrupted_image_blocks;
      changed = true;
    }
  }

  if (role_s == "user") {
    auto* content = m->if_contains("content");
    if (content && content->is_string()) {
      if (is_js_blank(content->get_string())) {
        json::set(*m, "content", boost::json::string(kBlankUserText));
        ++rep.rewrote_user_messages;
        changed = true;
      }
    } else if (content && content->is_array()) {
      boost::json::array kept_blocks;
      bool touched = false;
      for (const auto& block : content->get_array()) {
        if (block.is_object()) {
          const auto& b = block.get_object();
          auto text = json::get_string(b, "text");
          if (is_field(b, "type", "text") && text && is_js_blank(*text)) {
            touched = true;
            continue;
          }
        }
        kept_blocks.push_back(block);
      }
      if (kept_blocks.empty()) {
        json::set(*m, "content", single_text_block(kBlankUserText));
        ++rep.rewrote_user_messages;
        changed = true;
      } else if (touched) {
        json::set(*m, "content", std::move(kept_blocks));
        ++rep.rewrote_user_messages;
        changed = true;
      }
    }
  }
  return std::nullopt;
}

// --- synthetic tool results ---

bool is_error_or_aborted(const kept_entry& e) { return e.stop_reason == "error" || e.stop_reason == "aborted"; }

std::string_view trimmed(const std::optional<std::string>& s) { return s ? js_trim(*s) : std::string_view(); }

// Assistant turns of the ChatGPT (Codex-mode) Responses API whose calls never got a result.
bool is_code_mode_candidate(const kept_entry& e) {
  return e.is_message && e.role == "assistant" && e.api == "openai-chatgpt-responses" && e.provider == "openai" &&
         !is_error_or_aborted(e);
}

bool is_responses_candidate(const kept_entry& e) {
  if (!e.is_message || e.role != "assistant" || is_error_or_aborted(e)) return false;
  const auto api = trimmed(e.api);
  return api == "openai-responses" || api == "azure-openai-responses" || api == "openai-codex-responses";
}

bool is_delivery_mirror(const kept_entry& e) {
  if (!e.is_message || e.role != "assistant" || trimmed(e.provider) != "openclaw") return false;
  const auto model = trimmed(e.model);
  return model == "delivery-mirror" || model == "gateway-injected";
}

bool is_message_tool(const std::optional<std::string>& name) {
  const auto n = trimmed(name);
  constexpr std::string_view want = "message";
  if (n.size() != want.size()) return false;
  for (std::size_t k = 0; k < n.size(); ++k)
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(n[k]))) != want[k]) return false;
  return true;
}

kept_entry make_synthetic_result(const kept_entry& parent, const tool_call& call, std::int64_t now_ms,
                                 const repair_options& options) {
  boost::json::object message;
  message["role"] = "toolResult";
  message["toolCallId"] = call.id;
  message["toolName"] = call.name ? *call.name : std::string("unknown");
  message["content"] = single_text_block(kMissingToolResultText);
  boost::json::object details;
  details["openclawSyntheticMissingToolResult"] = true;
  message["details"] = std::move(details);
  message["isError"] = true;
  message["timestamp"] = now_ms;

  boost::json::object entry;
  entry["type"] = "message";
  entry["id"] = "repair-" + (options.new_uuid ? options.new_uuid() : new_uuid_v4());
  if (parent.id) entry["parentId"] = *parent.id;  // JSON.stringify omits an undefined parentId
  entry["timestamp"] = format_iso_ms(now_ms);
  entry["message"] = std::move(message);

  kept_entry e;
  e.rewritten = json::to_compact(entry);
  e.changed = true;
  e.is_message = true;
  e.id = std::string(entry["id"].get_string());
  e.role = "toolResult";
  e.tool_result_id = call.id;
  return e;
}

// Pass 1 of [R§8.1]: every code-mode call without a persisted result gets one.
std::vector<kept_entry> insert_code_mode_results(std::vector<kept_entry> in, std::unordered_set<std::string>& ids,
                                                 std::int64_t now_ms, const repair_options& options,
                                                 repair_report& rep) {
  std::vector<kept_entry> out;
  out.reserve(in.size());
  for (auto& e : in) {
    std::vector<kept_entry> added;
    if (is_code_mode_candidate(e)) {
      for (const auto& call : e.tool_calls) {
        if (!ids.insert(call.id).second) continue;
        added.push_back(make_synthetic_result(e, call, now_ms, options));
      }
    }
    out.push_back(std::move(e));
    for (auto& a : added) out.push_back(std::move(a));
    rep.inserted_tool_results += added.size();
  }
  return out;
}

// Pass 2: Responses-family `message` tool calls directly followed (as the next message entry)
// by an OpenClaw delivery mirror: the mirror stands in for the result that was never written.
std::vector<kept_entry> insert_delivery_mirror_results(std::vector<kept_entry> in,
                                                       std::unordered_set<std::string>& ids, std::int64_t now_ms,
                                                       const repair_options& options, repair_report& rep) {
  // next_message[i]: index of the first message entry after i (in.size() if none).
  std::vector<std::size_t> next_message(in.size(), in.size());
  for (std::size_t i = in.size(); i-- > 1;)
    next_message[i - 1] = in[i].is_message ? i : next_message[i];
  std::vector<kept_entry> out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::vector<kept_entry> added;
    auto& e = in[i];
    if (is_responses_candidate(e) && next_message[i] < in.size() && is_delivery_mirror(in[next_message[i]])) {
      for (const auto& call : e.tool_calls) {
        if (!is_message_tool(call.name) || ids.count(call.id)) continue;
        ids.insert(call.id);
        added.push_back(make_synthetic_result(e, call, now_ms, options));
      }
    }
    out.push_back(std::move(e));
    for (auto& a : added) out.push_back(std::move(a));
    rep.inserted_tool_results += added.size();
  }
  return out;
}

}  // namespace

bool repair_report::changed() const {
  if (abandoned()) return false;
  return dropped_malformed_lines > 0 || torn_tail_lines > 0 || rewrote_assistant_messages > 0 ||
         dropped_blank_user_messages > 0 || rewrote_user_messages > 0 || removed_corrupted_image_blocks > 0 ||
         inserted_tool_results > 0 || added_final_newline || corrupt_backup_path.has_value();
}

std::string repair_report::summary() const {
  return fmt::format(
      "session file repaired: dropped {} malformed line(s), rewrote {} assistant message(s), dropped {} blank user "
      "message(s), rewrote {} user message(s), removed {} corrupted image block(s), inserted {} missing tool "
      "result(s) ({})",
      dropped_malformed_lines + torn_tail_lines, rewrote_assistant_messages, dropped_blank_user_messages,
      rewrote_user_messages, removed_corrupted_image_blocks, inserted_tool_results, file) +
         (dropped_path ? fmt::format("; the removed lines are kept in {}", *dropped_path) : std::string()) +
         (corrupt_backup_path ? fmt::format("; no readable session header{}, the original is kept at {}",
                                            synthesized_header ? " (one was written)" : "", *corrupt_backup_path)
                              : std::string());
}

repaired_text repair_transcript_text(std::string_view text, std::int64_t now_ms, const repair_options& options) {
  repaired_text out;
  repair_report& rep = out.report;
  rep.file = options.file_label;
  // The final line of a file that does not end in '\n' and does not parse: an append cut
  // short, or a NUL-filled tail after power loss.
  // The original bytes of every line dropped or rewritten, so that nothing is lost.
  auto keep_removed = [&](std::string_view line) {
    out.removed_lines.append(line);
    out.removed_lines += '\n';
  };
  auto mark_torn = [&](std::size_t no, std::string_view line, const std::string& why) {
    keep_removed(line);
    rep.torn_tail_lines = 1;
    rep.torn_tail_bytes = line.size();
    rep.dropped.push_back({no, line.size(), fmt::format("torn final line (no trailing newline): {}", why)});
  };

  std::vector<kept_entry> kept;
  unsigned char parse_buffer[16384];
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const bool has_newline = nl != std::string_view::npos;
    std::string_view line = text.substr(pos, (has_newline ? nl : text.size()) - pos);
    pos = has_newline ? nl + 1 : text.size();
    if (has_newline && !line.empty() && line.back() == '\r') line.remove_suffix(1);  // split on \r?\n
    ++line_no;

    if (is_js_blank(line)) {
      if (has_newline) {
        ++rep.blank_lines;
        continue;
      }
      mark_torn(line_no, line, "whitespace only");
      break;
    }
    boost::json::monotonic_resource mr(parse_buffer, sizeof parse_buffer);
    auto parsed = json::parse(line, options.line_limits, &mr);
    if (!parsed.ok()) {
      if (!has_newline) {
        mark_torn(line_no, line, parsed.error().message());
        break;
      }
      ++rep.dropped_malformed_lines;
      rep.dropped.push_back({line_no, line.size(), parsed.error().message()});
      keep_removed(line);
      continue;
    }
    bool changed = false;
    if (auto reason = apply_line_rules(*parsed, rep, changed)) {
      ++rep.dropped_malformed_lines;
      rep.dropped.push_back({line_no, line.size(), std::move(*reason)});
      keep_removed(line);
      continue;
    }
    if (changed) keep_removed(line);
    kept_entry e;
    e.line_no = line_no;
    e.raw = line;
    e.changed = changed;
    if (changed) e.rewritten = json::to_compact(*parsed);
    collect_facts(*parsed, e);
    kept.push_back(std::move(e));
    if (!has_newline) rep.added_final_newline = true;
  }

  if (kept.empty()) {
    if (!rep.dropped.empty())
      rep.abandoned_reason = fmt::format("no readable line is left ({} line(s) dropped), so there is no session header",
                                         rep.dropped.size());
    out.cleaned_text.assign(text);
    out.removed_lines.clear();
    return out;
  }
  if (!kept.front().is_header) {
    rep.abandoned_reason = fmt::format(
        "the first readable line (line {}) is not a session header ({{\"type\":\"session\",\"id\":...}})",
        kept.front().line_no);
    out.cleaned_text.assign(text);
    out.removed_lines.clear();
    return out;
  }

  std::unordered_set<std::string> result_ids;
  for (const auto& e : kept)
    if (e.tool_result_id) result_ids.insert(*e.tool_result_id);
  kept = insert_code_mode_results(std::move(kept), result_ids, now_ms, options, rep);
  kept = insert_delivery_mirror_results(std::move(kept), result_ids, now_ms, options, rep);

  if (!rep.changed()) {
    out.cleaned_text.assign(text);
    return out;
  }
  std::size_t size = 0;
  for (const auto& e : kept) size += (e.changed ? e.rewritten.size() : e.raw.size()) + 1;
  out.cleaned_text.reserve(size);
  for (const auto& e : kept) {
    out.cleaned_text += e.changed ? std::string_view(e.rewritten) : e.raw;
    out.cleaned_text += '\n';
  }
  return out;
}

}  // namespace sessionrt::storage
