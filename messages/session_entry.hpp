// session_entry: one row of sessions.json (sessionKey -> SessionEntry) [R§2.2].
// It wraps the row's JSON object so that every field survives a load/save round trip in its
// place, including fields this runtime does not know. Known fields have typed accessors;
// setters keep an existing key's position and append new keys; clear_x() deletes the key
// (JavaScript's `undefined`: absent from the file). Timestamps are epoch milliseconds.
#pragma once
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/json_access.hpp"

namespace sessionrt {

class session_entry {
 public:
  session_entry() = default;
  explicit session_entry(boost::json::object o) : obj_(std::move(o)) {}

  const boost::json::object& json() const { return obj_; }
  boost::json::object& json() { return obj_; }
  bool has(std::string_view key) const { return obj_.contains(key); }
  void erase(std::string_view key) { json::erase(obj_, key); }

#define SRT_STR_FIELD(name, key)                                                               \
  std::optional<std::string_view> name() const { return json::get_string(obj_, key); }         \
  void set_##name(std::string_view v) { json::set(obj_, key, boost::json::string(v)); }        \
  void clear_##name() { json::erase(obj_, key); }
#define SRT_INT_FIELD(name, key)                                                               \
  std::optional<std::int64_t> name() const { return json::get_int(obj_, key); }                \
  void set_##name(std::int64_t v) { json::set(obj_, key, v); }                                  \
  void clear_##name() { json::erase(obj_, key); }
#define SRT_BOOL_FIELD(name, key)                                                              \
  std::optional<bool> name() const { return json::get_bool(obj_, key); }                       \
  void set_##name(bool v) { json::set(obj_, key, v); }                                          \
  void clear_##name() { json::erase(obj_, key); }
#define SRT_OBJ_FIELD(name, key)                                                               \
  const boost::json::object* name() const { return json::get_object(obj_, key); }              \
  void set_##name(boost::json::object v) { json::set(obj_, key, std::move(v)); }               \
  void clear_##name() { json::erase(obj_, key); }

  SRT_STR_FIELD(session_id, "sessionId")
  SRT_INT_FIELD(updated_at, "updatedAt")
  SRT_INT_FIELD(session_started_at, "sessionStartedAt")
  SRT_INT_FIELD(last_interaction_at, "lastInteractionAt")
  SRT_STR_FIELD(session_file, "sessionFile")
  SRT_STR_FIELD(chat_type, "chatType")
  SRT_STR_FIELD(channel, "channel")
  SRT_STR_FIELD(group_id, "groupId")
  SRT_STR_FIELD(subject, "subject")
  SRT_STR_FIELD(display_name, "displayName")
  SRT_STR_FIELD(label, "label")
  SRT_STR_FIELD(thinking_level, "thinkingLevel")
  SRT_STR_FIELD(verbose_level, "verboseLevel")
  SRT_STR_FIELD(reasoning_level, "reasoningLevel")
  SRT_STR_FIELD(elevated_level, "elevatedLevel")
  SRT_STR_FIELD(send_policy, "sendPolicy")
  SRT_STR_FIELD(provider_override, "providerOverride")
  SRT_STR_FIELD(model_override, "modelOverride")
  SRT_STR_FIELD(model_override_source, "modelOverrideSource")
  SRT_STR_FIELD(auth_profile_override, "authProfileOverride")
  SRT_STR_FIELD(auth_profile_override_source, "authProfileOverrideSource")
  SRT_STR_FIELD(model_provider, "modelProvider")
  SRT_STR_FIELD(model, "model")
  SRT_INT_FIELD(input_tokens, "inputTokens")
  SRT_INT_FIELD(output_tokens, "outputTokens")
  SRT_INT_FIELD(cache_read, "cacheRead")
  SRT_INT_FIELD(cache_write, "cacheWrite")
  SRT_INT_FIELD(total_tokens, "totalTokens")
  SRT_BOOL_FIELD(total_tokens_fresh, "totalTokensFresh")
  SRT_INT_FIELD(context_tokens, "contextTokens")
  SRT_INT_FIELD(compaction_count, "compactionCount")
  SRT_INT_FIELD(memory_flush_at, "memoryFlushAt")
  SRT_INT_FIELD(memory_flush_compaction_count, "memoryFlushCompactionCount")
  SRT_INT_FIELD(memory_flush_failure_count, "memoryFlushFailureCount")
  SRT_INT_FIELD(memory_flush_last_failed_at, "memoryFlushLastFailedAt")
  SRT_STR_FIELD(memory_flush_last_failure_error, "memoryFlushLastFailureError")
  SRT_OBJ_FIELD(origin, "origin")
  SRT_OBJ_FIELD(delivery_context, "deliveryContext")
  SRT_STR_FIELD(last_channel, "lastChannel")
  SRT_STR_FIELD(last_to, "lastTo")
  SRT_STR_FIELD(last_account_id, "lastAccountId")
  SRT_STR_FIELD(usage_family_key, "usageFamilyKey")
  SRT_STR_FIELD(status, "status")
  SRT_INT_FIELD(archived_at, "archivedAt")
  SRT_STR_FIELD(parent_session_key, "parentSessionKey")
  SRT_STR_FIELD(spawned_by, "spawnedBy")
  SRT_BOOL_FIELD(forked_from_parent, "forkedFromParent")
  SRT_INT_FIELD(spawn_depth, "spawnDepth")
  SRT_STR_FIELD(subagent_role, "subagentRole")                   // orchestrator | leaf
  SRT_STR_FIELD(subagent_control_scope, "subagentControlScope")  // children | none
  SRT_STR_FIELD(heartbeat_isolated_base_session_key, "heartbeatIsolatedBaseSessionKey")
  SRT_STR_FIELD(queue_mode, "queueMode")
  SRT_INT_FIELD(queue_cap, "queueCap")
  SRT_STR_FIELD(queue_drop, "queueDrop")
  SRT_INT_FIELD(queue_debounce_ms, "queueDebounceMs")

#undef SRT_STR_FIELD
#undef SRT_INT_FIELD
#undef SRT_BOOL_FIELD
#undef SRT_OBJ_FIELD

