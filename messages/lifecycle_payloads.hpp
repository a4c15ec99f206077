// The payload of each lifecycle event type: one struct per type, whose fields are the event's
// `data` keys (camelCase in JSON, in the order listed). This header is where a subscriber reads
// what an event carries, and make_event() is the only way the runtime fills one, so the two
// cannot drift apart. Optional fields are left out of `data` when empty.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "messages/chat_event.hpp"
#include "messages/lifecycle_event.hpp"

namespace sessionrt::payloads {

// Whom an event concerns ("" fields for store-wide events).
struct event_subject {
  std::string session_key;
  std::string agent_id;
  std::string session_id;
};

struct session_created {
  static constexpr std::string_view type = event_types::session_created;
  // A sub-agent's first row (left out otherwise): its parent's key, its depth, and how it
  // forked from the parent ("" = it did not).
  std::string spawned_by;  // spawnedBy
  std::optional<std::int64_t> spawn_depth;
  std::string fork;
  boost::json::object data() const;
};
struct session_reset {
  static constexpr std::string_view type = event_types::session_reset;
  std::string reason;  // daily | idle | new | reset | ...
  std::string old_session_id, new_session_id;
  boost::json::object data() const;
};
struct session_expired {
  static constexpr std::string_view type = event_types::session_expired;
  std::string reason;    // daily | idle
  std::string stale_at;  // staleAt, ISO-8601 with ms
  boost::json::object data() const;
};
struct session_passivated {
  static constexpr std::string_view type = event_types::session_passivated;
  std::string why;          // idle | lru | expired | stop | maintenance | ...
  std::string close_error;  // closeError: closing the transcript failed (optional)
  boost::json::object data() const;
};
struct message_appended {
  static constexpr std::string_view type = event_types::message_appended;
  std::string entry_id, role;
  boost::json::object data() const;
};
struct turn_completed {
  static constexpr std::string_view type = event_types::turn_completed;
  std::int64_t total_tokens = 0, latency_ms = 0;
  std::optional<delivery_route> delivery;  // where the reply goes (delivery_json)
  boost::json::object data() const;
};
struct model_fallback {
  static constexpr std::string_view type = event_types::model_fallback;
  std::string from, to, reason;  // "provider/model" refs; the provider's error or the retry verdict
  boost::json::object data() const;
};
struct turn_failed {
  static constexpr std::string_view type = event_types::turn_failed;
  std::string error;
  boost::json::object data() const;
};
struct turn_queued {
  static constexpr std::string_view type = event_types::turn_queued;
  std::string mode;  // followup | collect | interrupt | steer
  std::int64_t depth = 0;  // messages waiting, this one included
  boost::json::object data() const;
};
struct turn_cancelled {
  static constexpr std::string_view type = event_types::turn_cancelled;
  std::string reason;  // stop | interrupt | reset | shutdown
  boost::json::object data() const;
};
struct store_flushed {
  static constexpr std::string_view type = event_types::store_flushed;
  std::string path;
  std::int64_t rows = 0;
  boost::json::object data() const;
};
struct store_quarantined {
  static constexpr std::string_view type = event_types::store_quarantined;
  std::string path;  // where the unreadable sessions.json was moved
  std::string cause;
  std::int64_t rows_from_headers = 0;   // rowsFromHeaders: rows rebuilt from transcript headers
  std::int64_t unrecoverable_keys = 0;  // unrecoverableKeys
  boost::json::object data() const;
};
struct transcript_repaired {
  static constexpr std::string_view type = event_types::transcript_repaired;
  std::string path, summary;
  std::int64_t dropped_lines = 0, torn_tail_bytes = 0;
  std::string kept_at;  // the file holding the removed lines' original bytes ("" = none removed)
  boost::json::object data() const;
};
struct context_sanitized {
  static constexpr std::string_view type = event_types::context_sanitized;
  std::string purpose;         // turn | flush | summary | ...
  boost::json::object counts;  // one per hygiene rule that acted (hygiene_report::to_json)
  boost::json::object data() const;
};
struct lock_contended {
  static constexpr std::string_view type = event_types::lock_contended;
  std::string lock_path;
  std::optional<std::int64_t> pid;  // null when the lock file names none
  bool alive = false;
  std::optional<std::int64_t> age_ms;
  std::string reasons;
  boost::json::object data() const;
};
struct compaction_started {
  static constexpr std::string_view type = event_types::compaction_started;
  std::string reason;  // threshold | overflow | manual | ...
  boost::json::object data() const;
};
struct compaction_completed {
  static constexpr std::string_view type = event_types::compaction_completed;
  std::string reason, provider;
  std::int64_t tokens_before = 0, tokens_after = 0;
  std::string first_kept_entry_id;
  std::int64_t compaction_count = 0;
  std::string warning;               // a provider fell back to the built-in one (optional)
  std::string successor_session_id;  // truncateAfterCompaction rotated the file (optional)
  std::string checkpoint;            // the old file's path, with a successor (optional)
  boost::json::object data() const;
};
struct compaction_failed {
  static constexpr std::string_view type = event_types::compaction_failed;
  std::string reason, error;
  bool cancelled = false;
  boost::json::object data() const;
};
// memory_flush.started and memory_flush.skipped carry the same decision.
struct memory_flush_decision {
  std::string reason;
  std::int64_t token_count = 0, threshold = 0;
  boost::json::object data() const;
};
struct memory_flush_started : memory_flush_decision {
  static constexpr std::string_view type = event_types::memory_flush_started;
};
struct memory_flush_skipped : memory_flush_decision {
  static constexpr std::string_view type = event_types::memory_flush_skipped;
};
struct memory_flush_completed {
  static constexpr std::string_view type = event_types::memory_flush_completed;
  bool silent = false;      // the flush turn answered NO_REPLY
  std::string memory_file;  // memoryFile, relative to the workspace
  boost::json::object data() const;
};
struct memory_flush_failed {
  static constexpr std::string_view type = event_types::memory_flush_failed;
  std::string error;
  std::int64_t failures = 0;  // in this compaction cycle (3 skip the cycle)
  boost::json::object data() const;
};
struct reply_suppressed {
  static constexpr std::string_view type = event_types::reply_suppressed;
  boost::json::object data() const { return {}; }
};
struct overflow_recovered {
  static constexpr std::string_view type = event_types::overflow_recovered;
  std::int64_t compactions = 0;
  boost::json::object data() const;
};
struct context_pressure {
  static constexpr std::string_view type = event_types::context_pressure;
  double fraction = 0;
  std::int64_t context_tokens = 0, compaction_threshold = 0, context_window = 0;
  boost::json::object data() const;
};
struct cron_completed {
  static constexpr std::string_view type = event_types::cron_completed;
  std::string job_id, session_id;
  std::optional<std::string> error;  // the run failed
  std::optional<std::string> reply;  // else its reply, when there is one
  bool suppressed = false;
  boost::json::object data() const;
};
struct reply_delta {
  static constexpr std::string_view type = event_types::reply_delta;
  std::string text;
  std::int64_t attempt = 1, index = 0;
  bool done = false;       // the attempt's last piece; silent and discarded only then
  bool silent = false;     // the reply was NO_REPLY: nothing more to show
  bool discarded = false;  // the attempt was dropped (an overflow retried, an error)
  boost::json::object data() const;
};
// /dock-<channel> moved the session's reply route to the sender's linked peer there.
struct session_docked {
  static constexpr std::string_view type = event_types::session_docked;
  std::string channel, to, account_id;  // the new route (accountId)
  std::string group;                    // the identity group that links the peers
  std::string from;                     // the channel the route was on
  boost::json::object data() const;
};
struct subagent_completed {
  static constexpr std::string_view type = event_types::subagent_completed;
  std::string child_session_key, child_session_id;
  std::int64_t spawn_depth = 0;
  std::string fork;                  // optional
  std::optional<std::string> error;  // the sub-agent's turn failed
  std::optional<std::string> reply;  // else its reply, when there is one
  bool suppressed = false;
  boost::json::object data() const;
};
// maintenance.report's body is built by the maintenance pass (maintenance_pass.hpp says its
// keys); the payload carries it as is.
struct maintenance_report {
  static constexpr std::string_view type = event_types::maintenance_report;
  boost::json::object body;
  boost::json::object data() const { return body; }
};

// The shard events of a cluster node: store-wide (subject: the agent only). `shard` is the
// index within the agent's shards, `epoch` the owner key's revision (cluster/shard_claims.hpp).
struct shard_ownership {
  std::string agent;
  std::int64_t shard = 0;
  std::int64_t epoch = 0;
  std::string node;
  std::string reason;  // released: rebalance | shutdown; fenced: lease lost | taken (optional)
  boost::json::object data() const;
};
struct shard_acquired : shard_ownership {
  static constexpr std::string_view type = event_types::shard_acquired;
};
struct shard_released : shard_ownership {
  static constexpr std::string_view type = event_types::shard_released;
};
struct shard_fenced : shard_ownership {
  static constexpr std::string_view type = event_types::shard_fenced;
};

// {channel, to, accountId?, threadId?}
boost::json::object delivery_json(const delivery_route& route);

template <class Payload>
lifecycle_event make_event(event_subject who, std::int64_t at_ms, const Payload& p) {
  lifecycle_event e;
  e.type = std::string(Payload::type);
  e.session_key = std::move(who.session_key);
  e.agent_id = std::move(who.agent_id);
  e.session_id = std::move(who.session_id);
  e.at_ms = at_ms;
  e.data = p.data();
  return e;
}

}  // namespace sessionrt::payloads
