#include "gateway/connection_state.hpp"

#include <algorithm>
#include <array>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

constexpr std::array<std::string_view, 17> kClientIds = {
    "webchat-ui",   "openclaw-control-ui", "openclaw-browser-copilot", "openclaw-tui",   "webchat",
    "cli",          "gateway-client",      "openclaw-macos",           "openclaw-linux", "openclaw-ios",
    "openclaw-watchos", "openclaw-android", "node-host",               "openclaw-worker", "test",
    "fingerprint",  "openclaw-probe"};
constexpr std::array<std::string_view, 8> kClientModes = {"webchat", "cli", "ui", "backend",
                                                           "node",    "worker", "probe", "test"};

frame_error invalid(fault why, std::string message, bj::value details = nullptr) {
  frame_error e;
  e.message = std::move(message);
  e.details = std::move(details);
  e.why = why;
  return e;
}

connect_verdict refuse(frame_error e, int code, std::string reason) {
  connect_verdict v;
  v.error = std::move(e);
  v.close = {code, std::move(reason)};
  return v;
}

std::string str_or_empty(const bj::object& o, std::string_view key) {
  auto s = json::get_string(o, key);
  return s ? std::string(*s) : std::string();
}

}  // namespace

std::string_view scope_name(method_scope s) {
  switch (s) {
    case method_scope::read: return "operator.read";
    case method_scope::write: return "operator.write";
    case method_scope::admin: return "operator.admin";
  }
  return "operator.admin";
}

bool is_known_client_id(std::string_view id) {
  return std::find(kClientIds.begin(), kClientIds.end(), id) != kClientIds.end();
}
bool is_known_client_mode(std::string_view mode) {
  return std::find(kClientModes.begin(), kClientModes.end(), mode) != kClientModes.end();
}

bj::object frame_error::to_json() const {
  bj::object o{{"code", code}, {"message", message}};
  if (!details.is_null()) o["details"] = details;
  if (retryable) o["retryable"] = true;
  if (retry_after_ms) o["retryAfterMs"] = *retry_after_ms;
  return o;
}

inbound_frame connection_state::on_text(std::string_view text) {
  inbound_frame f;
  json::parse_limits limits;
  auto parsed = json::parse(text, limits);
  if (!parsed.ok() || !parsed->is_object()) {
    // No id to answer: the frame cannot be a request.
    f.what = inbound_frame::kind::close;
    f.error.why = fault::not_json;
    f.close = {close_code::policy, parsed.ok() ? "invalid request frame: not a JSON object"
                                               : "invalid request frame: not JSON"};
    return f;
  }
  const bj::object& o = parsed->get_object();
  const auto type = json::get_string(o, "type");
  const auto id = json::get_string(o, "id");
  const auto method = json::get_string(o, "method");
  if (id) f.id = std::string(*id);
  if (!type || *type != "req" || !id || id->empty() || !method || method->empty()) {
    std::string why = !type || *type != "req" ? "at /type: must be \"req\""
                      : !id || id->empty()    ? "at /id: must be a non-empty string"
                                              : "at /method: must be a non-empty string";
    if (phase_ == phase::awaiting_connect || f.id.empty()) {
      f.what = inbound_frame::kind::close;
      f.respond_first = !f.id.empty();
      f.error = invalid(fault::bad_frame, "invalid request frame: " + why);
      f.close = {close_code::policy, "invalid request frame"};
      return f;
    }
    f.what = inbound_frame::kind::error;
    f.error = invalid(fault::bad_frame, "invalid request frame: " + why);
    return f;
  }
  f.method = std::string(*method);
  if (const auto* p = json::find(o, "params")) f.params = *p;
  if (phase_ == phase::awaiting_connect && f.method != "connect") {
    f.what = inbound_frame::kind::close;
    f.respond_first = true;
    f.error = invalid(fault::before_connect, "invalid handshake: first request must be connect");
    f.close = {close_code::policy, "invalid handshake: first request must be connect"};
    return f;
  }
  if (phase_ == phase::open && f.method == "connect") {
    f.what = inbound_frame::kind::error;
    f.error = invalid(fault::bad_frame, "invalid handshake: already connected");
    return f;
  }
  f.what = inbound_frame::kind::request;
  return f;
}

