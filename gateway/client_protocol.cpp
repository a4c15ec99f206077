#include "gateway/client_protocol.hpp"

#include <boost/json/array.hpp>

#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {
status bad_frame(const std::string& what) { return status(errc::corrupt, "gateway frame " + what); }
}  // namespace

result<server_frame> parse_server_frame(std::string_view text) {
  // The server's own limit (policy.maxPayload) bounds what reaches here; 64 MiB is the reader's.
  auto parsed = json::parse_object(text);
  if (!parsed) return bad_frame("is not a JSON object: " + parsed.error().message());
  const bj::object& o = *parsed;
  auto type = json::get_string(o, "type");
  if (!type) return bad_frame("has no string \"type\"");
  server_frame f;
  if (const bj::value* p = json::find(o, "payload")) f.payload = *p;
  if (*type == "res") {
    f.type = server_frame::kind::response;
    auto id = json::get_string(o, "id");
    if (!id || id->empty()) return bad_frame("\"res\" has no string \"id\"");
    f.id = std::string(*id);
    auto ok = json::get_bool(o, "ok");
    if (!ok) return bad_frame("\"res\" " + f.id + " has no boolean \"ok\"");
    f.ok = *ok;
    if (!f.ok) {
      const bj::object* err = json::get_object(o, "error");
      if (!err) return bad_frame("\"res\" " + f.id + " has ok:false and no \"error\" object");
      auto code = json::get_string(*err, "code");
      auto message = json::get_string(*err, "message");
      if (!code || code->empty()) return bad_frame("\"res\" " + f.id + " has an error without \"code\"");
      if (!message || message->empty()) return bad_frame("\"res\" " + f.id + " has an error without \"message\"");
      f.error.code = std::string(*code);
      f.error.message = std::string(*message);
      if (const bj::value* d = json::find(*err, "details")) f.error.details = *d;
      f.error.retryable = json::get_bool(*err, "retryable").value_or(false);
    }
    return f;
  }
  if (*type == "event") {
    f.type = server_frame::kind::event;
    auto name = json::get_string(o, "event");
    if (!name || name->empty()) return bad_frame("\"event\" has no string \"event\" name");
    f.event = std::string(*name);
    if (const bj::value* s = json::find(o, "seq")) {
      auto n = json::as_int(*s);
      if (!n || *n < 0) return bad_frame("event " + f.event + " has a \"seq\" that is not a non-negative integer");
      f.seq = *n;
    }
    return f;
  }
  return bad_frame("has unknown \"type\": \"" + std::string(*type) + "\"");
}

std::string request_frame(std::string_view id, std::string_view method, const bj::value& params) {
  bj::object o;
  o["type"] = "req";
  o["id"] = id;
  o["method"] = method;
  o["params"] = params;
  return json::to_compact(o);
}

bj::object connect_params(const client_identity& who) {
  bj::object client;
  client["id"] = who.client_id;
  if (!who.display_name.empty()) client["displayName"] = who.display_name;
  client["version"] = who.version;
  client["platform"] = "linux";
  client["deviceFamily"] = "Linux";
  client["mode"] = who.mode;
  client["instanceId"] = who.instance_id.empty() ? new_uuid_v4() : who.instance_id;
  bj::array scopes;
  for (const auto& s : who.scopes) scopes.emplace_back(s);
  bj::object p;
  p["minProtocol"] = kProtocolVersion;
  p["maxProtocol"] = kProtocolVersion;
  p["client"] = std::move(client);
  p["caps"] = bj::array();
  p["auth"] = bj::object{{"token", who.token}};
  p["role"] = "operator";
  p["scopes"] = std::move(scopes);
  return p;
}

status to_status(const gateway_error& e, std::string_view method) {
  errc c = errc::internal;
  if (e.code == "INVALID_REQUEST") c = errc::invalid_argument;
  else if (e.code == "FORBIDDEN" || e.code == "NOT_PAIRED") c = errc::unsupported;
  else if (e.code == "UNAVAILABLE") c = errc::io_error;
  return status(c, "gateway refused " + std::string(method) + ": " + e.code + ": " + e.message);
}

status event_sequence::observe(const server_frame& f) {
  if (f.type != server_frame::kind::event || !f.seq) return status::success();
  std::int64_t got = *f.seq;
  std::optional<std::int64_t> prev = last_;
  last_ = got;
  if (prev && got != *prev + 1)
    return status(errc::corrupt, "event gap: expected seq " + std::to_string(*prev + 1) + ", got " +
                                     std::to_string(got) + " (event " + f.event + ")");
  return status::success();
}

std::string scope_for_method(std::string_view method) {
  static constexpr std::string_view kRead[] = {"sessions.list", "sessions.describe", "sessions.subscribe",
                                               "chat.history",  "status",            "health"};
  static constexpr std::string_view kWrite[] = {"sessions.patch", "chat.send", "chat.abort"};
  for (auto m : kRead)
    if (m == method) return "operator.read";
  for (auto m : kWrite)
    if (m == method) return "operator.write";
  return "operator.admin";
}

}  // namespace sessionrt::gateway
