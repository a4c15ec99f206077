// The chat commands' work (session_core's members; the table and the parser are in
// chat_commands.hpp, their answers' text in chat_command_text.hpp): recognition with the
// session's reset triggers, the answers while a turn runs, the reset's first message, and the
// commands that are a turn of their own. /stop is the machine's (session_machine.cpp).
#include <fmt/format.h>

#include "actors/session/chat_command_text.hpp"
#include "actors/session/chat_commands.hpp"
#include "actors/session/dock_command.hpp"
#include "actors/session/hygiene/display_projection.hpp"
#include "actors/session/reset_model_selection.hpp"
#include "actors/session/session_core.hpp"
#include "actors/session/queue_settings.hpp"
#include "actors/session/session_model.hpp"
#include "actors/session/turn_queue.hpp"

namespace sessionrt::actors {

recognized_command session_core::recognize(const chat_event& ev, const route_facts& route) const {
  reset_trigger_options resets;
  resets.triggers = deps_->settings->session.reset.reset_triggers;
  resets.sender_authorized = ev.sender_authorized;
  resets.is_group = route.is_group;
  return recognize_chat_command(ev.text, command_context{&resets});
}

std::optional<turn_outcome> session_core::answer_while_busy(chat_command command) const {
  if (!row_ || needs_row()) return std::nullopt;
  if (command != chat_command::status && command != chat_command::context_list) return std::nullopt;
  const auto& settings = *deps_->settings;
  turn_outcome out;
  out.session_key = key_;
  out.session_id = std::string(row_->session_id().value_or(""));
  out.command = chat_command_info(command).name;
  if (command == chat_command::status) {
    const session_model m = model();
    status_inputs si{key_, &*row_, m.context_window, m.provider, m.model, deps_->time->now_ms()};
    si.queue_mode = std::string(queue_mode_name(effective_queue(settings.queue, &*row_).mode));
    out.command_output = format_status(si) + "\nA turn is running.";
  } else {
    out.command_output = format_context_list(hygiene::display_messages(context_view()), model().context_window,
                                             system_prompt());
  }
  return out;
}

std::string session_core::after_reset(const reset_trigger_result& trigger, const chat_event& ev, turn_outcome& out) {
  const auto& settings = *deps_->settings;
  const model_catalog_settings catalog = effective_catalog(settings);
  const session_model configured = default_model(settings, agent_of_key(key_));
  // `/new <model> rest...`: the new row's model override, and the rest as the first message.
  const reset_model_applied picked = apply_reset_model(
      *row_, trigger.first_message, catalog_of(catalog, configured.provider, configured.model), catalog);
  if (picked.selected && !picked.first_message.empty()) out.notices.push_back(model_switch_notice(picked));
  if (picked.first_message.empty() && ev.content.empty()) {
    out.command = trigger.matched_trigger;
    out.command_output = fmt::format("New session started ({}).", out.session_id);
    if (picked.selected) out.command_output += " " + model_switch_notice(picked);
  }
  return picked.first_message;
}

task<turn_outcome> session_core::command_turn(const recognized_command& cmd, const chat_event& ev,
                                              const route_facts& route, core_effects& fx, turn_outcome out) {
  const auto& settings = *deps_->settings;
  out.command = cmd.id == chat_command::dock ? "/dock-" + cmd.channel : std::string(chat_command_info(cmd.id).name);
  switch (cmd.id) {
    case chat_command::dock: {
      const std::string previous(row_->last_channel().value_or(""));
      auto target = resolve_dock_target(cmd.channel, route, ev.sender_id, settings.routing.session.links);
      if (!target.ok()) {
        out.command_output = target.error().message();  // a reply; the route stays
      } else {
        apply_dock(*row_, *target);
        out.command_output = dock_reply(*target);
        if (wants(event_types::session_docked)) fx.events.push_back(event(dock_payload(*target, previous)));
      }
      break;
    }
    case chat_command::status: {
      const session_model m = model();
      status_inputs si{key_, &*row_, m.context_window, m.provider, m.model, deps_->time->now_ms()};
      si.queue_mode = std::string(queue_mode_name(effective_queue(settings.queue, &*row_).mode));
      out.command_output = format_status(si);
      break;
    }
    case chat_command::compact: {
      auto done = co_await compact("manual", cmd.args, fx);
      if (!done.ok()) {
        out.st = done.error();
      } else if (!done->compacted) {
        out.command_output = "Nothing to compact yet.";
      } else {
        out.command_output = fmt::format("Compacted: ~{} -> ~{} tokens ({}).", done->tokens_before, done->tokens_after,
                                         done->provider == "builtin" ? "built-in summarizer" : done->provider);
        if (done->successor_session_id) out.session_id = *done->successor_session_id;
      }
      if (status st = durability_commit(fx); !st.ok() && out.st.ok()) out.st = st;
      break;
    }
    case chat_command::context_list:
      out.command_output =
          format_context_list(hygiene::display_messages(context_), model().context_window, system_prompt());
      break;
    case chat_command::queue: {
      const queue_command q = parse_queue_command(cmd.args);
      if (!q.error.empty()) {
        out.st = status(errc::invalid_argument, q.error);
        co_return out;  // nothing changed: no effects to finish
      }
      // The row's fields, as OpenClaw keeps them; they override messages.queue for this session.
      if (q.mode) row_->set_queue_mode(queue_mode_name(*q.mode));
      if (q.cap) row_->set_queue_cap(static_cast<std::int64_t>(*q.cap));
      if (q.drop) row_->set_queue_drop(queue_drop_name(*q.drop));
      if (q.debounce_ms) row_->set_queue_debounce_ms(*q.debounce_ms);
      out.command_output = format_queue(effective_queue(settings.queue, &*row_));
      break;
    }
    default:
      out.st = status(errc::internal, fmt::format("{} is not a turn of its own", out.command));
      co_return out;
  }
  finish_effects(fx, route);
  co_return out;
}

}  // namespace sessionrt::actors
