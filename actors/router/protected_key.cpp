// OpenClaw 2026.9's maintenance protection (see protected_key.hpp).
#include "actors/router/protected_key.hpp"

#include <optional>
#include <string>
#include <vector>

#include "actors/router/session_key.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A JavaScript `.` matches anything but these (no `s` flag in OpenClaw's patterns).
bool has_line_terminator(std::string_view s) {
  return s.find_first_of("\n\r") != std::string_view::npos || s.find("\xE2\x80\xA8") != std::string_view::npos ||
         s.find("\xE2\x80\xA9") != std::string_view::npos;
}
// `.+` for the whole of `s`.
bool dot_plus(std::string_view s) { return !s.empty() && !has_line_terminator(s); }

// parseAgentSessionKey(key)?.rest: the normalized key's part after "agent:<id>:".
std::optional<std::string> agent_rest(std::string_view key) {
  const std::string k = normalize_session_key(key);
  if (!starts_with(k, "agent:")) return std::nullopt;
  const std::size_t end = k.find(':', 6);
  if (end == std::string::npos) return std::nullopt;
  if (js_trim(std::string_view(k).substr(6, end - 6)).empty()) return std::nullopt;
  std::string rest = k.substr(end + 1);
  if (rest.empty() || rest[0] == ':') return std::nullopt;
  return rest;
}

// `parsed?.rest ?? key`, lowercased and trimmed.
std::string rest_or_key(std::string_view key) {
  auto rest = agent_rest(key);
  return js_lower_trimmed(rest ? std::string_view(*rest) : key);
}

// JavaScript's String.prototype.split(":"): empty parts kept.
std::vector<std::string_view> split_all(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = s.find(':', start)) != std::string_view::npos; start = at + 1)
    parts.push_back(s.substr(start, at - start));
  parts.push_back(s.substr(start));
  return parts;
}

std::string joined_from(const std::vector<std::string_view>& parts, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (i > from) out += ':';
    out += parts[i];
  }
  return out;
}

bool is_primary_key(std::string_view key) {
  if (js_lower_trimmed(key) == "global") return true;
  auto rest = agent_rest(key);
  return rest && *rest == "main";
}

// ^[^:]+:(?:group|channel):.+$
bool is_group_or_channel_rest(std::string_view rest) {
  const std::size_t colon = rest.find(':');
  if (colon == 0 || colon == std::string_view::npos) return false;
  const std::string_view after = rest.substr(colon + 1);
  for (std::string_view kind : {"group:", "channel:"})
    if (starts_with(after, kind) && dot_plus(after.substr(kind.size()))) return true;
  return false;
}

// ^telegram:(?:direct|dm):.+:topic:[^:]+$
bool is_telegram_dm_topic_rest(std::string_view rest) {
  for (std::string_view head : {"telegram:direct:", "telegram:dm:"}) {
    if (!starts_with(rest, head)) continue;
    const std::string_view after = rest.substr(head.size());
    const std::size_t at = after.rfind(":topic:");  // [^:]+$: only the last one can match
    if (at == std::string_view::npos) continue;
    const std::string_view topic = after.substr(at + 7);
    if (dot_plus(after.substr(0, at)) && !topic.empty() && topic.find(':') == std::string_view::npos) return true;
  }
  return false;
}

// entry.chatType, lowercased ("" when not a string); for a row without one, the JSON-era
// origin.chatType when it is exactly "direct", "group" or "channel" (what 2026.9's migration
// copies into chatType). The delivery origin's chatType 2026.9 falls back to next matters only
// for an external delivery, protected already.
std::string chat_type_of(const session_entry& row) {
  const boost::json::value* v = row.json().if_contains("chatType");
  if (!v || v->is_null()) {
    const boost::json::object* origin = row.origin();
    v = origin ? origin->if_contains("chatType") : nullptr;
    if (!v || !v->is_string()) return {};
    const std::string_view t = v->get_string();
    return t == "direct" || t == "group" || t == "channel" ? std::string(t) : std::string();
  }
  return v->is_string() ? js_lower_trimmed(v->get_string()) : std::string();
}

// ---- the delivery state of a row (delivery-context.shared.ts, legacy-session-store.ts) --------

// normalizeDeliveryContext's result: nullopt when it names nothing.
struct delivery_context {
  std::string channel, to, account, thread;
};
using context_opt = std::optional<delivery_context>;

