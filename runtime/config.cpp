#include "runtime/config.hpp"

#include "messages/json5_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <span>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/config_table.hpp"
#include "runtime/config_table_load.hpp"
#include "runtime/config_values.hpp"
#include "runtime/logging.hpp"
#include "storage/session_paths.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::runtime {
namespace {

using namespace config_tables;

// ---- session.reset-shaped blocks [R§4.1] ---------------------------------------------------------

const table<actors::reset_config>& reset_block_table() {
  using k = keys<actors::reset_config>;
  using T = actors::reset_config;
  static const table<T> t{
      "reset block",
      "Where a key is a reset block, it is an object of these keys; a key it leaves out falls back to the "
      "next block (session.resetByChannel, then resetByType, then reset, then daily at 4) [R§4.1].",
      {
          k::field("mode", &T::mode,
                   one_of<actors::reset_mode>{{"daily", "idle", "none"}, actors::parse_reset_mode,
                                              [](const actors::reset_mode& m) {
                                                return std::string(actors::reset_mode_name(m));
                                              }},
                   "daily: at atHour; idle: after idleMinutes without a message; none: never"),
          k::field("atHour", &T::at_hour, whole{0, 23}, "the hour of a daily reset, in session.timezone"),
          k::field("idleMinutes", &T::idle_minutes, whole{0}, "idle minutes before a reset (0 = never)"),
      }};
  return t;
}

const table<actors::reset_by_type_config>& reset_by_type_table() {
  using k = keys<actors::reset_by_type_config>;
  using T = actors::reset_by_type_config;
  static const table<T> t{"", "", {
      k::nested("direct", &T::direct, reset_block_table(), "direct messages"),
      k::nested("dm", &T::dm, reset_block_table(), "the old name of direct (used when direct is absent)"),
      k::nested("group", &T::group, reset_block_table(), "group chats"),
      k::nested("thread", &T::thread, reset_block_table(), "threads"),
  }};
  return t;
}

// session.resetByChannel: any channel name; names are trimmed and lowercased as the policy
// looks them up, so two spellings of one channel are an error rather than a silent choice.
status read_reset_by_channel(const bj::value& value, const std::string& path, actors::session_reset_config& target,
                             load_state& state) {
  if (!value.is_object()) return config_key_error(path, "expected an object, got " + describe_json_value(value));
  std::map<std::string, std::string> path_of_channel;
  for (const auto& member : value.get_object()) {
    std::string member_path = child_key_path(path, member.key());
    std::string channel = ascii_lower_trimmed(member.key());
    if (channel.empty()) return config_key_error(member_path, "a channel name must not be empty");
    if (auto seen = path_of_channel.find(channel); seen != path_of_channel.end())
      return config_key_error(member_path, "names the same channel as " + seen->second +
                                               " (channel names are compared trimmed and lowercased)");
    path_of_channel.emplace(channel, member_path);
    if (member.value().is_null()) continue;
    actors::reset_config block;
    SRT_RETURN_IF_ERROR(config_table::read_keys(member.value(), member_path, reset_block_table(), block, state));
    target.reset_by_channel[channel] = block;
  }
  return {};
}

// ---- session ------------------------------------------------------------------------------------

status read_identity_links(const bj::value& value, const std::string& path, actors::identity_links& links) {
  if (!value.is_object())
    return config_key_error(path, "expected an object of name -> [ids], got " + describe_json_value(value));
  links.clear();
  for (const auto& member : value.get_object()) {
    std::string member_path = child_key_path(path, member.key());
    if (ascii_lower_trimmed(member.key()).empty())
      return config_key_error(member_path, "a canonical name must not be empty");
    if (member.value().is_null()) continue;
    auto ids = read_string_list(member.value(), member_path);
    if (!ids.ok()) return std::move(ids).take_error();
    links.emplace_back(std::string(member.key()), std::move(*ids));
  }
  return {};
}

status read_timezone(const bj::value& value, const std::string& path, std::string& timezone) {
  auto name = read_string(value, path);
  if (!name.ok()) return std::move(name).take_error();
  if (!name->empty() && !actors::resolve_reset_zone(*name).ok())
    return config_key_error(path, describe_json_value(value) +
                                      " is not a time zone of the IANA database; use a name such as "
                                      "\"Europe/Berlin\", or \"\" for the host's zone");
  timezone = std::move(*name);
  return {};
}

const table<storage::write_lock_options>& write_lock_table() {
  using k = keys<storage::write_lock_options>;
  using T = storage::write_lock_options;
  constexpr std::int64_t forever = T::infinite;
  static const table<T> t{"", "", {
      k::field("acquireTimeoutMs", &T::acquire_timeout_ms, millis{1, forever, {}},
               "how long to wait for a session's lock [R§9]"),
      k::field("staleMs", &T::stale_ms, millis{1, {}, forever}, "older locks are \"too-old\" and taken over"),
      k::field("maxHoldMs", &T::max_hold_ms, millis{1, {}, forever}, "written into the lock payload"),
  }};
  return t;
}

const one_of<actors::dm_scope>& dm_scope_kind() {
  static const one_of<actors::dm_scope> kind{
      {"main", "per-peer", "per-channel-peer", "per-account-channel-peer"}, actors::parse_dm_scope,
      [](const actors::dm_scope& s) { return std::string(actors::to_string(s)); }};
  return kind;
}

// ---- session.maintenance and cron [R§5.1, §5.6] ---------------------------------------------------

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// pruneAfter / resetArchiveRetention: a duration string, or a bare number (or digit string) of
// days, as OpenClaw parses them.
result<std::int64_t> read_days_duration(const bj::value& value, const std::string& path) {
  std::optional<std::int64_t> ms;
  if (value.is_string()) {
    std::string text = ascii_lower_trimmed(value.get_string());
    if (all_digits(text) && text.size() < 10)
      ms = std::stoll(text) * actors::day_ms;
    else
      ms = parse_duration_ms(text);
  } else if (auto days = json::as_int(value); days && *days >= 0 && *days < 100000000) {
    ms = *days * actors::day_ms;
  }
  if (!ms || *ms <= 0)
    return config_key_error(path, "expected a duration such as \"30d\", \"12h\" or a whole number of days, got " +
                                      describe_json_value(value));
  return *ms;
}

// A duration of days, written back as its largest whole unit.
struct days {
  std::string type() const { return "days-duration"; }
  std::string note() const {
    return "a duration string (\"30d\", \"12h\"), or a whole number (or digit string) of days";
  }
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, read_days_duration(v, p));
  }
  bj::value write(std::int64_t ms) const { return bj::value(duration_text(ms)); }
};

