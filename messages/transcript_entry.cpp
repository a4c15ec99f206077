#include "messages/transcript_entry.hpp"

#include <initializer_list>

#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"

namespace sessionrt {

entry_type entry_type_of(std::string_view t) {
  if (t == "message") return entry_type::message;
  if (t == "session") return entry_type::session;
  if (t == "compaction") return entry_type::compaction;
  if (t == "custom_message") return entry_type::custom_message;
  if (t == "custom") return entry_type::custom;
  if (t == "branch_summary") return entry_type::branch_summary;
  if (t == "model_change") return entry_type::model_change;
  if (t == "thinking_level_change") return entry_type::thinking_level_change;
  if (t == "label") return entry_type::label;
  if (t == "session_info") return entry_type::session_info;
  if (t == "leaf") return entry_type::leaf;
  return entry_type::unknown;
}

std::string_view entry_type_name(entry_type t) {
  switch (t) {
    case entry_type::session: return "session";
    case entry_type::message: return "message";
    case entry_type::custom_message: return "custom_message";
    case entry_type::custom: return "custom";
    case entry_type::compaction: return "compaction";
    case entry_type::branch_summary: return "branch_summary";
    case entry_type::model_change: return "model_change";
    case entry_type::thinking_level_change: return "thinking_level_change";
    case entry_type::label: return "label";
    case entry_type::session_info: return "session_info";
    case entry_type::leaf: return "leaf";
    case entry_type::unknown: return "unknown";
  }
  return "unknown";
}

entry_type type_of(const boost::json::object& line) {
  auto t = json::get_string(line, "type");
  return t ? entry_type_of(*t) : entry_type::unknown;
}

std::optional<std::string_view> id_of(const boost::json::object& line) { return json::get_string(line, "id"); }

std::optional<std::string_view> parent_id_of(const boost::json::object& line) {
  return json::get_string(line, "parentId");
}

const boost::json::object* message_of(const boost::json::object& line) { return json::get_object(line, "message"); }

std::optional<std::string_view> role_of(const boost::json::object& line) {
  const auto* m = message_of(line);
  return m ? json::get_string(*m, "role") : std::nullopt;
}

bool ends_turn(const boost::json::object& message) {
  return json::get_string(message, "role") == std::optional<std::string_view>("assistant") &&
         json::get_string(message, "stopReason") != std::optional<std::string_view>("toolUse");
}

boost::json::object make_header(const header_fields& h) {
  boost::json::object o;
  o["type"] = "session";
  o["version"] = h.version;
  o["id"] = h.id;
  o["timestamp"] = format_iso_ms(h.timestamp_ms);
  o["cwd"] = h.cwd;
  if (h.parent_session) o["parentSession"] = *h.parent_session;
  if (h.session_key) o["sessionKey"] = *h.session_key;
  return o;
}

namespace {
void put_base(boost::json::object& o, std::string_view id, std::optional<std::string_view> parent_id,
              std::int64_t ts) {
  o["id"] = id;
  if (parent_id)
    o["parentId"] = *parent_id;
  else
    o["parentId"] = nullptr;
  o["timestamp"] = format_iso_ms(ts);
}
}  // namespace

boost::json::object make_entry(std::string_view type, std::string_view id, std::optional<std::string_view> parent_id,
                               std::int64_t timestamp_ms) {
  boost::json::object o(10);
  o["type"] = type;
  put_base(o, id, parent_id, timestamp_ms);
  return o;
}

boost::json::object make_message_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                       std::int64_t timestamp_ms, boost::json::object message) {
  auto o = make_entry("message", id, parent_id, timestamp_ms);
  o["message"] = std::move(message);
  return o;
}

boost::json::object make_compaction_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                          std::int64_t timestamp_ms, std::string_view summary,
                                          std::string_view first_kept_entry_id, std::int64_t tokens_before,
                                          std::optional<boost::json::value> details, std::optional<bool> from_hook) {
  auto o = make_entry("compaction", id, parent_id, timestamp_ms);
  o["summary"] = summary;
  o["firstKeptEntryId"] = first_kept_entry_id;
  o["tokensBefore"] = tokens_before;
  if (details) o["details"] = std::move(*details);
  if (from_hook) o["fromHook"] = *from_hook;
  return o;
}

boost::json::object make_branch_summary_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                              std::int64_t timestamp_ms, std::string_view summary,
                                              std::optional<boost::json::value> details) {
  auto o = make_entry("branch_summary", id, parent_id, timestamp_ms);
  o["fromId"] = parent_id ? *parent_id : std::string_view("root");
  o["summary"] = summary;
  if (details) o["details"] = std::move(*details);
  return o;
}

boost::json::object make_model_change_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                            std::int64_t timestamp_ms, std::string_view provider,
                                            std::string_view model_id) {
  auto o = make_entry("model_change", id, parent_id, timestamp_ms);
  o["provider"] = provider;
  o["modelId"] = model_id;
  return o;
}

boost::json::object make_thinking_level_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                              std::int64_t timestamp_ms, std::string_view level) {
  auto o = make_entry("thinking_level_change", id, parent_id, timestamp_ms);
  o["thinkingLevel"] = level;
  return o;
}

boost::json::object make_custom_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                      std::int64_t timestamp_ms, std::string_view custom_type,
                                      std::optional<boost::json::value> data) {
  boost::json::object o;
  o["type"] = "custom";
  o["customType"] = custom_type;
  if (data) o["data"] = std::move(*data);
  put_base(o, id, parent_id, timestamp_ms);
  return o;
}

