#include "gateway/frame_dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "actors/router/route_resolver.hpp"
#include "gateway/control_ui.hpp"
#include "gateway/param_check.hpp"
#include "gateway/runner_pool.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/shard_forward.hpp"
#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

// The refusal a bad frame counts as.
refusal frame_refusal(fault why) {
  switch (why) {
    case fault::not_json: return refusal::not_json;
    case fault::before_connect: return refusal::before_connect;
    default: return refusal::bad_frame;
  }
}

refusal connect_refusal(fault why) {
  switch (why) {
    case fault::protocol_mismatch: return refusal::protocol_mismatch;
    case fault::token_missing:
    case fault::token_mismatch: return refusal::token_mismatch;
    default: return refusal::bad_connect;
  }
}

// The details code the client is told (AUTH_TOKEN_MISMATCH, ...), for the log line only.
std::string wire_code(const frame_error& e) {
  const bj::value* code = e.details.is_object() ? e.details.as_object().if_contains("code") : nullptr;
  return code && code->is_string() ? std::string(code->get_string()) : std::string("bad connect params");
}

}  // namespace

std::string response_ok(const std::string& id, const bj::value& payload) {
  std::string out = "{\"type\":\"res\",\"id\":";
  json::append_string(out, id);
  out += ",\"ok\":true,\"payload\":";
  json::append_compact(out, payload);
  out += '}';
  return out;
}

std::string response_error(const std::string& id, const frame_error& e) {
  std::string out = "{\"type\":\"res\",\"id\":";
  json::append_string(out, id);
  out += ",\"ok\":false,\"error\":";
  json::append_compact(out, e.to_json());
  out += '}';
  return out;
}

std::string event_frame(std::string_view name, const std::string& payload_json, std::int64_t seq) {
  std::string out = "{\"type\":\"event\",\"event\":";
  json::append_string(out, name);
  out += ",\"payload\":";
  out += payload_json;
  out += ",\"seq\":";
  out += std::to_string(seq);
  out += '}';
  return out;
}

frame_dispatch::frame_dispatch(dispatch_options opt, gateway_core& core, dispatch_port& port)
    : opt_(std::move(opt)), core_(core), port_(port) {}

void frame_dispatch::opened(dispatch_conn& c) {
  bj::object challenge{{"type", "event"},
                       {"event", "connect.challenge"},
                       {"payload", bj::object{{"nonce", new_uuid_v4()}, {"ts", core_.now_ms()}}}};
  port_.send(c, json::to_compact(challenge));
}

void frame_dispatch::handshake_expired(dispatch_conn& c, std::int64_t timeout_ms) {
  if (c.state.current() != connection_state::phase::awaiting_connect) return;
  count_refusal(*core_.metrics, refusal::handshake_timeout,
                fmt::format("connection {}: no connect within {} ms", c.id, timeout_ms));
  port_.close(c, close_code::policy, "handshake timeout");
}

void frame_dispatch::on_text(dispatch_conn& c, std::string_view text) {
  if (c.state.current() == connection_state::phase::closed) return;
  core_.metrics->frames_in.fetch_add(1);
  inbound_frame f = c.state.on_text(text);
  switch (f.what) {
    case inbound_frame::kind::close:
      core_.metrics->refused(frame_refusal(f.error.why));
      if (f.respond_first) port_.send(c, response_error(f.id, f.error));
      port_.close(c, f.close.code, f.close.reason);
      return;
    case inbound_frame::kind::error:
      core_.metrics->refused(refusal::bad_frame);
      port_.send(c, response_error(f.id, f.error));
      return;
    case inbound_frame::kind::request: break;
  }
  if (f.method == "connect") connect(c, f);
  else request(c, f);
}

void frame_dispatch::connect(dispatch_conn& c, const inbound_frame& f) {
  auto v = c.state.check_connect(f.params, opt_.token);
  static const std::map<std::string, std::string> kNoHeaders;
  if (std::string why; core_.ui && !core_.ui->origin_allowed(c.http_headers ? *c.http_headers : kNoHeaders, &why))
    v = with_origin_check(std::move(v), false, why);
  if (!v.ok) {
    count_refusal(*core_.metrics, connect_refusal(v.error.why),
                  fmt::format("connection {}: connect refused: {} ({})", c.id, wire_code(v.error), v.close.reason));
    port_.send(c, response_error(f.id, v.error));
    port_.close(c, v.close.code, v.close.reason);
    return;
  }
  port_.connected(c);
  port_.send(c, response_ok(f.id, hello(c)));
}