// `false` (and for archiveDashboardAfter 0) turns the key off: the field is left unset.
template <class T, class Field>
typename row_of<T>::reader off_or_days(Field T::*field, bool zero_is_off) {
  return [field, zero_is_off](const bj::value& v, const std::string& p, T& t, load_state&) -> status {
    bool off = v.is_bool() && !v.get_bool();
    if (zero_is_off)
      off = off || json::as_int(v) == std::optional<std::int64_t>(0) ||
            (v.is_string() && ascii_lower_trimmed(v.get_string()) == "0");
    if (off) {
      (t.*field).reset();
      return {};
    }
    return assign(t.*field, read_days_duration(v, p));
  };
}

// cron.sessionRetention: a duration string (a unit-less one is hours), or false.
status read_cron_retention(const bj::value& value, const std::string& path, actors::cron_settings& target) {
  if (value.is_bool() && !value.get_bool()) {
    target.session_retention_ms.reset();
    return {};
  }
  std::optional<std::int64_t> ms;
  if (value.is_string()) {
    std::string text = ascii_lower_trimmed(value.get_string());
    if (all_digits(text) && text.size() < 12)
      ms = std::stoll(text) * 3600 * 1000;
    else
      ms = parse_duration_ms(text);
  }
  if (!ms || *ms <= 0)
    return config_key_error(path, "expected a duration string such as \"24h\" (a bare number is hours), or false, got " +
                                      describe_json_value(value));
  target.session_retention_ms = *ms;
  return {};
}

const table<actors::maintenance_settings>& cold_storage_table() {
  using k = keys<actors::maintenance_settings>;
  using T = actors::maintenance_settings;
  static const table<T> t{"", "", {
      k::field("enabled", &T::cold_storage_enabled, boolean{},
               "OpenClaw 2026.9's: transcripts idle afterDays are kept as <file>.jsonl.zst, restored when used "
               "(any mode; docs/maintenance.md)"),
      k::field("afterDays", &T::cold_storage_after_days, whole{1}, "days without activity before a transcript goes cold"),
  }};
  return t;
}

const table<actors::maintenance_settings>& maintenance_table() {
  using k = keys<actors::maintenance_settings>;
  using T = actors::maintenance_settings;
  static const table<T> t{"", "", {
      k::field("mode", &T::mode,
               one_of<actors::maintenance_mode>{{"warn", "enforce"}, actors::parse_maintenance_mode,
                                                [](const actors::maintenance_mode& m) {
                                                  return std::string(actors::maintenance_mode_name(m));
                                                }},
               "warn: report, change nothing; enforce: prune, cap and evict [R§5]"),
      k::field("pruneAfter", &T::prune_after_ms, days{}, "rows idle longer are pruned"),
      k::field("maxEntries", &T::max_entries, whole{1}, "cap on rows (applied at the high water: 550 for 500)"),
      k::field("resetArchiveRetention", &T::reset_archive_retention_ms, days{},
               "how long .reset.<ts> archives are kept; false = forever")
          .read_with([](const bj::value& v, const std::string& p, T& t, load_state&) -> status {
            if (v.is_bool() && !v.get_bool()) {
              t.reset_archive_retention_disabled = true;
              t.reset_archive_retention_ms.reset();
              return {};
            }
            t.reset_archive_retention_disabled = false;
            return assign(t.reset_archive_retention_ms, read_days_duration(v, p));
          })
          .write_with([](const T& m) -> std::optional<bj::value> {
            if (m.reset_archive_retention_disabled) return bj::value(false);
            return bj::value(duration_text(*actors::reset_archive_retention(m)));
          })
          .default_doc("= pruneAfter"),
      k::field("maxDiskBytes", &T::max_disk_bytes, bytes{1}, "disk budget of a sessions dir (unset: none)"),
      k::field("highWaterBytes", &T::high_water_bytes, bytes{1},
               "the budget's target, clamped to maxDiskBytes (without maxDiskBytes: no effect, a warning)")
          .write_with([](const T& m) -> std::optional<bj::value> {
            if (auto hw = actors::high_water_bytes(m)) return bj::value(*hw);
            return std::nullopt;
          })
          .default_doc("80% of maxDiskBytes"),
      k::field("archiveDashboardAfter", &T::archive_dashboard_after_ms, days{},
               "OpenClaw 2026.9's: agent:<id>:dashboard:* rows idle this long are archived in place (enforce); "
               "false / 0 = off (docs/maintenance.md)")
          .read_with(off_or_days(&T::archive_dashboard_after_ms, true))
          .unset_as(false),
      k::field("preserveRecent", &T::preserve_recent_ms, days{},
               "rows active this recently are never pruned, capped or evicted (synthetic rows are); false = off")
          .read_with(off_or_days(&T::preserve_recent_ms, false))
          .unset_as(false),
      k::nested("coldStorage", self(), cold_storage_table()),
  }};
  return t;
}