boost::json::object make_custom_message_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                              std::int64_t timestamp_ms, std::string_view custom_type,
                                              boost::json::value content, bool display,
                                              std::optional<boost::json::value> details) {
  boost::json::object o;
  o["type"] = "custom_message";
  o["customType"] = custom_type;
  o["content"] = std::move(content);
  o["display"] = display;
  if (details) o["details"] = std::move(*details);
  put_base(o, id, parent_id, timestamp_ms);
  return o;
}

boost::json::object make_label_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                     std::int64_t timestamp_ms, std::string_view target_id,
                                     std::optional<std::string_view> label) {
  auto o = make_entry("label", id, parent_id, timestamp_ms);
  o["targetId"] = target_id;
  if (label) o["label"] = *label;
  return o;
}

boost::json::object make_session_info_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                            std::int64_t timestamp_ms, std::string_view name) {
  auto o = make_entry("session_info", id, parent_id, timestamp_ms);
  o["name"] = name;
  return o;
}

std::string message_text(const boost::json::value* content, std::string_view separator) {
  if (content == nullptr) return {};
  if (const auto* s = content->if_string()) return std::string(s->begin(), s->end());
  std::string out;
  bool first = true;
  if (const auto* blocks = content->if_array())
    for (const auto& v : *blocks) {
      const auto* b = v.if_object();
      if (!b || json::get_string(*b, "type") != std::optional<std::string_view>("text")) continue;
      if (!first) out += separator;
      first = false;
      if (const auto* t = b->if_contains("text"); t && t->is_string()) out += std::string_view(t->get_string());
    }
  return out;
}

namespace {
// The message builders below make the same objects many times a turn. Each starts as a copy
// of a shape (its keys in order, every value null) and sets the values by position: a copy
// takes the keys without the search operator[] makes before every insert (boost::json
// compares each new key with those already in). Same keys, same order, same values.
boost::json::object shaped(std::initializer_list<std::string_view> keys) {
  boost::json::object o(keys.size());
  for (auto k : keys) o.emplace(k, nullptr);
  return o;
}
const boost::json::object& text_block_shape() {
  static const boost::json::object shape = shaped({"type", "text"});
  return shape;
}
const boost::json::object& user_message_shape() {
  static const boost::json::object shape = shaped({"role", "content", "timestamp"});
  return shape;
}
const boost::json::object& usage_shape() {
  static const boost::json::object shape = shaped({"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"});
  return shape;
}
const boost::json::object& cost_shape() {
  static const boost::json::object shape = shaped({"input", "output", "cacheRead", "cacheWrite", "total"});
  return shape;
}
const boost::json::object& assistant_shape(bool with_error) {
  static const boost::json::object plain =
      shaped({"role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"});
  static const boost::json::object with_error_message =
      shaped({"role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"});
  return with_error ? with_error_message : plain;
}
}  // namespace

boost::json::object text_block(std::string_view text) {
  boost::json::object b(text_block_shape());
  auto* v = b.begin();
  v[0].value() = "text";
  v[1].value() = text;
  return b;
}

boost::json::object user_message(std::string_view text, std::int64_t timestamp_ms) {
  boost::json::object m(user_message_shape());
  auto* v = m.begin();
  v[0].value() = "user";
  v[1].value() = text;
  v[2].value() = timestamp_ms;
  return m;
}

boost::json::object user_message(boost::json::array content, std::int64_t timestamp_ms) {
  boost::json::object m(user_message_shape());
  auto* v = m.begin();
  v[0].value() = "user";
  v[1].value() = std::move(content);
  v[2].value() = timestamp_ms;
  return m;
}

boost::json::object usage_object(const usage_fields& u) {
  boost::json::object o(usage_shape());
  auto* v = o.begin();
  v[0].value() = u.input;
  v[1].value() = u.output;
  v[2].value() = u.cache_read;
  v[3].value() = u.cache_write;
  v[4].value() = u.input + u.output + u.cache_read + u.cache_write;
  boost::json::object c(cost_shape());
  auto* cv = c.begin();
  cv[0].value() = u.cost_input;
  cv[1].value() = u.cost_output;
  cv[2].value() = u.cost_cache_read;
  cv[3].value() = u.cost_cache_write;
  cv[4].value() = u.cost_input + u.cost_output + u.cost_cache_read + u.cost_cache_write;
  v[5].value() = std::move(c);
  return o;
}

boost::json::object assistant_message(assistant_fields a) {
  boost::json::object m(assistant_shape(a.error_message.has_value()));
  auto* v = m.begin();
  v[0].value() = "assistant";
  v[1].value() = std::move(a.content);
  v[2].value() = a.api;
  v[3].value() = a.provider;
  v[4].value() = a.model;
  v[5].value() = usage_object(a.usage);
  v[6].value() = a.stop_reason;
  std::size_t at = 7;
  if (a.error_message) v[at++].value() = *a.error_message;
  v[at].value() = a.timestamp_ms;
  return m;
}

boost::json::object tool_result_message(std::string_view tool_call_id, std::string_view tool_name,
                                        boost::json::array content, bool is_error, std::int64_t timestamp_ms) {
  boost::json::object m(6);
  m["role"] = "toolResult";
  m["toolCallId"] = tool_call_id;
  m["toolName"] = tool_name;
  m["content"] = std::move(content);
  m["isError"] = is_error;
  m["timestamp"] = timestamp_ms;
  return m;
}

}  // namespace sessionrt
