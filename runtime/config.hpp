// config: the runtime's configuration file <-> actors::runtime_settings (SPEC §9: a config
// file either works or gets a clear error that names what was wrong).
// - The file is one JSON5 object (OpenClaw's format: comments, unquoted keys, single quotes and
//   trailing commas allowed; messages/json5_reader.hpp; plain JSON reads the same) in
//   OpenClaw's shape where OpenClaw has the key [R§1.2, §4.1, §6.1, §7.1, §9]. Every key is
//   optional; an absent key or a JSON null keeps the default below (the SPEC's defaults).
// - A wrong type or value fails the whole load with errc::invalid_argument naming the full key
//   path and the reason: `config key session.reset.atHour: expected a whole number from 0 to
//   23, got "four"`. Invalid JSON5 is errc::corrupt naming the line and column; a top level that is
//   not an object is errc::invalid_argument. Nothing is partially applied: on error the caller
//   gets no settings.
// - An unknown key is not an error but is reported in `warnings`, with the closest known key
//   of the same object when it looks like a typo:
//   `unknown config key session.resetTrigger (did you mean session.resetTriggers?)`. More
//   than 3 unknown keys with no near miss (an OpenClaw config's channels, plugins, ...) are
//   one line: `12 config keys sessionrt does not use are ignored: channels, plugins, ...`.
// - The environment (a lookup function, so tests inject it) is applied after the file:
//   $SESSIONRT_STATE_DIR, else $OPENCLAW_STATE_DIR, gives stateDir when the file has none; the write-lock variables of
//   storage::apply_write_lock_env override session.writeLock.* (the environment wins, [R§9]).
// - settings_to_json() writes the effective settings in the same layout; loading its output
//   gives equal settings, except secrets that were literals (shown as "<redacted>", see below).
//
// Key table. Paths as in error messages; "ms" keys also take duration strings and "bytes" keys
// size strings (config_values.hpp); "req." keys must be present in their object.
//   key                                     type           default       meaning
//   stateDir                                string         ""            state dir; "" = $SESSIONRT_STATE_DIR, else the
//                                                                        caller's ~/.sessionrt
//   workspaceDir                            string         ""            cwd written into transcript headers
//   workspaceWritable                       bool           true          false skips memory flushes [R§7.2]
//   agents.list[]                           array          []            [] = the single agent "main"
//   agents.list[].id                        string, req.                 agent id, listed once (after normalization)
//   agents.list[].default                   bool           false         the default agent
//   agents.list[].model                     model choice   unset         this agent's model (over agents.defaults.model),
//                                                                        kept under its normalized id
//   agents.list[].systemPrompt              prompt         unset         this agent's system prompt (over the defaults')
//   agents.defaults.model                   model choice   unset         the primary model and its fallbacks; unset:
//                                                                        "<model.provider>/<model.model>" when both are set
//     a model choice: a ref (the primary) or {primary: ref, fallbacks: [refs]}; a ref is "provider/model"
//     (split at the first "/") or an alias. Its provider must be a key of models.providers, a built-in
//     provider (anthropic, google, openai; not with models.mode "replace") or the provider of
//     model.provider / models.catalog[] (else an error listing the known ones); a model not listed
//     under a configured provider is a warning.
//   agents.defaults.models.<ref>.alias      string         unset         a one-word name of that model (`/new <alias>`,
//                                                                        refs), unique with the catalog's aliases; a ref
//                                                                        naming no model of models.providers: warning
//   agents.defaults.maxToolIterations       whole 1..10000 20            model calls in one turn (the tool loop)
//   agents.defaults.systemPrompt            prompt         ""            the system prompt of every agent
//     a prompt: its text, or {file: "path"} read at load (at most 1 MiB), relative to the config file's
//     directory ("~/" = $HOME); a file that cannot be read is an error naming the key and the path
//   agents.defaults.compaction              object                       OpenClaw's place for `compaction`; if both are
//                                                                        given (warning) `compaction` wins key by key
//   agents.defaults.heartbeat.isolatedSession bool         false         heartbeats run in `<key>:heartbeat` [R§1.1]
//   agents.maxSpawnDepth                    whole 1..5     1             deepest sub-agent (1 = sub-agents are leaves)
//   bindings[]                              array          []            routing bindings [R§1.2], file order per tier
//   bindings[].agentId                      string, req.                 target agent (warned if not in agents.list)
//   bindings[].match.channel                string, req.                 "telegram", "discord", ...
//   bindings[].match.accountId              string         ""            "" = the default account, "*" = any
//   bindings[].match.peer.{kind,id}         string, req.   (no peer)     "direct" | "group" | ...; id "*" = any peer
//   bindings[].match.{guildId,teamId}       string         ""            Discord guild / Slack team
//   bindings[].match.roles                  string[]       []            any one of these member roles
//   bindings[].session.dmScope              enum           (session's)   this binding's dmScope
//   session.dmScope                         enum           "main"        main | per-peer | per-channel-peer |
//                                                                        per-account-channel-peer
//   session.mainKey                         string         "main"        the main session's key segment
//   session.scope                           enum           "per-sender"  per-sender | global
//   session.identityLinks                   {name: [ids]}  {}            person -> "channel:id" / "id"; file order kept
//   session.reset                           reset block    unset         unset: daily at 4 (SPEC §3, [R§4.1])
//   session.resetByType.<type>              reset block    unset         direct | dm (old name of direct) | group | thread
//   session.resetByChannel.<channel>        reset block    {}            channel name trimmed and lowercased
//     a reset block: {mode: daily | idle | none, atHour: whole 0..23, idleMinutes: whole >= 0 (0 = never)}
//   session.idleMinutes                     whole >= 0     unset         legacy idle minutes
//   session.resetTriggers                   string[]       []            [] = ["/new", "/reset"]
//   session.timezone                        string         ""            IANA zone of daily resets, must resolve;
//                                                                        "" = the host's zone
//   session.writeLock.acquireTimeoutMs      ms >= 1        60000         or "Infinity" [R§9]
//   session.writeLock.staleMs               ms >= 1        1800000       older locks are "too-old"
//   session.writeLock.maxHoldMs             ms >= 1        300000        written into the lock payload
//   session.passivateIdleMs                 ms >= 1        600000        idle live actor -> passivated
//   session.trimIdleMs                      ms >= 0        30000         idle live actor closes its transcript
//                                                                        and drops its cached context (0 = never)
//   session.maxLiveSessions                 whole >= 1     10000         LRU passivation beyond this
//   session.maxMessageBytes                 bytes >= 1     1048576       a longer chat event is refused
//   session.maintenance.mode                enum           "warn"        warn (report, change nothing) | enforce [R§5]
//   session.maintenance.pruneAfter          days-duration  "30d"         rows idle longer are pruned; a bare number = days
//   session.maintenance.maxEntries          whole >= 1     500           cap (applied at the high water, 550 for 500)
//   session.maintenance.resetArchiveRetention days-duration = pruneAfter  .reset.<ts> archives kept; false = forever
//   session.maintenance.maxDiskBytes        bytes >= 1     unset         disk budget of a sessions dir (unset: none)
//   session.maintenance.highWaterBytes      bytes >= 1     80% of max    the budget's target, clamped to maxDiskBytes
//   session.maintenance.preserveRecent      days-duration  unset         rows active this recently are never pruned,
//                                                                        capped or evicted (synthetic rows are); false = off
//   session.maintenance.archiveDashboardAfter days-duration "7d"         OpenClaw 2026.9's; false / 0 = off (read, not
//                                                                        applied yet: docs/maintenance.md)
//   session.maintenance.coldStorage.enabled bool           false         OpenClaw 2026.9's transcript cold storage (read,
//   session.maintenance.coldStorage.afterDays whole >= 1   30            not applied yet: docs/maintenance.md)
//   storage.durability                      enum           "batch"       none | batch | sync (SPEC §1.2)
//   storage.batchWindowMs                   ms >= 0        0             extra wait for a group commit to gather appends
//   storage.maxLineBytes                    bytes >= 1     16777216      longest transcript line
//   storage.storeFlushWindowMs              ms >= 0        50            sessions.json write coalescing (SPEC §1.1)
//   storage.storeDurableAck                 bool           false         ack a turn after sessions.json has its row
//   storage.watchStoreEdits                 bool           false         take hand edits of sessions.json while running
//                                                                        (opt-in: see actors/runtime_settings.hpp)
//   model.contextWindow                     whole >= 1     200000        context window, tokens (deprecated*)
//   model.provider, model.model             string         ""            "" = the runner's default (deprecated*)
//   model.maxTokens                         whole >= 0     0             0 = the runner's default (deprecated*)
//   model.maxConcurrent                     whole >= 0     16            model calls in flight over all sessions,
//                                                                        the rest wait in FIFO order; 0 = no bound
//   model.maxConcurrentByProvider.<p>       whole >= 1     {}            a further bound per provider
//   model.timeoutMs                         ms >= 0        600000        a call past it is cancelled; 0 = none
//   model.syncRunnerThreads                 whole 1..1024  4             threads of a synchronous runner's pool
//   model.api                               string         ""            provider API (openai-responses, ...), picks
//                                                                        the transcript hygiene policy with provider/model
//                                                                        (deprecated*)
//   model.imageMaxDimensionPx               whole 16..16384 1200         images sent to the model downscaled to this
//   models.catalog[]                        array          []            what `/new <model>` may pick [R§4.4] (deprecated*)
//   models.catalog[].{provider,id}          string, req.                 each provider/id once
//   models.catalog[].aliases                string[]       []            one-word names, unique over the catalog
//   models.catalog[].contextWindow          whole >= 1     unset         the model's window (informative)
//     (deprecated*): still read as before, with a warning naming the key to use instead:
//     `config key model.contextWindow is deprecated: set models.providers.<id>.models[].contextWindow`
//     (model.provider / model.model: agents.defaults.model; model.maxTokens: ...models[].maxTokens;
//     model.api: models.providers.<id>.api; models.catalog: models.providers and
//     agents.defaults.models.<ref>.alias).
//   models.mode                             enum           "merge"       merge | replace: replace leaves the built-in
//                                                                        providers out of the known ones (not stored)
//   models.providers.<id>                   object         {}            a provider, file order; the id is one word
//                                                                        without "/", once ignoring case
//   models.providers.<id>.baseUrl           string         ""            "" = the API's public endpoint (a provider
//                                                                        other than anthropic/google/openai: warning)
//   models.providers.<id>.apiKey            secret         ""            never shown (config show prints its "${VAR}"
//                                                                        or "<redacted>"); api_key_source "${VAR}"|"literal"
//   models.providers.<id>.api               api            see meaning   unset with a baseUrl: "openai-completions"
//     an api: openai-completions | openai-responses | anthropic-messages | google-generative-ai; OpenClaw's
//     azure-openai-responses, google-vertex, bedrock-converse-stream, mistral-conversations, ollama,
//     github-copilot load with a warning (no runner in this build); anything else is an error
//     a secret: a string in which each ${NAME} (NAME = [A-Z_][A-Z0-9_]*) is the environment variable's
//     value ($${ = a literal ${); an unset or empty variable is an error naming it and the key:
//     `config key models.providers.openai.apiKey: environment variable OPENAI_API_KEY is not set`;
//     errors and warnings never show a secret's value
//   models.providers.<id>.headers.<name>    secret         {}            extra request headers, file order; names once
//                                                                        ignoring case; credential-like ones never shown
//   models.providers.<id>.timeoutSeconds    whole >= 0     0             0 = the runner's default
//   models.providers.<id>.models[]          array          []            the provider's models
//   ...models[].id                          string, req.                 the id the API knows, once per provider
//                                                                        (ignoring case)
//   ...models[].name                        string         ""            display name ("" = id)
//   ...models[].api                         api            unset         this model's api (unset: the provider's)
//   ...models[].contextWindow               whole >= 1     200000        the model's window, tokens
//   ...models[].contextTokens               whole >= 1     unset         caps the effective window
//   ...models[].maxTokens                   whole >= 0     0             0 = unknown: no max field is sent
//   ...models[].reasoning                   bool           false
//   ...models[].input                       string[]       ["text"]      each "text" or "image"
//   ...models[].cost.{input,output,cacheRead,cacheWrite} number >= 0  0  per million tokens
//   ...models[].compat.supportsUsageInStreaming bool       unset         unset: detected from the base URL
//   ...models[].compat.maxTokensField       enum           unset         max_tokens | max_completion_tokens
//   ...models[].compat.supportsDeveloperRole bool          unset         (other compat keys: unknown-key warnings)
//   models.retry.maxDelayMs                 ms >= 0        60000         a longer server-asked wait: the next fallback
//   models.retry.maxAttempts                whole 1..100   4             tries of one model before its fallback
//   messages.queue.mode                     enum           "followup"    followup | collect | interrupt | steer:
//                                                                        messages that arrive during a turn
//   messages.queue.cap                      whole >= 1     20            messages waiting at most
//   messages.queue.drop                     enum           "summarize"   old | new | summarize: past the cap
//   messages.queue.debounceMs               ms >= 0        0             quiet time before a follow-up starts
//   compaction.enabled                      bool           true          automatic compaction [R§6.1]
//   compaction.reserveTokens                whole >= 0     16384
//   compaction.keepRecentTokens             whole >= 1     20000         tail kept at a cut
//   compaction.reserveTokensFloor           whole >= 0     20000         0 = no floor; also the flush's floor [R§7.1]
//   compaction.truncateAfterCompaction      bool           false         rotate to a successor transcript
//   compaction.maxActiveTranscriptBytes     bytes >= 1     unset         compact before a turn at this size
//   compaction.provider                     string         ""            id of a registered compaction provider
//   compaction.model                        string         ""            "provider/model" (or an alias) that writes
//                                                                        the built-in summaries; "" = the session's
//                                                                        (warned unless truncateAfterCompaction)
//   compaction.midTurnPrecheck.enabled      bool           false         runners may ask mid-turn whether the
//                                                                        context still fits (model_request::precheck)
//   compaction.memoryFlush.enabled          bool           true          pre-compaction memory flush [R§7]
//   ...memoryFlush.softThresholdTokens      whole >= 0     4000
//   ...memoryFlush.forceFlushTranscriptBytes  bytes >= 0   2097152       0 disables the byte trigger
//   ...memoryFlush.prompt, .systemPrompt    string         ""            "" = the default texts of [R§7.1]
//   ...memoryFlush.model                    string         ""            exact "provider/model"; "" = the session's
//   context.pressureFractions               number[]       [0.75, 0.9]   ascending, each in (0, 1); [] = no events
//   cron.sessionRetention                   duration       "24h"         cron run rows kept; a bare digit string = hours;
//                                                                        false = never reaped [R§5.6]
//   cron.runLog.maxBytes                    bytes >= 1     2000000       a run log over this is trimmed ...
//   cron.runLog.keepLines                   whole >= 1     2000          ... to its last keepLines lines
//   gateway.auth.token                      string         ""            the gateway's token ("" = $SESSIONRT_GATEWAY_TOKEN,
//                                                                        else <state>/gateway.token); `config show` hides it
//   gateway.port                            whole 0..65535 18789         `sessionrt gateway` port (--port wins)
//   gateway.bind                            string         "127.0.0.1"   listen address (--bind wins)
//   gateway.maxConnections                  whole >= 1     1024          WebSocket connections at once (past it: close 1008)
//   gateway.maxBufferedBytes                bytes >= 1024  52428800      unsent output per connection before it is dropped
//   gateway.maxPayload                      bytes >= 1024  26214400      largest message after connect (64 KiB before)
//   gateway.maxUnauthenticated              whole >= 1     64            sockets not past `connect` (HTTP, upgrade,
//                                                                        handshake); past it a new socket is closed at once
//   gateway.fdReserve                       whole >= 0     64            descriptors kept free under RLIMIT_NOFILE (raised
//                                                                        to the hard limit at start); within it: closed at once
//   gateway.requestTimeoutMs                whole >= 100   10000         the HTTP request (head and body) from accept
//   gateway.messageTimeoutMs                whole >= 100   30000         a WebSocket message begun and not finished: close 1008
//   gateway.maxRequestsInFlight             whole >= 1     32            calls of one connection on the method threads; past
//                                                                        it: UNAVAILABLE {retryable, retryAfterMs}
//   gateway.maxQueuedRequests               whole >= 0     1024          calls waiting for a method thread in all; past it:
//                                                                        UNAVAILABLE {retryable, retryAfterMs}
//   logging.level                           enum           "info"        trace | debug | info | warn | error | off
//                                                                        (`sessionrt gateway`, --log-level wins; also
//                                                                        warning, silent = off, fatal)
//   logging.file                            string         ""            also log to this file, rotated by size
//                                                                        ("" = stderr only; --log-file wins)
//   logging.format                          enum           "text"        text | json: one JSON object per line
//   logging.maxFileBytes                    bytes >= 1024  10485760      the log file is rotated past this
//   logging.maxFiles                        whole 1..1000  5             rotated log files kept
#pragma once
#include <boost/json/object.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime_settings.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::runtime {