std::string text_of(const boost::json::value* v) {
  return v && v->is_string() ? std::string(js_trim(v->get_string())) : std::string();
}
std::string thread_of(const boost::json::value* v) {
  if (v && (v->is_int64() || v->is_uint64() || v->is_double())) return "#";  // a number names a thread
  return text_of(v);
}

context_opt make_context(std::string channel, std::string to, std::string account, std::string thread) {
  if (channel.empty() && to.empty() && account.empty() && thread.empty()) return std::nullopt;
  return delivery_context{js_lowercase(channel), std::move(to), std::move(account), std::move(thread)};
}

const boost::json::value* field(const boost::json::object* o, std::string_view name) {
  return o ? o->if_contains(name) : nullptr;
}
const boost::json::object* object_field(const boost::json::object* o, std::string_view name) {
  const auto* v = field(o, name);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

context_opt context_of(const boost::json::object* c) {
  if (!c) return std::nullopt;
  return make_context(text_of(field(c, "channel")), text_of(field(c, "to")), text_of(field(c, "accountId")),
                      thread_of(field(c, "threadId")));
}

// A route ({channel, target: {to}, accountId, thread: {id}}) as a delivery context.
context_opt route_context(const boost::json::object* r) {
  if (!r) return std::nullopt;
  return make_context(text_of(field(r, "channel")), text_of(field(object_field(r, "target"), "to")),
                      text_of(field(r, "accountId")), thread_of(field(object_field(r, "thread"), "id")));
}

// mergeDeliveryContext: the primary's fields first; on a channel or account conflict the
// target, account and thread all come from the primary (the channel too on an account conflict).
context_opt merge(const context_opt& p, const context_opt& f) {
  if (!p) return f;
  if (!f) return p;
  const bool channels = !p->channel.empty() && !f->channel.empty() && p->channel != f->channel;
  const bool accounts = !p->account.empty() && !f->account.empty() && p->account != f->account;
  const bool conflict = channels || accounts;
  auto pick = [&](const std::string& a, const std::string& b) { return conflict || !a.empty() ? a : b; };
  return make_context(accounts || !p->channel.empty() ? p->channel : f->channel, pick(p->to, f->to),
                      pick(p->account, f->account), pick(p->thread, f->thread));
}

bool internal_channel(std::string_view c) {
  for (std::string_view i : {"webchat", "heartbeat", "cron", "webhook", "voice", "sessions_send"})
    if (c == i) return true;
  return false;
}
bool is_internal(const context_opt& c) { return c && internal_channel(c->channel); }
bool has_external_target(const context_opt& c) {
  return c && !c->channel.empty() && !internal_channel(c->channel) && !c->to.empty();
}

delivery_kind kind_of(const context_opt& merged) {
  if (!merged) return delivery_kind::none;
  return internal_channel(merged->channel) ? delivery_kind::internal : delivery_kind::external;
}

// normalizeLegacySessionEntryDelivery, then normalizeSessionDeliveryState: only the kind.
delivery_kind legacy_delivery_kind(const boost::json::object& row) {
  const context_opt route = route_context(object_field(&row, "route"));
  const context_opt explicit_ctx = context_of(object_field(&row, "deliveryContext"));
  const boost::json::object* origin_obj = object_field(&row, "origin");
  const std::string last_channel = js_lowercase(text_of(field(&row, "lastChannel")));
  const std::string stored_channel = js_lowercase(text_of(field(&row, "channel")));
  const std::string origin_channel = js_lowercase(text_of(field(origin_obj, "provider")));
  const std::string last_to = text_of(field(&row, "lastTo")), last_account = text_of(field(&row, "lastAccountId")),
                    last_thread = thread_of(field(&row, "lastThreadId"));
  const bool last_fields = !last_to.empty() || !last_account.empty() || !last_thread.empty();
  std::string candidate_channel = last_channel;
  if (candidate_channel.empty() && last_fields) candidate_channel = !stored_channel.empty() ? stored_channel : origin_channel;
  const context_opt last_candidate = make_context(candidate_channel, last_to, last_account, last_thread);
  const bool keep_last = last_candidate && (is_internal(last_candidate) || has_external_target(last_candidate) ||
                                            (!last_channel.empty() && !last_candidate->channel.empty()) ||
                                            (!last_candidate->channel.empty() && explicit_ctx &&
                                             last_candidate->channel == explicit_ctx->channel));
  const context_opt last = keep_last ? last_candidate : std::nullopt;
  const context_opt channel_ctx = make_context(stored_channel, "", "", "");
  const context_opt origin = make_context(origin_channel, text_of(field(origin_obj, "to")),
                                          text_of(field(origin_obj, "accountId")), thread_of(field(origin_obj, "threadId")));
  // An internal route, last or channel with an external target in deliveryContext: that target.
  if ((is_internal(route) || is_internal(last) || is_internal(channel_ctx)) && has_external_target(explicit_ctx))
    return delivery_kind::external;
  const context_opt context = merge(route, merge(last, merge(explicit_ctx, merge(channel_ctx, origin))));
  // normalizeSessionDeliveryState: the route first, then the context, then the origin (an
  // internal route over an external target cannot happen here: the route leads the context).
  return kind_of(merge(route, merge(context, origin)));
}

bool has_legacy_delivery_fields(const boost::json::object& row) {
  for (std::string_view k : {"route", "deliveryContext", "origin", "channel", "lastChannel", "lastTo", "lastAccountId",
                             "lastThreadId"})
    if (row.contains(k)) return true;
  return false;
}

// isCanonicalSessionDeliveryState: its kind, or nullopt when `delivery` is not one.
std::optional<delivery_kind> canonical_delivery(const boost::json::object& row) {
  const boost::json::object* d = object_field(&row, "delivery");
  if (!d) return std::nullopt;
  const auto kind = json::get_string(*d, "kind");
  if (kind == std::optional<std::string_view>("none")) return delivery_kind::none;
  if (kind == std::optional<std::string_view>("internal")) return delivery_kind::internal;
  if (kind == std::optional<std::string_view>("external") && object_field(d, "route") && object_field(d, "context") &&
      object_field(d, "origin"))
    return delivery_kind::external;
  return std::nullopt;
}

}  // namespace

