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

// The run a bus event belongs to ("" when it names none: not a gateway run).
std::string run_of(const lifecycle_event& e) { return std::string(json::get_string(e.data, "runId").value_or("")); }

}  // namespace

void chat_reply_delta(gateway_core& core, const lifecycle_event& e) {
  const std::string run = run_of(e);
  if (run.empty()) return;
  const bool discarded = json::get_bool(e.data, "discarded").value_or(false);
  const std::string text(json::get_string(e.data, "text").value_or(""));
  core.runs->on_piece(run, text, discarded, [&core](const chat_runs::delta& d) {
    core.sink->to_session(d.origin, d.session_key, "chat", delta_event(d, core.now_ms()));
  });
}

void chat_turn_ended(gateway_core& core, const lifecycle_event& e) {
  const std::string run = run_of(e);
  if (run.empty()) return;
  core.runs->on_turn_end(run, [&core](const chat_runs::finished& f) { send_closing(core, f); });
}

void chat_acknowledged(gateway_core& core, const std::string& run_id, turn_outcome out) {
  const bool wait = out.turn_event;
  auto send = [&core](const chat_runs::finished& run) { send_closing(core, run); };
  if (core.runs->finish(run_id, std::move(out), wait, send) != chat_runs::ack::held) return;
  core.sink->after(kClosingHold, [c = &core, run_id] {
    if (c->runs->expire(run_id, [c](const chat_runs::finished& run) { send_closing(*c, run); }))
      c->metrics->chat_holds_expired.fetch_add(1);
  });
}

}  // namespace sessionrt::gateway
