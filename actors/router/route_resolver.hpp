// route_resolver: inbound event -> agent and session key, as OpenClaw's resolveAgentRoute +
// buildAgentPeerSessionKey [R§1.2], plus thread suffixes (resolveThreadSessionKeys) and the
// legacy resolveSessionKey(scope, ctx, mainKey) path. Pure: no CAF, no I/O; the same input
// and config always give the same route. The config structs are plain values with the
// defaults of an empty OpenClaw config; whoever maps config JSON onto them owns validation
// (an unknown dmScope string should be rejected there, not guessed here). Every string field
// may hold untrusted text: ids are trimmed/normalized, nothing here fails.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/router/session_key.hpp"

namespace sessionrt::actors {

// A chat peer: kind "direct" ("dm"), "group", "channel" or another kind passed through
// ("room"); id as the channel delivers it.
struct route_peer {
  std::string kind;
  std::string id;
};

// One inbound event. Empty strings mean "absent".
struct route_input {
  std::string channel;     // "telegram", "discord", ...
  std::string account_id;  // bot account on that channel; "" -> "default"
  std::optional<route_peer> peer;
  std::optional<route_peer> parent_peer;  // the thread's parent, for binding inheritance
  std::string guild_id;                   // Discord guild
  std::string team_id;                    // Slack team
  std::vector<std::string> member_role_ids;
  std::string thread_id;  // appended as <base>:thread:<id>; lowercased except Matrix rooms
  std::string explicit_session_key;  // caller-chosen key: normalized and passed through
  std::string forced_agent_id;       // non-empty: this agent (normalized; it need not exist), bindings skipped
};

struct agent_entry {
  std::string id;
  bool is_default = false;
};

// bindings[].match: a binding matches only if every provided field matches.
struct binding_match {
  std::string channel;             // required; a binding without one never matches
  std::string account_id;          // "" -> the "default" account only; "*" -> any account
  std::optional<route_peer> peer;  // id "*" matches every peer of that kind
  std::string guild_id;
  std::string team_id;
  std::vector<std::string> roles;  // any one of them
};

struct route_binding {
  std::string agent_id;
  binding_match match;
  std::optional<dm_scope> session_dm_scope;  // bindings[].session.dmScope
};

struct session_routing_config {
  dm_scope direct_message_scope = dm_scope::main;        // session.dmScope
  std::string main_key = std::string(default_main_key);  // session.mainKey
  session_scope scope = session_scope::per_sender;       // session.scope
  identity_links links;                                  // session.identityLinks, config order
};

struct routing_config {
  std::vector<agent_entry> agents;  // agents.list; empty means the single agent "main"
  std::vector<route_binding> bindings;
  session_routing_config session;
};

enum class last_route_policy { main, session };

struct route {
  std::string agent_id;
  std::string channel;             // normalized
  std::string account_id;          // normalized
  std::string session_key;         // the store key for this event (thread suffix included)
  std::string base_session_key;    // session_key without the thread suffix
  std::string parent_session_key;  // base_session_key when a thread suffix was added
  std::string main_session_key;    // agent:<agent>:<mainKey> ("global" under scope global)
  // "main" when base_session_key == main_session_key: resolveAgentRoute decides this before a
  // channel adds the thread suffix, so a DM thread under dmScope main still reports "main".
  last_route_policy last_route = last_route_policy::session;
  std::string matched_by;  // "binding.peer" ... "binding.channel", "default", "explicit", "forced"
  dm_scope direct_message_scope = dm_scope::main;  // effective (binding override applied)
};

// resolveAgentRoute. Tiers, first match wins: binding.peer, binding.peer.parent,
// binding.peer.wildcard, binding.guild+roles, binding.guild, binding.team, binding.account,
// binding.channel, default agent. Within a tier, config order. A bound agent that is not in
// agents.list falls back to the default agent. Then the thread suffix, if any. Finally the
// key goes through canonicalize_main_alias with session.scope, so under scope "global" the
// main key becomes "global" (as initSessionState does [R§4.3]).
route resolve_route(const route_input& input, const routing_config& config);

// The store key an explicit sessionKey names (a gateway method's, an event's ev.session_key),
// as the route of such an event keys it: normalized; "global" / "unknown" kept; "main" and a
// key without "agent:<id>:" under `agent_id`; then main aliases made canonical with
// session.scope. The one place an explicit key is canonicalized, so a gateway that tracks a
// key and the session that stores it agree ("probe2" is "agent:main:probe2" for both).
std::string explicit_store_key(std::string_view raw, std::string_view agent_id, const routing_config& config);

// The default agent: the first agents.list entry marked default, else the first entry,
// else "main"; normalized.
std::string default_agent_of(const routing_config& config);

// Legacy path (no pre-built route): MsgContext fields that resolveSessionKey reads.
struct legacy_message_context {
  std::string session_key;  // ctx.SessionKey: normalized and passed through when set
  std::string provider;     // ctx.Provider
  std::string chat_type;    // ctx.ChatType
  std::string from;         // ctx.From ("telegram:group:-100", "123@g.us", ...)
};
// resolveSessionKey(scope, ctx, mainKey) [R§1.2]: explicit key; "global" under scope global;
// a group context -> agent:<agent>:<provider>:<group|channel>:<id>; else the main key.
std::string resolve_legacy_session_key(session_scope scope, const legacy_message_context& ctx,
                                       std::string_view main_key,
                                       std::string_view agent_id = default_agent_id);

}  // namespace sessionrt::actors
