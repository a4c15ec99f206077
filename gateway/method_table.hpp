// method_table: every method this gateway answers, in one table: its name, the scope it needs
// (operator.read / write / admin, as OpenClaw's CLI asks for them), whether it runs on the loop
// thread (it changes the connection's subscriptions, or only hands work to the runtime without
// waiting, as chat.send) or on a worker (it may wait on the runtime), and its handler. The same table gives hello-ok's features.methods. A method not in
// it answers `unknown method: X`.
// A handler takes the params (an object; absent params are {}) and returns the payload or a
// frame_error; param checking (param_check.hpp) happens inside it, so messages name the field.
#pragma once
#include <boost/json.hpp>
#include <string_view>
#include <variant>
#include <vector>

#include "gateway/connection_state.hpp"
#include "gateway/gateway_core.hpp"

namespace sessionrt::gateway {

struct method_call {
  const boost::json::object& params;
  gateway_core& core;
  std::uint64_t conn_id = 0;
  connection_state* conn = nullptr;  // set for on_loop methods only
};

using method_outcome = std::variant<boost::json::value, frame_error>;
using method_handler = method_outcome (*)(method_call& call);

struct method_entry {
  std::string_view name;
  method_scope scope = method_scope::read;
  bool on_loop = false;
  method_handler handler = nullptr;
};

// The groups, one file each.
void add_session_methods(std::vector<method_entry>& table);  // sessions.*
void add_chat_methods(std::vector<method_entry>& table);     // chat.*
void add_status_methods(std::vector<method_entry>& table);   // status, health, sessionrt.events.subscribe
void add_runner_methods(std::vector<method_entry>& table);   // sessionrt.runner.attach, sessionrt.turn.result
void add_ui_methods(std::vector<method_entry>& table);       // what the web Control UI calls (ui_methods.cpp)

const std::vector<method_entry>& method_table();
const method_entry* find_method(std::string_view name);
boost::json::array method_names();
boost::json::array event_names();

// The param naming the session that a call of `method` makes its connection watch (it then gets
// the `chat` events of that session's runs): chat.send and chat.history "sessionKey",
// chat.startup "sessionKey", sessions.describe "key"; empty for the other methods.
std::string_view watch_param(std::string_view method);

frame_error error_of(std::string message, std::string code = "INVALID_REQUEST");
// A runtime error as the answer's error: what the caller got wrong (invalid_argument,
// not_found) is INVALID_REQUEST, a shard this node does not serve (not_owner) UNAVAILABLE
// retryable with retryAfterMs, anything else UNAVAILABLE.
frame_error from_status(const status& st);

}  // namespace sessionrt::gateway
