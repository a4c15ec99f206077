#include "actors/session/session_rollover.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "messages/json_writer.hpp"

namespace sessionrt::actors {
namespace {

// Every key the rules below write or drop by name. A `field` names one of them (checked at
// compile time) and carries its index: row_patch finds a field's slot and the row's value for it
// by that index instead of hashing the name.
constexpr std::string_view known_keys[] = {
    "sessionId", "updatedAt", "sessionStartedAt", "lastInteractionAt", "systemSent", "abortedLastRun",
    "thinkingLevel", "verboseLevel", "traceLevel", "reasoningLevel", "ttsAuto", "responseUsage",
    "usageFamilyKey", "usageFamilySessionIds",
    "providerOverride", "modelOverride", "modelOverrideSource", "modelOverrideFallbackOriginProvider",
    "modelOverrideFallbackOriginModel", "authProfileOverride", "authProfileOverrideSource",
    "authProfileOverrideCompactionCount",
    "cliSessionIds", "cliSessionBindings", "claudeCliSessionId", "label",
    "spawnedBy", "spawnedWorkspaceDir", "spawnedCwd", "parentSessionKey", "forkedFromParent", "spawnDepth",
    "subagentRole", "subagentControlScope",
    "sendPolicy", "queueMode", "queueDebounceMs", "queueCap", "queueDrop", "displayName",
    "chatType", "channel", "groupId", "subject", "groupChannel", "space",
    "groupActivation", "groupActivationNeedsSystemIntro",
    "route", "deliveryContext", "lastChannel", "lastTo", "lastAccountId", "lastThreadId",
    "sessionFile", "compactionCount", "totalTokens", "totalTokensFresh",
    "memoryFlushAt", "memoryFlushCompactionCount", "memoryFlushContextHash", "memoryFlushFailureCount",
    "memoryFlushLastFailedAt", "memoryFlushLastFailureError",
    "startedAt", "endedAt", "runtimeMs", "status",
    "inputTokens", "outputTokens", "estimatedCostUsd", "cacheRead", "cacheWrite", "contextTokens",
    "contextBudgetStatus", "goal", "skillsSnapshot", "modelProvider", "model", "fallbackNoticeSelectedModel",
    "fallbackNoticeActiveModel", "fallbackNoticeReason", "systemPromptReport",
    "pendingFinalDelivery", "pendingFinalDeliveryCreatedAt", "pendingFinalDeliveryLastAttemptAt",
    "pendingFinalDeliveryAttemptCount", "pendingFinalDeliveryLastError", "pendingFinalDeliveryText",
    "pendingFinalDeliveryIntentId", "pendingFinalDeliveryContext", "restartRecoveryDeliveryContext",
    "restartRecoveryDeliveryRunId", "origin", "acp",
    "elevatedLevel", "execHost", "execSecurity", "execAsk", "execNode",
    "archivedAt", "archivedBy", "archiveReason"};
constexpr int known_key_count = static_cast<int>(std::size(known_keys));

consteval int known_key_index(std::string_view name) {
  for (int i = 0; i < known_key_count; ++i)
    if (known_keys[i] == name) return i;
  throw "add the key to known_keys";  // reached only at compile time: a compile error
}

consteval bool known_keys_unique() {
  for (int i = 0; i < known_key_count; ++i)
    for (int j = i + 1; j < known_key_count; ++j)
      if (known_keys[i] == known_keys[j]) return false;
  return true;
}
static_assert(known_keys_unique());

// The index of any key in known_keys, -1 for others: an open-addressing table over a hash of
// the length and the first and last 8 bytes (the row's keys are looked up once per roll).
std::uint64_t key_hash(std::string_view key) {
  std::uint64_t head = 0;
  std::uint64_t tail = 0;
  if (key.size() >= 8) {
    std::memcpy(&head, key.data(), 8);
    std::memcpy(&tail, key.data() + key.size() - 8, 8);
  } else {
    std::memcpy(&head, key.data(), key.size());
  }
  return (head * 0x9E3779B97F4A7C15ull) ^ (tail * 0xC2B2AE3D27D4EB4Full) ^ (key.size() * 0x165667B19E3779F9ull);
}

int known_key_index_of(std::string_view key) {
  constexpr int bits = 8;  // 256 buckets for ~100 keys
  static_assert(known_key_count < (1 << bits) / 2);
  static const std::array<std::int16_t, 1 << bits> table = [] {
    std::array<std::int16_t, 1 << bits> t;
    t.fill(-1);
    for (int i = 0; i < known_key_count; ++i) {
      auto b = static_cast<std::size_t>(key_hash(known_keys[i]) >> (64 - bits));
      while (t[b] >= 0) b = (b + 1) % t.size();
      t[b] = static_cast<std::int16_t>(i);
    }
    return t;
  }();
  for (auto b = static_cast<std::size_t>(key_hash(key) >> (64 - bits));; b = (b + 1) % table.size()) {
    const int i = table[b];
    if (i < 0) return -1;
    if (known_keys[i] == key) return i;
  }
}

struct field {
  std::string_view name;
  int id;
  consteval field(const char* key) : name(key), id(known_key_index(key)) {}  // implicit: p.set("updatedAt", ...)
};

using field_list = std::initializer_list<field>;

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
// The run counters and caches a new session is without (the list shared with the reconcile).
template <std::size_t... I>
consteval std::array<field, sizeof...(I)> new_session_deleted(std::index_sequence<I...>) {
  return {field(new_session_deleted_fields[I])...};
}
constexpr auto new_session_deleted_keys =
    new_session_deleted(std::make_index_sequence<std::size(new_session_deleted_fields)>());
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

// The object literal initSessionState spreads over the row, `{...row, ...patch}`: an ordered
// list of keys, each with a value or JavaScript's undefined (delete); the first write of a key
// fixes its place, the last one its value. One slot per key, in first-write order. The patch is
// built while the row is read (its keys indexed once, up front) and applied afterwards, to the
// row itself or to a copy of it. Only what changes the row is recorded:
// - a key the row has keeps its place whatever the patch does; a first write that leaves the
//   row's value as it is records nothing (`key: row.key`, an equal inbound value);
// - a key the row lacks is appended at its first write, so an undefined write still takes a
//   slot: it fixes where a later set of the same key lands (a group field the row lacks, set
//   again by the inbound patch or the chatType default).
// Keys are views of string literals or of the caller's inbound_patch; set_ref values must outlive
// the patch too.
class row_patch {
 public:
  explicit row_patch(const boost::json::object& row) : row_(row) {
    row_at_.fill(-1);
    slot_of_.fill(-1);
    for (std::size_t i = 0; i < row.size(); ++i)
      if (int id = known_key_index_of(row.begin()[i].key()); id >= 0) row_at_[id] = static_cast<int>(i);
    slots_.swap(spare_slots());  // a turn's patch takes ~50 slots (~3 KB): reused, not allocated
    slots_.reserve(static_cast<std::size_t>(known_key_count) + 8);
  }
  row_patch(row_patch&&) = default;
  ~row_patch() {
    slots_.clear();
    if (slots_.capacity() > spare_slots().capacity()) slots_.swap(spare_slots());
  }
  void set(field f, boost::json::value v) { write(f.id, f.name, &v, nullptr); }
  // A key of the inbound patch: `v` outlives the patch.
  void set_ref(std::string_view key, const boost::json::value& v) { write(known_key_index_of(key), key, nullptr, &v); }
  void unset(field f) { write(f.id, f.name, nullptr, nullptr); }
  void unset(field_list fs) {
    for (auto f : fs) unset(f);
  }
  // `key: from.key` (undefined when absent).
  void carry(const boost::json::object& from, field f) {
    if (&from == &row_)
      write(f.id, f.name, nullptr, row_value(f));  // the row's own value
    else
      write(f.id, f.name, nullptr, from.if_contains(f.name));
  }
  void carry(const boost::json::object& from, field_list fs) {
    for (auto f : fs) carry(from, f);
  }
  // The row's value before the patch (nullptr: absent).
  const boost::json::value* row_value(field f) const {
    return row_at_[f.id] < 0 ? nullptr : &row_.begin()[row_at_[f.id]].value();
  }
  // The value `{...row, ...patch}` gives the key (nullptr: undefined).
  const boost::json::value* get(field f) const {
    return slot_of_[f.id] < 0 ? row_value(f) : slots_[slot_of_[f.id]].value();
  }
  // `row` is the row the patch was built on, or a copy of it (same keys, same order). Nothing is
  // read from the row the patch was built on here: applying the patch to that very object is fine.
  void apply_to(boost::json::object& row) {
    std::vector<int> erased;
    for (auto& s : slots_)  // the row's keys: values in place, nothing moves yet
      if (s.row_at >= 0) {
        if (s.defined())
          row.begin()[s.row_at].value() = s.take();
        else
          erased.push_back(s.row_at);
      }
    std::sort(erased.begin(), erased.end(), std::greater<>());
    for (int at : erased) row.stable_erase(row.begin() + at);  // the last first: indices hold
    for (auto& s : slots_)  // keys the row lacks, in first-write order
      if (s.row_at < 0 && s.defined()) row.emplace(s.key, s.take());
  }