  std::vector<std::string> usage_family_session_ids() const;
  void set_usage_family_session_ids(const std::vector<std::string>& ids);

 private:
  boost::json::object obj_;
};

// What a new session does not inherit from the session it replaces [R§4.3]: compactionCount,
// totalTokens and totalTokensFresh start over (0, 0, true) and these run counters and caches
// are deleted. Both the rollover (actors/session) and the start-up reconcile that adopts a
// transcript whose row was never written (storage) apply it, so the two cannot drift apart.
inline constexpr const char* new_session_deleted_fields[] = {
    "memoryFlushAt", "memoryFlushCompactionCount", "memoryFlushContextHash", "memoryFlushFailureCount",
    "memoryFlushLastFailedAt", "memoryFlushLastFailureError",
    "startedAt", "endedAt", "runtimeMs", "status",
    "inputTokens", "outputTokens", "estimatedCostUsd", "cacheRead", "cacheWrite", "contextTokens",
    "contextBudgetStatus", "goal", "skillsSnapshot", "modelProvider", "model",
    "fallbackNoticeSelectedModel", "fallbackNoticeActiveModel", "fallbackNoticeReason", "systemPromptReport"};
// Sets the three start values (in that order) and deletes new_session_deleted_fields.
void start_new_session_counters(session_entry& row);

// What a compaction does to its session's counters [R§6]: compactionCount + 1, the last call's
// input/output/cache figures deleted, and totalTokens = `tokens_after` (fresh) when the caller
// counted it, else totalTokensFresh = false (read again from the transcript). Used by the
// compaction itself and by the start-up reconcile that adopts a successor transcript whose
// row write was lost.
void count_compaction(session_entry& row, std::optional<std::int64_t> tokens_after);

// The usage lineage when `previous` is followed by session `new_session_id` (a rollover or a
// compaction's successor transcript) [R§4.3]: usageFamilyKey = previous.usageFamilyKey ??
// sessionKey; usageFamilySessionIds = uniq([...previous ids, previous.sessionId, new id]).
struct usage_family {
  std::string key;
  std::vector<std::string> session_ids;
};
usage_family next_usage_family(const session_entry& previous, std::string_view session_key,
                               std::string_view new_session_id);
// Sets `row`'s usageFamilyKey and usageFamilySessionIds to next_usage_family(row, ...): call it
// while `row` still names the previous session.
void extend_usage_family(session_entry& row, std::string_view session_key, std::string_view new_session_id);

}  // namespace sessionrt
