// runtime_settings: everything the actors are configured with, as typed values with the
// SPEC's defaults. It is composed of the rule modules' own config structs; runtime/config.hpp
// reads it from a JSON file (naming bad keys) and writes it back out; docs/config.md lists the keys.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "actors/maintenance/maintenance_settings.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/session/compaction_planner.hpp"
#include "actors/session/context_pressure.hpp"
#include "actors/session/memory_flush_planner.hpp"
#include "actors/session/model_catalog_settings.hpp"
#include "actors/session/queue_settings.hpp"
#include "actors/session/reset_policy.hpp"
#include "actors/store/write_pace.hpp"
#include "storage/transcript_file.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::actors {

inline constexpr std::int64_t kStoreFlushWindowMs = 50;
inline constexpr std::int64_t kStoreMaxAgeBatchMs = 5000;

struct storage_settings {
  storage::durability durability = storage::durability::batch;  // storage.durability
  // storage.batchWindowMs: how long a group commit waits for more appends after the first. 0:
  // none; a group takes what gathered since the last one (under load many sessions all the
  // same): the commit log (actors/commit_log) writes it and fdatasyncs the log once.
  std::int64_t batch_window_ms = 0;
  std::size_t max_line_bytes = 16u << 20;                       // storage.maxLineBytes
  // storage.storeFlushWindowMs: the longest a row change waits before sessions.json holds it,
  // so the age of the file every reader sees (stretched to 4x the last write's time for a store
  // that takes longer than a quarter of it to write). Unset: kStoreMaxAgeBatchMs with durability
  // batch (the commit log holds every row change durably, so the file is rewritten lazily),
  // kStoreFlushWindowMs otherwise (the file is the only copy).
  std::optional<std::int64_t> store_flush_window_ms;
  // storage.storeRewriteBytesPerSec (durability batch only): sessions.json, rewritten whole, waits
  // at least its size / this rate between writes, at most 60 s (actors/store/write_pace.hpp).
  // 0: the window alone.
  std::uint64_t store_rewrite_bytes_per_sec = kStoreRewriteBytesPerSec;
  // storage.storeDurableAck: acknowledge a turn only once its row is durable: with durability
  // batch always so, at no cost (the row is a record of the turn's commit log append); otherwise
  // the store writes sessions.json at once for it, sharing the write with every durable put
  // already queued. Off (none, sync): the row follows within the flush window and a crash in
  // between is repaired at start-up from the transcript header.
  bool store_durable_ack = false;
  // storage.storeSpillMinBytes: once sessions.json is at least this large, rows unchanged since
  // a write keep only their place in it (read back when next used or written); a smaller store
  // keeps their text in memory, so its writes read nothing back. Unset: 2 MiB when the files
  // are on a device; never when they live in memory (a simulation's memory_fs, where the file
  // read back is itself in memory: spilling would save nothing and cost a read per write).
  std::optional<std::size_t> store_spill_min_bytes;
  // storage.keepMaintenancePicture: whether the disk-budget supervisor keeps its listing of
  // each sessions dir and its copy of the rows from pass to pass. true: a pass costs what
  // changed (~55 ms at 100k rows) for ~650 B of heap per session held. false: each pass scans
  // the dir and reads every row (~1.9 s at 100k rows, on the supervisor's own thread) and
  // holds nothing per session between passes. Unset: kept under virtual time, where passes
  // come as fast as the clock is advanced; not kept in real time (a pass per 5 minutes).
  std::optional<bool> keep_maintenance_picture;
  // storage.watchStoreEdits: take hand edits of sessions.json while the runtime runs, merged
  // with its own changes (docs/maintenance.md). The store stats the file before each read and
  // write and once per second while idle (virtual time: at each flush); the file is read only
  // when it changed, and only a complete JSON object is taken. false: an edit written in place
  // makes the rows kept on disk fail until a restart, and one saved by rename is overwritten by
  // the store's next write.
  bool watch_store_edits = true;
  // storage.commitLogCheckpointBytes / storage.commitLogCheckpointIntervalMs (durability batch):
  // a new commit log takes the writes, and the old one is checkpointed (its transcripts made
  // durable, the log dropped), once the log holds this many bytes or is this old. Defaults:
  // actors/commit_log kCheckpointBytes, kCheckpointIntervalMs.
  std::uint64_t commit_log_checkpoint_bytes = 64ull << 20;
  std::int64_t commit_log_checkpoint_interval_ms = 60000;
  // storage.commitLogPreallocateBytes: a log file is allocated ahead in chunks this large, so its
  // fdatasyncs commit no size change (0: it grows by its appends). storage.commitLogRecycledFiles:
  // logs a checkpoint drops are kept, up to this many, and written again as later logs (0:
  // removed). Defaults: actors/commit_log kLogPreallocateBytes, kLogsRecycled.
  std::uint64_t commit_log_preallocate_bytes = 4ull << 20;
  std::size_t commit_log_recycled_files = 2;
};