 private:
  struct slot {
    std::string_view key;
    int row_at = -1;                          // the key's index in the row, -1: the row lacks it
    std::optional<boost::json::value> owned;
    const boost::json::value* ref = nullptr;  // the value when not owned; both empty: undefined
    bool defined() const { return owned || ref; }
    const boost::json::value* value() const { return owned ? &*owned : ref; }
    boost::json::value take() { return owned ? std::move(*owned) : boost::json::value(*ref); }
  };

  // One write of `key` (`id`: its known_keys index, or -1) with the value *v (owned), or *r
  // (borrowed), or undefined when both are null.
  void write(int id, std::string_view key, boost::json::value* v, const boost::json::value* r) {
    int at = id >= 0 ? slot_of_[id] : find_other(key);
    if (at < 0) {
      const int row_at = id >= 0 ? row_at_[id] : index_in_row(key);
      if (row_at >= 0) {
        const boost::json::value& cur = row_.begin()[row_at].value();
        const boost::json::value* nv = v ? v : r;
        if (nv && (nv == &cur || json::same_text(*nv, cur))) return;  // the row's value stays
      }
      at = static_cast<int>(slots_.size());
      slot& s = slots_.emplace_back();
      s.key = key;
      s.row_at = row_at;
      if (id >= 0)
        slot_of_[id] = at;
      else
        other_slots_.push_back(at);
    }
    slot& s = slots_[at];
    s.ref = nullptr;
    if (v)
      s.owned = std::move(*v);
    else if (r && s.row_at >= 0 && r == &row_.begin()[s.row_at].value())
      s.owned = *r;  // back to the row's own value: a copy, as the row changes when the patch applies
    else {
      s.owned.reset();
      s.ref = r;
    }
  }
  // The slot of a key outside known_keys (only inbound keys: a few), -1 when it has none.
  int find_other(std::string_view key) const {
    for (int i : other_slots_)
      if (slots_[i].key == key) return i;
    return -1;
  }
  int index_in_row(std::string_view key) const {
    auto it = row_.find(key);
    return it == row_.end() ? -1 : static_cast<int>(it - row_.begin());
  }

