// session_rollover: the row a key holds after one inbound turn, and whether a new sessionId
// starts [R§4.3, R§5.6, SPEC §3]. Pure: the caller evaluates freshness (reset_policy), parses the
// body (reset_trigger), picks the new id and the transcript path rule, and then performs what
// the result asks for (store the row, archive the old transcript as ".reset.<ts>", drop the
// queued system events, emit session.reset). Nothing here reads a clock or a file.
//
// Decision (initSessionState):
//   canReuse = row has a sessionId and a numeric updatedAt;
//   fresh    = (system event && canReuse) || (reconnect resume && canReuse)
//              || freshness.fresh || (soft reset && canReuse);
//   reuse iff no /new|/reset (and no forced run) && fresh && canReuse; otherwise a new session,
//   and the previous session ends (archive + drop queued events) when it was reset or stale.
// System events (heartbeat, cron-event, exec-event) never roll a session and never extend
// lastInteractionAt; they do update updatedAt. A message (not a system event) to an archived row
// (archivedAt: maintenance's archive in place, or sessions.patch) restores it: archivedAt,
// archivedBy and archiveReason are deleted. A system event to an archived row is refused
// (archived_row_refusal).
//
// The row is built the way JavaScript's `{...row, ...patch}` builds it: keys already in the row
// keep their position, a key the patch leaves undefined is deleted, new keys are appended in the
// order initSessionState writes them. On a new session, carried over: thinkingLevel,
// verboseLevel, traceLevel, reasoningLevel, ttsAuto, responseUsage, label, displayName,
// groupActivation*, user-chosen model/provider/auth overrides (resolveResetPreservedSelection),
// and for an explicit /new|/reset also the lineage (spawnedBy, spawnedWorkspaceDir, spawnedCwd,
// parentSessionKey, forkedFromParent, spawnDepth, subagentRole, subagentControlScope).
// Reset to their start values: compactionCount 0, totalTokens 0, totalTokensFresh true.
// Deleted: run counters and caches (memoryFlush*, token/cost counters, contextTokens,
// contextBudgetStatus, goal, skillsSnapshot, modelProvider/model, fallbackNotice*,
// systemPromptReport, startedAt/endedAt/runtimeMs/status), CLI session bindings, sendPolicy and
// queue settings, and the inbound-derived fields (route, delivery, last*, chatType and group
// metadata) which the caller's inbound_patch supplies again for the new turn.
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "actors/session/reset_policy.hpp"
#include "actors/session/reset_trigger.hpp"
#include "messages/session_entry.hpp"
#include "messages/status.hpp"