connect_verdict connection_state::check_connect(const bj::value& params, std::string_view expected_token) {
  auto bad = [](std::string why) {
    return refuse(invalid(fault::bad_connect, "invalid connect params: " + why), close_code::policy, "invalid connect params");
  };
  if (!params.is_object()) return bad("must be object");
  const bj::object& p = params.get_object();
  const auto min_p = json::get_int(p, "minProtocol");
  const auto max_p = json::get_int(p, "maxProtocol");
  if (!min_p) return bad("must have required property 'minProtocol'");
  if (!max_p) return bad("must have required property 'maxProtocol'");
  const auto* client = json::get_object(p, "client");
  if (!client) return bad("must have required property 'client'");
  client_info ci;
  ci.id = str_or_empty(*client, "id");
  ci.version = str_or_empty(*client, "version");
  ci.platform = str_or_empty(*client, "platform");
  ci.mode = str_or_empty(*client, "mode");
  ci.instance_id = str_or_empty(*client, "instanceId");
  ci.display_name = str_or_empty(*client, "displayName");
  if (!is_known_client_id(ci.id)) return bad("at /client/id: must be equal to one of the allowed values");
  if (ci.version.empty()) return bad("at /client/version: must NOT have fewer than 1 characters");
  if (ci.platform.empty()) return bad("at /client/platform: must NOT have fewer than 1 characters");
  if (!is_known_client_mode(ci.mode)) return bad("at /client/mode: must be equal to one of the allowed values");
  if (*min_p > kGatewayProtocol || *max_p < kGatewayProtocol)
    return refuse(invalid(fault::protocol_mismatch, "protocol mismatch",
                          bj::object{{"code", "PROTOCOL_MISMATCH"}, {"expectedProtocol", kGatewayProtocol}}),
                  close_code::protocol_error, "protocol mismatch");
  std::string token;
  if (const auto* auth = json::get_object(p, "auth")) token = str_or_empty(*auth, "token");
  if (token.empty())
    return refuse(invalid(fault::token_missing, "unauthorized: gateway token missing", bj::object{{"code", "AUTH_TOKEN_MISSING"}}),
                  close_code::policy, "unauthorized: gateway token missing");
  // Constant time over the expected length: the comparison must not tell how much matched.
  bool same = token.size() == expected_token.size();
  unsigned char diff = 0;
  for (std::size_t i = 0; i < expected_token.size(); ++i)
    diff |= static_cast<unsigned char>(expected_token[i] ^ (i < token.size() ? token[i] : 0));
  if (!same || diff != 0)
    return refuse(invalid(fault::token_mismatch, "unauthorized: gateway token mismatch", bj::object{{"code", "AUTH_TOKEN_MISMATCH"}}),
                  close_code::policy, "unauthorized: gateway token mismatch");
  if (auto role = json::get_string(p, "role"); role && *role != "operator")
    return refuse(invalid(fault::bad_connect, "unauthorized: role " + std::string(*role) + " is not served by this gateway"),
                  close_code::policy, "unauthorized role");
  // The scopes asked for, limited to the operator scopes this gateway knows; none asked: read.
  std::vector<std::string> granted;
  if (const auto* asked = json::get_array(p, "scopes")) {
    for (const auto& s : *asked) {
      if (!s.is_string()) return bad("at /scopes: must be array of strings");
      const std::string name(s.get_string());
      if (name.rfind("operator.", 0) == 0 && std::find(granted.begin(), granted.end(), name) == granted.end())
        granted.push_back(name);
    }
  }
  if (granted.empty()) granted.push_back("operator.read");
  connect_verdict v;
  v.ok = true;
  v.scopes = granted;
  scopes_ = std::move(granted);
  client_ = std::move(ci);
  phase_ = phase::open;
  return v;
}

connection_state::watch_change connection_state::watch(const std::string& key) {
  watch_change out;
  if (auto it = watch_pos_.find(key); it != watch_pos_.end()) {
    watched_.splice(watched_.begin(), watched_, it->second);
    return out;
  }
  watched_.push_front(key);
  watch_pos_[key] = watched_.begin();
  out.added = true;
  if (watched_.size() > kMaxWatchedKeys) {
    out.evicted = std::move(watched_.back());
    watch_pos_.erase(*out.evicted);
    watched_.pop_back();
  }
  return out;
}

bool connection_state::allowed(method_scope needed) const {
  auto has = [&](std::string_view s) { return std::find(scopes_.begin(), scopes_.end(), s) != scopes_.end(); };
  if (has("operator.admin")) return true;
  switch (needed) {
    case method_scope::read: return has("operator.read") || has("operator.write");
    case method_scope::write: return has("operator.write");
    case method_scope::admin: return false;
  }
  return false;
}

}  // namespace sessionrt::gateway
