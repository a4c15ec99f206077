#include "actors/router/session_key.hpp"

#include <algorithm>
#include <array>

#include "messages/ascii_text.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::actors {
namespace {

bool in(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }

// ascii_lower (not js_lowercase) where positions found in the lowered copy are used in the
// original: it keeps the length byte for byte (locating structural markers).
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A key already in normal form that needs no Unicode or span rule: printable ASCII without
// uppercase letters or spaces, and no Signal / Matrix span (whose rules trim inside the key).
// normalize_session_key returns such a key unchanged and each of its ':' segments is trimmed,
// so the parsers below can read it in place (what the router hands every session actor).
bool is_plain_key(std::string_view key) {
  for (char c : key)
    if (c <= ' ' || c > '~' || (c >= 'A' && c <= 'Z')) return false;  // (char may be signed: > '~' covers 0x7F)
  return !contains(key, "signal:") && !contains(key, "matrix:");
}

// Whether the ASCII-lowercased `s` contains `lower_part`, without building the lowercased copy.
bool contains_ascii_ci(std::string_view s, std::string_view lower_part) {
  const auto eq = [](char a, char b) { return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b; };
  return std::search(s.begin(), s.end(), lower_part.begin(), lower_part.end(), eq) != s.end();
}

std::vector<std::string_view> split_non_empty(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(sep, start), s.size());
    if (end > start) parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string_view>& parts, std::size_t from, char sep) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (i > from) out += sep;
    out += parts[i];
  }
  return out;
}

// ---- id tokens (agent ids, account ids) ---------------------------------------------------

bool is_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// /^[a-z0-9][a-z0-9_-]{0,63}$/i
bool is_valid_id(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  const std::string lower = ascii_lower(s);
  if (lower[0] == '_' || lower[0] == '-') return false;
  return std::all_of(lower.begin(), lower.end(), is_id_char);
}

std::string normalize_id_token(std::string_view raw, std::string_view fallback) {
  const std::string trimmed = js_trimmed(raw);
  if (trimmed.empty()) return std::string(fallback);
  if (is_valid_id(trimmed)) return ascii_lower(trimmed);
  std::string out;
  // A run of invalid characters becomes one "-": collapse runs, not each byte.
  bool in_run = false;
  for (char c : js_lowercase(trimmed)) {
    if (is_id_char(c)) {
      out += c;
      in_run = false;
    } else if (!in_run) {
      out += '-';
      in_run = true;
    }
  }
  const auto first = out.find_first_not_of('-');
  if (first == std::string::npos) return std::string(fallback);
  out = out.substr(first, out.find_last_not_of('-') - first + 1).substr(0, 64);
  return out.empty() ? std::string(fallback) : out;
}

// ---- case-preserving spans ------------------------------------------------------------------

struct preserved_span {
  std::size_t start;
  std::size_t end;
  bool trim;
};

// (^|:)signal:group:([^:]+), global, case-insensitive: the id segment keeps its case.
void collect_signal_group_spans(std::string_view lower, std::vector<preserved_span>& spans) {
  constexpr std::string_view marker = "signal:group:";
  std::size_t from = 0;
  while (true) {
    const std::size_t at = lower.find(marker, from);
    if (at == std::string_view::npos) return;
    const bool anchored = at == 0 || (lower[at - 1] == ':' && at - 1 >= from);
    const std::size_t seg_start = at + marker.size();
    const std::size_t seg_end = std::min(lower.find(':', seg_start), lower.size());
    if (!anchored || seg_end == seg_start) {
      from = at + 1;
      continue;
    }
    spans.push_back({seg_start, seg_end, true});
    from = seg_end;
  }
}

void collect_tail_spans(std::string_view lower, std::size_t tail_start,
                        std::vector<preserved_span>& spans) {
  if (tail_start >= lower.size()) return;
  constexpr std::string_view marker = ":thread:";
  const std::size_t at = lower.substr(tail_start).rfind(marker);
  if (at == std::string_view::npos) {
    spans.push_back({tail_start, lower.size(), false});
    return;
  }
  spans.push_back({tail_start, tail_start + at, false});
  const std::size_t id_start = tail_start + at + marker.size();
  if (id_start < lower.size()) spans.push_back({id_start, lower.size(), false});
}

