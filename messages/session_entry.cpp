#include "messages/session_entry.hpp"

namespace sessionrt {

std::vector<std::string> session_entry::usage_family_session_ids() const {
  std::vector<std::string> ids;
  if (const auto* a = json::get_array(obj_, "usageFamilySessionIds"))
    for (const auto& v : *a)
      if (v.is_string()) ids.emplace_back(v.get_string());
  return ids;
}

void session_entry::set_usage_family_session_ids(const std::vector<std::string>& ids) {
  boost::json::array a;
  for (const auto& id : ids) a.emplace_back(id);
  json::set(obj_, "usageFamilySessionIds", std::move(a));
}

}  // namespace sessionrt
