#include "actors/router/dm_scope_audit.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace sessionrt::actors {
namespace {

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// "a, b, c" (at most `limit` items, then "and N more").
std::string listed(const std::vector<std::string>& items, std::size_t limit = 5) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += " and " + std::to_string(items.size() - limit) + " more";
  return out;
}

// One sign that a direct-message peer wrote to an agent.
struct dm_sighting {
  std::string agent_id;
  std::string channel;  // lowercase; may be empty
  std::string peer_id;  // lowercase
  std::string key;      // the store row it comes from
  std::string display_name;
  bool in_main_session = false;  // named by the main row itself
  bool from_key = false;         // the peer id is part of the row's key
};

std::string string_at(const boost::json::object* o, std::string_view key) {
  if (o == nullptr) return {};
  auto v = json::get_string(*o, key);
  return v ? js_lower_trimmed(*v) : std::string();
}

std::string entry_channel(const session_entry& e) {
  for (std::string c : {string_at(e.delivery_context(), "channel"),
                        string_at(&e.json(), "lastChannel"), string_at(e.origin(), "provider"),
                        string_at(e.origin(), "surface"), string_at(&e.json(), "channel")})
    if (!c.empty()) return c;
  return {};
}

std::string entry_display_name(const session_entry& e) {
  auto name = e.display_name();
  if (name && !js_trimmed(*name).empty()) return js_trimmed(*name);
  const boost::json::object* origin = e.origin();
  auto label = origin ? json::get_string(*origin, "label") : std::nullopt;
  return label ? js_trimmed(*label) : std::string();
}

bool chat_type_is_direct_or_absent(const session_entry& e) {
  std::string type = string_at(&e.json(), "chatType");
  if (type.empty()) type = string_at(e.origin(), "chatType");
  return type.empty() || type == "direct" || type == "dm";
}

// A "<channel>:" prefix is a lowercase word of [a-z0-9_-]; "user:", "direct:" and "dm:" are
// address kinds, not channels.
bool is_channel_word(std::string_view s) {
  return !s.empty() && s != "user" && s != "direct" && s != "dm" &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
         });
}

// "telegram:123" / "user:U1" / "+1555" as (channel, id); the row's channel when unprefixed.
std::pair<std::string, std::string> split_address(std::string_view raw, std::string channel) {
  std::string id = js_lower_trimmed(raw);
  const std::size_t colon = id.find(':');
  if (colon != std::string::npos && is_channel_word(std::string_view(id).substr(0, colon))) {
    channel = id.substr(0, colon);
    id.erase(0, colon + 1);
  }
  for (std::string_view kind : {"user:", "direct:", "dm:"})
    if (id.starts_with(kind)) {
      id.erase(0, kind.size());
      break;
    }
  return {channel, id};
}

void add_entry_sightings(const stored_session_row& row, std::string_view agent, bool in_main,
                         std::vector<dm_sighting>& out) {
  if (row.entry == nullptr) return;
  const session_entry& e = *row.entry;
  const std::string channel = entry_channel(e);
  const boost::json::object* origin = e.origin();
  const boost::json::object* delivery = e.delivery_context();
  for (const auto* field :
       {origin ? json::find(*origin, "from") : nullptr, json::find(e.json(), "lastTo"),
        delivery ? json::find(*delivery, "to") : nullptr}) {
    if (field == nullptr || !field->is_string()) continue;
    auto [ch, id] = split_address(field->get_string(), channel);
    if (id.empty()) continue;
    out.push_back(
        {std::string(agent), ch, id, std::string(row.key), entry_display_name(e), in_main, false});
  }
}

// rest = direct:<id> | <ch>:direct:<id> | <ch>:<acct>:direct:<id> -> (channel, id).
std::optional<std::pair<std::string, std::string>> direct_peer_of(std::string_view rest) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= rest.size();) {
    const std::size_t end = std::min(rest.find(':', start), rest.size());
    parts.emplace_back(rest.substr(start, end - start));
    start = end + 1;
  }
  for (std::size_t i = 0; i < 3 && i + 1 < parts.size(); ++i) {
    if (parts[i] != "direct") continue;
    std::string id;
    for (std::size_t k = i + 1; k < parts.size(); ++k) id += (k > i + 1 ? ":" : "") + parts[k];
    return std::make_pair(i == 0 ? std::string() : parts[0], id);
  }
  return std::nullopt;
}