// Where the Matrix tail starts: after "agent:<a>:matrix:<kind>:" or "matrix:<kind>:".
std::optional<std::size_t> matrix_tail_start(std::string_view lower, std::string_view kind) {
  const std::string head = "matrix:" + std::string(kind) + ":";
  if (starts_with(lower, "agent:")) {
    const std::size_t colon = lower.find(':', 6);
    if (colon != std::string_view::npos && colon > 6 && starts_with(lower.substr(colon + 1), head))
      return colon + 1 + head.size();
  }
  if (starts_with(lower, head)) return head.size();
  return std::nullopt;
}

std::vector<preserved_span> collect_preserved_spans(std::string_view lower) {
  std::vector<preserved_span> spans;
  collect_signal_group_spans(lower, spans);
  for (std::string_view kind : {"channel", "group"})
    if (auto start = matrix_tail_start(lower, kind)) collect_tail_spans(lower, *start, spans);
  std::erase_if(spans, [](const preserved_span& s) { return s.end <= s.start; });
  std::stable_sort(spans.begin(), spans.end(),
                   [](const auto& a, const auto& b) { return a.start < b.start; });
  return spans;
}

// ---- classification helpers -------------------------------------------------------------

std::string lowered_rest_or_key(std::string_view key) {
  if (auto parsed = parse_agent_session_key(key)) return js_lowercase(parsed->rest);
  return js_lower_trimmed(key);
}

// ^telegram:(group|channel|direct|dm):.+:topic:[^:]+$
bool is_telegram_topic_rest(std::string_view rest) {
  std::string_view after;
  for (std::string_view kind : {"group:", "channel:", "direct:", "dm:"}) {
    const std::string head = "telegram:" + std::string(kind);
    if (starts_with(rest, head)) after = rest.substr(head.size());
  }
  const std::size_t at = after.rfind(":topic:");
  if (after.empty() || at == std::string_view::npos || at == 0) return false;
  const std::string_view topic = after.substr(at + 7);
  return !topic.empty() && !contains(topic, ":");
}

bool has_control_char(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const code_point cp = decode_utf8_at(s, i);
    if (cp.value < 0x20 || in(cp.value, 0x7F, 0x9F)) return true;
    i += cp.length;
  }
  return false;
}

}  // namespace

// ---- enums ------------------------------------------------------------------------------------

std::optional<dm_scope> parse_dm_scope(std::string_view text) {
  const std::string v = js_lower_trimmed(text);
  if (v == "main") return dm_scope::main;
  if (v == "per-peer") return dm_scope::per_peer;
  if (v == "per-channel-peer") return dm_scope::per_channel_peer;
  if (v == "per-account-channel-peer") return dm_scope::per_account_channel_peer;
  return std::nullopt;
}

std::string_view to_string(dm_scope scope) {
  switch (scope) {
    case dm_scope::main: return "main";
    case dm_scope::per_peer: return "per-peer";
    case dm_scope::per_channel_peer: return "per-channel-peer";
    case dm_scope::per_account_channel_peer: return "per-account-channel-peer";
  }
  return "main";
}

std::optional<session_scope> parse_session_scope(std::string_view text) {
  const std::string v = js_lower_trimmed(text);
  if (v == "per-sender") return session_scope::per_sender;
  if (v == "global") return session_scope::global;
  return std::nullopt;
}

// ---- text primitives --------------------------------------------------------------------------


// ---- normalization ----------------------------------------------------------------------------

std::string normalize_agent_id(std::string_view raw) {
  return normalize_id_token(raw, default_agent_id);
}

std::string normalize_account_id(std::string_view raw) {
  return normalize_id_token(raw, default_account_id);
}

std::string normalize_main_key(std::string_view raw) {
  const std::string trimmed = js_trimmed(raw);
  return trimmed.empty() ? std::string(default_main_key) : js_lowercase(trimmed);
}

std::optional<std::string> normalize_chat_type(std::string_view raw) {
  const std::string v = js_lower_trimmed(raw);
  if (v == "direct" || v == "dm") return "direct";
  if (v == "group" || v == "channel") return v;
  return std::nullopt;
}