const table<actors::cron_settings>& cron_run_log_table() {
  using k = keys<actors::cron_settings>;
  using T = actors::cron_settings;
  static const table<T> t{"", "", {
      k::field("maxBytes", &T::run_log_max_bytes, bytes{1}, "a cron run log over this is trimmed ..."),
      k::field("keepLines", &T::run_log_keep_lines, whole{1}, "... to its last keepLines lines"),
  }};
  return t;
}

const table<actors::cron_settings>& cron_table() {
  using k = keys<actors::cron_settings>;
  using T = actors::cron_settings;
  static const table<T> t{"", "", {
      k::custom(
           "sessionRetention", "duration", "cron run rows kept; false = never reaped [R§5.6]",
           [](const bj::value& v, const std::string& p, T& t, load_state&) { return read_cron_retention(v, p, t); },
           [](const T& c) -> std::optional<bj::value> {
             if (c.session_retention_ms) return bj::value(duration_text(*c.session_retention_ms));
             return bj::value(false);
           })
          .noted("a string with a unit (\"24h\", \"90m\", \"7d\"); a bare digit string is hours"),
      k::nested("runLog", self(), cron_run_log_table()),
  }};
  return t;
}

void warn_maintenance(const actors::maintenance_settings& m, std::vector<std::string>& warnings) {
  if (m.high_water_bytes && !m.max_disk_bytes)
    warnings.push_back(
        "config key session.maintenance.highWaterBytes has no effect unless session.maintenance.maxDiskBytes is set");
  else if (m.high_water_bytes && *m.high_water_bytes > *m.max_disk_bytes)
    warnings.push_back(fmt::format("config key session.maintenance.highWaterBytes ({}) is above maxDiskBytes ({}); "
                                   "maxDiskBytes is used",
                                   *m.high_water_bytes, *m.max_disk_bytes));
}

const table<runtime_settings>& session_table() {
  using k = keys<runtime_settings>;
  using routing = keys<actors::session_routing_config>;
  using R = actors::session_routing_config;
  using resets = keys<actors::session_reset_config>;
  using Z = actors::session_reset_config;
  using sessions = keys<actors::session_settings>;
  using S = actors::session_settings;
  static const table<runtime_settings> t{"", "", config_table::joined_rows<row_of<runtime_settings>>({
      k::lifted<R>(config_table::at(&runtime_settings::routing, &actors::routing_config::session), {
          routing::field("dmScope", &R::direct_message_scope, dm_scope_kind(),
                         "how direct messages map to sessions: one main session, or one per peer, per channel "
                         "and peer, per account, channel and peer [R§1.2]"),
          routing::field("mainKey", &R::main_key, text{}, "the main session's key segment"),
          routing::field("scope", &R::scope,
                         one_of<actors::session_scope>{
                             {"per-sender", "global"}, actors::parse_session_scope,
                             [](const actors::session_scope& s) {
                               return std::string(s == actors::session_scope::global ? "global" : "per-sender");
                             }},
                         "global: every sender shares one session"),
          routing::custom(
              "identityLinks", "{name: [ids]}", "person -> \"channel:id\" / \"id\"; file order kept",
              [](const bj::value& v, const std::string& p, R& t, load_state&) {
                return read_identity_links(v, p, t.links);
              },
              [](const R& r) -> std::optional<bj::value> {
                bj::object links;
                for (const auto& [name, ids] : r.links) links[name] = strings_json(ids);
                return bj::value(std::move(links));
              }),
      }),
      k::lifted<Z>(config_table::at(&runtime_settings::session, &S::reset), {
          resets::nested("reset", &Z::reset, reset_block_table(), "unset: daily at 4 (SPEC §3, [R§4.1])"),
          resets::nested("resetByType", &Z::reset_by_type, reset_by_type_table(), "a reset block per chat type"),
          resets::custom(
                  "resetByChannel", "{channel: reset block}", "a reset block per channel (name trimmed and lowercased)",
                  [](const bj::value& v, const std::string& p, Z& t, load_state& st) {
                    return read_reset_by_channel(v, p, t, st);
                  },
                  [](const Z& z) -> std::optional<bj::value> {
                    bj::object by_channel;
                    for (const auto& [channel, block] : z.reset_by_channel)
                      by_channel[channel] = config_table::write_object(reset_block_table(), block);
                    return bj::value(std::move(by_channel));
                  })
              .omit_if_empty()
              .documents(reset_block_table(), ".<channel>"),
          resets::field("idleMinutes", &Z::idle_minutes, whole{0}, "legacy idle minutes"),
          resets::field("resetTriggers", &Z::reset_triggers, strings{}, "[] = [\"/new\", \"/reset\"]").omit_if_empty(),
          resets::field("timezone", &Z::timezone, text{},
                        "IANA zone of daily resets, must resolve; \"\" = the host's zone")
              .read_with([](const bj::value& v, const std::string& p, Z& t, load_state&) {
                return read_timezone(v, p, t.timezone);
              }),
      }),
      k::lifted<S>(&runtime_settings::session, {
          sessions::nested("writeLock", &S::write_lock, write_lock_table(),
                           "the environment's SESSIONRT_SESSION_WRITE_LOCK_* win [R§9]"),
          sessions::field("passivateIdleMs", &S::passivate_idle_ms, millis{1}, "idle live actor -> passivated"),
          sessions::field("trimIdleMs", &S::trim_idle_ms, millis{0},
                          "idle live actor closes its transcript and drops its cached context (0 = never)"),
          sessions::field("maxLiveSessions", &S::max_live_sessions, whole{1}, "LRU passivation beyond this"),
          sessions::field("maxMessageBytes", &S::max_message_bytes, bytes{1}, "a longer chat event is refused"),
      }),
      {k::nested("maintenance", &runtime_settings::maintenance, maintenance_table())},
  })};
  return t;
}