  // This thread's slot vector between patches (emptied, capacity kept).
  static std::vector<slot>& spare_slots() {
    thread_local std::vector<slot> spare;
    return spare;
  }

  const boost::json::object& row_;
  std::array<int, known_key_count> row_at_;   // known key -> its index in the row, or -1
  std::array<int, known_key_count> slot_of_;  // known key -> its slot, or -1
  std::vector<slot> slots_;                   // in first-write order
  std::vector<int> other_slots_;              // slots of keys outside known_keys
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
  const session_entry* current = nullptr;  // the row under the key (in.current, or the row rolled in place)
  bool reuse = false;
  bool ends_previous = false;  // previousSessionEntry: archived, its queued events dropped
  bool explicit_reset = false;
  std::optional<session_end_reason> reason;
};

turn_decision decide(const rollover_input& in, const session_entry* current) {
  const bool reusable = can_reuse(current);
  const bool explicit_reset = in.trigger.command == reset_command::reset;
  const bool reset = explicit_reset || in.force_new;
  const bool soft = in.trigger.command == reset_command::soft_reset;
  const bool fresh = (is_system_event(in.kind) && reusable) || (in.reconnect_resume && reusable) ||
                     (current && in.freshness.fresh) || (soft && reusable);
  turn_decision d;
  d.current = current;
  d.explicit_reset = explicit_reset;
  d.reuse = !reset && fresh && reusable;
  d.ends_previous = !d.reuse && (reset || !fresh) && current;
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
void put_started_at(row_patch& p, const rollover_input& in, const turn_decision& d) {
  const boost::json::value* stored = d.reuse ? p.row_value("sessionStartedAt") : nullptr;
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
  put_started_at(p, in, d);
  if (is_system_event(in.kind)) {
    p.carry(base, "lastInteractionAt");  // system events do not extend idle life
  } else {
    p.set("lastInteractionAt", in.now_ms);
    // A message takes an archived session out of the archive (OpenClaw's
    // restoreArchivedDispatchSession): it is listed and maintained as any other again.
    p.unset({"archivedAt", "archivedBy", "archiveReason"});
  }
  for (field key : field_list{"systemSent", "abortedLastRun"}) {
    const auto* v = d.reuse ? p.row_value(key) : nullptr;
    p.set(key, nullish(v) ? boost::json::value(false) : *v);  // `entry.key ?? false`
  }
}

void put_usage_family(row_patch& p, const rollover_input& in, const turn_decision& d,
                      const boost::json::object& base) {
  if (!d.ends_previous) {
    p.carry(base, {"usageFamilyKey", "usageFamilySessionIds"});
    return;
  }
  const usage_family family = next_usage_family(*d.current, in.session_key, in.new_session_id);
  p.set("usageFamilyKey", boost::json::string(family.key));
  boost::json::array a;
  for (const auto& id : family.session_ids) a.emplace_back(id);
  p.set("usageFamilySessionIds", std::move(a));
}

void put_selection(row_patch& p, const turn_decision& d, const boost::json::object& old) {
  if (d.reuse) {
    p.carry(old, {"modelOverride", "providerOverride", "modelOverrideSource"});
    p.carry(old, auth_override_fields);
    return;
  }
  if (d.current && keeps_model_override_on_reset(*d.current)) {
    p.carry(old, {"modelOverride", "providerOverride"});
    p.set("modelOverrideSource", "user");
    p.unset(fallback_origin_fields);
  } else {
    p.unset(model_override_fields);
  }
  if (d.current && keeps_auth_profile_override_on_reset(*d.current)) {
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

void put_session_file(row_patch& p, const rollover_input& in, const turn_decision& d) {
  if (d.reuse && p.row_value("sessionFile")) return;
  if (!in.transcript_path) return;
  std::string_view id = d.reuse ? std::string_view(p.row_value("sessionId")->get_string()) : in.new_session_id;
  p.set("sessionFile", boost::json::string(in.transcript_path(id)));
}

// As start_new_session_counters (messages/session_entry), through the patch.
void put_new_session_counters(row_patch& p) {
  p.set("compactionCount", 0);
  p.set("totalTokens", 0);
  p.set("totalTokensFresh", true);
  for (field f : new_session_deleted_keys) p.unset(f);
}

row_patch build_patch(const rollover_input& in, const turn_decision& d, const boost::json::object& old) {
  static const boost::json::object nothing;
  const boost::json::object& base = d.reuse ? old : nothing;  // OpenClaw's baseEntry
  row_patch p(old);
  put_lifecycle(p, in, d, base);
  p.carry(old, preference_fields);
  put_usage_family(p, in, d, base);
  put_selection(p, d, old);
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
  for (const auto& [k, v] : in.inbound_patch_ref ? *in.inbound_patch_ref : in.inbound_patch) p.set_ref(k, v);
  if (!js_truthy(p.get("chatType"))) p.set("chatType", "direct");
  put_session_file(p, in, d);
  if (!d.reuse) put_new_session_counters(p);
  return p;
}

// Builds the patch from `current` (read only here), then applies it to `row`: a copy of the
// current row, or its very object moved in.
rollover_result roll(const rollover_input& in, const session_entry* current, boost::json::object& row) {
  static const boost::json::object none;
  const turn_decision d = decide(in, current);
  rollover_result r;
  r.new_session = !d.reuse;
  r.reason = d.reason;
  if (d.ends_previous) {
    r.drop_queued_system_events = true;
    if (auto id = current->session_id(); id && !id->empty()) r.archive_session_id = std::string(*id);
  }
  row_patch patch = build_patch(in, d, current ? current->json() : none);
  patch.apply_to(row);
  r.entry = session_entry(std::move(row));
  return r;
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
  for (auto k : fallback_origin_fields) entry.erase(k.name);
}

std::optional<status> archived_row_refusal(std::string_view key, const session_entry* row, inbound_kind kind) {
  if (!is_system_event(kind) || !row || !row->json().contains("archivedAt")) return std::nullopt;
  return status(errc::invalid_argument,
                "Session \"" + std::string(key) + "\" is archived. Restore it before starting new work.");
}

bool rolls_archived_heartbeat_row(const session_entry* row) {
  if (!row || !row->json().contains("archivedAt")) return false;
  const auto* pending = row->json().if_contains("initializationPending");
  if (pending && pending->is_bool() && pending->get_bool()) return false;
  return has_text(json::get_string(row->json(), "heartbeatIsolatedBaseSessionKey"));
}

void clear_archive_fields(session_entry& row) {
  for (std::string_view f : {"archivedAt", "archivedBy", "archiveReason"}) row.erase(f);
}

rollover_result roll_session(const rollover_input& in) {
  boost::json::object row = in.current ? in.current->json() : boost::json::object();
  return roll(in, in.current, row);
}

rollover_result roll_session(const rollover_input& in, session_entry&& current) {
  return roll(in, &current, current.json());
}

std::string cron_label(const cron_job_ref& job) { return "Cron: " + (has_text(job.name) ? job.name : job.id); }

session_entry sanitize_cron_base_row(const session_entry& row, const cron_job_ref& job) {
  session_entry out = row;
  for (field_list group : {cron_routing_fields, cron_delivery_fields, cron_origin_acp_fields, elevation_fields})
    for (auto k : group) out.erase(k.name);
  if (!keeps_model_override_on_reset(row))
    for (auto k : model_override_fields) out.erase(k.name);
  if (!keeps_auth_profile_override_on_reset(row))
    for (auto k : auth_override_fields) out.erase(k.name);
  if (!has_text(out.label())) out.set_label(cron_label(job));
  return out;
}

rollover_result roll_isolated_cron_run(const session_entry* base_row, const cron_job_ref& job, rollover_input in) {
  std::optional<session_entry> sanitized;
  if (base_row) sanitized = sanitize_cron_base_row(*base_row, job);
  in.current = sanitized ? &*sanitized : nullptr;
  in.kind = inbound_kind::message;
  in.force_new = isolated_cron_run_forces_new_session;
  rollover_result out = sanitized ? roll_session(in, std::move(*sanitized)) : roll_session(in);
  if (!has_text(out.entry.label())) out.entry.set_label(cron_label(job));  // the first run too
  return out;
}

}  // namespace sessionrt::actors
