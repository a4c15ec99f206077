// Transcript lines of <sessionId>.jsonl [R§3.2–3.4] as JSON objects, with builders that put
// the keys in the order pi's SessionManager writes them (so our files diff cleanly against
// pi's) and readers that tolerate anything: an unknown type or field is kept verbatim.
// Entry timestamps are ISO strings; message timestamps are epoch-ms numbers.
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sessionrt {

inline constexpr int kTranscriptVersion = 3;

enum class entry_type {
  session,  // the header line
  message,
  custom_message,
  custom,
  compaction,
  branch_summary,
  model_change,
  thinking_level_change,
  label,
  session_info,
  leaf,  // OpenClaw navigation control
  unknown,
};

entry_type entry_type_of(std::string_view type);
std::string_view entry_type_name(entry_type t);

// Accessors over one parsed line. All return nullopt / unknown for a missing or mistyped field.
entry_type type_of(const boost::json::object& line);
std::optional<std::string_view> id_of(const boost::json::object& line);
// parentId: nullopt when null or absent.
std::optional<std::string_view> parent_id_of(const boost::json::object& line);
const boost::json::object* message_of(const boost::json::object& line);  // "message" of a message entry
std::optional<std::string_view> role_of(const boost::json::object& line);  // message.role
// `message` (a message entry's "message") is the model's last word of a turn: an assistant
// message whose stopReason is not toolUse (a toolUse reply waits for its tool results).
bool ends_turn(const boost::json::object& message);

// --- Builders (key order as pi writes them) ---
struct header_fields {
  std::string id;
  std::int64_t timestamp_ms = 0;
  std::string cwd;
  std::optional<std::string> parent_session;
  // sessionrt addition: the sessionKey the transcript belongs to, so that a lost
  // sessions.json can be rebuilt from headers. Readers that do not know it ignore it.
  std::optional<std::string> session_key;
  int version = kTranscriptVersion;
};
boost::json::object make_header(const header_fields& h);

// The common prefix {type, id, parentId, timestamp}.
boost::json::object make_entry(std::string_view type, std::string_view id, std::optional<std::string_view> parent_id,
                               std::int64_t timestamp_ms);
boost::json::object make_message_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                       std::int64_t timestamp_ms, boost::json::object message);
boost::json::object make_compaction_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                          std::int64_t timestamp_ms, std::string_view summary,
                                          std::string_view first_kept_entry_id, std::int64_t tokens_before,
                                          std::optional<boost::json::value> details = std::nullopt,
                                          std::optional<bool> from_hook = std::nullopt);
boost::json::object make_branch_summary_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                              std::int64_t timestamp_ms, std::string_view summary,
                                              std::optional<boost::json::value> details = std::nullopt);
boost::json::object make_model_change_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                            std::int64_t timestamp_ms, std::string_view provider,
                                            std::string_view model_id);
boost::json::object make_thinking_level_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                              std::int64_t timestamp_ms, std::string_view level);
boost::json::object make_custom_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                      std::int64_t timestamp_ms, std::string_view custom_type,
                                      std::optional<boost::json::value> data);
boost::json::object make_custom_message_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                              std::int64_t timestamp_ms, std::string_view custom_type,
                                              boost::json::value content, bool display,
                                              std::optional<boost::json::value> details = std::nullopt);
boost::json::object make_label_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                     std::int64_t timestamp_ms, std::string_view target_id,
                                     std::optional<std::string_view> label);
boost::json::object make_session_info_entry(std::string_view id, std::optional<std::string_view> parent_id,
                                            std::int64_t timestamp_ms, std::string_view name);

// --- Messages (pi-ai shapes) ---
boost::json::object text_block(std::string_view text);
// The text of a message's `content`: a string as is, else its "text" blocks' text joined with
// `separator` (other blocks — thinking, images, tool calls — skipped); "" for anything else.
std::string message_text(const boost::json::value* content, std::string_view separator = "");
boost::json::object user_message(std::string_view text, std::int64_t timestamp_ms);           // string content
boost::json::object user_message(boost::json::array content, std::int64_t timestamp_ms);      // block content
struct usage_fields {
  std::int64_t input = 0, output = 0, cache_read = 0, cache_write = 0;
  double cost_input = 0, cost_output = 0, cost_cache_read = 0, cost_cache_write = 0;
};
boost::json::object usage_object(const usage_fields& u);  // {input,output,cacheRead,cacheWrite,totalTokens,cost}
struct assistant_fields {
  boost::json::array content;
  std::string api = "anthropic-messages";
  std::string provider = "anthropic";
  std::string model;
  usage_fields usage;
  std::string stop_reason = "stop";
  std::optional<std::string> error_message;
  std::int64_t timestamp_ms = 0;
};
boost::json::object assistant_message(assistant_fields a);
boost::json::object tool_result_message(std::string_view tool_call_id, std::string_view tool_name,
                                        boost::json::array content, bool is_error, std::int64_t timestamp_ms);

}  // namespace sessionrt
