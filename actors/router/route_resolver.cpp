#include "actors/router/route_resolver.hpp"

#include <algorithm>
#include <array>

namespace sessionrt::actors {
namespace {

// A binding's peer constraint after normalizePeerConstraint.
struct peer_constraint {
  enum class state { none, invalid, exact, wildcard } kind_of_match = state::none;
  std::string kind;
  std::string id;
};

peer_constraint constraint_of(const std::optional<route_peer>& peer) {
  if (!peer) return {};
  const auto kind = normalize_chat_type(peer->kind);
  std::string id = js_trimmed(peer->id);
  if (!kind || id.empty()) return {peer_constraint::state::invalid, {}, {}};
  if (id == "*") return {peer_constraint::state::wildcard, *kind, {}};
  return {peer_constraint::state::exact, *kind, std::move(id)};
}

enum class tier { peer, wildcard, guild_roles, guild, team, account, channel, never };

struct evaluated_binding {
  const route_binding* binding;
  peer_constraint peer;
  std::string guild_id;
  std::string team_id;
  tier bucket;
};

tier bucket_of(const peer_constraint& peer, const binding_match& m, std::string_view guild,
               std::string_view team) {
  switch (peer.kind_of_match) {
    case peer_constraint::state::exact: return tier::peer;
    case peer_constraint::state::wildcard: return tier::wildcard;
    case peer_constraint::state::invalid: return tier::never;
    case peer_constraint::state::none: break;
  }
  if (!guild.empty()) return m.roles.empty() ? tier::guild : tier::guild_roles;
  if (!team.empty()) return tier::team;
  return js_trimmed(m.account_id) == "*" ? tier::channel : tier::account;
}

bool applies_to_channel_account(const binding_match& m, std::string_view channel,
                                std::string_view account_id) {
  const std::string bound_channel = js_lower_trimmed(m.channel);
  if (bound_channel.empty() || bound_channel != channel) return false;
  const std::string pattern = js_trimmed(m.account_id);
  return pattern == "*" || normalize_account_id(pattern) == account_id;
}

// The bindings for this channel and account, in config order, each with its tier.
std::vector<evaluated_binding> bindings_for(const routing_config& config, std::string_view channel,
                                            std::string_view account_id) {
  std::vector<evaluated_binding> out;
  for (const route_binding& b : config.bindings) {
    if (!applies_to_channel_account(b.match, channel, account_id)) continue;
    peer_constraint peer = constraint_of(b.match.peer);
    std::string guild = js_trimmed(b.match.guild_id);
    std::string team = js_trimmed(b.match.team_id);
    const tier bucket = bucket_of(peer, b.match, guild, team);
    out.push_back({&b, std::move(peer), std::move(guild), std::move(team), bucket});
  }
  return out;
}

bool peer_kind_matches(std::string_view bound, std::string_view actual) {
  if (bound == actual) return true;
  return (bound == "group" && actual == "channel") || (bound == "channel" && actual == "group");
}

// What an event offers to the binding constraints.
struct binding_scope {
  const route_peer* peer;  // normalized; null when absent
  std::string guild_id;
  std::string team_id;
  const std::vector<std::string>* member_role_ids;
};

bool peer_matches(const peer_constraint& c, const route_peer* peer) {
  switch (c.kind_of_match) {
    case peer_constraint::state::none: return true;
    case peer_constraint::state::invalid: return false;
    case peer_constraint::state::wildcard: return peer && peer_kind_matches(c.kind, peer->kind);
    case peer_constraint::state::exact:
      return peer && peer_kind_matches(c.kind, peer->kind) && peer->id == c.id;
  }
  return false;
}

bool matches_scope(const evaluated_binding& b, const binding_scope& scope) {
  if (!peer_matches(b.peer, scope.peer)) return false;
  if (!b.guild_id.empty() && b.guild_id != scope.guild_id) return false;
  if (!b.team_id.empty() && b.team_id != scope.team_id) return false;
  const auto& roles = b.binding->match.roles;
  if (roles.empty()) return true;
  return std::any_of(roles.begin(), roles.end(), [&](const std::string& role) {
    const auto& member = *scope.member_role_ids;
    return std::find(member.begin(), member.end(), role) != member.end();
  });
}

struct tier_rule {
  std::string_view matched_by;
  tier bucket;
  bool enabled;
  const route_peer* scope_peer;
};

std::optional<route_peer> normalized_peer(const std::optional<route_peer>& peer) {
  if (!peer) return std::nullopt;
  return route_peer{normalize_chat_type(peer->kind).value_or(peer->kind), js_trimmed(peer->id)};
}

// Bound agent ids that are not in agents.list fall back to the default agent.
std::string pick_existing_agent(const routing_config& config, std::string_view agent_id) {
  const std::string trimmed = js_trimmed(agent_id);
  if (trimmed.empty()) return default_agent_of(config);
  const std::string wanted = normalize_agent_id(trimmed);
  if (config.agents.empty()) return wanted;
  for (const agent_entry& agent : config.agents)
    if (!js_trimmed(agent.id).empty() && normalize_agent_id(agent.id) == wanted) return wanted;
  return default_agent_of(config);
}

struct route_context {
  const routing_config& config;
  std::string channel;
  std::string account_id;
  std::optional<route_peer> peer;
  std::string thread_id;
};

bool keeps_thread_id_case(const route_context& ctx) {
  return ctx.channel == "matrix" && ctx.peer &&
         is_case_preserving_peer(ctx.channel, ctx.peer->kind);
}

std::string base_key_for(const route_context& ctx, const std::string& agent, dm_scope scope) {
  const std::string& main_key = ctx.config.session.main_key;
  if (!ctx.peer) return build_main_key(agent, main_key);
  return build_peer_key({.agent_id = agent,
                         .main_key = main_key,
                         .channel = ctx.channel,
                         .account_id = ctx.account_id,
                         .peer_kind = ctx.peer->kind,
                         .peer_id = ctx.peer->id.empty() ? unknown_session_key : ctx.peer->id,
                         .scope = scope,
                         .links = &ctx.config.session.links});
}

// Applies session.scope to a finished key: main aliases become "global" under scope global.
void finish_keys(route& r, const session_routing_config& session) {
  const auto canonical = [&](const std::string& key) {
    return canonicalize_main_alias(key, r.agent_id, session.main_key, session.scope);
  };
  r.session_key = canonical(r.session_key);
  r.base_session_key = canonical(r.base_session_key);
  r.main_session_key = canonical(r.main_session_key);
  r.last_route = r.base_session_key == r.main_session_key ? last_route_policy::main
                                                          : last_route_policy::session;
}

// The route for `agent_id` (already resolved: normalized, existing or forced).
route choose(const route_context& ctx, std::string agent_id, std::string_view matched_by,
             std::optional<dm_scope> binding_scope_override) {
  route r;
  r.agent_id = std::move(agent_id);
  r.channel = ctx.channel;
  r.account_id = ctx.account_id;
  r.matched_by = matched_by;
  r.direct_message_scope = binding_scope_override.value_or(ctx.config.session.direct_message_scope);
  r.base_session_key = base_key_for(ctx, r.agent_id, r.direct_message_scope);
  r.session_key = build_conversation_thread_key(r.base_session_key, ctx.thread_id, !keeps_thread_id_case(ctx));
  r.main_session_key = build_main_key(r.agent_id, ctx.config.session.main_key);
  finish_keys(r, ctx.config.session);
  if (r.session_key != r.base_session_key) r.parent_session_key = r.base_session_key;
  return r;
}

route resolve_bound_route(const route_context& ctx, const route_input& input) {
  if (!js_trim(input.forced_agent_id).empty())
    return choose(ctx, normalize_agent_id(input.forced_agent_id), "forced", std::nullopt);
  const std::vector<evaluated_binding> bindings =
      bindings_for(ctx.config, ctx.channel, ctx.account_id);
  const std::optional<route_peer> parent = normalized_peer(input.parent_peer);
  const route_peer* peer = ctx.peer ? &*ctx.peer : nullptr;
  const route_peer* parent_peer = parent && !parent->id.empty() ? &*parent : nullptr;
  const std::string guild = js_trimmed(input.guild_id);
  const std::string team = js_trimmed(input.team_id);
  const std::array<tier_rule, 8> tiers = {{
      {"binding.peer", tier::peer, peer != nullptr, peer},
      {"binding.peer.parent", tier::peer, parent_peer != nullptr, parent_peer},
      {"binding.peer.wildcard", tier::wildcard, peer != nullptr, peer},
      {"binding.guild+roles", tier::guild_roles, !guild.empty() && !input.member_role_ids.empty(),
       peer},
      {"binding.guild", tier::guild, !guild.empty(), peer},
      {"binding.team", tier::team, !team.empty(), peer},
      {"binding.account", tier::account, true, peer},
      {"binding.channel", tier::channel, true, peer},
  }};
  for (const tier_rule& rule : tiers) {
    if (!rule.enabled) continue;
    const binding_scope scope{rule.scope_peer, guild, team, &input.member_role_ids};
    for (const evaluated_binding& b : bindings)
      if (b.bucket == rule.bucket && matches_scope(b, scope))
        return choose(ctx, pick_existing_agent(ctx.config, b.binding->agent_id), rule.matched_by,
                      b.binding->session_dm_scope);
  }
  return choose(ctx, pick_existing_agent(ctx.config, default_agent_of(ctx.config)), "default", std::nullopt);
}

// A caller-chosen key: normalized, made agent-scoped for the routed agent when it is a
// request key ("hook:<uuid>", "cron:<job>"), and passed through.
route explicit_route(const route_context& ctx, route routed, std::string_view explicit_key) {
  const std::string key = explicit_store_key(explicit_key, routed.agent_id, ctx.config);
  if (auto parsed = parse_agent_session_key(key)) routed.agent_id = parsed->agent_id;
  routed.matched_by = "explicit";
  routed.session_key = key;
  routed.base_session_key = key;
  routed.parent_session_key.clear();
  routed.main_session_key = build_main_key(routed.agent_id, ctx.config.session.main_key);
  finish_keys(routed, ctx.config.session);
  return routed;
}

std::vector<std::string> split_non_empty(std::string_view text) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(':', start), text.size());
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// resolveGroupSessionKey, reduced to what a context without a channel registry can tell: the
// first From segment counts as the provider when it is followed by group/channel or equals
// ctx.Provider.
std::optional<std::string> legacy_group_key(const legacy_message_context& ctx) {
  const std::string from = js_trimmed(ctx.from);
  const std::string chat_type = js_lower_trimmed(ctx.chat_type);
  const std::string lower_from = js_lowercase(from);
  const bool whatsapp_group = lower_from.ends_with("@g.us");
  const bool looks_like_group = chat_type == "group" || chat_type == "channel" ||
                                from.find(":group:") != std::string::npos ||
                                from.find(":channel:") != std::string::npos || whatsapp_group;
  if (!looks_like_group) return std::nullopt;

  const std::vector<std::string> parts = split_non_empty(from);
  const std::string hint = js_lower_trimmed(ctx.provider);
  const std::string head = parts.empty() ? std::string() : js_lower_trimmed(parts[0]);
  const std::string second = parts.size() > 1 ? js_lower_trimmed(parts[1]) : std::string();
  const bool second_is_kind = second == "group" || second == "channel";
  const bool head_is_provider = !head.empty() && (second_is_kind || head == hint);
  const std::string provider = head_is_provider ? head
                               : !hint.empty()  ? hint
                               : whatsapp_group ? "whatsapp"
                                                : "";
  if (provider.empty()) return std::nullopt;

  const bool channel_kind = from.find(":channel:") != std::string::npos || chat_type == "channel";
  const std::string kind = second_is_kind ? second : channel_kind ? "channel" : "group";
  std::string id;
  const std::size_t skip = head_is_provider ? (second_is_kind ? 2 : 1) : parts.size();
  for (std::size_t i = skip; i < parts.size(); ++i) id += (i > skip ? ":" : "") + parts[i];
  if (!head_is_provider) id = from;
  id = normalize_session_peer_id(provider, kind, id);
  if (id.empty()) return std::nullopt;
  return provider + ":" + kind + ":" + id;
}

}  // namespace

