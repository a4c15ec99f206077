// The isolated heartbeat turn (session_core::heartbeat_run); see heartbeat_run.hpp.
#include "actors/session/heartbeat_run.hpp"

#include "actors/session/session_core.hpp"
#include "actors/session/session_rollover.hpp"
#include "messages/ids.hpp"

namespace sessionrt::actors {

namespace {
constexpr std::string_view kSuffix = ":heartbeat";
}

bool is_isolated_heartbeat_key(std::string_view key) {
  return key.size() > kSuffix.size() && key.substr(key.size() - kSuffix.size()) == kSuffix;
}

std::string heartbeat_base_key(std::string_view key) {
  return is_isolated_heartbeat_key(key) ? std::string(key.substr(0, key.size() - kSuffix.size())) : std::string();
}

task<turn_outcome> session_core::heartbeat_run(const system_event& ev, core_effects& fx) {
  turn_outcome out;
  out.session_key = key_;
  // An archived row: OpenClaw 2026.9 starts a new session, out of the archive, when the row is
  // an isolated heartbeat's own, and refuses the heartbeat otherwise (session_rollover.hpp).
  const bool roll_archived = rolls_archived_heartbeat_row(row_ ? &*row_ : nullptr);
  if (!roll_archived)
    if (auto refused = archived_row_refusal(key_, row_ ? &*row_ : nullptr, inbound_kind::heartbeat)) {
      fx.events.push_back(event(payloads::turn_failed{refused->message()}));
      out.st = std::move(*refused);
      refused_effects(fx);
      co_return out;
    }
  // The current transcript's lock first, as for a chat turn: held elsewhere, nothing changes.
  if (row_ && row_->session_id())
    if (status st = open_current(fx); !st.ok()) {
      out.st = st;
      co_return out;
    }
  rollover_input in;
  in.current = row_ ? &*row_ : nullptr;
  in.session_key = key_;
  in.kind = inbound_kind::heartbeat;  // never rolls an existing session (but an archived one)
  in.force_new = roll_archived;
  in.now_ms = deps_->time->now_ms();
  in.new_session_id = next_session_id(in.now_ms, "heartbeat");
  in.transcript_path = [this](std::string_view id) { return transcript_path_for(std::string(id)); };
  const std::string old_id = row_ ? std::string(row_->session_id().value_or("")) : std::string();
  rollover_result roll = row_ ? roll_session(in, std::move(*row_)) : roll_session(in);
  row_ = std::move(roll.entry);
  if (roll_archived) clear_archive_fields(*row_);
  row_->set_heartbeat_isolated_base_session_key(heartbeat_base_key(key_));
  status opened = roll.new_session ? start_new_session(old_id, fx) : open_current(fx);
  if (!opened.ok()) {
    out.st = opened;
    finish_effects(fx, last_route_);
    co_return out;
  }
  if (roll.new_session) note_new_session(old_id, roll, out, fx);
  out.session_id = std::string(row_->session_id().value_or(""));
  if (ev.text.empty()) {
    finish_effects(fx, last_route_);
    co_return out;
  }
  chat_event prompt;
  prompt.text = ev.text;
  prompt.timestamp_ms = ev.timestamp_ms;
  out = co_await run_turn(prompt, ev.text, fx, std::move(out));
  co_return out;
}

}  // namespace sessionrt::actors
