// Lifecycle events the runtime publishes (SPEC §3, §4, §7): a type name from the list below,
// the session it concerns, when, and a JSON object of details specific to the type, whose keys
// messages/lifecycle_payloads.hpp lists (one struct per type, the only way events are filled).
// Subscribers filter by type, key prefix and agent.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sessionrt {

namespace event_types {
inline constexpr std::string_view session_created = "session.created";
inline constexpr std::string_view session_reset = "session.reset";
inline constexpr std::string_view session_expired = "session.expired";
inline constexpr std::string_view session_passivated = "session.passivated";
inline constexpr std::string_view message_appended = "message.appended";
inline constexpr std::string_view turn_completed = "turn.completed";
inline constexpr std::string_view turn_failed = "turn.failed";
// A message arrived while the session's turn was running: it waits.
inline constexpr std::string_view turn_queued = "turn.queued";
// The running turn's model call was cancelled: the user's message is kept, nothing of the reply.
inline constexpr std::string_view turn_cancelled = "turn.cancelled";
inline constexpr std::string_view store_flushed = "store.flushed";
inline constexpr std::string_view store_quarantined = "store.quarantined";
inline constexpr std::string_view transcript_repaired = "transcript.repaired";
// Hygiene changed what this model call sees (the transcript is not rewritten).
inline constexpr std::string_view context_sanitized = "context.sanitized";
inline constexpr std::string_view lock_contended = "lock.contended";
inline constexpr std::string_view compaction_started = "compaction.started";
inline constexpr std::string_view compaction_completed = "compaction.completed";
inline constexpr std::string_view compaction_failed = "compaction.failed";
inline constexpr std::string_view memory_flush_started = "memory_flush.started";
inline constexpr std::string_view memory_flush_completed = "memory_flush.completed";
inline constexpr std::string_view memory_flush_skipped = "memory_flush.skipped";
inline constexpr std::string_view memory_flush_failed = "memory_flush.failed";
inline constexpr std::string_view reply_suppressed = "reply.suppressed";
inline constexpr std::string_view overflow_recovered = "overflow.recovered";
// A turn's model failed terminally and the runner moved to the next of its fallbacks.
inline constexpr std::string_view model_fallback = "model.fallback";
inline constexpr std::string_view context_pressure = "context.pressure";
inline constexpr std::string_view cron_completed = "cron.completed";
// A sub-agent's first turn (its task) ended; published under the parent's key.
inline constexpr std::string_view subagent_completed = "subagent.completed";
// /dock-<channel> moved a direct session's reply route.
inline constexpr std::string_view session_docked = "session.docked";
// One store maintenance pass: what it did, or would do in warn mode.
inline constexpr std::string_view maintenance_report = "maintenance.report";
// A streamed reply's text as the model produces it (only from runners that stream, see
// model_request::on_text). High volume, so opt-in: delivered only to subscriptions that name
// it ("reply.delta" or "reply."), never to "every type".
inline constexpr std::string_view reply_delta = "reply.delta";
// A cluster node (cluster/cluster_node.hpp) took a shard's owner key, gave it back (handoff),
// or found it gone without giving it back (its lease ended, or another node holds it): fenced.
inline constexpr std::string_view shard_acquired = "shard.acquired";
inline constexpr std::string_view shard_released = "shard.released";
inline constexpr std::string_view shard_fenced = "shard.fenced";
}  // namespace event_types

struct lifecycle_event {
  std::string type;
  std::string session_key;  // "" for store-wide events
  std::string agent_id;
  std::string session_id;
  std::int64_t at_ms = 0;
  boost::json::object data;

  boost::json::object to_json() const;  // {type, sessionKey, agentId, sessionId, at, data}
};

// Which events a subscriber wants: every field is "any" when empty (except that no types means
// every type but reply.delta, which must be named).
struct event_filter {
  std::vector<std::string> types;  // exact type names, or a prefix ending in '.' ("compaction.")
  std::string key_prefix;
  std::string agent_id;
  bool matches(const lifecycle_event& e) const;
  bool wants_type(std::string_view type) const;
};

}  // namespace sessionrt
