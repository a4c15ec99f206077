// replay_message: read and edit access to pi-ai context messages for the hygiene rules
// (roles user / assistant / toolResult; blocks text / thinking / toolCall / image). Pure: no
// I/O, nothing throws on odd shapes (a wrong type reads as absent). Messages are edited in
// place; the caller owns them.
#pragma once
#include <array>
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace sessionrt::actors::hygiene {

// The id fields a toolResult may carry, in the order they are read [R§8.3].
inline constexpr std::array<std::string_view, 6> kToolResultIdFields = {"toolCallId", "toolUseId", "tool_call_id",
                                                                        "tool_use_id", "callId", "call_id"};

std::string_view role_of(const boost::json::value& message);  // "" when absent / not a string
std::string_view string_field(const boost::json::object& o, std::string_view key);  // "" when absent
bool is_role(const boost::json::value& message, std::string_view role);

// The content array, or nullptr (string content, absent, other types).
boost::json::array* content_array(boost::json::value& message);
const boost::json::array* content_array(const boost::json::value& message);

std::string_view block_type(const boost::json::value& block);  // "" for non-objects
// type toolCall | toolUse | functionCall.
bool is_tool_call_block(const boost::json::value& block);
// A tool-call block with a non-empty string id.
std::optional<std::string_view> tool_call_id(const boost::json::value& block);
bool has_tool_calls(const boost::json::value& message);  // assistant with at least one call with an id

// The first non-empty id field of a toolResult (kToolResultIdFields order).
std::optional<std::string> tool_result_id(const boost::json::value& message);
// Sets every id field present on the toolResult to `id`; toolCallId when none is present.
void set_tool_result_id(boost::json::object& message, std::string_view id);

// {type:"text", text:<blank or non-string>} (blank: is_js_blank, messages/js_text.hpp).
bool is_blank_text_block(const boost::json::value& block);
// A message whose content is absent, a blank string, an empty array, only blank text blocks, or
// neither a string nor an array (a number or object: no provider takes it, and merging two such
// turns would leave an empty one).
bool has_no_content(const boost::json::value& message);

// The synthetic marker of a repaired missing tool result (details.openclawSyntheticMissingToolResult).
bool is_synthetic_tool_result(const boost::json::value& message);

boost::json::array single_text(std::string_view text);

}  // namespace sessionrt::actors::hygiene