bool is_case_preserving_peer(std::string_view channel, std::string_view peer_kind) {
  const std::string c = js_lower_trimmed(channel);
  const std::string k = js_lower_trimmed(peer_kind);
  return (c == "signal" && k == "group") || (c == "matrix" && (k == "channel" || k == "group"));
}

std::string normalize_session_peer_id(std::string_view channel, std::string_view peer_kind,
                                      std::string_view peer_id) {
  const std::string trimmed = js_trimmed(peer_id);
  if (trimmed.empty()) return {};
  return is_case_preserving_peer(channel, peer_kind) ? trimmed : js_lowercase(trimmed);
}

std::string normalize_session_key(std::string_view key) {
  if (is_plain_key(key)) return std::string(key);
  const std::string raw = js_trimmed(key);
  const std::string lower = ascii_lower(raw);
  if (!contains(lower, "signal:") && !contains(lower, "matrix:")) return js_lowercase(raw);
  std::string out;
  std::size_t cursor = 0;
  for (const preserved_span& span : collect_preserved_spans(lower)) {
    if (span.start < cursor) continue;  // inside a span already emitted
    out += js_lowercase(std::string_view(raw).substr(cursor, span.start - cursor));
    const std::string_view kept = std::string_view(raw).substr(span.start, span.end - span.start);
    out += span.trim ? js_trimmed(kept) : std::string(kept);
    cursor = span.end;
  }
  out += js_lowercase(std::string_view(raw).substr(cursor));
  return out;
}

// ---- parsing and classification ------------------------------------------------------------

std::optional<std::string_view> agent_id_of_plain_key(std::string_view key) {
  if (!is_plain_key(key)) return std::nullopt;
  // split_non_empty's first three segments, in place.
  std::string_view parts[3];
  std::size_t n = 0, start = 0;
  while (n < 3 && start <= key.size()) {
    const std::size_t end = std::min(key.find(':', start), key.size());
    if (end > start) parts[n++] = key.substr(start, end - start);
    start = end + 1;
  }
  if (n < 3 || parts[0] != "agent") return default_agent_id;
  return parts[1];
}

std::optional<parsed_agent_key> parse_agent_session_key(std::string_view key) {
  const std::string raw = normalize_session_key(key);
  const auto parts = split_non_empty(raw, ':');
  if (parts.size() < 3 || parts[0] != "agent") return std::nullopt;
  std::string agent_id = js_trimmed(parts[1]);
  if (agent_id.empty()) return std::nullopt;
  return parsed_agent_key{std::move(agent_id), join(parts, 2, ':')};
}

thread_suffix split_thread_suffix(std::string_view key) {
  const std::string raw = js_trimmed(key);
  const std::size_t at = ascii_lower(raw).rfind(":thread:");
  if (at == std::string::npos) return {raw, {}};
  return {raw.substr(0, at), js_trimmed(std::string_view(raw).substr(at + 8))};
}

bool is_cron_run_key(std::string_view key) {
  const auto parsed = parse_agent_session_key(key);
  if (!parsed) return false;
  const auto parts = split_non_empty(parsed->rest, ':');
  return parts.size() >= 4 && parts[0] == "cron" && parts[2] == "run";
}

bool is_synthetic_key(std::string_view key) {
  const std::string rest = lowered_rest_or_key(key);
  for (std::string_view prefix : {"subagent:", "acp:", "cron:", "acp-bridge:", "hook:", "node:"})
    if (starts_with(rest, prefix)) return true;
  return rest == "heartbeat" || ends_with(rest, ":heartbeat") || contains(rest, ":heartbeat:");
}

// is_protected_key: protected_key.cpp (OpenClaw 2026.9's rule).

bool is_thread_key(std::string_view key) {
  if (!contains_ascii_ci(key, ":thread:")) return false;  // (most keys: no copy made)
  return !split_thread_suffix(key).thread_id.empty();
}

bool is_group_key(std::string_view key) {
  const std::string lower = js_lowercase(key);
  return contains(lower, ":group:") || contains(lower, ":channel:");
}