namespace sessionrt::actors {

enum class inbound_kind { message, heartbeat, cron_event, exec_event };

// heartbeat, cron-event and exec-event (ctx.Provider of OpenClaw's system turns).
bool is_system_event(inbound_kind kind);

struct rollover_input {
  const session_entry* current = nullptr;  // the row under the key, if any (not owned)
  std::string session_key;                 // default usageFamilyKey on the first rollover
  inbound_kind kind = inbound_kind::message;
  session_freshness freshness;             // evaluate_freshness of `current` at now_ms (default: fresh)
  reset_trigger_result trigger;            // parse_reset_trigger of the body (none for events)
  std::int64_t now_ms = 0;
  std::string new_session_id;              // used only if a new session starts
  // sessionFile for a session id (absolute <sessionsDir>/<id>.jsonl); written for a new session
  // and for a reused row that has none. Empty: sessionFile is left as it is.
  std::function<std::string(std::string_view session_id)> transcript_path;
  std::optional<double> recovered_started_at;  // transcript header time, for rows without one
  bool reconnect_resume = false;           // the caller resumes the same sessionId
  bool force_new = false;                  // a new session regardless (isolated cron run)
  // Delivery, origin and group metadata of this turn (route, deliveryContext, last*, origin,
  // chatType, channel, groupId, subject, ...), merged like `{...row, ...patch}` before the
  // chatType default. Leave empty for system events: they keep the row's route.
  boost::json::object inbound_patch;
  // When set, this patch instead of inbound_patch (a session's kept one, not copied); it must
  // outlive roll_session().
  const boost::json::object* inbound_patch_ref = nullptr;
};

struct rollover_result {
  bool new_session = false;
  std::optional<session_end_reason> reason;      // why the previous session ended, if one did
  session_entry entry;                           // the row to store under the key
  std::optional<std::string> archive_session_id; // previous sessionId: archive its transcript
  bool drop_queued_system_events = false;        // for [key, previous sessionId]
};

rollover_result roll_session(const rollover_input& in);

// OpenClaw 2026.9's resolveSessionWorkStartError for an archived row: a system event
// (heartbeat, cron-event, exec-event) to a row with archivedAt is refused with
// `Session "<key>" is archived. Restore it before starting new work.` (errc::invalid_argument;
// OpenClaw throws it as the run's error: nothing runs, nothing is stored, the row stays
// archived). A message is never refused: roll_session restores the row. The caller checks this
// before roll_session; nullopt: go on.
std::optional<status> archived_row_refusal(std::string_view key, const session_entry* row, inbound_kind kind);

// The one exception (resolveCronSession's canRollArchivedHeartbeat): an archived row that is an
// isolated heartbeat's own (heartbeatIsolatedBaseSessionKey not blank, initializationPending not
// true) is not refused: the heartbeat starts a new session there, out of the archive
// (clear_archive_fields on the new row). The caller (heartbeat_run) checks this first.
bool rolls_archived_heartbeat_row(const session_entry* row);
// Deletes archivedAt, archivedBy and archiveReason (the row is out of the archive).
void clear_archive_fields(session_entry& row);

// roll_session for the caller that owns the row and replaces it with the result
// (`row = std::move(result.entry)`, the hot path of every turn): `current` is the row under the
// key (in.current is not read) and its object becomes result.entry, patched in place instead of
// copied. The result is the one roll_session(in) gives with in.current = &current; `current` is
// left moved-from. Everything else in `in` must not refer into `current`.
rollover_result roll_session(const rollover_input& in, session_entry&& current);

// resolveResetPreservedSelection: the model override survives a reset when its source is "user",
// or (legacy rows without a source) when it has no automatic-fallback provenance
// (modelOverrideFallbackOriginProvider + ...OriginModel). The auth profile override survives
// when its source is "user", or (legacy) when it carries no authProfileOverrideCompactionCount.
bool keeps_model_override_on_reset(const session_entry& entry);
bool keeps_auth_profile_override_on_reset(const session_entry& entry);

// `/new <model>`: writes providerOverride, modelOverride, modelOverrideSource "user"; picking
// the configured default clears the override instead. Either way the fallback provenance goes.
void apply_model_selection(session_entry& entry, const model_selection& selection);

// Cron [R§5.6, SPEC §3]: every isolated run of a job starts a new session under cron:<jobId>.
inline constexpr bool isolated_cron_run_forces_new_session = true;

struct cron_job_ref {
  std::string id;
  std::string name;  // may be empty
};

// "Cron: <name|id>": the label a cron:<jobId> row gets when it has none.
std::string cron_label(const cron_job_ref& job);

// The previous cron:<jobId> row with routing (route, last*), delivery (deliveryContext,
// pendingFinalDelivery*, restartRecoveryDelivery*), origin, ACP (acp) and elevation
// (elevatedLevel, exec*) dropped, automatic model/auth overrides dropped, and preferences,
// labels and user-chosen overrides kept; label defaults to "Cron: <name|id>".
session_entry sanitize_cron_base_row(const session_entry& row, const cron_job_ref& job);

// roll_session for an isolated run: sanitizes `base_row` (may be null) and forces a new
// session (reason "new" when a previous one ends); the row is labelled cron_label() unless it
// has a label (the first run too). `in.current`, `force_new` and `kind` are set
// here; the rest of `in` is used as given.
rollover_result roll_isolated_cron_run(const session_entry* base_row, const cron_job_ref& job, rollover_input in);

}  // namespace sessionrt::actors
