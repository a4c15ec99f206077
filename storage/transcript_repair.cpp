#include "storage/transcript_repair.hpp"

#include "messages/base64_rule.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <fmt/format.h>
#include <unordered_set>
#include <utility>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/js_text.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage {
namespace {

// Texts OpenClaw writes, byte for byte (a repaired entry must read like a live one).
constexpr std::string_view kFailedAssistantText = "[assistant turn failed before producing content]";
constexpr std::string_view kCorruptedImageText = "[image omitted: corrupted base64 payload]";
constexpr std::string_view kBlankUserText = "(continue)";
constexpr std::string_view kMissingToolResultText = "aborted";

bool is_js_blank(std::string_view s) { return js_trim(s).empty(); }

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

namespace {

// Writes the backup with the original's mode. The caller unlinks it on every later failure.
status write_backup(fs& f, const std::string& backup, std::string_view data, mode_t mode) {
  auto fd = f.open(backup, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  if (!fd.ok()) return fd.error();
  status st = write_all(f, *fd, data.data(), data.size());
  status closed = f.close(*fd);
  if (st.ok()) st = closed;
  if (st.ok()) st = f.chmod(backup, mode);  // open() applied the umask
  if (!st.ok()) {
    (void)f.unlink(backup);
    return st.with_context("writing backup " + backup);
  }
  return {};
}

// <path>.dropped-<dashed ISO>.jsonl, created exclusively (a taken name moves the time on by
// 1 ms) and durably; returns its path.
result<std::string> keep_removed_lines(fs& f, const std::string& path, std::int64_t now_ms, std::string_view lines,
                                       mode_t mode) {
  replace_options ro;
  ro.mode = mode;
  ro.temp_prefix = path_basename(path) + ".dropped";
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string name = dropped_lines_name(path, now_ms + attempt);
    status st = create_file_exclusive(f, name, lines, ro);
    if (st.ok()) {
      (void)f.chmod(name, mode);  // open() applied the umask
      return name;
    }
    if (st.code() != errc::already_exists) {
      (void)f.unlink(name);  // linked but not confirmed durable; the name was free before
      return st.with_context("keeping the dropped lines in " + name);
    }
  }
  return status(errc::already_exists, "keeping the dropped lines of " + path + ": 1000 names taken");
}

bool same_file_state(const file_info& a, const file_info& b) {
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime_ns == b.mtime_ns;
}

}  // namespace

result<repair_report> repair_transcript_file(fs& f, clock& clk, const std::string& path,
                                             const repair_options& options) {
  auto before = f.stat(path);
  if (!before.ok()) return before.error().with_context("repairing transcript");
  if (!before->is_regular())
    return status(errc::invalid_argument, fmt::format("repairing transcript {}: not a regular file", path));
  auto content = read_file(f, path, options.max_file_bytes);
  if (!content.ok()) return content.error().with_context("repairing transcript");

  const std::int64_t now = clk.now_ms();
  repair_options opt = options;
  opt.file_label = path_basename(path);
  auto repaired = repair_transcript_text(*content, now, opt);
  repair_report& rep = repaired.report;
  if (rep.abandoned())
    return status(errc::corrupt,
                  fmt::format("not repairing transcript {}: {}; the file was left as it is", path, rep.abandoned_reason));
  if (!rep.changed()) return std::move(rep);

  const mode_t mode = before->mode & 07777;
  const std::string backup = repair_backup_name(path, ::getpid(), now);
  auto untouched = [&](const status& st) {
    return status(st.code(),
                  fmt::format("repairing transcript {} failed, the file was left as it is: {}", path, st.message()));
  };
  if (status st = write_backup(f, backup, *content, mode); !st.ok()) return untouched(st);

  // The caller holds the write lock; this catches a writer that does not honour it.
  auto again = f.stat(path);
  if (!again.ok() || !same_file_state(*before, *again)) {
    (void)f.unlink(backup);
    return status(errc::cancelled, fmt::format("repairing transcript {}: the file changed while it was being "
                                               "repaired (another writer?); it was left as it is",
                                               path));
  }

  // What the rewrite removes is kept beside the file, durably, before the file changes.
  if (!repaired.removed_lines.empty()) {
    auto kept = keep_removed_lines(f, path, now, repaired.removed_lines, mode);
    if (!kept.ok()) {
      (void)f.unlink(backup);
      return untouched(kept.error());
    }
    rep.dropped_path = *kept;
  }
  replace_options ro;
  ro.mode = mode;
  ro.temp_prefix = path_basename(path) + ".repair";
  if (status st = replace_file_atomic(f, path, repaired.cleaned_text, ro); !st.ok()) {
    auto now_info = f.stat(path);
    const bool replaced = now_info.ok() && now_info->ino != before->ino;
    if (!replaced) {
      (void)f.unlink(backup);
      if (rep.dropped_path) (void)f.unlink(*rep.dropped_path);
      return untouched(st);
    }
    // Renamed, but the directory sync failed: the old bytes stay in the backup.
    return status(st.code(), fmt::format("repairing transcript {}: the file was replaced but not confirmed durable "
                                         "({}); the original is kept at {}",
                                         path, st.message(), backup));
  }
  if (auto info = f.stat(path); info.ok() && (info->mode & 07777) != mode) (void)f.chmod(path, mode);  // umask
  if (!f.unlink(backup).ok()) rep.backup_path = backup;
  return std::move(rep);
}

result<tail_state> check_transcript_tail(fs& f, const std::string& path, std::size_t window) {
  auto fd = f.open(path, O_RDONLY);
  if (!fd.ok()) return fd.error().with_context("checking transcript tail");
  auto info = f.fstat(*fd);
  if (!info.ok()) {
    (void)f.close(*fd);
    return info.error().with_context("checking transcript tail of " + path);
  }
  tail_state st;
  st.size = info->size;
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(st.size, window));
  auto data = pread_all(f, *fd, n, st.size - n);
  (void)f.close(*fd);
  if (!data.ok()) return data.error().with_context("checking transcript tail of " + path);
  st.checked_bytes = data->size();
  st.ends_with_newline = !data->empty() && data->back() == '\n';
  st.has_nul = data->find('\0') != std::string::npos;
  return st;
}