std::vector<dm_sighting> collect_sightings(const routing_config& config,
                                           const std::vector<stored_session_row>& rows) {
  const std::string main_key = normalize_main_key(config.session.main_key);
  std::vector<dm_sighting> out;
  for (const stored_session_row& row : rows) {
    const auto parsed = parse_agent_session_key(row.key);
    const bool is_global = normalize_session_key(row.key) == global_session_key;
    if (is_global || (parsed && parsed->rest == main_key)) {
      if (row.entry && !chat_type_is_direct_or_absent(*row.entry)) continue;
      add_entry_sightings(row, is_global ? default_agent_of(config) : parsed->agent_id, true, out);
      continue;
    }
    const auto peer = parsed ? direct_peer_of(parsed->rest) : std::nullopt;
    if (!peer) continue;
    std::string channel = peer->first;
    if (channel.empty() && row.entry) channel = entry_channel(*row.entry);
    std::string name = row.entry ? entry_display_name(*row.entry) : std::string();
    out.push_back(
        {parsed->agent_id, channel, peer->second, std::string(row.key), name, false, true});
    add_entry_sightings(row, parsed->agent_id, false, out);
  }
  return out;
}

// Who a sighting is: the identity-link canonical name when one applies, else channel:id.
std::string person_of(const routing_config& config, const dm_sighting& s) {
  if (auto name = resolve_linked_peer_id(config.session.links, s.channel, s.peer_id))
    return "~" + js_lowercase(*name);
  if (s.from_key)  // per-peer keys of linked people hold the canonical name itself
    for (const auto& [canonical, ids] : config.session.links)
      if (!js_trimmed(canonical).empty() && js_lower_trimmed(canonical) == s.peer_id)
        return "~" + s.peer_id;
  return s.channel.empty() ? s.peer_id : s.channel + ":" + s.peer_id;
}

std::string shown_person(const std::string& person) {
  return person.starts_with("~") ? person.substr(1) + " (identity link)" : person;
}

bool main_scope_applies(const routing_config& config, std::string_view agent) {
  if (config.session.direct_message_scope == dm_scope::main) return true;
  return std::any_of(config.bindings.begin(), config.bindings.end(), [&](const route_binding& b) {
    return b.session_dm_scope == dm_scope::main && normalize_agent_id(b.agent_id) == agent;
  });
}

std::vector<std::string> agents_in(const std::vector<dm_sighting>& sightings) {
  std::vector<std::string> agents;
  for (const dm_sighting& s : sightings)
    if (std::find(agents.begin(), agents.end(), s.agent_id) == agents.end())
      agents.push_back(s.agent_id);
  return agents;
}

void push_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

std::optional<audit_finding> check_main_scope_for(const routing_config& config,
                                                  const std::vector<dm_sighting>& sightings,
                                                  const std::string& agent) {
  std::vector<std::string> people, main_people, keys, leftover_keys;
  for (const dm_sighting& s : sightings) {
    if (s.agent_id != agent || !(s.in_main_session || s.from_key)) continue;
    const std::string person = person_of(config, s);
    push_unique(people, person);
    if (s.in_main_session) push_unique(main_people, person);
    push_unique(keys, s.key);
    if (s.from_key) push_unique(leftover_keys, s.key);
  }
  if (people.size() < 2) return std::nullopt;
  std::vector<std::string> shown;
  for (const auto& p : people) shown.push_back(shown_person(p));
  audit_finding f;
  f.severity = main_people.size() >= 2 ? audit_severity::critical : audit_severity::warn;
  f.check = "dm-scope-main-shared";
  f.message = "Agent " + quoted(agent) + " uses dmScope \"main\" and direct messages from " +
              std::to_string(people.size()) + " distinct peers (" + listed(shown) +
              ") reach its one main session, so each of them can be shown what the others said.";
  f.fix =
      "Set session.dmScope: \"per-channel-peer\" (\"per-account-channel-peer\" if several "
      "bot accounts share a channel) and start a fresh main session with /new; while "
      "dmScope stays \"main\", `sessionrt sessions cleanup --fix-dm-scope` retires the " +
      std::to_string(leftover_keys.size()) + " leftover per-peer rows.";
  f.evidence_keys = keys;
  return f;
}

void check_main_scope(const routing_config& config, const std::vector<dm_sighting>& sightings,
                      std::vector<audit_finding>& out) {
  for (const std::string& agent : agents_in(sightings))
    if (main_scope_applies(config, agent))
      if (auto f = check_main_scope_for(config, sightings, agent)) out.push_back(std::move(*f));
}

bool links_ever_apply(const routing_config& config) {
  if (config.session.direct_message_scope != dm_scope::main) return true;
  return std::any_of(config.bindings.begin(), config.bindings.end(), [](const route_binding& b) {
    return b.session_dm_scope && *b.session_dm_scope != dm_scope::main;
  });
}

bool link_id_seen(std::string_view link_id, const std::vector<dm_sighting>& sightings) {
  const std::string wanted = js_lower_trimmed(link_id);
  return std::any_of(sightings.begin(), sightings.end(), [&](const dm_sighting& s) {
    return wanted == s.peer_id || (!s.channel.empty() && wanted == s.channel + ":" + s.peer_id);
  });
}

audit_finding link_finding(audit_severity severity, std::string check, std::string message,
                           std::string fix) {
  return {severity, std::move(check), std::move(message), std::move(fix), {}};
}

