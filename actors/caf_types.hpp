// The CAF vocabulary of the actor layer: atoms and the message types actors exchange.
// Plain value types get inspect() (below) and are registered with add_message_type in
// runtime_start.cpp; the ones that carry boost::json values or process-local handles stay
// "unsafe" (never serialized; the list below says which and why). No std::function crosses
// a mailbox. Include this only in actor files, never in rules.
#pragma once
#include <caf/all.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "messages/chat_event.hpp"
#include "messages/lifecycle_event.hpp"
#include "messages/session_entry.hpp"
#include "actors/session/route_facts.hpp"
#include "actors/store/store_replies.hpp"
#include "actors/subagent/subagent_spawn.hpp"
#include "storage/shared_fd.hpp"

namespace sessionrt::actors {

using chat_atom = caf::atom_constant<caf::atom("chat")>;
using system_atom = caf::atom_constant<caf::atom("system")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using put_atom = caf::atom_constant<caf::atom("put")>;
using list_atom = caf::atom_constant<caf::atom("list")>;
using changes_atom = caf::atom_constant<caf::atom("changes")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using synced_atom = caf::atom_constant<caf::atom("synced")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using schedule_atom = caf::atom_constant<caf::atom("schedule")>;
using passivate_atom = caf::atom_constant<caf::atom("passivate")>;
using passivated_atom = caf::atom_constant<caf::atom("passivated")>;
using hold_atom = caf::atom_constant<caf::atom("hold")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using publish_atom = caf::atom_constant<caf::atom("publish")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using spawned_atom = caf::atom_constant<caf::atom("spawned")>;
// The store's own: durable puts wait, write sessions.json now.
using write_now_atom = caf::atom_constant<caf::atom("writenow")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using trim_atom = caf::atom_constant<caf::atom("trim")>;
using idle_atom = caf::atom_constant<caf::atom("idle")>;
// A barrier: answered once what was sent before it was handled (router, event bus).
using settle_atom = caf::atom_constant<caf::atom("settle")>;
// A session's model call: admitted by the gate, answered, streamed, timed out; a provider's
// summary answered; a debounce alarm.
using granted_atom = caf::atom_constant<caf::atom("granted")>;
using model_done_atom = caf::atom_constant<caf::atom("mdone")>;
using model_text_atom = caf::atom_constant<caf::atom("mtext")>;
// A runner's note during a call: a completed tool-loop message, or a move to a fallback model
// (call id, kind "message" | "fallback", JSON text).
using model_note_atom = caf::atom_constant<caf::atom("mnote")>;
using timeout_atom = caf::atom_constant<caf::atom("mtimeout")>;
using summary_done_atom = caf::atom_constant<caf::atom("sdone")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;
// A sub-agent spawn: (spawn, parent key, subagent_spec) -> turn_outcome (subagent_actor.hpp).
using spawn_atom = caf::atom_constant<caf::atom("spawn")>;

// What the timers (a session expired) and the stores (its row was edited by hand) need of the
// router: (passivate, key, why). A typed handle of part of the router's interface
// (router_actor.hpp), which converts to it without a cast; passed by (spawned, passivate_port).
using passivate_port = caf::typed_actor<caf::reacts_to<passivate_atom, std::string, std::string>>;

// A model call's answer (result<> as a message): the error, or the assistant message.
struct model_reply {
  status st;
  boost::json::object message;
};
struct summary_reply {
  status st;
  std::string text;
};

}  // namespace sessionrt::actors

// ---- inspect(): the plain value types that cross actors (serializable, so a later step can
// shard sessions across nodes with CAF's middleman); registered in runtime_start.cpp.
// Still unsafe (process-local, never serialized), and why:
//   chat_event (rich content), lifecycle_event (data), session_entry, entry_reply, entry_rows
//   (rows), model_reply (the assistant message): they carry boost::json values, which CAF
//   0.17 cannot inspect without a JSON text round trip on every local send;
//   shared_fd_ptr: an open file descriptor of this process.
namespace sessionrt {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, status& x) {
  int code = static_cast<int>(x.code());
  std::string message = x.message();
  return f(caf::meta::type_name("status"), code, message, caf::meta::load_callback([&]() -> caf::error {
             x = status(static_cast<errc>(code), std::move(message));
             return caf::none;
           }));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, system_event& x) {
  int kind = static_cast<int>(x.kind);
  return f(caf::meta::type_name("system_event"), kind, x.session_key, x.agent_id, x.job_id, x.job_name, x.text,
           x.timestamp_ms, caf::meta::load_callback([&]() -> caf::error {
             x.kind = static_cast<system_event_kind>(kind);
             return caf::none;
           }));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_outcome& x) {
  bool has_reply = x.reply.has_value();
  std::string reply = x.reply.value_or(std::string());
  return f(caf::meta::type_name("turn_outcome"), x.st, x.session_key, x.session_id, has_reply, reply, x.suppressed,
           x.command, x.command_output, x.new_session, x.reset_reason, x.notices, x.delivery.channel,
           x.delivery.to, x.delivery.account_id, x.delivery.thread_id, x.run_id, x.turn_event,
           caf::meta::load_callback([&]() -> caf::error {
             x.reply = has_reply ? std::optional<std::string>(std::move(reply)) : std::nullopt;
             return caf::none;
           }));
}

}  // namespace sessionrt

namespace sessionrt::actors {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, route_facts& x) {
  return f(caf::meta::type_name("route_facts"), x.channel, x.account_id, x.chat_type, x.peer_id, x.thread_id,
           x.is_group, x.is_thread);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, subagent_spec& x) {
  return f(caf::meta::type_name("subagent_spec"), x.agent_id, x.task, x.fork, x.role, x.control_scope, x.label);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, summary_reply& x) {
  return f(caf::meta::type_name("summary_reply"), x.st, x.text);
}

}  // namespace sessionrt::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::chat_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::chat_event_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::lifecycle_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::session_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::entry_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::entry_rows)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::row_changes)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::storage::shared_fd_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::model_reply)