std::string_view reset_type_of(std::string_view key, bool is_thread_hint, bool is_group_hint) {
  if (is_thread_hint || contains(js_lowercase(key), ":thread:")) return "thread";
  if (is_group_hint || is_group_key(key)) return "group";
  return "direct";
}

std::string canonicalize_main_alias(std::string_view key, std::string_view agent_id,
                                    std::string_view main_key, session_scope scope) {
  const std::string raw = js_trimmed(key);
  if (raw.empty()) return raw;
  const std::string mk = normalize_main_key(main_key);
  const std::string canonical = build_main_key(agent_id, mk);
  const std::array<std::string, 6> aliases = {std::string(default_main_key),
                                              mk,
                                              canonical,
                                              build_main_key(agent_id, default_main_key),
                                              build_main_key(default_agent_id, mk),
                                              build_main_key(default_agent_id, default_main_key)};
  if (std::find(aliases.begin(), aliases.end(), raw) == aliases.end()) return raw;
  return scope == session_scope::global ? std::string(global_session_key) : canonical;
}

bool is_plausible_session_key(std::string_view text) {
  if (text.empty() || text.size() > max_plausible_key_length) return false;
  if (!is_valid_utf8(text) || has_control_char(text) || js_trim(text).empty()) return false;
  if (contains(text, "\\") || text.front() == '/' || contains(text, "//")) return false;
  return !contains(text, "../") && !contains(text, "/..");
}

// ---- builders ---------------------------------------------------------------------------------

std::string build_main_key(std::string_view agent_id, std::string_view main_key) {
  return "agent:" + normalize_agent_id(agent_id) + ":" + normalize_main_key(main_key);
}

std::optional<std::string> resolve_linked_peer_id(const identity_links& links,
                                                  std::string_view channel,
                                                  std::string_view peer_id) {
  const std::string peer = js_trimmed(peer_id);
  if (peer.empty()) return std::nullopt;
  const std::string bare = js_lowercase(peer);
  const std::string ch = js_lower_trimmed(channel);
  const std::string scoped = ch.empty() ? std::string() : js_lower_trimmed(ch + ":" + peer);
  for (const auto& [canonical, ids] : links) {
    std::string name = js_trimmed(canonical);
    if (name.empty()) continue;
    for (const std::string& id : ids) {
      const std::string candidate = js_lower_trimmed(id);
      if (!candidate.empty() && (candidate == bare || candidate == scoped)) return name;
    }
  }
  return std::nullopt;
}

namespace {

std::string direct_peer_key(const peer_key_params& p) {
  std::string peer = js_trimmed(p.peer_id);
  if (p.scope != dm_scope::main && p.links != nullptr)
    if (auto linked = resolve_linked_peer_id(*p.links, p.channel, peer)) peer = *linked;
  peer = js_lowercase(peer);
  if (peer.empty() || p.scope == dm_scope::main) return build_main_key(p.agent_id, p.main_key);
  const std::string agent = "agent:" + normalize_agent_id(p.agent_id) + ":";
  std::string channel = js_lower_trimmed(p.channel);
  if (channel.empty()) channel = unknown_session_key;
  switch (p.scope) {
    case dm_scope::per_account_channel_peer:
      return agent + channel + ":" + normalize_account_id(p.account_id) + ":direct:" + peer;
    case dm_scope::per_channel_peer: return agent + channel + ":direct:" + peer;
    default: return agent + "direct:" + peer;
  }
}

}  // namespace

std::string build_peer_key(const peer_key_params& p) {
  const std::string kind = normalize_chat_type(p.peer_kind).value_or(js_lower_trimmed(p.peer_kind));
  if (kind.empty() || kind == "direct") return direct_peer_key(p);
  std::string channel = js_lower_trimmed(p.channel);
  if (channel.empty()) channel = unknown_session_key;
  std::string id = normalize_session_peer_id(channel, kind, p.peer_id);
  if (id.empty()) id = unknown_session_key;
  return normalize_session_key("agent:" + normalize_agent_id(p.agent_id) + ":" + channel + ":" +
                               kind + ":" + id);
}

