#include "gateway/method_table.hpp"

#include "gateway/forward_rule.hpp"

namespace sessionrt::gateway {

void add_maintenance_methods(std::vector<method_entry>& table);  // sessions.cleanup (maintenance_methods.cpp)

const std::vector<method_entry>& method_table() {
  static const std::vector<method_entry> table = [] {
    std::vector<method_entry> t;
    add_status_methods(t);
    add_session_methods(t);
    add_chat_methods(t);
    add_runner_methods(t);
    add_maintenance_methods(t);
    add_ui_methods(t);
    return t;
  }();
  return table;
}

const method_entry* find_method(std::string_view name) {
  for (const auto& m : method_table())
    if (m.name == name) return &m;
  return nullptr;
}

boost::json::array method_names() {
  boost::json::array out;
  for (const auto& m : method_table()) out.emplace_back(boost::json::string(m.name));
  return out;
}

boost::json::array event_names() {
  return {"connect.challenge", "tick", "chat", "sessions.changed", "shutdown",
          "sessionrt.event", "sessionrt.turn.request", "sessionrt.turn.cancel", "session.message"};
}

std::string_view watch_param(std::string_view method) {
  if (method == "chat.send" || method == "chat.history" || method == "chat.startup") return "sessionKey";
  if (method == "sessions.describe") return "key";
  return {};
}

frame_error error_of(std::string message, std::string code) {
  frame_error e;
  e.code = std::move(code);
  e.message = std::move(message);
  return e;
}

frame_error from_status(const status& st) {
  // A shard this node does not serve (a cluster's owner moved, or a forward came on a stale
  // view): the caller retries, and finds the new owner (forward_rule.hpp).
  if (st.code() == errc::not_owner) return forward_unavailable(st.message(), "not_owner");
  return error_of(st.message(), st.code() == errc::invalid_argument || st.code() == errc::not_found
                                    ? "INVALID_REQUEST" : "UNAVAILABLE");
}

}  // namespace sessionrt::gateway