// --- the damage scan ---

namespace {

// SAX handler for one line: validates the JSON (the parser does) and records the few field
// values the per-line rules look at. Depth 1 is the entry, 2 the message, 3 its content
// array, 4 a content block.
class scan_handler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  struct facts {
    bool top_is_object = false;
    bool is_message = false, is_session = false, has_id = false;
    bool message_is_object = false, role_blank = true;
    bool suspect = false, whole_file = false;
    const char* why = nullptr;
  } f;

  void reset() {
    f = facts{};
    depth_ = 0;
    key_.clear();
    value_.clear();
    value_blank_ = true;
    value_long_ = false;
  }

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    if (depth_ == 0) f.top_is_object = true;
    if (depth_ == 1 && key1_ == "message") f.message_is_object = true;
    push(true);
    if (in_block()) block_begin();
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    if (in_block()) block_end();
    pop();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) {
    push(false);
    return true;
  }
  bool on_array_end(std::size_t n, boost::system::error_code&) {
    if (n == 0 && depth_ == 3 && in_message_content()) mark("an empty content array");
    pop();
    return true;
  }
  bool on_key_part(std::string_view s, std::size_t, boost::system::error_code&) {
    key_.append(s);
    return true;
  }
  bool on_key(std::string_view s, std::size_t, boost::system::error_code&) {
    key_.append(s);
    if (depth_ == 1) key1_ = key_;
    if (depth_ == 2) key2_ = key_;
    current_key_ = key_;
    key_.clear();
    return true;
  }
  bool on_string_part(std::string_view s, std::size_t, boost::system::error_code&) {
    take(s);
    return true;
  }
  bool on_string(std::string_view s, std::size_t, boost::system::error_code&) {
    take(s);
    string_done();
    value_.clear();
    value_blank_ = true;
    value_long_ = false;
    return true;
  }
  bool on_number_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t, std::string_view, boost::system::error_code&) { return scalar(); }
  bool on_uint64(std::uint64_t, std::string_view, boost::system::error_code&) { return scalar(); }
  bool on_double(double, std::string_view, boost::system::error_code&) { return scalar(); }
  bool on_bool(bool, boost::system::error_code&) { return scalar(); }
  bool on_null(boost::system::error_code&) { return scalar(); }
  bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_comment(std::string_view, boost::system::error_code&) { return true; }

 private:
  static constexpr std::size_t kKeep = 64;  // value bytes kept (the values compared are short)

  void push(bool object) {
    if (depth_ < kinds_.size()) kinds_[depth_] = object;
    ++depth_;
  }
  void pop() {
    if (depth_ > 0) --depth_;
  }
  bool in_message_content() const { return key1_ == "message" && key2_ == "content"; }
  void mark(const char* why) {
    if (!f.suspect) f.why = why;
    f.suspect = true;
  }
  bool scalar() {
    // A non-string role / content / text: the rules may treat it as absent.
    if (depth_ == 2 && key1_ == "message" && (current_key_ == "role")) mark("a role that is not a string");
    return true;
  }
  void take(std::string_view s) {
    if (in_block() && current_key_ == "data") base64_part(s);
    if (value_.size() < kKeep) value_.append(s.substr(0, kKeep - value_.size()));
    if (value_.size() + s.size() > kKeep) value_long_ = true;
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x80) {
        value_blank_ = value_blank_ && !value_long_;  // decided on the kept bytes below
        continue;
      }
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') value_blank_ = false;
    }
  }
  // Blank as JavaScript's trim() sees it (for values short enough to keep; a long value with
  // non-ASCII bytes and no other visible character counts as blank, a false positive at most).
  bool blank_value() const {
    if (!value_blank_) return false;
    if (value_long_) return true;
    return js_trim(value_).empty();
  }
  void string_done() {
    if (depth_ == 1) {
      if (current_key_ == "type") {
        f.is_message = value_ == "message";
        f.is_session = value_ == "session";
      }
      if (current_key_ == "id" && !value_.empty()) f.has_id = true;
      return;
    }
    if (depth_ == 2 && key1_ == "message" && kinds_[1]) {
      if (current_key_ == "role") f.role_blank = blank_value();
      else if (current_key_ == "content" && blank_value()) mark("blank string content");
      else if (current_key_ == "stopReason" && value_ == "error") mark("an error turn");
      else if (current_key_ == "api" && value_ == "openai-chatgpt-responses") f.whole_file = true;
      else if (current_key_ == "provider" && js_trim(value_) == "openclaw") f.whole_file = true;
      return;
    }
    if (in_block()) {
      if (current_key_ == "type" && value_ == "image") block_image_ = true;
      if (current_key_ == "text" && blank_value()) mark("a blank text block");
      if (current_key_ == "data") block_data_string_ = true;
      if ((current_key_ == "mimeType" || current_key_ == "mediaType" || current_key_ == "media_type") &&
          image_mime(value_))
        block_image_mime_ = true;
    }
  }
  bool in_block() const { return depth_ == 4 && in_message_content() && !kinds_[2] && kinds_[3]; }
  static bool image_mime(std::string_view v) {
    v = js_trim(v);
    if (v.size() < 6) return false;
    for (std::size_t k = 0; k < 6; ++k)
      if (static_cast<char>(std::tolower(static_cast<unsigned char>(v[k]))) != "image/"[k]) return false;
    return true;
  }
  // OpenClaw's base64 acceptance rule, over the parts of a string (is_valid_base64).
  void base64_part(std::string_view s) {
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c > 0x7F) b64_bad_ = true;
      if (c <= 0x20 || b64_bad_) continue;
      ++b64_len_;
      if (c == '=') {
        if (++b64_pad_ > 2) b64_bad_ = true;
        continue;
      }
      if (b64_pad_ > 0 || !is_base64_alphabet_char(c)) b64_bad_ = true;
    }
  }
  bool base64_ok() const {
    if (b64_bad_ || b64_len_ == 0) return false;
    const std::size_t rem = b64_len_ % 4;
    return rem == 0 || (b64_pad_ == 0 && rem != 1);
  }
  void block_begin() {
    block_image_ = block_image_mime_ = block_data_string_ = b64_bad_ = false;
    b64_len_ = b64_pad_ = 0;
  }
  void block_end() {
    if (block_image_ && block_image_mime_ && block_data_string_ && !base64_ok()) mark("a corrupted base64 image");
  }
  bool block_image_ = false, block_image_mime_ = false, block_data_string_ = false, b64_bad_ = false;
  std::size_t b64_len_ = 0, b64_pad_ = 0;

  std::size_t depth_ = 0;
  std::array<bool, 8> kinds_{};  // object (true) or array per depth (first 8 levels)
  std::string key_, key1_, key2_, current_key_;
  std::string value_;
  bool value_blank_ = true, value_long_ = false;
};

