#include "gateway/chat_delivery.hpp"

#include "gateway/chat_events.hpp"
#include "gateway/chat_runs.hpp"
#include "gateway/session_notify.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::gateway {

namespace {

void send_closing(gateway_core& core, const chat_runs::finished& run) {
  auto closing = run_closing_event(run, run.outcome, core.now_ms());
  if (closing.state == "final") core.metrics->turns_completed.fetch_add(1);
  else if (closing.state == "aborted") core.metrics->turns_aborted.fetch_add(1);
  else core.metrics->turns_failed.fetch_add(1);
  core.sink->to_session(run.origin, run.session_key, "chat", std::move(closing.payload));
  // The row changed (tokens, updatedAt): read it off the actor threads and the loop, if anyone
  // listens.
  if (!core.sink->has_audience(frame_sink::audience::sessions_subscribers)) return;
  core.sink->run_later([c = &core, key = run.session_key, agent = run.agent_id] {
    notify_session_changed(*c, key, agent, "send");
  });
}

}  // namespace

bool turn_ran_model(const turn_outcome& out) {
  if (!out.command.empty()) return false;
  if (out.st.ok()) return true;
  const std::string& m = out.st.message();
  return m.rfind("model call failed", 0) == 0 || m.rfind("the turn was cancelled", 0) == 0;
}

void chat_reply_delta(gateway_core& core, const lifecycle_event& e) {
  const bool discarded = json::get_bool(e.data, "discarded").value_or(false);
  const std::string text(json::get_string(e.data, "text").value_or(""));
  core.runs->on_piece(e.session_key, text, discarded, json::get_int(e.data, "index").value_or(0),
                      [&core](const chat_runs::delta& d) {
                        core.sink->to_session(d.origin, d.session_key, "chat", delta_event(d, core.now_ms()));
                      });
}

void chat_turn_ended(gateway_core& core, const std::string& session_key) {
  core.runs->on_turn_end(session_key, [&core](const chat_runs::finished& run) { send_closing(core, run); });
}

void chat_acknowledged(gateway_core& core, const std::string& run_id, turn_outcome out) {
  const bool wait = turn_ran_model(out);
  auto send = [&core](const chat_runs::finished& run) { send_closing(core, run); };
  if (core.runs->finish(run_id, std::move(out), wait, send) != chat_runs::ack::held) return;
  core.sink->after(kClosingHold, [c = &core, run_id] {
    if (c->runs->expire(run_id, [c](const chat_runs::finished& run) { send_closing(*c, run); }))
      c->metrics->chat_holds_expired.fetch_add(1);
  });
}

}  // namespace sessionrt::gateway
