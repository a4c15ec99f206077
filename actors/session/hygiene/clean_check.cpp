#include "actors/session/hygiene/clean_check.hpp"

#include <boost/json.hpp>

#include "actors/session/silent_reply.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors::hygiene {
namespace {

bool has_only(const boost::json::object& o, std::initializer_list<std::string_view> keys) {
  for (const auto& kv : o) {
    bool known = false;
    for (auto k : keys) known = known || kv.key() == k;
    if (!known) return false;
  }
  return true;
}


// Text blocks only, none blank; `joined` gets their text.
bool plain_text_blocks(const boost::json::value& content, std::string* joined) {
  if (!content.is_array() || content.get_array().empty()) return false;
  for (const auto& b : content.get_array()) {
    if (!b.is_object()) return false;
    const auto& o = b.get_object();
    if (!has_only(o, {"type", "text"})) return false;
    if (json::get_string(o, "type") != std::optional<std::string_view>("text")) return false;
    auto t = json::get_string(o, "text");
    if (!t || is_js_blank(*t)) return false;
    if (joined) joined->append(*t);
  }
  return true;
}

bool plain_user(const boost::json::object& m) {
  if (!has_only(m, {"role", "content", "timestamp"})) return false;
  const auto* c = m.if_contains("content");
  if (!c) return false;
  if (c->is_string()) return !is_js_blank(c->get_string());
  return plain_text_blocks(*c, nullptr);
}

bool some_usage(const boost::json::object& m) {
  const auto* u = json::get_object(m, "usage");
  if (!u) return false;
  for (auto key : {"input", "output", "cacheRead", "cacheWrite", "totalTokens"})
    if (json::get_int(*u, key).value_or(0) > 0) return true;
  return false;
}

bool plain_assistant(const boost::json::object& m) {
  if (json::get_string(m, "stopReason") != std::optional<std::string_view>("stop")) return false;
  if (json::get_string(m, "provider") == std::optional<std::string_view>("openclaw")) return false;
  if (m.contains("errorMessage")) return false;
  if (!some_usage(m)) return false;
  const auto* c = m.if_contains("content");
  std::string text;
  if (!c || !plain_text_blocks(*c, &text)) return false;
  return !is_silent_reply_payload_text(text) && !is_silent_reply_text(text);
}

}  // namespace

std::size_t plainly_clean_upto(const boost::json::array& messages, std::size_t clean_upto) {
  std::size_t i = std::min(clean_upto, messages.size());
  for (; i < messages.size(); ++i) {
    const auto& v = messages[i];
    if (!v.is_object()) break;
    const auto& m = v.get_object();
    const auto role = json::get_string(m, "role");
    const bool expect_user = i % 2 == 0;  // user, assistant, user, ...
    if (expect_user ? (role != std::optional<std::string_view>("user") || !plain_user(m))
                    : (role != std::optional<std::string_view>("assistant") || !plain_assistant(m)))
      break;
  }
  return i;
}

bool plainly_clean(const boost::json::array& messages) { return plainly_clean_upto(messages, 0) == messages.size(); }

}  // namespace sessionrt::actors::hygiene
