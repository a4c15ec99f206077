#include "messages/runner_reply_check.hpp"

#include <fmt/format.h>

#include <string_view>

namespace sessionrt {
namespace {

status bad(std::string what) {
  return status(errc::invalid_argument, "the model runner returned an invalid message: " + what);
}

bool has_string(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string();
}

status check_block(const boost::json::value& v, std::size_t i) {
  const auto* block = v.if_object();
  if (!block) return bad(fmt::format("content[{}] is not an object", i));
  const auto* type = block->if_contains("type");
  if (!type || !type->is_string()) return bad(fmt::format("content[{}] has no string \"type\"", i));
  const std::string_view t = type->get_string();
  auto need = [&](std::string_view key, std::string_view kind) -> status {
    const auto* f = block->if_contains(key);
    const bool ok = f && (kind == "string" ? f->is_string() : f->is_object());
    if (ok) return {};
    return bad(fmt::format("content[{}] ({} block) has no {} \"{}\"", i, t, kind, key));
  };
  if (t == "text") return need("text", "string");
  if (t == "thinking") return need("thinking", "string");
  if (t == "toolCall") {
    SRT_RETURN_IF_ERROR(need("id", "string"));
    SRT_RETURN_IF_ERROR(need("name", "string"));
    return need("arguments", "object");
  }
  if (t == "image") {
    SRT_RETURN_IF_ERROR(need("data", "string"));
    return need("mimeType", "string");
  }
  return {};
}

}  // namespace

status check_runner_message(const boost::json::object& message, runner_message_kind kind) {
  const auto* role_v = message.if_contains("role");
  if (!role_v || !role_v->is_string())
    return bad(kind == runner_message_kind::final_reply ? "no \"role\" (expected \"assistant\")"
                                                        : "no \"role\" (expected \"assistant\" or \"toolResult\")");
  const std::string_view role = role_v->get_string();
  const bool round = kind == runner_message_kind::loop_round;
  if (role != "assistant" && !(round && role == "toolResult"))
    return bad(fmt::format("role \"{}\" (expected \"assistant\"{})", role, round ? " or \"toolResult\"" : ""));
  if (role == "toolResult" && !has_string(message, "toolCallId")) return bad("a toolResult without a string \"toolCallId\"");
  const auto* content = message.if_contains("content");
  if (!content) return bad("no \"content\"");
  if (content->is_string()) return {};
  const auto* blocks = content->if_array();
  if (!blocks) return bad("\"content\" is neither a string nor an array");
  for (std::size_t i = 0; i < blocks->size(); ++i) SRT_RETURN_IF_ERROR(check_block((*blocks)[i], i));
  return {};
}

}  // namespace sessionrt
