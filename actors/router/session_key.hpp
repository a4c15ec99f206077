// session_key: the grammar of session store keys [R§1.1] and their normalization [R§1.2].
// Pure functions: no CAF, no I/O, no clock. Every builder returns a normalized store key:
// lowercase everywhere except the case-preserving opaque peer ids (Signal group id segment,
// Matrix channel/group tail). Lowercasing and trimming follow JavaScript's String
// toLowerCase/trim for ASCII, Latin-1/Extended-A, Greek and Cyrillic; other scripts are left
// as they are (documented gap). Inputs are never trusted: empty or odd text falls back to the
// defaults the reference names ("main", "default", "unknown"); nothing here fails or throws.
// Keys from outside (RPC, CLI) should pass is_plausible_session_key() before they are used.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/js_text.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::actors {

inline constexpr std::string_view default_agent_id = "main";
inline constexpr std::string_view default_main_key = "main";
inline constexpr std::string_view default_account_id = "default";
inline constexpr std::string_view global_session_key = "global";
inline constexpr std::string_view unknown_session_key = "unknown";
inline constexpr std::size_t max_plausible_key_length = 512;

// session.dmScope: how direct messages are split into sessions.
enum class dm_scope { main, per_peer, per_channel_peer, per_account_channel_peer };
// session.scope: "per-sender" (default) or "global" (one shared "global" session).
enum class session_scope { per_sender, global };

std::optional<dm_scope> parse_dm_scope(std::string_view text);  // "per-channel-peer" -> ...
std::string_view to_string(dm_scope scope);
std::optional<session_scope> parse_session_scope(std::string_view text);

// session.identityLinks: canonical name -> ids ("telegram:123" or a bare "123"). A vector,
// not a map: the first canonical name (in config insertion order) that lists an id wins.
using identity_links = std::vector<std::pair<std::string, std::vector<std::string>>>;

// ---- normalization [R§1.2] ----------------------------------------------------------------
// trim; "" -> "main"; /^[a-z0-9][a-z0-9_-]{0,63}$/i -> lowercase; otherwise lowercase, runs of
// [^a-z0-9_-] -> "-", strip leading/trailing "-", first 64 chars, "" -> "main".
std::string normalize_agent_id(std::string_view raw);
// Same rules with "default" as the fallback.
std::string normalize_account_id(std::string_view raw);
// trim; "" -> "main"; else lowercase.
std::string normalize_main_key(std::string_view raw);
// "dm"/"direct" -> "direct", "group", "channel" (trimmed, any case); anything else nullopt.
std::optional<std::string> normalize_chat_type(std::string_view raw);
// True for (signal, group) and (matrix, channel|group): their opaque ids keep their case.
bool is_case_preserving_peer(std::string_view channel, std::string_view peer_kind);
// trim; lowercase unless the (channel, kind) is case-preserving; may return "".
std::string normalize_session_peer_id(std::string_view channel, std::string_view peer_kind,
                                      std::string_view peer_id);
// trim, then lowercase everything except the case-preserving spans: a Signal
// "signal:group:<segment>" id segment (anywhere, trimmed) and the Matrix
// "[agent:<a>:]matrix:(channel|group):<tail>" tail, where a ":thread:" marker (found
// case-insensitively, last occurrence) is lowercased and the ids on both sides keep case.
std::string normalize_session_key(std::string_view key);

// ---- parsing and classification -------------------------------------------------------------
struct parsed_agent_key {
  std::string agent_id;
  std::string rest;  // everything after "agent:<id>:", empty segments dropped
};
// Normalizes first; nullopt unless the key is "agent:<id>:<rest>" with a non-empty rest.
std::optional<parsed_agent_key> parse_agent_session_key(std::string_view key);
// The agent of a key already in plain normal form (printable ASCII, no uppercase, no spaces,
// no Signal / Matrix span), read in place: parse_agent_session_key's agent id, or
// default_agent_id when it finds none. nullopt for any other key (parse it).
std::optional<std::string_view> agent_id_of_plain_key(std::string_view key);

struct thread_suffix {
  std::string base_key;   // the key before the last ":thread:" marker
  std::string thread_id;  // trimmed; empty when there is no marker or nothing after it
};
thread_suffix split_thread_suffix(std::string_view key);