// ---- bindings [R§1.2] ------------------------------------------------------------------------------

const table<actors::route_peer>& peer_table() {
  using k = keys<actors::route_peer>;
  using T = actors::route_peer;
  static const table<T> t{"", "", {
      k::field("kind", &T::kind, text{true}, "\"direct\", \"group\", ...").required("\"direct\", \"group\", \"channel\", ..."),
      k::field("id", &T::id, text{true}, "\"*\" = any peer of the kind")
          .required("a peer id, or \"*\" for every peer of the kind"),
  }};
  return t;
}

const table<actors::binding_match>& match_table() {
  using k = keys<actors::binding_match>;
  using T = actors::binding_match;
  static const table<T> t{"", "", {
      k::field("channel", &T::channel, text{true}, "\"telegram\", \"discord\", ...")
          .required("a binding without a channel never matches"),
      k::field("accountId", &T::account_id, text{}, "\"\" = the default account, \"*\" = any").omit_if_empty(),
      k::nested("peer", &T::peer, peer_table(), "unset: any peer"),
      k::field("guildId", &T::guild_id, text{}, "Discord guild").omit_if_empty(),
      k::field("teamId", &T::team_id, text{}, "Slack team").omit_if_empty(),
      k::field("roles", &T::roles, strings{}, "any one of these member roles").omit_if_empty(),
  }};
  return t;
}

const table<actors::route_binding>& binding_session_table() {
  static const table<actors::route_binding> t{"", "", {
      keys<actors::route_binding>::field("dmScope", &actors::route_binding::session_dm_scope, dm_scope_kind(),
                                         "this binding's dmScope (unset: session.dmScope)"),
  }};
  return t;
}

const table<actors::route_binding>& binding_table() {
  using k = keys<actors::route_binding>;
  using T = actors::route_binding;
  static const table<T> t{"", "", {
      k::field("agentId", &T::agent_id, text{true}, "target agent (warned if not in agents.list)")
          .required("the agent this binding routes to"),
      k::nested("match", &T::match, match_table()),
      k::nested("session", self(), binding_session_table()).omit_if_empty(),
  }};
  return t;
}

status read_bindings(const bj::value& value, const std::string& path, std::vector<actors::route_binding>& bindings,
                     load_state& state) {
  bindings.clear();
  return read_items(value, path, bindings, [&](const bj::value& item, const std::string& item_path, auto& list) {
    actors::route_binding binding;
    SRT_RETURN_IF_ERROR(config_table::read_keys(item, item_path, binding_table(), binding, state));
    SRT_RETURN_IF_ERROR(config_table::check_required(binding_table(), binding, item_path));
    list.push_back(std::move(binding));
    return status{};
  });
}

// A bound agent missing from a non-empty agents.list silently routes to the default agent.
void warn_unlisted_bound_agents(const actors::routing_config& routing, std::vector<std::string>& warnings) {
  if (routing.agents.empty()) return;
  for (std::size_t i = 0; i < routing.bindings.size(); ++i) {
    std::string wanted = actors::normalize_agent_id(routing.bindings[i].agent_id);
    bool listed = std::any_of(routing.agents.begin(), routing.agents.end(),
                              [&](const actors::agent_entry& a) { return actors::normalize_agent_id(a.id) == wanted; });
    if (!listed)
      warnings.push_back(
          fmt::format("config key bindings[{}].agentId: agent \"{}\" is not in agents.list; its events go "
                      "to the default agent \"{}\"",
                      i, wanted, actors::default_agent_of(routing)));
  }
}

// ---- storage, model, compaction, context ---------------------------------------------------------

const table<actors::storage_settings>& storage_table() {
  using k = keys<actors::storage_settings>;
  using T = actors::storage_settings;
  static const table<T> t{"", "", {
      k::field("durability", &T::durability,
               one_of<storage::durability>{{"none", "batch", "sync"}, storage::parse_durability,
                                           [](const storage::durability& d) {
                                             return std::string(storage::durability_name(d));
                                           }},
               "when an append is on disk before its ack (SPEC §1.2)"),
      k::field("batchWindowMs", &T::batch_window_ms, millis{0}, "extra wait for a group commit to gather appends"),
      k::field("maxLineBytes", &T::max_line_bytes, bytes{1}, "longest transcript line"),
      k::field("storeFlushWindowMs", &T::store_flush_window_ms, millis{0},
               "the longest a row change waits for sessions.json: the age of the file readers see (SPEC §1.1; "
               "unset: 5000 with durability batch, whose commit log holds the changes, else 50)")
          .unset_as(nullptr),
      k::field("storeRewriteBytesPerSec", &T::store_rewrite_bytes_per_sec, bytes{0},
               "durability batch: sessions.json, rewritten whole, waits at least its size at this rate between "
               "writes, at most storage.commitLogCheckpointIntervalMs (the commit log holds the rows "
               "meanwhile); 0: the window alone"),
      k::field("storeDurableAck", &T::store_durable_ack, boolean{},
               "ack a turn once its row is durable (always so with durability batch: the row is in its log record)"),
      k::field("storeSpillMinBytes", &T::store_spill_min_bytes, bytes{0},
               "from this size of sessions.json on, unchanged rows keep only their place in it (unset: 2 MiB on a "
               "device, never in memory)")
          .unset_as(nullptr),
      k::field("keepMaintenancePicture", &T::keep_maintenance_picture, boolean{},
               "the disk-budget pass keeps its listing between passes (unset: under virtual time only)")
          .unset_as(nullptr),
      k::field("watchStoreEdits", &T::watch_store_edits, boolean{},
               "take hand edits of sessions.json while running, merged (docs/maintenance.md)"),
      k::field("commitLogCheckpointBytes", &T::commit_log_checkpoint_bytes, bytes{64 << 10},
               "durability batch: a commit log this large is checkpointed (its transcripts made durable, the log "
               "recycled) and a new one takes the writes"),
      k::field("commitLogCheckpointIntervalMs", &T::commit_log_checkpoint_interval_ms, millis{1000},
               "durability batch: a commit log this old (real time) is checkpointed the same way"),
      k::field("commitLogPreallocateBytes", &T::commit_log_preallocate_bytes, bytes{0},
               "a commit log file is allocated ahead in chunks this large, so that its fdatasyncs change no file size "
               "(0: it grows by its appends)"),
      k::field("commitLogRecycledFiles", &T::commit_log_recycled_files, whole{0, 64},
               "checkpointed commit logs kept and written again as later logs (0: removed)"),
  }};
  return t;
}

