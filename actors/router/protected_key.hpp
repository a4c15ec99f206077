// protected_key: the rows store maintenance never archives, removes or evicts, as OpenClaw
// 2026.9 decides it (isProtectedSessionMaintenanceEntry, config/sessions/store-maintenance.ts).
// is_protected_key (declared in session_key.hpp) is, in this order:
//   - false for a synthetic key (is_synthetic_key, or a model-run probe is_model_run_key);
//   - true for the primary key: "global", or an agent key whose rest is "main" (agent:<id>:main,
//     whatever session.mainKey says: OpenClaw compares with the literal);
//   - true for a thread key (a non-empty id after the last ":thread:");
//   - true for a row whose delivery is external (row_delivery_kind), and for an external
//     conversation key (is_external_conversation_key);
//   - else true when the row's chatType (or, without one, a JSON-era origin.chatType "group" or
//     "channel", as 2026.9 migrates it) is group, channel or thread.
// Keys are read as 2026.9's parseAgentSessionKey reads them: normalized (normalize_session_key),
// then "agent:<id>:<rest>" with a non-blank id and a rest neither empty nor starting with ':'.
// Pure: no I/O, no clock.
#pragma once
#include <string_view>

#include "messages/session_entry.hpp"

namespace sessionrt::actors {

// OpenClaw's isGatewayModelRunSessionKey: agent:<id>:explicit:model-run-<uuid, lowercase hex>.
bool is_model_run_key(std::string_view key);

// parseSessionDeliveryRoute succeeds (the thread suffix set aside): the rest is
// <channel>:<kind>:<peer...> with kind direct, dm, group or channel, or
// <channel>:<account>:(direct|dm):<peer...>, with a non-blank channel, account and peer, and a
// rest that does not start with "agent".
bool is_delivery_route_key(std::string_view key);

// isProtectedExternalConversationSessionKey: is_delivery_route_key, or the rest (the whole key
// when it is not an agent key, lowercased) matches ^direct:.+$, ^[^:]+:(group|channel):.+$ or
// ^telegram:(direct|dm):.+:topic:[^:]+$.
bool is_external_conversation_key(std::string_view key);

// Where a row's replies go, as 2026.9 reads the row: its `delivery` ({kind: "none" | "internal" |
// "external", ...}) when the row has one and none of the JSON-era fields, else what its
// JSON-era fields make of it (normalizeLegacySessionEntryDelivery): none when route,
// deliveryContext, last*, channel and origin name no channel, target, account or thread;
// internal when the channel they resolve to is webchat or an internal non-delivery channel
// (heartbeat, cron, webhook, voice, sessions_send) and deliveryContext names no external target;
// external otherwise.
enum class delivery_kind { none, internal, external };
delivery_kind row_delivery_kind(const session_entry& row);

}  // namespace sessionrt::actors
