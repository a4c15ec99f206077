// dock_command: channel docking, as OpenClaw's docs describe it (SPEC §2 "channel anchoring"):
// `/dock-<channel>` or `/dock_<channel>` (recognized by chat_commands.hpp) in a direct session
// moves the session's reply route to the sender's linked peer on <channel>. The sender and the target must be in one group of
// session.identityLinks ({"alice": ["telegram:123", "discord:456"]}): the sender is found by
// lower(id) or lower(channel:id), the target is that group's "<channel>:<peer>" entry. The
// row's deliveryContext, lastChannel, lastTo (the peer id) and lastAccountId ("default") change;
// the session, its sessionId and its transcript stay. Not direct, not linked, or no peer on
// that channel: a reply saying so, nothing changed. A later message from another channel sets
// the route to that channel again, as any inbound message does.
// Also delivery_route_of(): the route a row says replies go to (turn outcomes and events
// carry it). Pure: no I/O.
#pragma once
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "actors/router/session_key.hpp"
#include "actors/session/route_facts.hpp"
#include "messages/chat_event.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "messages/session_entry.hpp"
#include "messages/status.hpp"

namespace sessionrt::actors {

struct dock_target {
  std::string channel;
  std::string peer_id;
  std::string account_id = "default";
  std::string group;  // the identity group's name
};

// The sender's peer on `channel`, or the reason there is none (an error the user can act on).
result<dock_target> resolve_dock_target(std::string_view channel, const route_facts& route, std::string_view sender_id,
                                        const identity_links& links);

// Writes the docked route into the row.
void apply_dock(session_entry& row, const dock_target& target);

// "Replies now go to discord:456." / the error's message.
std::string dock_reply(const dock_target& target);

// session.docked's data: channel, to, accountId, group, from (the previous channel).
payloads::session_docked dock_payload(const dock_target& target, const std::string& previous_channel);

delivery_route delivery_route_of(const session_entry& row);

}  // namespace sessionrt::actors