const table<actors::model_settings>& model_table() {
  using k = keys<actors::model_settings>;
  using T = actors::model_settings;
  static const table<T> t{"", "", {
      k::field("contextWindow", &T::context_window, whole{1}, "context window, tokens")
          .deprecated("set models.providers.<id>.models[].contextWindow")
          .omit_at_default(),
      k::field("provider", &T::provider, text{}, "\"\" = the runner's default")
          .deprecated("set agents.defaults.model (\"provider/model\")")
          .omit_if_empty(),
      k::field("model", &T::model, text{}, "\"\" = the runner's default")
          .deprecated("set agents.defaults.model (\"provider/model\")")
          .omit_if_empty(),
      k::field("maxTokens", &T::max_tokens, whole{0}, "0 = the runner's default")
          .deprecated("set models.providers.<id>.models[].maxTokens")
          .omit_at_default(),
      k::field("maxConcurrent", &T::max_concurrent, whole{0},
               "model calls in flight over all sessions, the rest wait in FIFO order; 0 = no bound"),
      k::custom(
          "maxConcurrentByProvider", "{provider: whole >= 1}", "a further bound per provider",
          [](const bj::value& v, const std::string& p, T& t, load_state&) -> status {
            if (!v.is_object())
              return config_key_error(p, "expected an object {provider: number}, got " + describe_json_value(v));
            t.max_concurrent_by_provider.clear();
            for (const auto& m : v.get_object()) {
              auto n = read_whole_number(m.value(), child_key_path(p, m.key()), 1);
              if (!n.ok()) return std::move(n).take_error();
              t.max_concurrent_by_provider[std::string(m.key())] = static_cast<std::size_t>(*n);
            }
            return {};
          },
          [](const T& m) -> std::optional<bj::value> {
            bj::object by_provider;
            for (const auto& [provider, n] : m.max_concurrent_by_provider) by_provider[provider] = config_table::size_json(n);
            return bj::value(std::move(by_provider));
          }),
      k::field("timeoutMs", &T::timeout_ms, millis{0}, "a call past it is cancelled; 0 = none"),
      k::field("syncRunnerThreads", &T::sync_runner_threads, whole{1, 1024}, "threads of a synchronous runner's pool"),
      k::field("api", &T::api, text{},
               "provider API (openai-responses, ...), picks the transcript hygiene policy with provider / model")
          .deprecated("set models.providers.<id>.api")
          .omit_if_empty(),
      k::field("imageMaxDimensionPx", &T::image_max_dimension_px, whole{16, 16384},
               "images sent to the model are downscaled to this side"),
  }};
  return t;
}

const table<actors::queue_settings>& queue_table() {
  using k = keys<actors::queue_settings>;
  using T = actors::queue_settings;
  static const table<T> t{"", "", {
      k::field("mode", &T::mode,
               one_of<actors::queue_mode>{{"followup", "collect", "interrupt", "steer"}, actors::parse_queue_mode,
                                          [](const actors::queue_mode& m) {
                                            return std::string(actors::queue_mode_name(m));
                                          }},
               "what happens to messages that arrive during a turn"),
      k::field("cap", &T::cap, whole{1}, "messages waiting at most"),
      k::field("drop", &T::drop,
               one_of<actors::queue_drop>{{"old", "new", "summarize"}, actors::parse_queue_drop,
                                          [](const actors::queue_drop& d) {
                                            return std::string(actors::queue_drop_name(d));
                                          }},
               "which messages go past the cap"),
      k::field("debounceMs", &T::debounce_ms, millis{0}, "quiet time before a follow-up starts"),
  }};
  return t;
}

const table<actors::queue_settings>& messages_table() {
  static const table<actors::queue_settings> t{"", "", {
      keys<actors::queue_settings>::nested("queue", self(), queue_table()),
  }};
  return t;
}

const table<actors::memory_flush_settings>& memory_flush_table() {
  using k = keys<actors::memory_flush_settings>;
  using T = actors::memory_flush_settings;
  static const table<T> t{"", "", {
      k::field("enabled", &T::enabled, boolean{}, "pre-compaction memory flush [R§7]"),
      k::field("softThresholdTokens", &T::soft_threshold_tokens, whole{0}, "flush this many tokens before compaction"),
      k::field("forceFlushTranscriptBytes", &T::force_flush_transcript_bytes, bytes{0},
               "flush at this transcript size; 0 disables the byte trigger"),
      k::field("prompt", &T::prompt, text{}, "\"\" = the default text of [R§7.1]"),
      k::field("systemPrompt", &T::system_prompt, text{}, "\"\" = the default text of [R§7.1]"),
      k::field("model", &T::model, text{}, "exact \"provider/model\"; \"\" = the session's"),
  }};
  return t;
}

