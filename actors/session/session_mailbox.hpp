// session_mailbox: the call_bridge's mailbox (call_bridge.hpp) of a session actor: each thing
// a call says from another thread becomes the actor's message of the same name (granted,
// mdone, mtext, mnote, sdone, mtimeout; session_actor.hpp). It holds the actor's address, a
// weak reference: it keeps no actor alive, and what arrives once the actor is gone is
// dropped. Thread-safe (CAF's anon_send).
#pragma once
#include <memory>

#include "actors/session/call_bridge.hpp"
#include "actors/session/session_actor.hpp"

namespace sessionrt::actors {

std::shared_ptr<const call_mailbox> session_mailbox(caf::actor_addr session);

}  // namespace sessionrt::actors