// One id of one canonical name; `owner` maps ids already seen to their first canonical name.
void check_link_id(const std::string& canonical, const std::string& id,
                   std::map<std::string, std::string>& owner,
                   const std::vector<dm_sighting>& sightings, std::vector<audit_finding>& out) {
  auto [it, inserted] = owner.emplace(id, canonical);
  if (!inserted) {
    if (it->second != canonical)
      out.push_back(link_finding(
          audit_severity::warn, "identity-link-duplicate",
          "Identity link id " + quoted(id) + " is listed under both " + quoted(it->second) +
              " and " + quoted(canonical) + "; the first always wins, so " + quoted(canonical) +
              " never gets it and its messages join " + quoted(it->second) + "'s session.",
          "Keep " + quoted(id) + " under exactly one name in session.identityLinks."));
    return;
  }
  if (id.find(':') == std::string::npos)
    out.push_back(
        link_finding(audit_severity::info, "identity-link-bare-id",
                     "Identity link id " + quoted(id) + " of " + quoted(canonical) +
                         " has no channel prefix, so that id on every channel is treated as " +
                         quoted(canonical) + ".",
                     "Write it as \"<channel>:" + id + "\", for example \"telegram:" + id + "\"."));
  if (!link_id_seen(id, sightings))
    out.push_back(link_finding(
        audit_severity::info, "identity-link-unseen",
        "Identity link id " + quoted(id) + " of " + quoted(canonical) +
            " matches no direct-message peer in the session store.",
        "Check the channel prefix and the id as the channel reports it (origin.from in "
        "`sessionrt sessions --json`), or remove the link if it is obsolete."));
}

void check_identity_links(const routing_config& config, const std::vector<dm_sighting>& sightings,
                          std::vector<audit_finding>& out) {
  const identity_links& links = config.session.links;
  if (links.empty()) return;
  if (!links_ever_apply(config))
    out.push_back(link_finding(
        audit_severity::info, "identity-links-ignored",
        "session.identityLinks lists " + std::to_string(links.size()) +
            " people but every route uses dmScope \"main\", which never applies them.",
        "Remove session.identityLinks, or set session.dmScope: \"per-channel-peer\" so linked "
        "ids share one session per person."));
  std::map<std::string, std::string> owner;  // lowercase id -> first canonical name
  for (const auto& [raw_canonical, ids] : links) {
    const std::string canonical = js_trimmed(raw_canonical);
    if (canonical.empty()) continue;
    for (const std::string& raw_id : ids) {
      const std::string id = js_lower_trimmed(raw_id);
      if (!id.empty()) check_link_id(canonical, id, owner, sightings, out);
    }
  }
}

void check_unlinked_people(const routing_config& config, const std::vector<dm_sighting>& sightings,
                           std::vector<audit_finding>& out) {
  if (config.session.direct_message_scope == dm_scope::main) return;
  // (agent, lowercase display name) -> persons, channels, keys of per-peer rows
  struct group {
    std::string name;
    std::set<std::string> people, channels;
    std::vector<std::string> keys;
  };
  std::map<std::pair<std::string, std::string>, group> groups;
  for (const dm_sighting& s : sightings) {
    if (!s.from_key || s.display_name.empty() || s.channel.empty()) continue;
    group& g = groups[{s.agent_id, js_lowercase(s.display_name)}];
    g.name = s.display_name;
    g.people.insert(person_of(config, s));
    g.channels.insert(s.channel);
    push_unique(g.keys, s.key);
  }
  for (const auto& [id, g] : groups) {
    if (g.channels.size() < 2 || g.people.size() < 2) continue;
    std::vector<std::string> links(g.people.begin(), g.people.end());
    std::vector<std::string> channels(g.channels.begin(), g.channels.end());
    std::string ids;
    for (const auto& p : links)
      if (!p.starts_with("~")) ids += (ids.empty() ? "" : ", ") + quoted(p);
    out.push_back({audit_severity::info, "per-peer-unlinked-person",
                   quoted(g.name) + " has separate direct sessions with agent " + quoted(id.first) +
                       " on " + listed(channels) +
                       " and no identity link joins them, so if this is one person their "
                       "context is split across sessions.",
                   "If it is one person, add session.identityLinks: {" +
                       quoted(js_lowercase(g.name)) + ": [" + ids + "]}.",
                   g.keys});
  }
}

}  // namespace

std::string_view to_string(audit_severity severity) {
  switch (severity) {
    case audit_severity::info: return "info";
    case audit_severity::warn: return "warn";
    case audit_severity::critical: return "critical";
  }
  return "info";
}

std::vector<audit_finding> audit_dm_scope(const routing_config& config,
                                          const std::vector<stored_session_row>& rows) {
  const std::vector<dm_sighting> sightings = collect_sightings(config, rows);
  std::vector<audit_finding> findings;
  check_main_scope(config, sightings, findings);
  check_identity_links(config, sightings, findings);
  check_unlinked_people(config, sightings, findings);
  return findings;
}

}  // namespace sessionrt::actors