class line_scanner {
 public:
  explicit line_scanner(const json::parse_limits& limits) : limits_(limits), parser_(make_options(limits)) {}

  void line(std::string_view line, bool has_newline, std::size_t line_no, damage_scan& out) {
    if (is_js_blank(line)) {
      if (!has_newline && !line.empty()) out.torn_tail = true;
      return;
    }
    ++out.lines;
    if (!has_newline) out.torn_tail = true;
    auto suspect = [&](const std::string& why) {
      if (out.suspect_lines++ == 0) out.first_reason = fmt::format("line {}: {}", line_no, why);
    };
    if (line.size() > limits_.max_bytes) {
      suspect("longer than the line limit");
      return;
    }
    parser_.reset();
    parser_.handler().reset();
    boost::system::error_code ec;
    const std::size_t used = parser_.write_some(false, line.data(), line.size(), ec);
    // Trailing whitespace after the value is fine; anything else is not.
    if (!ec && used != line.size() && !is_js_blank(line.substr(used))) ec = boost::json::error::extra_data;
    const auto& f = parser_.handler().f;
    if (ec || !f.top_is_object) {
      if (out.lines == 1) return;  // header_ok stays false
      if (ec) suspect("not JSON (" + ec.message() + ")");
      return;  // a non-object JSON value is kept as it is
    }
    if (out.lines == 1) {
      out.header_ok = f.is_session && f.has_id;
      return;
    }
    if (f.whole_file) out.whole_file_rules = true;
    if (f.is_message && (!f.message_is_object || f.role_blank)) return suspect("a message without a role");
    if (f.is_message && f.suspect) return suspect(f.why ? f.why : "a rule applies");
  }