const table<actors::compaction_settings>& mid_turn_precheck_table() {
  static const table<actors::compaction_settings> t{"", "", {
      keys<actors::compaction_settings>::field(
          "enabled", &actors::compaction_settings::mid_turn_precheck, boolean{},
          "runners may ask mid-turn whether the context still fits (model_request::precheck)"),
  }};
  return t;
}

const table<runtime_settings>& compaction_table() {
  using k = keys<runtime_settings>;
  using c = keys<actors::compaction_settings>;
  using C = actors::compaction_settings;
  static const table<runtime_settings> t{"", "", config_table::joined_rows<row_of<runtime_settings>>({
      k::lifted<C>(&runtime_settings::compaction, {
          c::field("enabled", &C::enabled, boolean{}, "automatic compaction [R§6.1]"),
          c::field("reserveTokens", &C::reserve_tokens, whole{0}, "tokens kept free for the next turn"),
          c::field("keepRecentTokens", &C::keep_recent_tokens, whole{1}, "tail kept at a cut"),
          c::field("reserveTokensFloor", &C::reserve_tokens_floor, whole{0},
                   "0 = no floor; also the memory flush's floor [R§7.1]"),
          c::field("truncateAfterCompaction", &C::truncate_after_compaction, boolean{},
                   "rotate to a successor transcript"),
          c::nested("midTurnPrecheck", self(), mid_turn_precheck_table()),
          c::field("maxActiveTranscriptBytes", &C::max_active_transcript_bytes, bytes{1},
                   "compact before a turn at this size (only with truncateAfterCompaction)"),
      }),
      {
          k::field("provider", &runtime_settings::compaction_provider, text{},
                   "id of a registered compaction provider (\"\" = built-in)")
              .omit_if_empty(),
          k::field("model", &runtime_settings::compaction_model, text{},
                   "\"provider/model\" (or an alias) that writes the built-in summaries; \"\" = the session's "
                   "(warned unless truncateAfterCompaction)")
              .omit_if_empty(),
          k::nested("memoryFlush", &runtime_settings::memory_flush, memory_flush_table()),
      },
  })};
  return t;
}

status read_pressure_fractions(const bj::value& value, const std::string& path, actors::pressure_config& target) {
  actors::pressure_config config;
  config.fractions.clear();
  SRT_RETURN_IF_ERROR(
      read_items(value, path, config.fractions, [](const bj::value& item, const std::string& item_path, auto& list) {
        auto number = json::as_number(item);
        if (!number)
          return config_key_error(item_path, "expected a number in (0, 1), got " + describe_json_value(item));
        list.push_back(*number);
        return status{};
      }));
  if (status valid = actors::validate_pressure_config(config); !valid.ok())
    return config_key_error(path, valid.message());
  target = std::move(config);
  return {};
}

const table<actors::pressure_config>& context_table() {
  static const table<actors::pressure_config> t{"", "", {
      keys<actors::pressure_config>::custom(
          "pressureFractions", "number[]", "ascending, each in (0, 1); [] = no context pressure events",
          [](const bj::value& v, const std::string& p, actors::pressure_config& t, load_state&) {
            return read_pressure_fractions(v, p, t);
          },
          [](const actors::pressure_config& c) -> std::optional<bj::value> {
            bj::array fractions;
            for (double fraction : c.fractions) fractions.emplace_back(fraction);
            return bj::value(std::move(fractions));
          }),
  }};
  return t;
}

// ---- top level -----------------------------------------------------------------------------------

const table<actors::gateway_settings>& gateway_auth_table() {
  static const table<actors::gateway_settings> t{"", "", {
      keys<actors::gateway_settings>::field("token", &actors::gateway_settings::auth_token, text{},
                                            "the gateway's token (\"\" = $SESSIONRT_GATEWAY_TOKEN, else "
                                            "<state>/gateway.token); `config show` prints \"(set)\"")
          .write_with([](const actors::gateway_settings& g) -> std::optional<bj::value> {
            return bj::value(g.auth_token.empty() ? "" : "(set)");
          }),
  }};
  return t;
}

const table<actors::gateway_settings>& gateway_control_ui_table() {
  using k = keys<actors::gateway_settings>;
  using T = actors::gateway_settings;
  static const table<T> t{"", "", {
      k::field("enabled", &T::control_ui_enabled, boolean{}, "false: no Control UI files served (the Origin check stays)"),
      k::field("root", &T::control_ui_root, text{},
               "the Control UI's directory; --control-ui wins; \"\" = an installed openclaw's dist/control-ui"),
      k::field("allowedOrigins", &T::control_ui_allowed_origins, strings{},
               "browser origins allowed besides the gateway's own (\"*\": any)"),
  }};
  return t;
}

const table<actors::gateway_settings>& gateway_cluster_table() {
  using k = keys<actors::gateway_settings>;
  using T = actors::gateway_settings;
  static const table<T> t{"", "", {
      k::field("holdMs", &T::cluster_hold_ms, whole{0},
               "a call for a shard nobody serves now (handoff, failover) waits this long for its owner, then "
               "UNAVAILABLE {retryable}; 0: not held"),
  }};
  return t;
}