// rest matches ^cron:[^:]+:run:[^:]+(?::|$) [R§1.1, §5.6]; unscoped keys are never run keys.
bool is_cron_run_key(std::string_view key);
// [R§5.2] rest (or the whole key when unscoped) is subagent:/acp:/cron:/acp-bridge:/hook:/
// node:*, or "heartbeat", or ends ":heartbeat", or contains ":heartbeat:".
bool is_synthetic_key(std::string_view key);
// Store maintenance never archives, removes or evicts the row: OpenClaw 2026.9's
// isProtectedSessionMaintenanceEntry (protected_key.hpp: not synthetic, and the main key, a
// thread, an external delivery or conversation, or a group / channel / thread chatType).
// entry may be null.
bool is_protected_key(std::string_view key, const session_entry* entry);
bool is_thread_key(std::string_view key);  // a non-empty id after ":thread:"
bool is_group_key(std::string_view key);   // contains ":group:" or ":channel:" [R§4.1]
// [R§4.1] "thread" (hint or :thread: in key), "group" (hint, :group: or :channel:), "direct".
std::string_view reset_type_of(std::string_view key, bool is_thread_hint,
                               bool is_group_hint = false);
// [R§1.2] "main", <mainKey>, agent:<aid>:<mainKey>, agent:<aid>:main, agent:main:<mainKey>,
// agent:main:main -> agent:<aid>:<mainKey> ("global" under scope global). Others unchanged
// (trimmed). Comparison is exact, so normalize the key first.
std::string canonicalize_main_alias(std::string_view key, std::string_view agent_id,
                                    std::string_view main_key, session_scope scope);
// For keys from outside: 1..512 bytes, not blank, valid UTF-8, no control characters, no
// backslash, no leading '/', no "//", no ".." next to a '/'. Keys never become paths, but a
// key that looks like one is rejected before it reaches logs, file names or other stores.
bool is_plausible_session_key(std::string_view text);

// ---- builders [R§1.1] -------------------------------------------------------------------------
std::string build_main_key(std::string_view agent_id, std::string_view main_key);
// buildAgentPeerSessionKey [R§1.2]. peer_kind "direct" (also "dm") follows dm_scope and
// identity links; any other kind gives agent:<a>:<channel>:<kind>:<id> ("unknown" for an
// empty channel or id). A direct peer with an empty id falls back to the main key.
struct peer_key_params {
  std::string_view agent_id;
  std::string_view main_key = default_main_key;
  std::string_view channel;
  std::string_view account_id;
  std::string_view peer_kind = "direct";
  std::string_view peer_id;
  dm_scope scope = dm_scope::main;
  const identity_links* links = nullptr;
};
std::string build_peer_key(const peer_key_params& params);
// First canonical name (trimmed, as written) listing lower(peer) or lower(channel:peer).
std::optional<std::string> resolve_linked_peer_id(const identity_links& links,
                                                  std::string_view channel,
                                                  std::string_view peer_id);
// <base>:thread:<id>; the id is trimmed and lowercased unless lowercase_thread_id is false
// (Matrix keeps event ids). An empty id returns the base unchanged.
std::string build_thread_key(std::string_view base_key, std::string_view thread_id,
                             bool lowercase_thread_id = true);
std::string build_telegram_topic_key(std::string_view agent_id, std::string_view chat_id,
                                     std::string_view topic_id);
// A thread of a Telegram conversation (agent:<a>:telegram:<group|channel|direct|dm>:<id>) is a
// forum topic, keyed <base>:topic:<id> as OpenClaw's Telegram channel keys it [R§1.1]; any
// other base gets build_thread_key's <base>:thread:<id>.
std::string build_conversation_thread_key(std::string_view base_key, std::string_view thread_id,
                                          bool lowercase_thread_id = true);
// The topic id of a Telegram topic key (what <sessionId>-topic-<id>.jsonl is named after).
std::optional<std::string> telegram_topic_id(std::string_view key);
// toAgentStoreSessionKey: "" or "main" -> main key; an agent key stays (normalized); any
// other request key becomes agent:<agent>:<normalized request key> ("cron:j", "hook:u").
std::string to_agent_store_key(std::string_view agent_id, std::string_view request_key,
                               std::string_view main_key = default_main_key);
std::string build_cron_request_key(std::string_view job_id);  // cron:<jobId>
std::string build_cron_key(std::string_view agent_id, std::string_view job_id);
std::string build_cron_run_key(std::string_view agent_id, std::string_view job_id,
                               std::string_view session_id);
std::string build_hook_request_key(std::string_view uuid);  // hook:<uuid>
std::string build_hook_key(std::string_view agent_id, std::string_view uuid);
std::string build_subagent_key(std::string_view target_agent_id, std::string_view uuid);
std::string build_acp_key(std::string_view agent_id, std::string_view uuid);
std::string build_heartbeat_key(std::string_view base_key);  // <base>:heartbeat
std::string build_model_run_key(std::string_view agent_id, std::string_view uuid);

// A Matrix channel / group key ("[agent:<a>:]matrix:(channel|group):..."): the store lookup
// (session_store_lookup.hpp) takes a case-folded alias of it only with proof of the same room.
bool requires_fold_proof(std::string_view normalized_key);

}  // namespace sessionrt::actors

// The store lookup by key over its legacy aliases (session_store_lookup.hpp), for the callers
// that reach it through this header.
#include "actors/router/session_store_lookup.hpp"