 private:
  static boost::json::parse_options make_options(const json::parse_limits& l) {
    boost::json::parse_options o;
    o.max_depth = l.max_depth;
    return o;
  }
  json::parse_limits limits_;
  boost::json::basic_parser<scan_handler> parser_;
};

}  // namespace

damage_scan scan_transcript_text(std::string_view text, const json::parse_limits& line_limits) {
  damage_scan out;
  out.bytes_read = text.size();
  line_scanner sc(line_limits);
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const bool has_newline = nl != std::string_view::npos;
    std::string_view line = text.substr(pos, (has_newline ? nl : text.size()) - pos);
    pos = has_newline ? nl + 1 : text.size();
    if (has_newline && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    sc.line(line, has_newline, ++line_no, out);
  }
  return out;
}

result<damage_scan> scan_transcript_for_damage(fs& f, const std::string& path, const repair_options& options,
                                               std::size_t block_bytes) {
  auto fd = f.open(path, O_RDONLY);
  if (!fd.ok()) return fd.error().with_context("checking transcript");
  damage_scan out;
  line_scanner sc(options.line_limits);
  std::string carry;
  std::uint64_t offset = 0;
  std::size_t line_no = 0;
  status st;
  for (;;) {
    auto block = pread_all(f, *fd, block_bytes, offset);
    if (!block.ok()) {
      st = block.error().with_context("checking transcript " + path);
      break;
    }
    if (block->empty()) break;
    offset += block->size();
    out.bytes_read += block->size();
    if (out.bytes_read > options.max_file_bytes) {
      st = status(errc::limit_exceeded, fmt::format("checking transcript {}: larger than the limit of {} bytes", path,
                                                    options.max_file_bytes));
      break;
    }
    std::string_view data(*block);
    std::size_t pos = 0;
    for (;;) {
      const std::size_t nl = data.find('\n', pos);
      if (nl == std::string_view::npos) break;
      std::string_view line = data.substr(pos, nl - pos);
      if (!carry.empty()) {
        carry.append(line);
        line = carry;
      }
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      sc.line(line, true, ++line_no, out);
      carry.clear();
      pos = nl + 1;
    }
    carry.append(data.substr(pos));
    if (block->size() < block_bytes) break;
  }
  (void)f.close(*fd);
  if (!st.ok()) return st;
  if (!carry.empty()) sc.line(carry, false, ++line_no, out);
  return out;
}