bool is_model_run_key(std::string_view key) {
  auto parsed = parse_agent_session_key(key);
  if (!parsed) return false;
  constexpr std::string_view prefix = "explicit:model-run-";
  if (parsed->rest.size() <= prefix.size() || parsed->rest.compare(0, prefix.size(), prefix) != 0) return false;
  std::string_view uuid = std::string_view(parsed->rest).substr(prefix.size());
  if (uuid.size() != 36) return false;
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    char c = uuid[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_delivery_route_key(std::string_view key) {
  const auto rest = agent_rest(split_thread_suffix(key).base_key);
  if (!rest) return false;
  const auto parts = split_all(*rest);
  if (parts[0] == "agent" || parts.size() < 3) return false;
  if (js_lower_trimmed(parts[0]).empty()) return false;
  if (parts.size() >= 4 && (parts[2] == "direct" || parts[2] == "dm"))
    return !js_trim(parts[1]).empty() && !js_trim(parts[3]).empty() && !js_trim(joined_from(parts, 3)).empty();
  const std::string_view kind = parts[1];
  if (kind != "channel" && kind != "direct" && kind != "dm" && kind != "group") return false;
  return !js_trim(parts[2]).empty() && !js_trim(joined_from(parts, 2)).empty();
}

bool is_external_conversation_key(std::string_view key) {
  if (is_delivery_route_key(key)) return true;
  const std::string rest = rest_or_key(key);
  return (starts_with(rest, "direct:") && dot_plus(std::string_view(rest).substr(7))) ||
         is_group_or_channel_rest(rest) || is_telegram_dm_topic_rest(rest);
}

delivery_kind row_delivery_kind(const session_entry& row) {
  const auto& o = row.json();
  const auto canonical = canonical_delivery(o);
  if (canonical && !has_legacy_delivery_fields(o)) return *canonical;
  const delivery_kind migrated = legacy_delivery_kind(o);
  if (!canonical) return migrated;
  // A canonical state the JSON-era fields say more than (recoverLegacyDelivery).
  if ((*canonical == delivery_kind::none && migrated != delivery_kind::none) ||
      (*canonical == delivery_kind::internal && migrated == delivery_kind::external))
    return migrated;
  return *canonical;
}

bool is_protected_key(std::string_view key, const session_entry* entry) {
  if (is_synthetic_key(key) || is_model_run_key(key)) return false;
  if (is_primary_key(key)) return true;
  if (is_thread_key(key)) return true;
  if ((entry && row_delivery_kind(*entry) == delivery_kind::external) || is_external_conversation_key(key)) return true;
  const std::string chat_type = entry ? chat_type_of(*entry) : std::string();
  return chat_type == "group" || chat_type == "channel" || chat_type == "thread";
}

}  // namespace sessionrt::actors
