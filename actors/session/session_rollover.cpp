#include "actors/session/session_rollover.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

namespace sessionrt::actors {
namespace {

using field_list = std::initializer_list<std::string_view>;

const field_list preference_fields = {"thinkingLevel", "verboseLevel", "traceLevel",
                                          "reasoningLevel", "ttsAuto",      "responseUsage"};
const field_list cli_binding_fields = {"cliSessionIds", "cliSessionBindings", "claudeCliSessionId"};
const field_list lineage_fields = {"spawnedBy",        "spawnedWorkspaceDir", "spawnedCwd",
                                       "parentSessionKey", "forkedFromParent",    "spawnDepth",
                                       "subagentRole",     "subagentControlScope"};
const field_list send_queue_fields = {"sendPolicy", "queueMode", "queueDebounceMs", "queueCap", "queueDrop"};
const field_list group_fields = {"chatType", "channel", "groupId", "subject", "groupChannel", "space"};
const field_list group_activation_fields = {"groupActivation", "groupActivationNeedsSystemIntro"};
const field_list route_fields = {"route",  "deliveryContext", "lastChannel",
                                     "lastTo", "lastAccountId",   "lastThreadId"};
const field_list model_override_fields = {"providerOverride", "modelOverride", "modelOverrideSource",
                                              "modelOverrideFallbackOriginProvider",
                                              "modelOverrideFallbackOriginModel"};
const field_list fallback_origin_fields = {"modelOverrideFallbackOriginProvider",
                                               "modelOverrideFallbackOriginModel"};
const field_list auth_override_fields = {"authProfileOverride", "authProfileOverrideSource",
                                             "authProfileOverrideCompactionCount"};
const field_list memory_flush_fields = {"memoryFlushAt",           "memoryFlushCompactionCount",
                                            "memoryFlushContextHash",  "memoryFlushFailureCount",
                                            "memoryFlushLastFailedAt", "memoryFlushLastFailureError"};
const field_list run_stat_fields = {"startedAt", "endedAt", "runtimeMs", "status"};
const field_list run_cache_fields = {"inputTokens",          "outputTokens",
                                         "estimatedCostUsd",     "cacheRead",
                                         "cacheWrite",           "contextTokens",
                                         "contextBudgetStatus",  "goal",
                                         "skillsSnapshot",       "modelProvider",
                                         "model",                "fallbackNoticeSelectedModel",
                                         "fallbackNoticeActiveModel", "fallbackNoticeReason",
                                         "systemPromptReport"};
// Cron base-row sanitizing [R§5.6].
const field_list cron_routing_fields = {"route", "lastChannel", "lastTo", "lastAccountId", "lastThreadId"};
const field_list cron_delivery_fields = {"deliveryContext",
                                             "pendingFinalDelivery",
                                             "pendingFinalDeliveryCreatedAt",
                                             "pendingFinalDeliveryLastAttemptAt",
                                             "pendingFinalDeliveryAttemptCount",
                                             "pendingFinalDeliveryLastError",
                                             "pendingFinalDeliveryText",
                                             "pendingFinalDeliveryIntentId",
                                             "pendingFinalDeliveryContext",
                                             "restartRecoveryDeliveryContext",
                                             "restartRecoveryDeliveryRunId"};
const field_list cron_origin_acp_fields = {"origin", "acp"};
const field_list elevation_fields = {"elevatedLevel", "execHost", "execSecurity", "execAsk", "execNode"};

// The object literal initSessionState spreads over the row: an ordered list of keys, each
// with a value or JavaScript's undefined (delete). The first write of a key fixes its place.
class row_patch {
 public:
  // Reusing the session: the patch lands on the row it carries from, so `key: row.key` is a
  // no-op and carry() is skipped (the hot path: most turns reuse their session); get() then
  // answers from the row for keys the patch does not set.
  explicit row_patch(const boost::json::object* reused_row = nullptr) : reused_(reused_row) {}
  void set(std::string_view key, boost::json::value v) { slot(key) = std::move(v); }
  void unset(std::string_view key) { slot(key).reset(); }
  void unset(field_list keys) {
    for (auto k : keys) unset(k);
  }
  // `key: from.key` (undefined when absent).
  void carry(const boost::json::object& from, std::string_view key) {
    // Reusing the row: a key it has is already in place; an absent one still takes its slot
    // here, as {...entry, ...patch} orders it.
    if (reused_ == &from && from.contains(key)) return;
    if (const auto* v = from.if_contains(key))
      set(key, *v);
    else
      unset(key);
  }
  void carry(const boost::json::object& from, field_list keys) {
    for (auto k : keys) carry(from, k);
  }
  const boost::json::value* get(std::string_view key) const {
    for (const auto& [k, v] : items_)
      if (k == key) return v ? &*v : nullptr;
    return reused_ ? reused_->if_contains(key) : nullptr;
  }
  // {...row, ...patch}; undefined members are deleted (JSON.stringify omits them).
  void apply_to(boost::json::object& row) const {
    for (const auto& [k, v] : items_) {
      if (v)
        json::set(row, k, *v);
      else
        json::erase(row, k);
    }
  }

