#include "messages/lifecycle_event.hpp"

#include "messages/iso_time.hpp"

namespace sessionrt {

boost::json::object lifecycle_event::to_json() const {
  boost::json::object o;
  o["type"] = type;
  o["sessionKey"] = session_key;
  o["agentId"] = agent_id;
  o["sessionId"] = session_id;
  o["at"] = format_iso_ms(at_ms);
  o["data"] = data;
  return o;
}

bool event_filter::wants_type(std::string_view type) const {
  if (types.empty()) return type != event_types::reply_delta;
  for (const auto& t : types) {
    if (t == type) return true;
    if (!t.empty() && t.back() == '.' && type.substr(0, t.size()) == t) return true;
  }
  return false;
}

bool event_filter::matches(const lifecycle_event& e) const {
  if (!wants_type(e.type)) return false;
  if (!key_prefix.empty() && e.session_key.compare(0, key_prefix.size(), key_prefix) != 0) return false;
  if (!agent_id.empty() && e.agent_id != agent_id) return false;
  return true;
}


}  // namespace sessionrt
