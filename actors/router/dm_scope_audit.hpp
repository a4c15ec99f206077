// dm_scope_audit: the routing part of `sessionrt security audit` (SPEC §2): where does the
// configuration let one person's context reach another person? Pure: it reads the routing
// config and the rows of sessions.json (the caller owns both for the call) and returns
// findings; it changes nothing and never fails. An empty result means "no evidence of a
// problem", not a proof of isolation: the store keeps only the latest sender per row.
//
// Evidence, per check:
//  * dm-scope-main-shared: for every agent that dmScope "main" applies to (session.dmScope, or
//    a binding to that agent with session.dmScope "main"): the DM peers named by the main row
//    (agent:<a>:<mainKey>, or "global") through origin.from, lastTo and deliveryContext.to
//    when its chatType is direct or absent, plus the peer ids in the keys of per-peer rows
//    (direct:<id>, <ch>:direct:<id>, <ch>:<acct>:direct:<id>) of that agent, which shows those
//    people write to the agent and now land in the main session. Peers that identity links
//    join count once. Two or more distinct peers -> critical when the main row alone names
//    two, warn otherwise.
//  * identity-link-duplicate: one id listed under two canonical names (the first wins
//    silently, so the second person's sessions merge into the first's) -> warn.
//  * identity-link-unseen: a link id that matches no peer seen in any row (keys of per-peer
//    rows and origin.from / lastTo / deliveryContext.to of main and per-peer rows) -> info.
//  * identity-link-bare-id: a link id without a "<channel>:" prefix, which matches that id on
//    every channel -> info.
//  * identity-links-ignored: identity links configured while every route uses dmScope "main",
//    which never applies them -> info.
//  * per-peer-unlinked-person: dmScope is per-peer-like and per-peer rows of one agent on two
//    or more channels carry the same displayName (or origin.label) without an identity link
//    joining them -> info (probably one person whose context is split).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"

namespace sessionrt::actors {

enum class audit_severity { info, warn, critical };
std::string_view to_string(audit_severity severity);

struct audit_finding {
  audit_severity severity = audit_severity::info;
  std::string check;                       // stable id, e.g. "dm-scope-main-shared"
  std::string message;                     // one sentence: what is wrong and why it matters
  std::string fix;                         // what to change or run
  std::vector<std::string> evidence_keys;  // store keys the finding rests on
};

std::vector<audit_finding> audit_dm_scope(const routing_config& config,
                                          const std::vector<stored_session_row>& rows);

}  // namespace sessionrt::actors