 private:
  std::optional<boost::json::value>& slot(std::string_view key) {
    for (auto& [k, v] : items_)
      if (k == key) return v;
    items_.emplace_back(std::string(key), std::nullopt);
    return items_.back().second;
  }
  std::vector<std::pair<std::string, std::optional<boost::json::value>>> items_;
  const boost::json::object* reused_ = nullptr;
};

bool js_truthy(const boost::json::value* v) {
  if (!v || v->is_null()) return false;
  if (v->is_string()) return !v->get_string().empty();
  if (v->is_bool()) return v->get_bool();
  if (auto n = json::as_number(*v)) return *n != 0 && !std::isnan(*n);
  return true;
}

// null or undefined, the values `??` replaces.
bool nullish(const boost::json::value* v) { return !v || v->is_null(); }

bool has_text(std::optional<std::string_view> s) {
  return s && s->find_first_not_of(" \t\n\r\f\v") != std::string_view::npos;
}

boost::json::value timestamp_value(double t) {
  if (std::trunc(t) == t && std::fabs(t) < 9e15) return static_cast<std::int64_t>(t);
  return t;
}

bool can_reuse(const session_entry* row) {
  if (!row) return false;
  auto id = row->session_id();
  auto updated = json::get_number(row->json(), "updatedAt");
  return id && !id->empty() && updated && std::isfinite(*updated);
}

struct turn_decision {
  bool reuse = false;
  bool ends_previous = false;  // previousSessionEntry: archived, its queued events dropped
  bool explicit_reset = false;
  std::optional<session_end_reason> reason;
};

turn_decision decide(const rollover_input& in) {
  const bool reusable = can_reuse(in.current);
  const bool explicit_reset = in.trigger.command == reset_command::reset;
  const bool reset = explicit_reset || in.force_new;
  const bool soft = in.trigger.command == reset_command::soft_reset;
  const bool fresh = (is_system_event(in.kind) && reusable) || (in.reconnect_resume && reusable) ||
                     (in.current && in.freshness.fresh) || (soft && reusable);
  turn_decision d;
  d.explicit_reset = explicit_reset;
  d.reuse = !reset && fresh && reusable;
  d.ends_previous = !d.reuse && (reset || !fresh) && in.current;
  if (!d.ends_previous) return d;
  if (explicit_reset)
    d.reason = in.trigger.explicit_reason();
  else if (in.force_new)
    d.reason = session_end_reason::new_session;
  else
    d.reason = in.freshness.stale_reason;
  return d;
}

// `isNewSession ? now : (baseEntry.sessionStartedAt ?? <transcript header time>)`
void put_started_at(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& base) {
  const boost::json::value* stored = base.if_contains("sessionStartedAt");
  if (!d.reuse)
    p.set("sessionStartedAt", in.now_ms);
  else if (!nullish(stored))
    p.set("sessionStartedAt", *stored);
  else if (in.recovered_started_at)
    p.set("sessionStartedAt", timestamp_value(*in.recovered_started_at));
  else
    p.unset("sessionStartedAt");
}

void put_lifecycle(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& base) {
  if (d.reuse)
    p.carry(base, "sessionId");
  else
    p.set("sessionId", boost::json::string(in.new_session_id));
  p.set("updatedAt", in.now_ms);
  put_started_at(p, in, d, base);
  if (is_system_event(in.kind))
    p.carry(base, "lastInteractionAt");  // system events do not extend idle life
  else
    p.set("lastInteractionAt", in.now_ms);
  for (auto key : {"systemSent", "abortedLastRun"}) {
    const auto* v = d.reuse ? base.if_contains(key) : nullptr;
    p.set(key, nullish(v) ? boost::json::value(false) : *v);  // `entry.key ?? false`
  }
}

void put_usage_family(row_patch& p, const rollover_input& in, const turn_decision& d,
                      const boost::json::object& base) {
  if (!d.ends_previous) {
    p.carry(base, {"usageFamilyKey", "usageFamilySessionIds"});
    return;
  }
  const session_entry& previous = *in.current;
  auto key = previous.usage_family_key();
  p.set("usageFamilyKey", boost::json::string(key ? *key : std::string_view(in.session_key)));
  std::vector<std::string> ids = previous.usage_family_session_ids();
  if (auto id = previous.session_id(); id && !id->empty()) ids.emplace_back(*id);
  ids.emplace_back(in.new_session_id);
  std::vector<std::string> unique;
  for (auto& id : ids)
    if (std::find(unique.begin(), unique.end(), id) == unique.end()) unique.push_back(std::move(id));
  boost::json::array a;
  for (const auto& id : unique) a.emplace_back(id);
  p.set("usageFamilySessionIds", std::move(a));
}

void put_selection(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& old) {
  if (d.reuse) {
    p.carry(old, {"modelOverride", "providerOverride", "modelOverrideSource"});
    p.carry(old, auth_override_fields);
    return;
  }
  if (in.current && keeps_model_override_on_reset(*in.current)) {
    p.carry(old, {"modelOverride", "providerOverride"});
    p.set("modelOverrideSource", "user");
    p.unset(fallback_origin_fields);
  } else {
    p.unset(model_override_fields);
  }
  if (in.current && keeps_auth_profile_override_on_reset(*in.current)) {
    p.carry(old, "authProfileOverride");
    p.set("authProfileOverrideSource", "user");
    p.carry(old, "authProfileOverrideCompactionCount");
  } else {
    p.unset(auth_override_fields);
  }
}

// `key: d.reuse ? row.key : undefined`
void carry_if_reused(row_patch& p, const turn_decision& d, const boost::json::object& old, field_list keys) {
  if (d.reuse)
    p.carry(old, keys);
  else
    p.unset(keys);
}

void put_session_file(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& old) {
  if (d.reuse && old.contains("sessionFile")) return;
  if (!in.transcript_path) return;
  std::string_view id = d.reuse ? std::string_view(old.at("sessionId").get_string()) : in.new_session_id;
  p.set("sessionFile", boost::json::string(in.transcript_path(id)));
}

void put_new_session_counters(row_patch& p) {
  p.set("compactionCount", 0);
  p.unset(memory_flush_fields);
  p.unset(run_stat_fields);
  p.set("totalTokens", 0);
  p.set("totalTokensFresh", true);
  p.unset(run_cache_fields);
}

row_patch build_patch(const rollover_input& in, const turn_decision& d, const boost::json::object& old) {
  static const boost::json::object nothing;
  const boost::json::object& base = d.reuse ? old : nothing;  // OpenClaw's baseEntry
  row_patch p(d.reuse ? &old : nullptr);
  put_lifecycle(p, in, d, base);
  p.carry(old, preference_fields);
  put_usage_family(p, in, d, base);
  put_selection(p, in, d, old);
  carry_if_reused(p, d, old, cli_binding_fields);
  p.carry(old, "label");
  if (d.reuse || d.explicit_reset)
    p.carry(old, lineage_fields);
  else
    p.unset(lineage_fields);
  carry_if_reused(p, d, old, send_queue_fields);
  p.carry(old, "displayName");
  carry_if_reused(p, d, old, group_fields);
  p.carry(old, group_activation_fields);
  carry_if_reused(p, d, old, route_fields);
  for (const auto& [k, v] : in.inbound_patch) p.set(k, v);
  if (!js_truthy(p.get("chatType"))) p.set("chatType", "direct");
  put_session_file(p, in, d, old);
  if (!d.reuse) put_new_session_counters(p);
  return p;
}

}  // namespace

bool is_system_event(inbound_kind kind) {
  return kind == inbound_kind::heartbeat || kind == inbound_kind::cron_event || kind == inbound_kind::exec_event;
}

bool keeps_model_override_on_reset(const session_entry& entry) {
  if (!has_text(entry.model_override())) return false;
  const auto& o = entry.json();
  if (const auto* source = o.if_contains("modelOverrideSource"); source && js_truthy(source))
    return source->is_string() && source->get_string() == "user";
  const bool auto_fallback = has_text(json::get_string(o, "modelOverrideFallbackOriginProvider")) &&
                             has_text(json::get_string(o, "modelOverrideFallbackOriginModel"));
  return !auto_fallback;
}

bool keeps_auth_profile_override_on_reset(const session_entry& entry) {
  if (!has_text(entry.auth_profile_override())) return false;
  const auto& o = entry.json();
  if (const auto* source = o.if_contains("authProfileOverrideSource"); source && js_truthy(source))
    return source->is_string() && source->get_string() == "user";
  return !json::get_number(o, "authProfileOverrideCompactionCount");
}

void apply_model_selection(session_entry& entry, const model_selection& selection) {
  if (selection.is_default) {
    entry.clear_provider_override();
    entry.clear_model_override();
    entry.clear_model_override_source();
  } else {
    entry.set_provider_override(selection.provider);
    entry.set_model_override(selection.model);
    entry.set_model_override_source("user");
  }
  for (auto k : fallback_origin_fields) entry.erase(k);
}

rollover_result roll_session(const rollover_input& in) {
  const turn_decision d = decide(in);
  static const boost::json::object none;
  const boost::json::object& old = in.current ? in.current->json() : none;
  boost::json::object row = old;
  build_patch(in, d, old).apply_to(row);

  rollover_result r;
  r.new_session = !d.reuse;
  r.reason = d.reason;
  r.entry = session_entry(std::move(row));
  if (d.ends_previous) {
    r.drop_queued_system_events = true;
    if (auto id = in.current->session_id(); id && !id->empty()) r.archive_session_id = std::string(*id);
  }
  return r;
}

std::string cron_label(const cron_job_ref& job) { return "Cron: " + (has_text(job.name) ? job.name : job.id); }

session_entry sanitize_cron_base_row(const session_entry& row, const cron_job_ref& job) {
  session_entry out = row;
  for (field_list group : {cron_routing_fields, cron_delivery_fields, cron_origin_acp_fields, elevation_fields})
    for (auto k : group) out.erase(k);
  if (!keeps_model_override_on_reset(row))
    for (auto k : model_override_fields) out.erase(k);
  if (!keeps_auth_profile_override_on_reset(row))
    for (auto k : auth_override_fields) out.erase(k);
  if (!has_text(out.label())) out.set_label(cron_label(job));
  return out;
}

rollover_result roll_isolated_cron_run(const session_entry* base_row, const cron_job_ref& job, rollover_input in) {
  std::optional<session_entry> sanitized;
  if (base_row) sanitized = sanitize_cron_base_row(*base_row, job);
  in.current = sanitized ? &*sanitized : nullptr;
  in.kind = inbound_kind::message;
  in.force_new = isolated_cron_run_forces_new_session;
  rollover_result out = roll_session(in);
  if (!has_text(out.entry.label())) out.entry.set_label(cron_label(job));  // the first run too
  return out;
}

}  // namespace sessionrt::actors