// Returns an environment variable's value, or nullopt when unset.
using env_lookup = storage::env_lookup;
// The process environment (std::getenv).
env_lookup process_environment();

struct config_load {
  actors::runtime_settings settings;
  std::vector<std::string> warnings;  // one sentence each: unknown keys, settings without effect
  std::string path;                   // the file read ("" = none: the defaults)
};

// `{"file": ...}` values (agents.*.systemPrompt) are read through `files`, relative to
// `base_dir` ("" = the working directory); the two-argument form reads them through posix_fs().
result<config_load> load_config_text(std::string_view json_text, const env_lookup& env);
result<config_load> load_config_text(std::string_view json_text, const env_lookup& env, storage::fs& files,
                                     const std::string& base_dir);
// Reads `path` (at most max_config_file_bytes) through `files`; prompt files are relative to its
// directory. A read error names the path; an error in the content is load_config_text's,
// prefixed with "<path>: ".
inline constexpr std::size_t max_config_file_bytes = 8u << 20;

// Where a command's settings come from, one rule for every command:
//   --config FILE, else $SESSIONRT_CONFIG, else OpenClaw's $OPENCLAW_CONFIG_PATH; none: the defaults.
//   `openclaw` (a command's --openclaw): "what OpenClaw itself would use": the config
//   $OPENCLAW_CONFIG_PATH else <OpenClaw state>/openclaw.json when it exists, and stateDir
//   $OPENCLAW_STATE_DIR else ~/.openclaw (over sessionrt's own variables and the file).
// The environment applies after the file (load_config_text); `path` says which file was read.
result<config_load> load_command_config(storage::fs& files, const std::string& config_flag, const env_lookup& env,
                                        bool openclaw = false);
inline constexpr std::size_t max_system_prompt_file_bytes = 1u << 20;  // a {file} systemPrompt
result<config_load> load_config_file(storage::fs& files, const std::string& path, const env_lookup& env);

// The effective settings in the layout above (for `sessionrt config show`): every key is
// written except unset optional values (session.reset, resetByType, resetByChannel when empty,
// session.idleMinutes, compaction.maxActiveTranscriptBytes, a provider's api, a model's
// contextTokens / name / api / unset compat keys, agents.*.model when empty, an empty
// systemPrompt), an empty resetTriggers, models.mode, and the deprecated keys at their defaults
// (model.contextWindow 200000, model.provider / model / api "", model.maxTokens 0, an empty
// models.catalog). Secrets are never written: an apiKey is shown as its "${VAR}" when it came
// from one, else "<redacted>"; a header whose name looks like a credential (contains auth,
// token, key, secret, cookie, password or credential) as "<redacted>". A systemPrompt is written
// as its text (also when it was read from a file). The defaults' model written here includes
// one derived from model.provider / model.model; an alias is written under
// agents.defaults.models only for the first alias of a model.
boost::json::object settings_to_json(const actors::runtime_settings& settings);

}  // namespace sessionrt::runtime
