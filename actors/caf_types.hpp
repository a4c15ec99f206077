// The CAF vocabulary of the actor layer: atoms and the message types actors exchange.
// Actors run in one process (the gateway speaks JSON over a socket, not CAF's remote
// protocol), so message types are declared "unsafe" (never serialized) rather than given
// inspect() functions. Include this only in actor files, never in rules.
#pragma once
#include <caf/all.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "messages/chat_event.hpp"
#include "messages/lifecycle_event.hpp"
#include "messages/session_entry.hpp"
#include "actors/session/session_core.hpp"
#include "storage/shared_fd.hpp"

namespace sessionrt::actors {

using chat_atom = caf::atom_constant<caf::atom("chat")>;
using system_atom = caf::atom_constant<caf::atom("system")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using put_atom = caf::atom_constant<caf::atom("put")>;
using list_atom = caf::atom_constant<caf::atom("list")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using synced_atom = caf::atom_constant<caf::atom("synced")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using schedule_atom = caf::atom_constant<caf::atom("schedule")>;
using passivate_atom = caf::atom_constant<caf::atom("passivate")>;
using passivated_atom = caf::atom_constant<caf::atom("passivated")>;
using publish_atom = caf::atom_constant<caf::atom("publish")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using spawned_atom = caf::atom_constant<caf::atom("spawned")>;
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
using timeout_atom = caf::atom_constant<caf::atom("mtimeout")>;
using summary_done_atom = caf::atom_constant<caf::atom("sdone")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;

// Where a turn's outcome goes once it is acknowledged: a CAF response promise or a host
// callback (a std::promise behind the runtime's future API). Called exactly once.
using outcome_sink = std::function<void(turn_outcome)>;

// A row as the store actor answers it.
struct entry_reply {
  bool found = false;
  session_entry entry;
  std::string error;  // set when the row exists but could not be read (found is false then)
};

using entry_rows = std::vector<std::pair<std::string, session_entry>>;

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

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::chat_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::system_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::turn_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::lifecycle_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::session_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::outcome_sink)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::entry_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::entry_rows)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::route_facts)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::storage::shared_fd_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::model_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::summary_reply)
