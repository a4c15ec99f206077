#include "actors/session/hygiene/replay_message.hpp"

#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::actors::hygiene {

std::string_view string_field(const boost::json::object& o, std::string_view key) {
  return json::get_string(o, key).value_or(std::string_view());
}

std::string_view role_of(const boost::json::value& message) {
  return message.is_object() ? string_field(message.get_object(), "role") : std::string_view();
}

bool is_role(const boost::json::value& message, std::string_view role) { return role_of(message) == role; }

boost::json::array* content_array(boost::json::value& message) {
  if (!message.is_object()) return nullptr;
  auto* c = message.get_object().if_contains("content");
  return c && c->is_array() ? &c->get_array() : nullptr;
}

const boost::json::array* content_array(const boost::json::value& message) {
  if (!message.is_object()) return nullptr;
  const auto* c = message.get_object().if_contains("content");
  return c && c->is_array() ? &c->get_array() : nullptr;
}

std::string_view block_type(const boost::json::value& block) {
  return block.is_object() ? string_field(block.get_object(), "type") : std::string_view();
}

bool is_tool_call_block(const boost::json::value& block) {
  const auto t = block_type(block);
  return t == "toolCall" || t == "toolUse" || t == "functionCall";
}

std::optional<std::string_view> tool_call_id(const boost::json::value& block) {
  if (!is_tool_call_block(block)) return std::nullopt;
  auto id = json::get_string(block.get_object(), "id");
  if (!id || id->empty()) return std::nullopt;
  return id;
}

bool has_tool_calls(const boost::json::value& message) {
  if (!is_role(message, "assistant")) return false;
  const auto* content = content_array(message);
  if (!content) return false;
  for (const auto& b : *content)
    if (tool_call_id(b)) return true;
  return false;
}

std::optional<std::string> tool_result_id(const boost::json::value& message) {
  if (!message.is_object()) return std::nullopt;
  for (auto key : kToolResultIdFields) {
    auto v = json::get_string(message.get_object(), key);
    if (v && !v->empty()) return std::string(*v);
  }
  return std::nullopt;
}

void set_tool_result_id(boost::json::object& message, std::string_view id) {
  bool any = false;
  for (auto key : kToolResultIdFields) {
    if (auto* v = message.if_contains(key); v && v->is_string()) {
      *v = id;
      any = true;
    }
  }
  if (!any) json::set(message, "toolCallId", boost::json::string(id));
}


bool is_blank_text_block(const boost::json::value& block) {
  if (block_type(block) != "text") return false;
  const auto* t = block.get_object().if_contains("text");
  return !t || !t->is_string() || is_js_blank(t->get_string());
}

bool has_no_content(const boost::json::value& message) {
  if (!message.is_object()) return true;
  const auto* c = message.get_object().if_contains("content");
  if (!c || c->is_null()) return true;
  if (c->is_string()) return is_js_blank(c->get_string());
  if (!c->is_array()) return true;
  for (const auto& b : c->get_array())
    if (!is_blank_text_block(b)) return false;
  return true;
}

bool is_synthetic_tool_result(const boost::json::value& message) {
  if (!is_role(message, "toolResult")) return false;
  const auto* details = json::get_object(message.get_object(), "details");
  if (!details) return false;
  auto flag = json::get_bool(*details, "openclawSyntheticMissingToolResult");
  return flag && *flag;
}

boost::json::array single_text(std::string_view text) {
  boost::json::array a;
  a.push_back(text_block(text));
  return a;
}

}  // namespace sessionrt::actors::hygiene
