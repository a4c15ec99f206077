// chat.send / chat.abort / chat.history (the reference's "Chat events"): chat.send answers
// {runId, status:"started"} at once; the run's `chat` events (delta, final, aborted, error) go
// to the sending connection and to those watching the session (chat_delivery.hpp).
#include <chrono>

#include "gateway/chat_delivery.hpp"
#include "gateway/chat_events.hpp"
#include "gateway/chat_runs.hpp"
#include "gateway/message_identity.hpp"
#include "gateway/method_table.hpp"
#include "gateway/param_check.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/session_rows.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {


method_outcome chat_send(method_call& call) {
  if (auto e = check_params("chat.send", call.params,
                            {{"sessionKey", ptype::nonempty_string, true}, {"message", ptype::string, true},
                             {"idempotencyKey", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"sessionId", ptype::nonempty_string}, {"thinking", ptype::string},
                             {"deliver", ptype::boolean}, {"timeoutMs", ptype::integer},
                             {"attachments", ptype::array}, {"queueMode", ptype::string}}))
    return *e;
  auto& c = call.core;
  const std::string raw(*json::get_string(call.params, "sessionKey"));
  if (raw.size() > 512) {
    c.metrics->refused(refusal::bad_session_key);
    return params_error("chat.send", "at /sessionKey: must NOT have more than 512 characters");
  }
  auto key = resolve_session_key(*c.rt, raw, std::string(json::get_string(call.params, "agentId").value_or("")));
  if (!key.ok()) {
    c.metrics->refused(refusal::bad_session_key);
    return from_status(key.error());
  }
  // A cluster node that does not serve the key's shard (now) says so before "started", as a
  // retryable UNAVAILABLE (method_table.cpp), and keeps no run for the idempotency key.
  if (status served = c.rt->serves(key->key, key->agent_id); !served.ok()) return from_status(served);
  const std::string idem(*json::get_string(call.params, "idempotencyKey"));
  auto begun = c.runs->begin(idem, key->key, key->agent_id, call.conn_id);
  if (begun.duplicate) {
    c.metrics->refused(refusal::duplicate_idempotency_key);
    // A failed run's retry gets its error again, as OpenClaw's dedupe cache answers it.
    if (begun.error) return error_of(*begun.error, "UNAVAILABLE");
    return bj::value(bj::object{{"runId", begun.run_id}, {"status", begun.running ? "in_flight" : "ok"}});
  }
  c.metrics->turns_started.fetch_add(1);
  chat_event ev;
  ev.channel = "webchat";
  ev.peer_id = c.rt->settings().routing.session.main_key;
  ev.sender_id = "gateway";
  ev.session_key = key->key;
  ev.agent_id = key->agent_id;
  ev.text = std::string(*json::get_string(call.params, "message"));
  ev.sender_authorized = true;
  ev.message_fields = user_message_fields(begun.run_id);  // the run, stored with the turn as OpenClaw stores it
  ev.run_id = begun.run_id;  // named by the turn's events and its outcome (chat_delivery.hpp)
  const auto t0 = std::chrono::steady_clock::now();
  gateway_core* core = &c;
  const std::string run_id = begun.run_id;
  c.rt->send(std::move(ev), [core, run_id, t0](turn_outcome out) {
    core->metrics->ack_latency_ms(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    chat_acknowledged(*core, run_id, std::move(out));
  });
  return bj::value(bj::object{{"runId", run_id}, {"status", "started"}});
}

method_outcome chat_abort(method_call& call) {
  if (auto e = check_params("chat.abort", call.params,
                            {{"sessionKey", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"runId", ptype::nonempty_string}, {"preserveSideRuns", ptype::boolean}},
                            true))
    return *e;
  auto key = resolve_session_key(*call.core.rt, std::string(*json::get_string(call.params, "sessionKey")),
                                 std::string(json::get_string(call.params, "agentId").value_or("")));
  if (!key.ok()) {
    call.core.metrics->refused(refusal::bad_session_key);
    return from_status(key.error());
  }
  auto open = call.core.runs->open_runs(key->key);
  if (auto only = json::get_string(call.params, "runId")) {
    bool found = false;
    for (const auto& r : open) found = found || r == *only;
    if (!found) return bj::value(bj::object{{"ok", true}, {"aborted", false}, {"runIds", bj::array{}}});
  }
  bj::array ids;
  for (const auto& r : open) ids.emplace_back(bj::string(r));
  if (open.empty()) return bj::value(bj::object{{"ok", true}, {"aborted", false}, {"runIds", std::move(ids)}});
  chat_event ev;
  ev.channel = "webchat";
  ev.peer_id = "gateway";
  ev.session_key = key->key;
  ev.agent_id = key->agent_id;
  ev.text = "/stop";
  auto out = call.core.rt->send(std::move(ev)).get();
  if (!out.st.ok()) return from_status(out.st);
  return bj::value(bj::object{{"ok", true}, {"aborted", true}, {"runIds", std::move(ids)}});
}

method_outcome chat_history(method_call& call) {
  if (auto e = check_params("chat.history", call.params,
                            {{"sessionKey", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"limit", ptype::positive_integer}, {"sessionId", ptype::nonempty_string},
                             {"maxChars", ptype::positive_integer}, {"offset", ptype::integer},
                             {"inputRunIds", ptype::array}, {"maxBytes", ptype::positive_integer}}))
    return *e;
  if (auto l = json::get_int(call.params, "limit"); l && *l > 1000)
    return params_error("chat.history", "at /limit: must be <= 1000");
  auto key = resolve_session_key(*call.core.rt, std::string(*json::get_string(call.params, "sessionKey")),
                                 std::string(json::get_string(call.params, "agentId").value_or("")));
  if (!key.ok()) {
    call.core.metrics->refused(refusal::bad_session_key);
    return from_status(key.error());
  }
  const auto d = defaults_of(*call.core.rt, call.core.default_provider, call.core.default_model);
  bj::object out{{"sessionKey", key->key}};
  // OpenClaw's pending inputs (queued while a run is busy) and their receipts: sessionrt queues
  // a run's input inside the session, so none is ever pending here.
  out["pendingInputs"] = bj::object{{"items", bj::array{}}, {"total", 0}};
  if (call.params.contains("inputRunIds")) {
    out["inputReceipts"] = bj::array{};
    out["inputConsumptions"] = bj::array{};
  }
  auto row = call.core.rt->session(key->key, key->agent_id);
  if (!row.ok()) return from_status(row.error());
  if (!row->has_value()) {
    out["sessionId"] = nullptr;
    out["messages"] = bj::array{};
    out["hasMore"] = false;
    out["totalMessages"] = 0;
    out["defaults"] = defaults_json(d);
    return bj::value(std::move(out));
  }
  // Only the page is read from the transcript, shown as a person should see it: `limit` items
  // ending `offset` items before the newest (OpenClaw's paging: the UI asks for older pages with
  // the nextOffset it was given).
  const std::size_t limit = static_cast<std::size_t>(json::get_int(call.params, "limit").value_or(200));
  const auto offset = json::get_int(call.params, "offset").value_or(0);
  if (offset < 0) return params_error("chat.history", "at /offset: must be >= 0");
  auto h = call.core.rt->history(key->key, limit, static_cast<std::size_t>(offset));
  if (!h.ok()) return from_status(h.error());
  bj::array messages;
  for (const auto& m : h->messages) messages.push_back(history_message(m));
  // Identities: __openclaw {id, seq, runId} (message_identity.hpp).
  std::string run;
  attach_identities(messages, h->ids, h->seqs, run);
  out["sessionId"] = h->session_id;
  out["messages"] = std::move(messages);
  out["hasMore"] = h->older > 0;
  if (h->older > 0) out["nextOffset"] = static_cast<std::int64_t>(h->total_messages - h->older);
  out["totalMessages"] = static_cast<std::int64_t>(h->total_messages);
  out["defaults"] = defaults_json(d);
  runtime::session_row r{key->agent_id, key->key, std::move(**row)};
  out["sessionInfo"] = session_row_json(r, d, call.core.runs->open_runs(key->key));
  return bj::value(std::move(out));
}

}  // namespace

void add_chat_methods(std::vector<method_entry>& t) {
  // On the loop: it waits for nothing (the turn's outcome comes to a callback), so it needs no
  // thread of its own.
  t.push_back({"chat.send", method_scope::write, true, chat_send});
  t.push_back({"chat.abort", method_scope::write, false, chat_abort});
  t.push_back({"chat.history", method_scope::read, false, chat_history});
}

}  // namespace sessionrt::gateway