// storage.storeFlushWindowMs as set, else its default for the durability mode (see above).
inline std::int64_t store_flush_window(const storage_settings& s) {
  return s.store_flush_window_ms.value_or(s.durability == storage::durability::batch ? kStoreMaxAgeBatchMs
                                                                                      : kStoreFlushWindowMs);
}

// When sessions.json is written (the window, and with durability batch the rewrite rate).
inline write_pace store_write_pace(const storage_settings& s) {
  write_pace p;
  p.window_ms = std::max<std::int64_t>(0, store_flush_window(s));
  if (s.durability == storage::durability::batch) {
    p.rewrite_bytes_per_sec = s.store_rewrite_bytes_per_sec;
    p.max_lazy_ms = s.commit_log_checkpoint_interval_ms;  // the log holds the rows that long anyway
  }
  return p;
}

struct model_settings {
  std::int64_t context_window = 200000;  // model.contextWindow (tokens)
  std::string provider;                  // model.provider ("" = the runner's default)
  std::string model;                     // model.model
  std::int64_t max_tokens = 0;           // model.maxTokens (0 = runner default)
  // model.maxConcurrent: model calls in flight at once over all sessions (turns, memory
  // flushes, compaction summaries); the rest wait first come, first served. 0 = no bound.
  std::size_t max_concurrent = 16;
  // model.maxConcurrentByProvider: a further bound per provider ("" = the runner's default).
  std::map<std::string, std::size_t> max_concurrent_by_provider;
  std::int64_t timeout_ms = 600000;      // model.timeoutMs: a call past it is cancelled (0 = none)
  std::size_t sync_runner_threads = 4;   // model.syncRunnerThreads: threads for a synchronous runner
  std::string api;                       // model.api: the provider API, for the hygiene policy [R§8.5]
  int image_max_dimension_px = 1200;     // model.imageMaxDimensionPx: images downscaled to this side
};

struct session_settings {
  session_reset_config reset;                // session.reset, resetByType, resetByChannel, idleMinutes,
                                             // resetTriggers, timezone
  storage::write_lock_options write_lock;    // session.writeLock.{acquireTimeoutMs, staleMs, maxHoldMs}
  std::int64_t passivate_idle_ms = 600000;   // session.passivateIdleMs: idle live actor -> passivated
  std::int64_t trim_idle_ms = 30000;         // session.trimIdleMs: idle live actor drops open file + context
  std::size_t max_live_sessions = 10000;     // session.maxLiveSessions: LRU passivation beyond this
  std::size_t max_message_bytes = 1u << 20;  // session.maxMessageBytes: a longer chat event is refused
};

// agents.maxSpawnDepth: how deep sub-agents may nest (a top-level session is depth 0, its
// sub-agent depth 1); 1 = sub-agents are leaves, as OpenClaw's default (range 1-5).
struct subagent_settings {
  std::int64_t max_spawn_depth = 1;
};