const table<actors::gateway_settings>& gateway_table() {
  using k = keys<actors::gateway_settings>;
  using T = actors::gateway_settings;
  static const table<T> t{"", "", {
      k::nested("auth", self(), gateway_auth_table()),
      k::field("port", &T::port, whole{0, 65535}, "`sessionrt gateway` port (--port wins)"),
      k::field("bind", &T::bind, text{true}, "listen address (--bind wins)"),
      k::field("maxConnections", &T::max_connections, whole{1}, "WebSocket connections at once (past it: close 1008)"),
      k::field("maxBufferedBytes", &T::max_buffered_bytes, bytes{1024},
               "unsent output per connection before it is dropped"),
      k::field("maxPayload", &T::max_payload, bytes{1024}, "largest message after connect (64 KiB before)"),
      k::field("maxUnauthenticated", &T::max_unauthenticated, whole{1},
               "sockets not past `connect` (HTTP, upgrade, handshake); past it a new socket is closed at once"),
      k::field("fdReserve", &T::fd_reserve, whole{0},
               "descriptors kept free under RLIMIT_NOFILE (raised to the hard limit at start); within it: closed at "
               "once"),
      k::field("requestTimeoutMs", &T::request_timeout_ms, whole{100}, "the HTTP request (head and body) from accept"),
      k::field("messageTimeoutMs", &T::message_timeout_ms, whole{100},
               "a WebSocket message begun and not finished: close 1008"),
      k::field("maxRequestsInFlight", &T::max_requests_in_flight, whole{1},
               "calls of one connection on the method threads; past it: UNAVAILABLE {retryable, retryAfterMs}"),
      k::field("maxQueuedRequests", &T::max_queued_requests, whole{0},
               "calls waiting for a method thread in all; past it: UNAVAILABLE {retryable, retryAfterMs}"),
      k::nested("controlUi", self(), gateway_control_ui_table(), "the web Control UI (docs/GATEWAY.md)"),
      k::nested("cluster", self(), gateway_cluster_table(), "a cluster node's gateway (docs/cluster.md)"),
  }};
  return t;
}

// logging.level / logging.format: the names runtime/logging.hpp accepts, kept canonical.
const table<actors::logging_settings>& logging_table() {
  using k = keys<actors::logging_settings>;
  using T = actors::logging_settings;
  auto same = [](const std::string& s) { return s; };
  static const table<T> t{"", "", {
      k::field("level", &T::level,
               one_of<std::string>{{"trace", "debug", "info", "warn", "error", "off"}, parse_log_level, same},
               "`sessionrt gateway`'s (--log-level wins; also warning, silent = off, fatal)"),
      k::field("file", &T::file, text{}, "also log to this file, rotated by size (\"\" = stderr only; --log-file wins)"),
      k::field("format", &T::format, one_of<std::string>{{"text", "json"}, parse_log_format, same},
               "json: one JSON object per line"),
      k::field("maxFileBytes", &T::max_file_bytes, bytes{1024}, "the log file is rotated past this"),
      k::field("maxFiles", &T::max_files, whole{1, 1000}, "rotated log files kept"),
  }};
  return t;
}

const table<runtime_settings>& top_level_table() {
  using k = keys<runtime_settings>;
  using T = runtime_settings;
  static const table<T> t{"", "", {
      k::field("stateDir", &T::state_dir, text{}, "state dir; \"\" = $SESSIONRT_STATE_DIR, else the caller's ~/.sessionrt"),
      k::field("workspaceDir", &T::workspace_dir, text{}, "cwd written into transcript headers"),
      k::field("workspaceWritable", &T::workspace_writable, boolean{}, "false skips memory flushes [R§7.2]"),
      k::nested("agents", self(), agents_table()),
      k::custom(
           "bindings", "array", "routing bindings [R§1.2], file order per tier",
           [](const bj::value& v, const std::string& p, T& t, load_state& st) {
             return read_bindings(v, p, t.routing.bindings, st);
           },
           [](const T& s) -> std::optional<bj::value> {
             bj::array bindings;
             for (const auto& binding : s.routing.bindings)
               bindings.emplace_back(config_table::write_object(binding_table(), binding));
             return bj::value(std::move(bindings));
           })
          .documents(binding_table()),
      k::nested("session", self(), session_table()),
      k::nested("storage", &T::storage, storage_table()),
      k::nested("model", &T::model, model_table()),
      k::nested("models", self(), models_table()),
      k::nested("messages", &T::queue, messages_table()),
      // Read after the walk, over agents.defaults.compaction (read_compaction_blocks).
      k::nested("compaction", self(), compaction_table())
          .read_with([](const bj::value& v, const std::string&, T&, load_state& st) {
            st.compaction_block = &v;
            return status{};
          }),
      k::nested("context", &T::pressure, context_table()),
      k::nested("cron", &T::cron, cron_table()),
      k::nested("gateway", &T::gateway, gateway_table(), "read by `sessionrt gateway` (docs/GATEWAY.md)"),
      k::nested("logging", &T::logging, logging_table(), "read by the long-running commands (docs/operations.md)"),
  }};
  return t;
}

// `agents.defaults.compaction` first, then `compaction` over it, whatever their order in the file.
status read_compaction_blocks(runtime_settings& settings, load_state& state) {
  if (state.compaction_alias) {
    SRT_RETURN_IF_ERROR(config_table::read_keys(*state.compaction_alias, "agents.defaults.compaction",
                                                compaction_table(), settings, state));
    if (state.compaction_block)
      state.warnings.push_back(
          "config keys compaction and agents.defaults.compaction are both set; where both set a key, compaction wins");
  }
  if (state.compaction_block)
    SRT_RETURN_IF_ERROR(config_table::read_keys(*state.compaction_block, "compaction", compaction_table(), settings, state));
  if (settings.compaction.max_active_transcript_bytes && !settings.compaction.truncate_after_compaction)
    state.warnings.push_back(
        "config key compaction.maxActiveTranscriptBytes has no effect unless compaction.truncateAfterCompaction is "
        "true");
  return {};
}