result<repair_report> recover_corrupt_transcript(fs& f, clock& clk, const std::string& path,
                                                 const boost::json::object& header, const repair_options& options) {
  auto before = f.stat(path);
  if (!before.ok()) return before.error().with_context("recovering transcript");
  auto content = read_file(f, path, options.max_file_bytes);
  if (!content.ok()) return content.error().with_context("recovering transcript");
  const std::int64_t now = clk.now_ms();
  const mode_t mode = before->mode & 07777;

  // The parseable object lines; the first session header found is kept as the header.
  std::string kept_header;
  std::string body;
  std::size_t dropped = 0;
  std::string_view text(*content);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (is_js_blank(line)) continue;
    auto v = json::parse(line, options.line_limits);
    if (!v.ok() || !v->is_object()) {
      ++dropped;
      continue;
    }
    const auto& o = v->get_object();
    if (is_field(o, "type", "session")) {
      if (kept_header.empty() && non_empty_string(o, "id")) kept_header = std::string(line);
      continue;  // stray headers are not entries
    }
    body.append(line);
    body += '\n';
  }
  const bool synthesized = kept_header.empty();
  std::string rebuilt = (synthesized ? json::to_compact(header) : kept_header) + "\n" + body;
  repair_options opt = options;
  opt.file_label = path_basename(path);
  auto repaired = repair_transcript_text(rebuilt, now, opt);
  repair_report rep = std::move(repaired.report);
  rep.dropped_malformed_lines += dropped;
  rep.synthesized_header = synthesized;

  std::string hex = new_uuid_v4();
  hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
  const std::string corrupt = corrupt_backup_name(path, now, hex.substr(0, 8));
  if (status st = write_backup(f, corrupt, *content, mode); !st.ok())
    return status(st.code(), fmt::format("recovering transcript {} failed, the file was left as it is: {}", path,
                                         st.message()));
  replace_options ro;
  ro.mode = mode;
  ro.temp_prefix = path_basename(path) + ".repair";
  if (status st = replace_file_atomic(f, path, repaired.cleaned_text, ro); !st.ok()) {
    auto now_info = f.stat(path);
    if (!now_info.ok() || now_info->ino == before->ino) (void)f.unlink(corrupt);
    return status(st.code(), fmt::format("recovering transcript {} failed: {}", path, st.message()));
  }
  rep.corrupt_backup_path = corrupt;
  return rep;
}
}  // namespace sessionrt::storage