std::string build_thread_key(std::string_view base_key, std::string_view thread_id,
                             bool lowercase_thread_id) {
  const std::string id = js_trimmed(thread_id);
  if (id.empty()) return std::string(base_key);
  return std::string(base_key) + ":thread:" + (lowercase_thread_id ? js_lowercase(id) : id);
}

std::string build_conversation_thread_key(std::string_view base_key, std::string_view thread_id,
                                          bool lowercase_thread_id) {
  const std::string id = js_trimmed(thread_id);
  if (id.empty()) return std::string(base_key);
  const std::string probe = lowered_rest_or_key(base_key) + ":topic:x";
  if (!is_telegram_topic_rest(probe)) return build_thread_key(base_key, thread_id, lowercase_thread_id);
  return std::string(base_key) + ":topic:" + (lowercase_thread_id ? js_lowercase(id) : id);
}

std::optional<std::string> telegram_topic_id(std::string_view key) {
  const std::string rest = lowered_rest_or_key(key);
  if (!is_telegram_topic_rest(rest)) return std::nullopt;
  const std::string_view k = key;
  return std::string(k.substr(k.rfind(":topic:") + 7));
}

std::string build_telegram_topic_key(std::string_view agent_id, std::string_view chat_id,
                                     std::string_view topic_id) {
  return "agent:" + normalize_agent_id(agent_id) + ":telegram:group:" + js_lower_trimmed(chat_id) +
         ":topic:" + js_lower_trimmed(topic_id);
}

std::string to_agent_store_key(std::string_view agent_id, std::string_view request_key,
                               std::string_view main_key) {
  const std::string raw = js_trimmed(request_key);
  if (raw.empty() || js_lowercase(raw) == default_main_key)
    return build_main_key(agent_id, main_key);
  if (auto parsed = parse_agent_session_key(raw))
    return "agent:" + parsed->agent_id + ":" + parsed->rest;
  std::string normalized = normalize_session_key(raw);
  if (starts_with(normalized, "agent:")) return normalized;
  return "agent:" + normalize_agent_id(agent_id) + ":" + normalized;
}

std::string build_cron_request_key(std::string_view job_id) { return "cron:" + js_trimmed(job_id); }

std::string build_cron_key(std::string_view agent_id, std::string_view job_id) {
  return to_agent_store_key(agent_id, build_cron_request_key(job_id));
}

std::string build_cron_run_key(std::string_view agent_id, std::string_view job_id,
                               std::string_view session_id) {
  return build_cron_key(agent_id, job_id) + ":run:" + js_lower_trimmed(session_id);
}

std::string build_hook_request_key(std::string_view uuid) { return "hook:" + js_trimmed(uuid); }

std::string build_hook_key(std::string_view agent_id, std::string_view uuid) {
  return to_agent_store_key(agent_id, build_hook_request_key(uuid));
}

std::string build_subagent_key(std::string_view target_agent_id, std::string_view uuid) {
  return "agent:" + normalize_agent_id(target_agent_id) + ":subagent:" + js_lower_trimmed(uuid);
}

std::string build_acp_key(std::string_view agent_id, std::string_view uuid) {
  return "agent:" + normalize_agent_id(agent_id) + ":acp:" + js_lower_trimmed(uuid);
}

std::string build_heartbeat_key(std::string_view base_key) {
  return js_trimmed(base_key) + ":heartbeat";
}

std::string build_model_run_key(std::string_view agent_id, std::string_view uuid) {
  return "agent:" + normalize_agent_id(agent_id) + ":explicit:model-run-" + js_lower_trimmed(uuid);
}

// ---- the fold rule of the store lookup (session_store_lookup.hpp) ---------------------------

bool requires_fold_proof(std::string_view normalized_key) {
  const auto parts = split_non_empty(normalized_key, ':');
  const std::size_t body = parts.size() >= 3 && js_lowercase(parts[0]) == "agent" ? 2 : 0;
  if (parts.size() < body + 3) return false;
  const std::string kind = js_lowercase(parts[body + 1]);
  return js_lowercase(parts[body]) == "matrix" && (kind == "group" || kind == "channel");
}

}  // namespace sessionrt::actors