status apply_environment(runtime_settings& settings, const env_lookup& env) {
  if (!env) return {};
  if (settings.state_dir.empty()) {
    auto dir = storage::state_dir_from_env(env);  // "~" expanded, as runtime::start does
    if (!dir.ok()) return dir.error();
    if (*dir) settings.state_dir = **dir;
  }
  return storage::apply_write_lock_env(settings.session.write_lock, env);
}

constexpr std::string_view docs_preface =
    "# Config keys\n"
    "\n"
    "<!-- Generated by `sessionrt config keys` from the key tables of runtime/config.cpp; "
    "tests/runtime/config_docs_test.cpp fails when this file differs from its output. -->\n"
    "\n"
    "The config file is one JSON5 object in OpenClaw's shape (`--config FILE`, else `$SESSIONRT_CONFIG`, else "
    "`$OPENCLAW_CONFIG_PATH`). Every key is optional; an absent key or a JSON `null` keeps its default. A wrong "
    "type or value fails the whole load with an error naming the key (`config key session.reset.atHour: expected "
    "a whole number from 0 to 23, got \"four\"`). An unknown key is a warning with the closest key of the same "
    "object (`unknown config key session.resetTrigger (did you mean session.resetTriggers?)`); more than three "
    "with no near miss (an OpenClaw config's channels, plugins, ...) are one line. The environment applies after "
    "the file: `$SESSIONRT_STATE_DIR` (else `$OPENCLAW_STATE_DIR`) gives stateDir when the file has none, and "
    "`$SESSIONRT_SESSION_WRITE_LOCK_*` override session.writeLock. `sessionrt config show` prints the effective "
    "settings in this layout, `sessionrt config check` the errors and warnings; runtime/config.hpp has the "
    "loader's contract.\n"
    "\n"
    "In a key, `[]` stands for each item of an array and `<id>` for any name. A default in words is derived from "
    "other keys; \"unset\" means the key has no value until the file gives one.\n";

}  // namespace

env_lookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

result<config_load> load_config_text(std::string_view json_text, const env_lookup& env) {
  return load_config_text(json_text, env, storage::posix_fs(), std::string());
}

result<config_load> load_config_text(std::string_view json_text, const env_lookup& env, storage::fs& files,
                                     const std::string& base_dir) {
  // JSON5, as OpenClaw reads its config (every JSON text reads the same).
  json5::parse_options jo;
  jo.max_depth = 64;
  auto parsed = json5::parse(json_text, jo);
  if (!parsed.ok()) return status(errc::corrupt, "config: invalid JSON5 at " + parsed.error().message());
  if (!parsed->is_object())
    return status(errc::invalid_argument,
                  "config: the top level must be a JSON object ({...}), got " + describe_json_value(*parsed));
  config_load loaded;
  load_state state{{loaded.warnings}, env, files, base_dir};
  SRT_RETURN_IF_ERROR(config_table::read_keys(*parsed, std::string(), top_level_table(), loaded.settings, state));
  SRT_RETURN_IF_ERROR(read_compaction_blocks(loaded.settings, state));
  SRT_RETURN_IF_ERROR(finish_models(loaded.settings, state));
  warn_unlisted_bound_agents(loaded.settings.routing, loaded.warnings);
  warn_maintenance(loaded.settings.maintenance, loaded.warnings);
  state.fold_unused();
  SRT_RETURN_IF_ERROR(apply_environment(loaded.settings, env));
  return loaded;
}

result<config_load> load_config_file(storage::fs& files, const std::string& path, const env_lookup& env) {
  auto text = storage::read_file(files, path, max_config_file_bytes);
  if (!text.ok()) return text.error().with_context("reading the config file");  // the message names the path
  auto loaded = load_config_text(*text, env, files, storage::path_dirname(path));
  if (!loaded.ok()) return loaded.error().with_context(path);
  return loaded;
}

result<config_load> load_command_config(storage::fs& files, const std::string& config_flag, const env_lookup& env,
                                        bool openclaw) {
  auto var = [&](std::string_view name) -> std::string {
    if (!env) return {};
    auto v = env(name);
    return v ? *v : std::string();
  };
  std::string path = config_flag;
  std::string openclaw_state;
  if (openclaw) {
    openclaw_state = var("OPENCLAW_STATE_DIR");
    if (openclaw_state.empty()) {
      const std::string home = var("HOME");
      if (home.empty() || home.front() != '/')
        return status(errc::invalid_argument, "--openclaw: $OPENCLAW_STATE_DIR is not set and $HOME is not an absolute path");
      openclaw_state = storage::path_join(home, ".openclaw");
    }
    if (path.empty()) path = var("OPENCLAW_CONFIG_PATH");
    if (path.empty()) {
      const std::string candidate = storage::path_join(openclaw_state, "openclaw.json");
      if (files.lstat(candidate).ok()) path = candidate;
    }
  }
  if (path.empty()) path = var("SESSIONRT_CONFIG");
  if (path.empty()) path = var("OPENCLAW_CONFIG_PATH");
  result<config_load> loaded = path.empty() ? load_config_text("{}", env) : load_config_file(files, path, env);
  if (!loaded.ok()) return loaded;
  loaded->path = path;
  if (openclaw) {  // OpenClaw's state dir, whatever sessionrt's own variables say
    auto dir = storage::resolve_state_dir(openclaw_state, var("HOME"));
    if (!dir.ok()) return dir.error().with_context("--openclaw");
    loaded->settings.state_dir = *dir;
  }
  return loaded;
}

bj::object settings_to_json(const runtime_settings& s) {
  return config_table::write_object(top_level_table(), s);
}

std::string config_keys_markdown() {
  return config_table::render_markdown(config_table::describe(top_level_table()), docs_preface);
}

}  // namespace sessionrt::runtime