std::string default_agent_of(const routing_config& config) {
  if (config.agents.empty()) return std::string(default_agent_id);
  const auto marked = std::find_if(config.agents.begin(), config.agents.end(),
                                   [](const agent_entry& a) { return a.is_default; });
  const agent_entry& chosen = marked != config.agents.end() ? *marked : config.agents.front();
  const std::string id = js_trimmed(chosen.id);
  return normalize_agent_id(id.empty() ? default_agent_id : std::string_view(id));
}

route resolve_route(const route_input& input, const routing_config& config) {
  const route_context ctx{config, js_lower_trimmed(input.channel),
                          normalize_account_id(input.account_id), normalized_peer(input.peer),
                          input.thread_id};
  route routed = resolve_bound_route(ctx, input);
  if (js_trimmed(input.explicit_session_key).empty()) return routed;
  return explicit_route(ctx, std::move(routed), input.explicit_session_key);
}

std::string explicit_store_key(std::string_view raw, std::string_view agent_id, const routing_config& config) {
  const std::string normalized = normalize_session_key(raw);
  if (normalized == global_session_key || normalized == unknown_session_key) return normalized;
  const std::string key = to_agent_store_key(agent_id, normalized, config.session.main_key);
  auto parsed = parse_agent_session_key(key);
  return canonicalize_main_alias(key, parsed ? parsed->agent_id : normalize_agent_id(agent_id),
                                 config.session.main_key, config.session.scope);
}

std::string resolve_legacy_session_key(session_scope scope, const legacy_message_context& ctx,
                                       std::string_view main_key, std::string_view agent_id) {
  if (!js_trimmed(ctx.session_key).empty()) return normalize_session_key(ctx.session_key);
  if (scope == session_scope::global) return std::string(global_session_key);
  if (auto group = legacy_group_key(ctx))
    return "agent:" + normalize_agent_id(agent_id) + ":" + *group;
  return build_main_key(agent_id, main_key);
}

}  // namespace sessionrt::actors
