#include "messages/user_run_identity.hpp"

#include <string_view>

namespace sessionrt {

namespace {
constexpr std::string_view k_user_suffix = ":user";
}

boost::json::object user_message_fields(const std::string& run_id) {
  return {{"idempotencyKey", run_id + std::string(k_user_suffix)}, {"__openclaw", boost::json::object{{"runId", run_id}}}};
}

std::string run_of_user_message(const boost::json::object& m) {
  if (const auto* k = m.if_contains("idempotencyKey"); k && k->is_string()) {
    const std::string_view key = k->get_string();
    if (key.size() > k_user_suffix.size() && key.ends_with(k_user_suffix))
      return std::string(key.substr(0, key.size() - k_user_suffix.size()));
  }
  if (const auto* meta = m.if_contains("__openclaw"); meta && meta->is_object())
    if (const auto* r = meta->get_object().if_contains("runId"); r && r->is_string()) return std::string(r->get_string());
  return {};
}

}  // namespace sessionrt
