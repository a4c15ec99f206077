#include "actors/session/run_ids_seen.hpp"

#include <vector>

#include "messages/transcript_entry.hpp"
#include "messages/user_run_identity.hpp"

namespace sessionrt::actors {
namespace {

std::string_view role_of(const boost::json::object& m) {
  const auto* role = m.if_contains("role");
  return role && role->is_string() ? std::string_view(role->get_string()) : std::string_view();
}

// The run id of a user message in the context ("" for anything else).
std::string user_run_id(const boost::json::value& v) {
  if (!v.is_object() || role_of(v.get_object()) != "user") return {};
  return run_of_user_message(v.get_object());
}

}  // namespace

void run_ids_seen::add(const std::string& run_id) {
  if (run_id.empty() || !ids_.insert(run_id).second) return;
  if (order_.size() < capacity_) {
    order_.push_back(run_id);
    return;
  }
  ids_.erase(order_[oldest_]);
  order_[oldest_] = run_id;
  oldest_ = (oldest_ + 1) % capacity_;
}

void run_ids_seen::add_from_context(const boost::json::array& messages) {
  std::vector<std::string> recent;  // newest first
  for (auto it = messages.rbegin(); it != messages.rend() && recent.size() < capacity_; ++it)
    if (std::string id = user_run_id(*it); !id.empty()) recent.push_back(std::move(id));
  for (auto it = recent.rbegin(); it != recent.rend(); ++it) add(*it);
}

const boost::json::object* stored_reply_of_run(const boost::json::array& messages, const std::string& run_id) {
  if (run_id.empty()) return nullptr;
  std::size_t at = messages.size();
  for (std::size_t i = messages.size(); i-- > 0;)
    if (user_run_id(messages[i]) == run_id) {
      at = i;
      break;
    }
  if (at == messages.size()) return nullptr;
  const boost::json::object* last = nullptr;
  for (std::size_t i = at + 1; i < messages.size(); ++i) {
    if (!messages[i].is_object()) continue;
    const auto& m = messages[i].get_object();
    const std::string_view role = role_of(m);
    if (role == "user") break;
    if (role == "assistant") last = &m;
  }
  return last && ends_turn(*last) ? last : nullptr;
}

}  // namespace sessionrt::actors
