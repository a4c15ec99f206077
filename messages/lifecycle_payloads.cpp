#include "messages/lifecycle_payloads.hpp"

namespace sessionrt::payloads {
namespace {

void put_if(boost::json::object& o, std::string_view key, const std::string& v) {
  if (!v.empty()) o[key] = v;
}

// A run's end, as cron.completed and subagent.completed say it: the error, else the reply.
void put_run_result(boost::json::object& o, const std::optional<std::string>& error,
                    const std::optional<std::string>& reply, bool suppressed) {
  if (error)
    o["error"] = *error;
  else if (reply)
    o["reply"] = *reply;
  o["suppressed"] = suppressed;
}

boost::json::value or_null(const std::optional<std::int64_t>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}

}  // namespace

boost::json::object session_created::data() const {
  boost::json::object o;
  put_if(o, "spawnedBy", spawned_by);
  if (spawn_depth) o["spawnDepth"] = *spawn_depth;
  put_if(o, "fork", fork);
  return o;
}

boost::json::object session_reset::data() const {
  return {{"reason", reason}, {"oldSessionId", old_session_id}, {"newSessionId", new_session_id}};
}

boost::json::object session_expired::data() const { return {{"reason", reason}, {"staleAt", stale_at}}; }

boost::json::object session_passivated::data() const {
  boost::json::object o{{"why", why}};
  put_if(o, "closeError", close_error);
  return o;
}

boost::json::object message_appended::data() const { return {{"entryId", entry_id}, {"role", role}}; }

boost::json::object model_fallback::data() const { return {{"from", from}, {"to", to}, {"reason", reason}}; }

boost::json::object delivery_json(const delivery_route& route) {
  boost::json::object o{{"channel", route.channel}, {"to", route.to}};
  put_if(o, "accountId", route.account_id);
  put_if(o, "threadId", route.thread_id);
  return o;
}

boost::json::object turn_completed::data() const {
  boost::json::object o{{"totalTokens", total_tokens}, {"latencyMs", latency_ms}};
  if (delivery) o["delivery"] = delivery_json(*delivery);
  return o;
}

boost::json::object turn_failed::data() const { return {{"error", error}}; }

boost::json::object turn_queued::data() const { return {{"mode", mode}, {"depth", depth}}; }

boost::json::object turn_cancelled::data() const { return {{"reason", reason}}; }

boost::json::object store_flushed::data() const { return {{"path", path}, {"rows", rows}}; }

boost::json::object store_quarantined::data() const {
  return {{"path", path}, {"cause", cause}, {"rowsFromHeaders", rows_from_headers},
          {"unrecoverableKeys", unrecoverable_keys}};
}

boost::json::object transcript_repaired::data() const {
  boost::json::object o{
      {"path", path}, {"summary", summary}, {"droppedLines", dropped_lines}, {"tornTailBytes", torn_tail_bytes}};
  o["keptAt"] = kept_at.empty() ? boost::json::value(nullptr) : boost::json::value(kept_at);
  return o;
}

boost::json::object context_sanitized::data() const { return {{"purpose", purpose}, {"counts", counts}}; }

boost::json::object lock_contended::data() const {
  return {{"lockPath", lock_path}, {"pid", or_null(pid)}, {"alive", alive}, {"ageMs", or_null(age_ms)},
          {"reasons", reasons}};
}

boost::json::object compaction_started::data() const { return {{"reason", reason}}; }

boost::json::object compaction_completed::data() const {
  boost::json::object o{{"reason", reason},
                        {"provider", provider},
                        {"tokensBefore", tokens_before},
                        {"tokensAfter", tokens_after},
                        {"firstKeptEntryId", first_kept_entry_id},
                        {"compactionCount", compaction_count}};
  put_if(o, "warning", warning);
  put_if(o, "successorSessionId", successor_session_id);
  put_if(o, "checkpoint", checkpoint);
  return o;
}

boost::json::object compaction_failed::data() const {
  return {{"reason", reason}, {"error", error}, {"cancelled", cancelled}};
}

boost::json::object memory_flush_decision::data() const {
  return {{"reason", reason}, {"tokenCount", token_count}, {"threshold", threshold}};
}

boost::json::object memory_flush_completed::data() const { return {{"silent", silent}, {"memoryFile", memory_file}}; }

boost::json::object memory_flush_failed::data() const { return {{"error", error}, {"failures", failures}}; }

boost::json::object overflow_recovered::data() const { return {{"compactions", compactions}}; }

boost::json::object context_pressure::data() const {
  return {{"fraction", fraction},
          {"contextTokens", context_tokens},
          {"compactionThreshold", compaction_threshold},
          {"contextWindow", context_window}};
}

boost::json::object cron_completed::data() const {
  boost::json::object o{{"jobId", job_id}, {"sessionId", session_id}};
  put_run_result(o, error, reply, suppressed);
  return o;
}

boost::json::object session_docked::data() const {
  return {{"channel", channel}, {"to", to}, {"accountId", account_id}, {"group", group}, {"from", from}};
}

boost::json::object subagent_completed::data() const {
  boost::json::object o{{"childSessionKey", child_session_key}, {"childSessionId", child_session_id},
                        {"spawnDepth", spawn_depth}};
  put_if(o, "fork", fork);
  put_run_result(o, error, reply, suppressed);
  return o;
}

boost::json::object reply_delta::data() const {
  boost::json::object o{{"text", text}, {"attempt", attempt}, {"index", index}};
  if (done) {
    o["done"] = true;
    o["silent"] = silent;
    o["discarded"] = discarded;
  }
  return o;
}

boost::json::object shard_ownership::data() const {
  boost::json::object o{{"agent", agent}, {"shard", shard}, {"epoch", epoch}, {"node", node}};
  put_if(o, "reason", reason);
  return o;
}

}  // namespace sessionrt::payloads