// gateway.*: read by `sessionrt gateway` (gateway/gateway_server.hpp); the runtime ignores them.
struct gateway_settings {
  std::string auth_token;                      // gateway.auth.token ("" = $SESSIONRT_GATEWAY_TOKEN or the token file)
  std::int64_t port = 18789;                   // gateway.port
  std::string bind = "127.0.0.1";              // gateway.bind
  std::size_t max_connections = 1024;          // gateway.maxConnections
  std::size_t max_buffered_bytes = 50u << 20;  // gateway.maxBufferedBytes: unsent output per connection
  std::size_t max_payload = 25u << 20;         // gateway.maxPayload: largest message after connect
  // Hostile clients (gateway/ws_transport.hpp, gateway/admission.hpp):
  std::size_t max_unauthenticated = 64;        // gateway.maxUnauthenticated: sockets not past connect
  std::size_t fd_reserve = 64;                 // gateway.fdReserve: descriptors kept free for the runtime
  std::int64_t request_timeout_ms = 10000;     // gateway.requestTimeoutMs: the HTTP request from accept
  std::int64_t message_timeout_ms = 30000;     // gateway.messageTimeoutMs: a WebSocket message begun, unfinished
  std::size_t max_requests_in_flight = 32;     // gateway.maxRequestsInFlight: per connection
  std::size_t max_queued_requests = 1024;      // gateway.maxQueuedRequests: calls waiting for a thread, in all
  // The web Control UI (gateway/control_ui.hpp):
  bool control_ui_enabled = true;              // gateway.controlUi.enabled: false serves no UI
  std::string control_ui_root;                 // gateway.controlUi.root ("" = an installed openclaw's dist/control-ui)
  std::vector<std::string> control_ui_allowed_origins;  // gateway.controlUi.allowedOrigins (own origin always)
  // A cluster node (gateway/shard_forward.hpp): how long a call for a shard in handoff is held.
  std::int64_t cluster_hold_ms = 15000;        // gateway.cluster.holdMs (the lease TTL, 10 s, and a few)
};

// logging.*: read by the long-running commands (runtime/logging.hpp, `sessionrt gateway`); the
// runtime ignores them. level and format hold the canonical names runtime/logging.hpp accepts.
struct logging_settings {
  std::string level = "info";              // logging.level: trace | debug | info | warn | error | off
  std::string file;                        // logging.file: "" = no log file (stderr only)
  std::string format = "text";             // logging.format: text | json (one JSON object per line)
  std::size_t max_file_bytes = 10u << 20;  // logging.maxFileBytes: the file is rotated past this
  std::size_t max_files = 5;               // logging.maxFiles: rotated files kept (file.1.log ...)
};

struct runtime_settings {
  std::string state_dir;                // stateDir ("" = $SESSIONRT_STATE_DIR, else ~/.sessionrt)
  std::string workspace_dir;            // workspaceDir: the cwd written into transcript headers
  bool workspace_writable = true;       // workspaceWritable: false skips memory flushes
  routing_config routing;               // agents, bindings, session.{dmScope, mainKey, scope, identityLinks}
  session_settings session;
  storage_settings storage;
  model_settings model;
  model_catalog_settings models_catalog;  // models.catalog[] (legacy): what `/new <model>` may pick
  models_settings models;                 // models.providers, models.retry, agents.*.model, maxToolIterations
  system_prompt_settings prompts;         // agents.defaults.systemPrompt, agents.list[].systemPrompt
  subagent_settings subagents;            // agents.maxSpawnDepth
  // agents.defaults.heartbeat.isolatedSession: a heartbeat for a session runs in its own
  // `<key>:heartbeat` session [R§1.1] instead of waiting in the session for its next prompt.
  bool heartbeat_isolated_session = false;
  compaction_settings compaction;       // compaction.*
  std::string compaction_provider;      // compaction.provider: id of a registered provider ("" = built-in)
  std::string compaction_model;         // compaction.model: "provider/model" for summaries ("" = the session's)
  memory_flush_settings memory_flush;   // compaction.memoryFlush.*
  pressure_config pressure;             // context.pressureFractions
  queue_settings queue;                 // messages.queue.*
  maintenance_settings maintenance;     // session.maintenance.*
  cron_settings cron;                   // cron.sessionRetention, cron.runLog.*
  gateway_settings gateway;             // gateway.* (the gateway command's)
  logging_settings logging;             // logging.* (the long-running commands')
};

}  // namespace sessionrt::actors