void frame_dispatch::request(dispatch_conn& c, inbound_frame& f) {
  core_.metrics->requests.fetch_add(1);
  const method_entry* m = find_method(f.method);
  if (!m) {
    core_.metrics->refused(refusal::unknown_method);
    port_.send(c, response_error(f.id, error_of("unknown method: " + f.method)));
    return;
  }
  if (!c.state.allowed(m->scope)) {
    core_.metrics->refused(refusal::forbidden);
    port_.send(c, response_error(f.id, error_of("missing scope: " + std::string(scope_name(m->scope)), "FORBIDDEN")));
    return;
  }
  if (!f.params.is_null() && !f.params.is_object()) {
    core_.metrics->refused(refusal::bad_params);
    port_.send(c, response_error(f.id, params_error(f.method, "must be object")));
    return;
  }
  if (!m->on_loop && c.in_flight >= opt_.max_requests_in_flight) {
    // Refused before anything is queued: a flood from one connection costs it answers, not the
    // others their turn (the workers serve connections in turn as well).
    core_.metrics->refused(refusal::busy_connection);
    port_.send(c, response_error(f.id, busy("gateway busy: " + std::to_string(c.in_flight) +
                                            " requests of this connection in flight (gateway.maxRequestsInFlight)")));
    return;
  }
  bj::object params = f.params.is_object() ? std::move(f.params.get_object()) : bj::object{};
  // Before the call runs: a chat.send's first delta, or any run after the history was read, then
  // reaches this connection.
  if (const auto field = watch_param(f.method); !field.empty())
    if (const auto raw = json::get_string(params, field))
      if (auto key = resolve_session_key(*core_.rt, std::string(*raw)); key.ok()) watch(c, key->key);
  // A session whose shard another node owns: the call is served there (shard_forward.hpp).
  if (core_.forward && core_.forward->divert(c.id, c.state.client(), f.method, params,
                                             [this, conn = c.id, id = f.id](method_outcome out) {
                                               port_.to_loop([this, conn, id, out = std::move(out)] { answered(conn, id, out); });
                                             })) {
    ++c.in_flight;
    return;
  }
  if (!m->on_loop) {
    call_off_loop(c, f, *m, std::move(params));
    return;
  }
  const bool subscribed = c.state.sessions_subscribed;
  method_call call{params, core_, c.id, &c.state};
  answer(c, f.id, m->handler(call));
  if (subscribed != c.state.sessions_subscribed) {
    if (c.state.sessions_subscribed) sessions_subscribers_.fetch_add(1);
    else sessions_subscribers_.fetch_sub(1);
  }
}

void frame_dispatch::call_off_loop(dispatch_conn& c, const inbound_frame& f, const method_entry& m, bj::object params) {
  const std::uint64_t conn = c.id;
  // The job owns what it uses; its answer is handed back to the loop, which finds the
  // connection again (it may have gone meanwhile).
  std::function<void()> job = [this, conn, id = f.id, method = &m, params = std::move(params)] {
    method_outcome out;
    try {
      method_call call{params, core_, conn, nullptr};
      out = method->handler(call);
    } catch (const std::exception& ex) {
      out = error_of(std::string("internal error: ") + ex.what(), "UNAVAILABLE");
    }
    port_.to_loop([this, conn, id, out = std::move(out)] { answered(conn, id, out); });
  };
  if (!port_.run_off_loop(conn, job)) {
    core_.metrics->refused(refusal::busy_queue);
    port_.send(c, response_error(f.id, busy("gateway busy: " + std::to_string(opt_.max_queued_requests) +
                                            " calls waiting (gateway.maxQueuedRequests)")));
    return;
  }
  ++c.in_flight;
}

void frame_dispatch::answered(std::uint64_t conn, const std::string& id, const method_outcome& out) {
  dispatch_conn* c = port_.find(conn);
  if (c && c->in_flight > 0) --c->in_flight;
  if (!c || c->state.current() != connection_state::phase::open) {
    core_.metrics->refused(refusal::disconnect_mid_request);
    return;
  }
  answer(*c, id, out);
}

void frame_dispatch::answer(dispatch_conn& c, const std::string& id, const method_outcome& out) {
  if (const auto* e = std::get_if<frame_error>(&out)) {
    if (e->why == fault::bad_params) core_.metrics->refused(refusal::bad_params);
    port_.send(c, response_error(id, *e));
  } else {
    port_.send(c, response_ok(id, std::get<bj::value>(out)));
  }
}

// OpenClaw's ErrorShape for a request a busy server did not take: UNAVAILABLE, retryable.
frame_error frame_dispatch::busy(std::string message) const {
  frame_error e;
  e.code = "UNAVAILABLE";
  e.message = std::move(message);
  e.retryable = true;
  e.retry_after_ms = opt_.busy_retry_after_ms;
  return e;
}

void frame_dispatch::watch(dispatch_conn& c, const std::string& key) {
  auto change = c.state.watch(key);
  if (change.added) watchers_.add(key, c.id);
  if (change.evicted) watchers_.remove(*change.evicted, c.id);
}

void frame_dispatch::closed(dispatch_conn& c) {
  c.state.mark_closed();
  if (c.state.events_subscription) core_.rt->unsubscribe(*c.state.events_subscription);
  c.state.events_subscription.reset();
  if (c.state.runner) core_.runners->detach(c.id);
  c.state.runner = false;
  for (const auto& key : c.state.watched()) watchers_.remove(key, c.id);
  if (core_.forward) core_.forward->closed(c.id);  // its subscriptions to other nodes' events
  if (c.state.sessions_subscribed) sessions_subscribers_.fetch_sub(1);
  c.state.sessions_subscribed = false;
}

std::vector<std::uint64_t> frame_dispatch::audience_of(std::uint64_t origin, const std::string& key) const {
  const auto& watching = watchers_.of(key);
  std::vector<std::uint64_t> out(watching.begin(), watching.end());
  if (std::find(out.begin(), out.end(), origin) == out.end()) out.push_back(origin);
  return out;
}

bj::object frame_dispatch::hello(const dispatch_conn& c) const {
  const std::string def_agent = actors::default_agent_of(core_.rt->settings().routing);
  bj::array scopes;
  for (const auto& s : c.state.scopes()) scopes.emplace_back(bj::string(s));
  const auto& session = core_.rt->settings().routing.session;
  const std::string main_key = session.main_key.empty() ? std::string("main") : session.main_key;
  return bj::object{
      {"type", "hello-ok"},
      {"protocol", kGatewayProtocol},
      {"server", bj::object{{"version", core_.server_version}, {"connId", std::to_string(c.id)}}},
      {"features", bj::object{{"methods", method_names()}, {"events", event_names()}, {"capabilities", bj::array{}}}},
      {"snapshot",
       bj::object{{"presence", bj::array{}},
                  {"health", bj::object{}},
                  {"stateVersion", bj::object{{"presence", 0}, {"health", 0}}},
                  {"uptimeMs", core_.now_ms() - core_.started_ms},
                  {"stateDir", core_.rt->state_dir()},
                  {"sessionDefaults", bj::object{{"defaultAgentId", def_agent},
                                                 {"mainKey", main_key},
                                                 {"mainSessionKey", "agent:" + def_agent + ":" + main_key},
                                                 {"scope", session.scope == actors::session_scope::global ? "global" : "per-sender"}}},
                  {"authMode", "token"}}},
      {"auth", bj::object{{"method", "token"}, {"role", "operator"}, {"scopes", std::move(scopes)}}},
      {"policy", bj::object{{"maxPayload", opt_.max_payload},
                            {"maxBufferedBytes", opt_.max_buffered_bytes},
                            {"tickIntervalMs", opt_.tick_interval_ms}}}};
}

}  // namespace sessionrt::gateway
