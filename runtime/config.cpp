#include "runtime/config.hpp"

#include "messages/json5_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <span>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/config_values.hpp"
#include "runtime/logging.hpp"
#include "storage/session_paths.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::runtime {
namespace {

namespace bj = boost::json;
using actors::runtime_settings;

// ---- the key walker ----------------------------------------------------------------------------

// A model ref of agents.*.model, checked once the whole file is read (the providers may come later).
struct pending_ref {
  std::string path;
  std::string ref;
};

// agents.defaults.models.<ref>.alias, given to its model once models.providers is read.
struct pending_alias {
  std::string path;  // agents.defaults.models["<ref>"].alias
  std::string ref;
  std::string alias;
};

struct load_state {
  std::vector<std::string>& warnings;
  const env_lookup& env;        // ${VAR} in secrets, ~ in prompt file paths
  storage::fs& files;           // {file: ...} values
  const std::string& base_dir;  // ... relative to this ("" = the working directory)
  const bj::value* compaction_block = nullptr;  // `compaction`, read after the walk
  const bj::value* compaction_alias = nullptr;  // `agents.defaults.compaction`, read before it
  bool defaults_model_set = false;              // agents.defaults.model is in the file
  bool replace_mode = false;                    // models.mode "replace": no built-in providers
  std::vector<pending_ref> model_refs;
  std::vector<pending_alias> aliases;
  // Unknown keys with no close known key (an OpenClaw config has many sessionrt does not
  // use): their paths, and where their warning lines are, to fold them into one line.
  std::vector<std::string> unused_keys;
  std::vector<std::size_t> unused_lines;
};

// At most this many unknown keys get a line each; more become one summary line.
constexpr std::size_t kUnusedKeysListed = 3;

// One known key of an object: its name and how its value is read into the target.
template <class Target>
struct config_key {
  std::string_view name;
  status (*read)(const bj::value& value, const std::string& path, Target& target, load_state& state);
};

template <class Field, class Value>
status assign(Field& field, result<Value> read) {
  if (!read.ok()) return std::move(read).take_error();
  field = std::move(*read);
  return {};
}

template <class Target, std::size_t N>
void warn_unknown_key(load_state& state, const std::string& parent, std::string_view key,
                      const config_key<Target> (&keys)[N]) {
  std::vector<std::string_view> names;
  for (const auto& known : keys) names.push_back(known.name);
  std::string warning = "unknown config key " + child_key_path(parent, key);
  if (auto suggestion = closest_key(key, names)) {
    warning += " (did you mean " + child_key_path(parent, *suggestion) + "?)";  // a typo: always its own line
  } else {
    state.unused_keys.push_back(child_key_path(parent, key));
    state.unused_lines.push_back(state.warnings.size());
  }
  state.warnings.push_back(std::move(warning));
}

// Many unknown keys without a near miss (an OpenClaw config: channels, plugins, tools, ...)
// become one line: their count and the first few, in file order.
void fold_unused_keys(load_state& state) {
  if (state.unused_keys.size() <= kUnusedKeysListed) return;
  for (auto it = state.unused_lines.rbegin(); it != state.unused_lines.rend(); ++it)
    state.warnings.erase(state.warnings.begin() + static_cast<std::ptrdiff_t>(*it));
  std::string first;
  for (std::size_t i = 0; i < 5 && i < state.unused_keys.size(); ++i)
    first += (i ? ", " : "") + state.unused_keys[i];
  state.warnings.push_back(fmt::format("{} config keys sessionrt does not use are ignored: {}{}",
                                       state.unused_keys.size(), first,
                                       state.unused_keys.size() > 5 ? ", ..." : ""));
}

// Reads every member of the object at `path` with its key's reader, in file order. Unknown
// keys are warned about; null values keep the default.
template <class Target, std::size_t N>
status read_keys(const bj::value& value, const std::string& path, const config_key<Target> (&keys)[N], Target& target,
                 load_state& state) {
  if (!value.is_object()) return config_key_error(path, "expected an object, got " + describe_json_value(value));
  for (const auto& member : value.get_object()) {
    const auto* known = std::find_if(std::begin(keys), std::end(keys),
                                     [&](const config_key<Target>& k) { return k.name == member.key(); });
    if (known == std::end(keys)) {
      warn_unknown_key(state, path, member.key(), keys);
      continue;
    }
    if (member.value().is_null()) continue;
    SRT_RETURN_IF_ERROR(known->read(member.value(), child_key_path(path, member.key()), target, state));
  }
  return {};
}

// Reads an array item by item; `read_item` appends to `target`.
template <class Target, class ReadItem>
status read_items(const bj::value& value, const std::string& path, Target& target, ReadItem read_item) {
  if (!value.is_array()) return config_key_error(path, "expected an array, got " + describe_json_value(value));
  const auto& items = value.get_array();
  for (std::size_t i = 0; i < items.size(); ++i)
    SRT_RETURN_IF_ERROR(read_item(items[i], item_key_path(path, i), target));
  return {};
}

status missing_key(const std::string& parent, std::string_view key, std::string_view what) {
  return config_key_error(child_key_path(parent, key), fmt::format("is required ({})", what));
}

std::string ascii_trimmed(std::string_view text) {
  constexpr std::string_view blanks = " \t\n\r\f\v";
  auto first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(blanks) - first + 1));
}

std::string ascii_lower_trimmed(std::string_view text) {
  constexpr std::string_view blanks = " \t\n\r\f\v";
  auto first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  std::string out(text.substr(first, text.find_last_not_of(blanks) - first + 1));
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// ---- session.reset-shaped blocks [R§4.1] ---------------------------------------------------------

constexpr config_key<actors::reset_config> reset_block_keys[] = {
    {"mode",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.mode,
                     read_enum<actors::reset_mode>(v, p, actors::parse_reset_mode, "\"daily\", \"idle\", \"none\""));
     }},
    {"atHour",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.at_hour, read_whole_number(v, p, 0, 23)); }},
    {"idleMinutes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.idle_minutes, read_whole_number(v, p, 0)); }},
};

status read_reset_block(const bj::value& value, const std::string& path, std::optional<actors::reset_config>& target,
                        load_state& state) {
  actors::reset_config block;
  SRT_RETURN_IF_ERROR(read_keys(value, path, reset_block_keys, block, state));
  target = block;
  return {};
}

constexpr config_key<actors::reset_by_type_config> reset_by_type_keys[] = {
    {"direct", [](const auto& v, const auto& p, auto& t, auto& st) { return read_reset_block(v, p, t.direct, st); }},
    {"dm", [](const auto& v, const auto& p, auto& t, auto& st) { return read_reset_block(v, p, t.dm, st); }},
    {"group", [](const auto& v, const auto& p, auto& t, auto& st) { return read_reset_block(v, p, t.group, st); }},
    {"thread", [](const auto& v, const auto& p, auto& t, auto& st) { return read_reset_block(v, p, t.thread, st); }},
};

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
    std::optional<actors::reset_config> block;
    SRT_RETURN_IF_ERROR(read_reset_block(member.value(), member_path, block, state));
    target.reset_by_channel[channel] = *block;
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

constexpr config_key<storage::write_lock_options> write_lock_keys[] = {
    {"acquireTimeoutMs",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.acquire_timeout_ms, read_duration_ms(v, p, 1, storage::write_lock_options::infinite));
     }},
    {"staleMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.stale_ms, read_duration_ms(v, p, 1)); }},
    {"maxHoldMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_hold_ms, read_duration_ms(v, p, 1)); }},
};

constexpr std::string_view dm_scope_names =
    "\"main\", \"per-peer\", \"per-channel-peer\", \"per-account-channel-peer\"";

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

constexpr config_key<actors::maintenance_settings> cold_storage_keys[] = {
    {"enabled", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.cold_storage_enabled, read_bool(v, p)); }},
    {"afterDays",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.cold_storage_after_days, read_whole_number(v, p, 1)); }},
};

constexpr config_key<actors::maintenance_settings> maintenance_keys[] = {
    {"mode",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.mode, read_enum<actors::maintenance_mode>(v, p, actors::parse_maintenance_mode,
                                                                 "\"warn\", \"enforce\""));
     }},
    {"pruneAfter",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.prune_after_ms, read_days_duration(v, p)); }},
    {"maxEntries",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_entries, read_whole_number(v, p, 1)); }},
    {"resetArchiveRetention",
     [](const auto& v, const auto& p, auto& t, auto&) {
       if (v.is_bool() && !v.get_bool()) {
         t.reset_archive_retention_disabled = true;
         t.reset_archive_retention_ms.reset();
         return status{};
       }
       t.reset_archive_retention_disabled = false;
       return assign(t.reset_archive_retention_ms, read_days_duration(v, p));
     }},
    {"maxDiskBytes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_disk_bytes, read_byte_size(v, p, 1)); }},
    {"highWaterBytes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.high_water_bytes, read_byte_size(v, p, 1)); }},
    // OpenClaw 2026.9: false or 0 turns dashboard archiving off.
    {"archiveDashboardAfter",
     [](const auto& v, const auto& p, auto& t, auto&) {
       if ((v.is_bool() && !v.get_bool()) || json::as_int(v) == std::optional<std::int64_t>(0) ||
           (v.is_string() && ascii_lower_trimmed(v.get_string()) == "0")) {
         t.archive_dashboard_after_ms.reset();
         return status{};
       }
       return assign(t.archive_dashboard_after_ms, read_days_duration(v, p));
     }},
    {"preserveRecent",
     [](const auto& v, const auto& p, auto& t, auto&) {
       if (v.is_bool() && !v.get_bool()) {
         t.preserve_recent_ms.reset();
         return status{};
       }
       return assign(t.preserve_recent_ms, read_days_duration(v, p));
     }},
    {"coldStorage", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, cold_storage_keys, t, st); }},
};

constexpr config_key<actors::cron_settings> cron_run_log_keys[] = {
    {"maxBytes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.run_log_max_bytes, read_byte_size(v, p, 1)); }},
    {"keepLines",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.run_log_keep_lines, read_whole_number(v, p, 1));
     }},
};

constexpr config_key<actors::gateway_settings> gateway_auth_keys[] = {
    {"token", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.auth_token, read_string(v, p)); }},
};

constexpr config_key<actors::gateway_settings> gateway_control_ui_keys[] = {
    {"enabled", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.control_ui_enabled, read_bool(v, p)); }},
    {"root", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.control_ui_root, read_string(v, p)); }},
    {"allowedOrigins",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.control_ui_allowed_origins, read_string_list(v, p)); }},
};

constexpr config_key<actors::gateway_settings> gateway_keys[] = {
    {"auth", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, gateway_auth_keys, t, st); }},
    {"controlUi",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, gateway_control_ui_keys, t, st); }},
    {"port", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.port, read_whole_number(v, p, 0, 65535)); }},
    {"bind", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.bind, read_non_empty_string(v, p)); }},
    {"maxConnections",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_connections, read_whole_number(v, p, 1)); }},
    {"maxBufferedBytes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_buffered_bytes, read_byte_size(v, p, 1024)); }},
    {"maxPayload",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_payload, read_byte_size(v, p, 1024)); }},
    {"maxUnauthenticated",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_unauthenticated, read_whole_number(v, p, 1)); }},
    {"fdReserve", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.fd_reserve, read_whole_number(v, p, 0)); }},
    {"requestTimeoutMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.request_timeout_ms, read_whole_number(v, p, 100)); }},
    {"messageTimeoutMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.message_timeout_ms, read_whole_number(v, p, 100)); }},
    {"maxRequestsInFlight",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_requests_in_flight, read_whole_number(v, p, 1)); }},
    {"maxQueuedRequests",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_queued_requests, read_whole_number(v, p, 0)); }},
};

// logging.level / logging.format: the names runtime/logging.hpp accepts, kept canonical.
constexpr config_key<actors::logging_settings> logging_keys[] = {
    {"level",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.level, read_enum<std::string>(v, p, parse_log_level,
                                                     "\"trace\", \"debug\", \"info\", \"warn\", \"error\", \"off\""));
     }},
    {"file", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.file, read_string(v, p)); }},
    {"format",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.format, read_enum<std::string>(v, p, parse_log_format, "\"text\", \"json\""));
     }},
    {"maxFileBytes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_file_bytes, read_byte_size(v, p, 1024)); }},
    {"maxFiles",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_files, read_whole_number(v, p, 1, 1000)); }},
};

constexpr config_key<actors::cron_settings> cron_keys[] = {
    {"sessionRetention", [](const auto& v, const auto& p, auto& t, auto&) { return read_cron_retention(v, p, t); }},
    {"runLog", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, cron_run_log_keys, t, st); }},
};

// A duration as the largest whole unit: "30d", "24h", "90m", "45s", "1500ms".
std::string duration_text(std::int64_t ms) {
  constexpr std::pair<std::int64_t, const char*> units[] = {
      {actors::day_ms, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}};
  for (const auto& [size, unit] : units)
    if (ms > 0 && ms % size == 0) return fmt::format("{}{}", ms / size, unit);
  return fmt::format("{}ms", ms);
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

constexpr config_key<runtime_settings> session_keys[] = {
    {"dmScope",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.routing.session.direct_message_scope,
                     read_enum<actors::dm_scope>(v, p, actors::parse_dm_scope, dm_scope_names));
     }},
    {"mainKey",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.routing.session.main_key, read_string(v, p));
     }},
    {"scope",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.routing.session.scope,
                     read_enum<actors::session_scope>(v, p, actors::parse_session_scope, "\"per-sender\", \"global\""));
     }},
    {"identityLinks",
     [](const auto& v, const auto& p, auto& t, auto&) { return read_identity_links(v, p, t.routing.session.links); }},
    {"reset",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_reset_block(v, p, t.session.reset.reset, st); }},
    {"resetByType",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       actors::reset_by_type_config by_type;
       SRT_RETURN_IF_ERROR(read_keys(v, p, reset_by_type_keys, by_type, st));
       t.session.reset.reset_by_type = by_type;
       return status{};
     }},
    {"resetByChannel",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_reset_by_channel(v, p, t.session.reset, st); }},
    {"idleMinutes",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.session.reset.idle_minutes, read_whole_number(v, p, 0));
     }},
    {"resetTriggers",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.session.reset.reset_triggers, read_string_list(v, p));
     }},
    {"timezone",
     [](const auto& v, const auto& p, auto& t, auto&) { return read_timezone(v, p, t.session.reset.timezone); }},
    {"writeLock",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       return read_keys(v, p, write_lock_keys, t.session.write_lock, st);
     }},
    {"passivateIdleMs",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.session.passivate_idle_ms, read_duration_ms(v, p, 1));
     }},
    {"trimIdleMs",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.session.trim_idle_ms, read_duration_ms(v, p, 0));
     }},
    {"maxLiveSessions",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.session.max_live_sessions, read_whole_number(v, p, 1));
     }},
    {"maxMessageBytes",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.session.max_message_bytes, read_byte_size(v, p, 1));
     }},    {"maintenance",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, maintenance_keys, t.maintenance, st); }},
};

// ---- models.providers, agents.*.model, agents.*.systemPrompt ------------------------------------
// OpenClaw's custom-providers shape (../shared/reference/provider-apis.md "OpenClaw's model config").

// The APIs this build has runners for, and the other names OpenClaw accepts (loaded, warned about).
constexpr std::string_view runnable_apis[] = {"openai-completions", "openai-responses", "anthropic-messages",
                                              "google-generative-ai"};
constexpr std::string_view other_openclaw_apis[] = {"azure-openai-responses", "google-vertex",
                                                    "bedrock-converse-stream", "mistral-conversations",
                                                    "ollama", "github-copilot"};
// Providers a ref may name without a models.providers entry: the runners know their public
// endpoints (OpenClaw's models.mode "merge" keeps its built-in catalog; "replace" drops it).
constexpr std::string_view builtin_provider_ids[] = {"anthropic", "google", "openai"};

bool listed_in(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(std::span<const std::string> texts, std::string_view separator) {
  std::string out;
  for (const auto& text : texts) {
    if (!out.empty()) out += separator;
    out += text;
  }
  return out;
}

// What a value is, never what it says: for keys that may hold secrets.
std::string describe_kind(const bj::value& value) {
  switch (value.kind()) {
    case bj::kind::string:
      return "a string";
    case bj::kind::bool_:
      return "a boolean";
    case bj::kind::null:
      return "null";
    case bj::kind::object:
      return "an object";
    case bj::kind::array:
      return "an array";
    default:
      return "a number";
  }
}

bool is_env_name(std::string_view name) {
  auto start = [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && start(name[0]) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

// "${NAME}" and nothing else.
bool is_env_reference(std::string_view text) {
  return text.size() > 3 && text.substr(0, 2) == "${" && text.back() == '}' &&
         is_env_name(text.substr(2, text.size() - 3));
}

struct resolved_secret {
  std::string value;
  std::string source;  // "${NAME}" when the whole text is one reference, else "literal"
};

// A string where each ${NAME} (NAME = [A-Z_][A-Z0-9_]*) is replaced by that environment
// variable and $${ is a literal ${, as OpenClaw substitutes config strings. An unset or empty
// variable is an error naming it; neither errors nor warnings ever show the value.
result<resolved_secret> read_secret(const bj::value& value, const std::string& path, const load_state& state) {
  if (!value.is_string())
    return config_key_error(path, "expected a string (a literal, or \"${VAR}\" for an environment variable), got " +
                                      describe_kind(value));
  std::string_view text = value.get_string();
  resolved_secret out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "$${") == 0) {
      out.value += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") == 0) {
      std::size_t end = text.find('}', i + 2);
      std::string_view name = end == std::string_view::npos ? std::string_view() : text.substr(i + 2, end - i - 2);
      if (is_env_name(name)) {
        std::optional<std::string> found = state.env ? state.env(name) : std::nullopt;
        if (!found) return config_key_error(path, fmt::format("environment variable {} is not set", name));
        if (found->empty()) return config_key_error(path, fmt::format("environment variable {} is empty", name));
        out.value += *found;
        i = end + 1;
        continue;
      }
    }
    out.value += text[i++];
  }
  out.source = is_env_reference(text) ? std::string(text) : "literal";
  return out;
}

// Header names whose values are credentials: never printed.
bool is_secret_header(std::string_view name) {
  std::string lower = ascii_lower_trimmed(name);
  for (std::string_view word : {"auth", "token", "key", "secret", "cookie", "password", "credential"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

status read_api(const bj::value& value, const std::string& path, std::string& target, load_state& state) {
  auto name = read_string(value, path);
  if (!name.ok()) return std::move(name).take_error();
  if (!listed_in(runnable_apis, *name)) {
    if (!listed_in(other_openclaw_apis, *name))
      return config_key_error(path,
                              "expected one of \"openai-completions\", \"openai-responses\", \"anthropic-messages\", "
                              "\"google-generative-ai\", got " +
                                  describe_json_value(value));
    state.warnings.push_back(
        fmt::format("config key {}: this build has no runner for api \"{}\" (it runs openai-completions, "
                    "openai-responses, anthropic-messages and google-generative-ai); calls to it will fail",
                    path, *name));
  }
  target = std::move(*name);
  return {};
}

constexpr config_key<actors::model_cost> model_cost_keys[] = {
    {"input", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.input, read_number(v, p, 0)); }},
    {"output", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.output, read_number(v, p, 0)); }},
    {"cacheRead",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.cache_read, read_number(v, p, 0)); }},
    {"cacheWrite",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.cache_write, read_number(v, p, 0)); }},
};

// OpenClaw documents many more compat keys: the others are unknown-key warnings, not errors.
constexpr config_key<actors::model_compat> model_compat_keys[] = {
    {"supportsUsageInStreaming",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.supports_usage_in_streaming, read_bool(v, p));
     }},
    {"maxTokensField",
     [](const auto& v, const auto& p, auto& t, auto&) -> status {
       if (!v.is_string() || (v.get_string() != "max_tokens" && v.get_string() != "max_completion_tokens"))
         return config_key_error(
             p, "expected one of \"max_tokens\", \"max_completion_tokens\", got " + describe_json_value(v));
       t.max_tokens_field = std::string(v.get_string());
       return {};
     }},
    {"supportsDeveloperRole",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.supports_developer_role, read_bool(v, p)); }},
};

status read_model_input(const bj::value& value, const std::string& path, std::vector<std::string>& target) {
  auto kinds = read_string_list(value, path);
  if (!kinds.ok()) return std::move(kinds).take_error();
  for (std::size_t i = 0; i < kinds->size(); ++i)
    if ((*kinds)[i] != "text" && (*kinds)[i] != "image")
      return config_key_error(item_key_path(path, i), "expected \"text\" or \"image\", got " +
                                                          describe_json_value(value.get_array()[i]));
  target = std::move(*kinds);
  return {};
}

constexpr config_key<actors::provider_model> provider_model_keys[] = {
    {"id", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.id, read_non_empty_string(v, p)); }},
    {"name", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.name, read_string(v, p)); }},
    {"api", [](const auto& v, const auto& p, auto& t, auto& st) { return read_api(v, p, t.api, st); }},
    {"contextWindow",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.context_window, read_whole_number(v, p, 1)); }},
    {"contextTokens",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.context_tokens, read_whole_number(v, p, 1)); }},
    {"maxTokens",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_tokens, read_whole_number(v, p, 0)); }},
    {"reasoning", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.reasoning, read_bool(v, p)); }},
    {"input", [](const auto& v, const auto& p, auto& t, auto&) { return read_model_input(v, p, t.input); }},
    {"cost", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, model_cost_keys, t.cost, st); }},
    {"compat",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, model_compat_keys, t.compat, st); }},
};

// models[]: each id once per provider (compared case-insensitively, as refs are).
status read_provider_models(const bj::value& value, const std::string& path, std::vector<actors::provider_model>& models,
                            load_state& state) {
  models.clear();
  std::map<std::string, std::string> path_of_id;
  return read_items(value, path, models, [&](const bj::value& item, const std::string& item_path, auto& list) {
    actors::provider_model model;
    SRT_RETURN_IF_ERROR(read_keys(item, item_path, provider_model_keys, model, state));
    if (model.id.empty()) return missing_key(item_path, "id", "the id the API knows, e.g. \"gpt-4o\"");
    std::string id_path = child_key_path(item_path, "id");
    if (auto seen = path_of_id.find(ascii_lower_trimmed(model.id)); seen != path_of_id.end())
      return config_key_error(id_path, fmt::format("model \"{}\" is already listed at {}", model.id, seen->second));
    path_of_id.emplace(ascii_lower_trimmed(model.id), id_path);
    list.push_back(std::move(model));
    return status{};
  });
}

status read_headers(const bj::value& value, const std::string& path,
                    std::vector<std::pair<std::string, std::string>>& headers, load_state& state) {
  if (!value.is_object())
    return config_key_error(path, "expected an object of header name -> value, got " + describe_kind(value));
  headers.clear();
  std::map<std::string, std::string> path_of_name;
  for (const auto& member : value.get_object()) {
    std::string member_path = child_key_path(path, member.key());
    std::string name = ascii_lower_trimmed(member.key());
    if (name.empty()) return config_key_error(member_path, "a header name must not be empty");
    if (auto seen = path_of_name.find(name); seen != path_of_name.end())
      return config_key_error(member_path, "names the same header as " + seen->second +
                                               " (header names are compared ignoring case)");
    path_of_name.emplace(name, member_path);
    if (member.value().is_null()) continue;
    auto secret = read_secret(member.value(), member_path, state);
    if (!secret.ok()) return std::move(secret).take_error();
    headers.emplace_back(std::string(member.key()), std::move(secret->value));
  }
  return {};
}

constexpr config_key<actors::provider_config> provider_keys[] = {
    {"baseUrl", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.base_url, read_string(v, p)); }},
    {"apiKey",
     [](const auto& v, const auto& p, auto& t, auto& st) -> status {
       auto secret = read_secret(v, p, st);
       if (!secret.ok()) return std::move(secret).take_error();
       t.api_key = std::move(secret->value);
       t.api_key_source = std::move(secret->source);
       return {};
     }},
    {"api", [](const auto& v, const auto& p, auto& t, auto& st) { return read_api(v, p, t.api, st); }},
    {"headers", [](const auto& v, const auto& p, auto& t, auto& st) { return read_headers(v, p, t.headers, st); }},
    {"timeoutSeconds",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.timeout_seconds, read_whole_number(v, p, 0)); }},
    {"models", [](const auto& v, const auto& p, auto& t, auto& st) { return read_provider_models(v, p, t.models, st); }},
};

// models.providers: any provider id (one word without "/", since refs are "provider/model"),
// each once ignoring case; kept in file order.
status read_providers(const bj::value& value, const std::string& path, std::vector<actors::provider_config>& providers,
                      load_state& state) {
  if (!value.is_object())
    return config_key_error(path, "expected an object of provider id -> provider, got " + describe_json_value(value));
  providers.clear();
  std::map<std::string, std::string> path_of_id;
  for (const auto& member : value.get_object()) {
    std::string member_path = child_key_path(path, member.key());
    std::string_view key = member.key();
    std::string id = ascii_lower_trimmed(key);
    if (key.empty() || key.find_first_of("/ \t\n\r\f\v") != std::string_view::npos)
      return config_key_error(member_path,
                              "a provider id must be one word without \"/\" (model refs are \"provider/model\")");
    if (auto seen = path_of_id.find(id); seen != path_of_id.end())
      return config_key_error(member_path, "names the same provider as " + seen->second +
                                               " (provider ids are compared ignoring case)");
    path_of_id.emplace(id, member_path);
    if (member.value().is_null()) continue;
    actors::provider_config provider;
    provider.id = std::string(member.key());
    SRT_RETURN_IF_ERROR(read_keys(member.value(), member_path, provider_keys, provider, state));
    if (provider.api.empty() && !provider.base_url.empty()) provider.api = "openai-completions";
    if (provider.base_url.empty() && !listed_in(builtin_provider_ids, id))
      state.warnings.push_back(fmt::format(
          "config key {}: no baseUrl, and \"{}\" is not a provider whose endpoint this build knows (anthropic, "
          "google, openai); calls to it will fail",
          member_path, provider.id));
    providers.push_back(std::move(provider));
  }
  return {};
}

constexpr config_key<actors::model_choice> model_choice_keys[] = {
    {"primary",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.primary, read_non_empty_string(v, p)); }},
    {"fallbacks",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.fallbacks, read_string_list(v, p)); }},
};

// "provider/model" (the primary), or {primary, fallbacks}; every ref is checked after the walk.
status read_model_choice(const bj::value& value, const std::string& path, actors::model_choice& target,
                         load_state& state) {
  actors::model_choice choice;
  if (value.is_string()) {
    SRT_RETURN_IF_ERROR(assign(choice.primary, read_non_empty_string(value, path)));
    state.model_refs.push_back({path, choice.primary});
  } else if (value.is_object()) {
    SRT_RETURN_IF_ERROR(read_keys(value, path, model_choice_keys, choice, state));
    if (!choice.primary.empty()) state.model_refs.push_back({child_key_path(path, "primary"), choice.primary});
    for (std::size_t i = 0; i < choice.fallbacks.size(); ++i)
      state.model_refs.push_back({item_key_path(child_key_path(path, "fallbacks"), i), choice.fallbacks[i]});
  } else {
    return config_key_error(path, "expected \"provider/model\" or {\"primary\": ..., \"fallbacks\": [...]}, got " +
                                      describe_json_value(value));
  }
  target = std::move(choice);
  return {};
}

constexpr config_key<std::string> model_entry_keys[] = {
    {"alias", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t, read_string(v, p)); }},
};

// agents.defaults.models: "provider/model" -> {alias}; the aliases are given to their models
// once models.providers is read.
status read_model_entries(const bj::value& value, const std::string& path, load_state& state) {
  if (!value.is_object())
    return config_key_error(path, "expected an object of \"provider/model\" -> {\"alias\": ...}, got " +
                                      describe_json_value(value));
  for (const auto& member : value.get_object()) {
    if (member.value().is_null()) continue;
    std::string member_path = child_key_path(path, member.key());
    std::string alias;
    SRT_RETURN_IF_ERROR(read_keys(member.value(), member_path, model_entry_keys, alias, state));
    if (!ascii_trimmed(alias).empty())
      state.aliases.push_back({child_key_path(member_path, "alias"), std::string(member.key()), ascii_trimmed(alias)});
  }
  return {};
}

struct prompt_file {
  std::string file;
};

constexpr config_key<prompt_file> prompt_file_keys[] = {
    {"file", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.file, read_non_empty_string(v, p)); }},
};

// A system prompt: the text, or {file: "path"} read now (relative to the config file's
// directory; "~/" is $HOME). A file that cannot be read is an error naming the key and path.
status read_system_prompt(const bj::value& value, const std::string& path, std::string& target, load_state& state) {
  if (value.is_string()) {
    target = std::string(value.get_string());
    return {};
  }
  if (!value.is_object())
    return config_key_error(path, "expected a string or {\"file\": \"path\"}, got " + describe_json_value(value));
  prompt_file source;
  SRT_RETURN_IF_ERROR(read_keys(value, path, prompt_file_keys, source, state));
  if (source.file.empty()) return missing_key(path, "file", "a path, relative to the config file's directory");
  const std::string file_path = child_key_path(path, "file");
  std::string resolved = source.file;
  if (resolved.starts_with("~/")) {
    std::optional<std::string> home = state.env ? state.env("HOME") : std::nullopt;
    if (!home || home->empty())
      return config_key_error(file_path, fmt::format("cannot read \"{}\": HOME is not set", source.file));
    resolved = storage::path_join(*home, resolved.substr(2));
  } else if (!resolved.starts_with("/")) {
    resolved = storage::path_join(state.base_dir, resolved);
  }
  auto text = storage::read_file(state.files, resolved, max_system_prompt_file_bytes);
  if (!text.ok())
    return config_key_error(file_path, fmt::format("cannot read \"{}\": {}", source.file, text.error().message()));
  target = std::move(*text);
  return {};
}

// The configured model a "provider/model" ref names (both compared ignoring case), or null.
actors::provider_model* find_configured_model(std::vector<actors::provider_config>& providers, std::string_view ref,
                                              actors::provider_config** provider_out = nullptr) {
  auto slash = ref.find('/');
  if (slash == std::string_view::npos) return nullptr;
  std::string provider_id = ascii_lower_trimmed(ref.substr(0, slash));
  std::string model_id = ascii_lower_trimmed(ref.substr(slash + 1));
  for (auto& provider : providers) {
    if (ascii_lower_trimmed(provider.id) != provider_id) continue;
    if (provider_out) *provider_out = &provider;
    for (auto& model : provider.models)
      if (ascii_lower_trimmed(model.id) == model_id) return &model;
  }
  return nullptr;
}

// After the walk: the legacy model.provider/model.model as the default primary, the aliases
// given to their models, and every ref of agents.*.model checked.
status finish_models(runtime_settings& s, load_state& state) {
  auto& models = s.models;
  if (!state.defaults_model_set && !s.model.provider.empty() && !s.model.model.empty())
    models.defaults.primary = s.model.provider + "/" + s.model.model;

  std::map<std::string, std::string> path_of_alias;  // lowercased alias -> where it is set
  for (std::size_t i = 0; i < s.models_catalog.size(); ++i)
    for (std::size_t j = 0; j < s.models_catalog[i].aliases.size(); ++j)
      path_of_alias.emplace(ascii_lower_trimmed(s.models_catalog[i].aliases[j]),
                            item_key_path(child_key_path(item_key_path("models.catalog", i), "aliases"), j));
  for (const auto& pending : state.aliases) {
    std::string alias = ascii_lower_trimmed(pending.alias);
    if (alias.find_first_of(" \t\n\r\f\v") != std::string::npos)
      return config_key_error(pending.path, "an alias must be one word (it is matched as the first word after /new)");
    actors::provider_model* model = find_configured_model(models.providers, pending.ref);
    if (!model) {
      state.warnings.push_back(fmt::format("config key {}: \"{}\" names no model of models.providers; the alias "
                                           "\"{}\" is not used",
                                           pending.path, pending.ref, pending.alias));
      continue;
    }
    if (auto seen = path_of_alias.find(alias); seen != path_of_alias.end())
      return config_key_error(pending.path, fmt::format("\"{}\" is already used at {}", alias, seen->second));
    path_of_alias.emplace(alias, pending.path);
    model->aliases.push_back(pending.alias);
  }

  std::vector<std::string> known;  // provider ids a ref may name, lowercased
  for (const auto& provider : models.providers) known.push_back(ascii_lower_trimmed(provider.id));
  if (!state.replace_mode)
    for (std::string_view id : builtin_provider_ids) known.emplace_back(id);
  if (!s.model.provider.empty()) known.push_back(ascii_lower_trimmed(s.model.provider));
  for (const auto& entry : s.models_catalog) known.push_back(ascii_lower_trimmed(entry.provider));
  std::sort(known.begin(), known.end());
  known.erase(std::unique(known.begin(), known.end()), known.end());

  for (const auto& [path, ref] : state.model_refs) {
    std::string text = ascii_trimmed(ref);
    if (path_of_alias.count(ascii_lower_trimmed(text))) continue;
    auto slash = text.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
      return config_key_error(path, fmt::format("\"{}\" is neither \"provider/model\" nor an alias of "
                                                "agents.defaults.models",
                                                ref));
    std::string provider_id = ascii_lower_trimmed(text.substr(0, slash));
    if (!std::binary_search(known.begin(), known.end(), provider_id))
      return config_key_error(path, fmt::format("unknown provider \"{}\" in \"{}\"; known providers: {}",
                                                text.substr(0, slash), ref, joined(known, ", ")));
    actors::provider_config* provider = nullptr;
    if (!find_configured_model(models.providers, text, &provider) && provider)
      state.warnings.push_back(fmt::format("config key {}: model \"{}\" is not listed in {}.models; it is used with "
                                           "the default limits",
                                           path, text.substr(slash + 1),
                                           child_key_path("models.providers", provider->id)));
  }
  return {};
}

// ---- agents and bindings [R§1.2] -----------------------------------------------------------------

// One agents.list[] entry: the routing entry, and the agent's model and system prompt.
struct agent_item {
  actors::agent_entry entry;
  actors::model_choice model;
  std::optional<std::string> system_prompt;
};

constexpr config_key<agent_item> agent_keys[] = {
    {"id", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.entry.id, read_non_empty_string(v, p)); }},
    {"default",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.entry.is_default, read_bool(v, p)); }},
    {"model", [](const auto& v, const auto& p, auto& t, auto& st) { return read_model_choice(v, p, t.model, st); }},
    {"systemPrompt",
     [](const auto& v, const auto& p, auto& t, auto& st) -> status {
       std::string text;
       SRT_RETURN_IF_ERROR(read_system_prompt(v, p, text, st));
       t.system_prompt = std::move(text);
       return {};
     }},
};

// agents.list: each agent once (after normalization); its model and system prompt are kept by
// normalized id.
status read_agent_list(const bj::value& value, const std::string& path, runtime_settings& settings,
                       load_state& state) {
  settings.routing.agents.clear();
  settings.models.by_agent.clear();
  settings.prompts.by_agent.clear();
  std::map<std::string, std::string> path_of_agent;
  return read_items(value, path, settings.routing.agents,
                    [&](const bj::value& item, const std::string& item_path, auto& list) {
                      agent_item agent;
                      SRT_RETURN_IF_ERROR(read_keys(item, item_path, agent_keys, agent, state));
                      if (agent.entry.id.empty()) return missing_key(item_path, "id", "a non-empty string");
                      std::string normalized = actors::normalize_agent_id(agent.entry.id);
                      if (auto seen = path_of_agent.find(normalized); seen != path_of_agent.end())
                        return config_key_error(
                            child_key_path(item_path, "id"),
                            fmt::format("agent \"{}\" is already listed at {}", normalized, seen->second));
                      path_of_agent.emplace(normalized, item_path);
                      if (!agent.model.empty()) settings.models.by_agent[normalized] = std::move(agent.model);
                      if (agent.system_prompt) settings.prompts.by_agent[normalized] = std::move(*agent.system_prompt);
                      list.push_back(std::move(agent.entry));
                      return status{};
                    });
}

constexpr config_key<runtime_settings> heartbeat_keys[] = {
    {"isolatedSession",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.heartbeat_isolated_session, read_bool(v, p)); }},
};

constexpr config_key<runtime_settings> agent_defaults_keys[] = {
    {"compaction",
     [](const auto& v, const auto&, auto&, auto& st) {
       st.compaction_alias = &v;
       return status{};
     }},
    {"heartbeat", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, heartbeat_keys, t, st); }},
    {"model",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       st.defaults_model_set = true;
       return read_model_choice(v, p, t.models.defaults, st);
     }},
    {"models", [](const auto& v, const auto& p, auto&, auto& st) { return read_model_entries(v, p, st); }},
    {"maxToolIterations",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.models.max_tool_iterations, read_whole_number(v, p, 1, 10000));
     }},
    {"systemPrompt",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_system_prompt(v, p, t.prompts.defaults, st); }},
};

constexpr config_key<runtime_settings> agents_keys[] = {
    {"list",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_agent_list(v, p, t, st); }},
    {"maxSpawnDepth",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.subagents.max_spawn_depth, read_whole_number(v, p, 1, 5));
     }},
    {"defaults",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, agent_defaults_keys, t, st); }},
};

constexpr config_key<actors::route_peer> peer_keys[] = {
    {"kind", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.kind, read_non_empty_string(v, p)); }},
    {"id", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.id, read_non_empty_string(v, p)); }},
};

status read_peer(const bj::value& value, const std::string& path, std::optional<actors::route_peer>& target,
                 load_state& state) {
  actors::route_peer peer;
  SRT_RETURN_IF_ERROR(read_keys(value, path, peer_keys, peer, state));
  if (peer.kind.empty()) return missing_key(path, "kind", "\"direct\", \"group\", \"channel\", ...");
  if (peer.id.empty()) return missing_key(path, "id", "a peer id, or \"*\" for every peer of the kind");
  target = std::move(peer);
  return {};
}

constexpr config_key<actors::binding_match> match_keys[] = {
    {"channel",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.channel, read_non_empty_string(v, p)); }},
    {"accountId", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.account_id, read_string(v, p)); }},
    {"peer", [](const auto& v, const auto& p, auto& t, auto& st) { return read_peer(v, p, t.peer, st); }},
    {"guildId", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.guild_id, read_string(v, p)); }},
    {"teamId", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.team_id, read_string(v, p)); }},
    {"roles", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.roles, read_string_list(v, p)); }},
};

constexpr config_key<actors::route_binding> binding_session_keys[] = {
    {"dmScope",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.session_dm_scope, read_enum<actors::dm_scope>(v, p, actors::parse_dm_scope, dm_scope_names));
     }},
};

constexpr config_key<actors::route_binding> binding_keys[] = {
    {"agentId",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.agent_id, read_non_empty_string(v, p)); }},
    {"match", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, match_keys, t.match, st); }},
    {"session",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, binding_session_keys, t, st); }},
};

status read_bindings(const bj::value& value, const std::string& path, std::vector<actors::route_binding>& bindings,
                     load_state& state) {
  bindings.clear();
  return read_items(value, path, bindings, [&](const bj::value& item, const std::string& item_path, auto& list) {
    actors::route_binding binding;
    SRT_RETURN_IF_ERROR(read_keys(item, item_path, binding_keys, binding, state));
    if (binding.agent_id.empty()) return missing_key(item_path, "agentId", "the agent this binding routes to");
    if (binding.match.channel.empty())
      return missing_key(child_key_path(item_path, "match"), "channel", "a binding without a channel never matches");
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

constexpr config_key<actors::storage_settings> storage_keys[] = {
    {"durability",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.durability,
                     read_enum<storage::durability>(v, p, storage::parse_durability, "\"none\", \"batch\", \"sync\""));
     }},
    {"batchWindowMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.batch_window_ms, read_duration_ms(v, p, 0)); }},
    {"maxLineBytes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_line_bytes, read_byte_size(v, p, 1)); }},
    {"storeFlushWindowMs",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.store_flush_window_ms, read_duration_ms(v, p, 0));
     }},
    {"storeDurableAck",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.store_durable_ack, read_bool(v, p)); }},
    {"storeSpillMinBytes",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.store_spill_min_bytes, read_byte_size(v, p, 0)); }},
    {"keepMaintenancePicture",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.keep_maintenance_picture, read_bool(v, p)); }},
    {"watchStoreEdits",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.watch_store_edits, read_bool(v, p)); }},
};

// A key of the old layout that still works: "config key model.contextWindow is deprecated: set ...".
void warn_deprecated(load_state& state, std::string_view path, std::string_view instead) {
  state.warnings.push_back(fmt::format("config key {} is deprecated: set {}", path, instead));
}

constexpr config_key<actors::model_settings> model_keys[] = {
    {"contextWindow",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       warn_deprecated(st, p, "models.providers.<id>.models[].contextWindow");
       return assign(t.context_window, read_whole_number(v, p, 1));
     }},
    {"provider",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       warn_deprecated(st, p, "agents.defaults.model (\"provider/model\")");
       return assign(t.provider, read_string(v, p));
     }},
    {"model",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       warn_deprecated(st, p, "agents.defaults.model (\"provider/model\")");
       return assign(t.model, read_string(v, p));
     }},
    {"maxTokens",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       warn_deprecated(st, p, "models.providers.<id>.models[].maxTokens");
       return assign(t.max_tokens, read_whole_number(v, p, 0));
     }},
    {"maxConcurrent",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.max_concurrent, read_whole_number(v, p, 0)); }},
    {"maxConcurrentByProvider",
     [](const auto& v, const auto& p, auto& t, auto&) -> status {
       if (!v.is_object()) return config_key_error(p, "expected an object {provider: number}, got " + describe_json_value(v));
       t.max_concurrent_by_provider.clear();
       for (const auto& m : v.get_object()) {
         auto n = read_whole_number(m.value(), child_key_path(p, m.key()), 1);
         if (!n.ok()) return std::move(n).take_error();
         t.max_concurrent_by_provider[std::string(m.key())] = static_cast<std::size_t>(*n);
       }
       return {};
     }},
    {"timeoutMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.timeout_ms, read_duration_ms(v, p, 0)); }},
    {"api",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       warn_deprecated(st, p, "models.providers.<id>.api");
       return assign(t.api, read_string(v, p));
     }},
    {"imageMaxDimensionPx",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.image_max_dimension_px, read_whole_number(v, p, 16, 16384));
     }},
    {"syncRunnerThreads",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.sync_runner_threads, read_whole_number(v, p, 1, 1024));
     }},
};

constexpr config_key<actors::queue_settings> queue_keys[] = {
    {"mode",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.mode, read_enum<actors::queue_mode>(v, p, actors::parse_queue_mode,
                                                           "\"followup\", \"collect\", \"interrupt\", \"steer\""));
     }},
    {"cap", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.cap, read_whole_number(v, p, 1)); }},
    {"drop",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.drop, read_enum<actors::queue_drop>(v, p, actors::parse_queue_drop,
                                                           "\"old\", \"new\", \"summarize\""));
     }},
    {"debounceMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.debounce_ms, read_duration_ms(v, p, 0)); }},
};

constexpr config_key<actors::queue_settings> messages_keys[] = {
    {"queue", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, queue_keys, t, st); }},
};

constexpr config_key<actors::memory_flush_settings> memory_flush_keys[] = {
    {"enabled", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.enabled, read_bool(v, p)); }},
    {"softThresholdTokens",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.soft_threshold_tokens, read_whole_number(v, p, 0));
     }},
    {"forceFlushTranscriptBytes",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.force_flush_transcript_bytes, read_byte_size(v, p, 0));
     }},
    {"prompt", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.prompt, read_string(v, p)); }},
    {"systemPrompt",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.system_prompt, read_string(v, p)); }},
    {"model", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.model, read_string(v, p)); }},
};

constexpr config_key<actors::compaction_settings> mid_turn_precheck_keys[] = {
    {"enabled",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.mid_turn_precheck, read_bool(v, p)); }},
};

constexpr config_key<runtime_settings> compaction_keys[] = {
    {"midTurnPrecheck",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       return read_keys(v, p, mid_turn_precheck_keys, t.compaction, st);
     }},
    {"enabled",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.compaction.enabled, read_bool(v, p)); }},
    {"reserveTokens",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.compaction.reserve_tokens, read_whole_number(v, p, 0));
     }},
    {"keepRecentTokens",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.compaction.keep_recent_tokens, read_whole_number(v, p, 1));
     }},
    {"reserveTokensFloor",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.compaction.reserve_tokens_floor, read_whole_number(v, p, 0));
     }},
    {"truncateAfterCompaction",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.compaction.truncate_after_compaction, read_bool(v, p));
     }},
    {"maxActiveTranscriptBytes",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.compaction.max_active_transcript_bytes, read_byte_size(v, p, 1));
     }},
    {"provider",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.compaction_provider, read_string(v, p)); }},
    {"model",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.compaction_model, read_string(v, p)); }},
    {"memoryFlush",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       return read_keys(v, p, memory_flush_keys, t.memory_flush, st);
     }},
};

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

constexpr config_key<actors::pressure_config> context_keys[] = {
    {"pressureFractions",
     [](const auto& v, const auto& p, auto& t, auto&) { return read_pressure_fractions(v, p, t); }},
};

// ---- models.catalog [R§4.4] ----------------------------------------------------------------------

constexpr config_key<actors::catalog_model> catalog_model_keys[] = {
    {"provider",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.provider, read_non_empty_string(v, p)); }},
    {"id", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.id, read_non_empty_string(v, p)); }},
    {"aliases",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.aliases, read_string_list(v, p)); }},
    {"contextWindow",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.context_window, read_whole_number(v, p, 1)); }},
};

// Each model once (provider/id compared case-insensitively), each alias naming one model.
status read_models_catalog(const bj::value& value, const std::string& path, actors::model_catalog_settings& catalog,
                           load_state& state) {
  catalog.clear();
  std::map<std::string, std::string> path_of_name;
  return read_items(value, path, catalog, [&](const bj::value& item, const std::string& item_path, auto& list) {
    actors::catalog_model model;
    SRT_RETURN_IF_ERROR(read_keys(item, item_path, catalog_model_keys, model, state));
    if (model.provider.empty()) return missing_key(item_path, "provider", "the provider id, e.g. \"openai\"");
    if (model.id.empty()) return missing_key(item_path, "id", "the model id, e.g. \"gpt-4o\"");
    std::vector<std::pair<std::string, std::string>> names{
        {ascii_lower_trimmed(model.provider + "/" + model.id), child_key_path(item_path, "id")}};
    for (std::size_t i = 0; i < model.aliases.size(); ++i) {
      std::string alias = ascii_lower_trimmed(model.aliases[i]);
      if (alias.empty() || alias.find_first_of(" \t\n") != std::string::npos)
        return config_key_error(item_key_path(child_key_path(item_path, "aliases"), i),
                                "an alias must be one word (it is matched as the first word after /new)");
      names.emplace_back(alias, item_key_path(child_key_path(item_path, "aliases"), i));
    }
    for (const auto& [name, name_path] : names) {
      if (auto seen = path_of_name.find(name); seen != path_of_name.end())
        return config_key_error(name_path, fmt::format("\"{}\" is already used at {}", name, seen->second));
      path_of_name.emplace(name, name_path);
    }
    list.push_back(std::move(model));
    return status{};
  });
}

constexpr config_key<actors::models_settings> models_retry_keys[] = {
    {"maxDelayMs",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.retry_max_delay_ms, read_duration_ms(v, p, 0)); }},
    {"maxAttempts",
     [](const auto& v, const auto& p, auto& t, auto&) {
       return assign(t.retry_max_attempts, read_whole_number(v, p, 1, 100));
     }},
};

constexpr config_key<runtime_settings> models_keys[] = {
    {"mode",
     [](const auto& v, const auto& p, auto&, auto& st) -> status {
       if (!v.is_string() || (v.get_string() != "merge" && v.get_string() != "replace"))
         return config_key_error(p, "expected one of \"merge\", \"replace\", got " + describe_json_value(v));
       st.replace_mode = v.get_string() == "replace";
       return {};
     }},
    {"providers",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_providers(v, p, t.models.providers, st); }},
    {"retry",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, models_retry_keys, t.models, st); }},
    {"catalog",
     [](const auto& v, const auto& p, auto& t, auto& st) {
       st.warnings.push_back(fmt::format("config key {} is deprecated: list the models under "
                                         "models.providers.<id>.models[] and name them with "
                                         "agents.defaults.models.<ref>.alias",
                                         p));
       return read_models_catalog(v, p, t.models_catalog, st);
     }},
};

// ---- top level -----------------------------------------------------------------------------------

constexpr config_key<runtime_settings> top_level_keys[] = {
    {"stateDir", [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.state_dir, read_string(v, p)); }},
    {"workspaceDir",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.workspace_dir, read_string(v, p)); }},
    {"workspaceWritable",
     [](const auto& v, const auto& p, auto& t, auto&) { return assign(t.workspace_writable, read_bool(v, p)); }},
    {"agents", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, agents_keys, t, st); }},
    {"bindings",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_bindings(v, p, t.routing.bindings, st); }},
    {"session", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, session_keys, t, st); }},
    {"storage",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, storage_keys, t.storage, st); }},
    {"model", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, model_keys, t.model, st); }},
    {"models", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, models_keys, t, st); }},
    {"messages",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, messages_keys, t.queue, st); }},
    {"compaction",
     [](const auto& v, const auto&, auto&, auto& st) {
       st.compaction_block = &v;
       return status{};
     }},
    {"context",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, context_keys, t.pressure, st); }},
    {"cron", [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, cron_keys, t.cron, st); }},
    {"gateway",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, gateway_keys, t.gateway, st); }},
    {"logging",
     [](const auto& v, const auto& p, auto& t, auto& st) { return read_keys(v, p, logging_keys, t.logging, st); }},
};

// `agents.defaults.compaction` first, then `compaction` over it, whatever their order in the file.
status read_compaction_blocks(runtime_settings& settings, load_state& state) {
  if (state.compaction_alias) {
    SRT_RETURN_IF_ERROR(
        read_keys(*state.compaction_alias, "agents.defaults.compaction", compaction_keys, settings, state));
    if (state.compaction_block)
      state.warnings.push_back(
          "config keys compaction and agents.defaults.compaction are both set; where both set a key, compaction wins");
  }
  if (state.compaction_block)
    SRT_RETURN_IF_ERROR(read_keys(*state.compaction_block, "compaction", compaction_keys, settings, state));
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

// ---- settings -> JSON ----------------------------------------------------------------------------

bj::value number_value(double number) {
  if (std::isfinite(number) && std::trunc(number) == number &&
      std::fabs(number) <= static_cast<double>(max_config_integer))
    return static_cast<std::int64_t>(number);
  return number;
}

bj::value size_value(std::uint64_t number) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(number, INT64_MAX));
}

bj::array string_array(const std::vector<std::string>& texts) {
  bj::array out;
  for (const auto& text : texts) out.emplace_back(text);
  return out;
}

bj::object reset_block_json(const actors::reset_config& block) {
  bj::object out;
  if (block.mode) out["mode"] = actors::reset_mode_name(*block.mode);
  if (block.at_hour) out["atHour"] = number_value(*block.at_hour);
  if (block.idle_minutes) out["idleMinutes"] = number_value(*block.idle_minutes);
  return out;
}

bj::object reset_by_type_json(const actors::reset_by_type_config& by_type) {
  bj::object out;
  if (by_type.direct) out["direct"] = reset_block_json(*by_type.direct);
  if (by_type.dm) out["dm"] = reset_block_json(*by_type.dm);
  if (by_type.group) out["group"] = reset_block_json(*by_type.group);
  if (by_type.thread) out["thread"] = reset_block_json(*by_type.thread);
  return out;
}

bj::value duration_value(std::int64_t ms) {
  if (ms == storage::write_lock_options::infinite) return "Infinity";
  return ms;
}

bj::object session_json(const runtime_settings& s) {
  const auto& routing = s.routing.session;
  const auto& reset = s.session.reset;
  bj::object out;
  out["dmScope"] = actors::to_string(routing.direct_message_scope);
  out["mainKey"] = routing.main_key;
  out["scope"] = routing.scope == actors::session_scope::global ? "global" : "per-sender";
  bj::object links;
  for (const auto& [name, ids] : routing.links) links[name] = string_array(ids);
  out["identityLinks"] = std::move(links);
  if (reset.reset) out["reset"] = reset_block_json(*reset.reset);
  if (reset.reset_by_type) out["resetByType"] = reset_by_type_json(*reset.reset_by_type);
  if (!reset.reset_by_channel.empty()) {
    bj::object by_channel;
    for (const auto& [channel, block] : reset.reset_by_channel) by_channel[channel] = reset_block_json(block);
    out["resetByChannel"] = std::move(by_channel);
  }
  if (reset.idle_minutes) out["idleMinutes"] = number_value(*reset.idle_minutes);
  if (!reset.reset_triggers.empty()) out["resetTriggers"] = string_array(reset.reset_triggers);
  out["timezone"] = reset.timezone;
  out["writeLock"] = bj::object{{"acquireTimeoutMs", duration_value(s.session.write_lock.acquire_timeout_ms)},
                                {"staleMs", duration_value(s.session.write_lock.stale_ms)},
                                {"maxHoldMs", duration_value(s.session.write_lock.max_hold_ms)}};
  out["passivateIdleMs"] = s.session.passivate_idle_ms;
  out["trimIdleMs"] = s.session.trim_idle_ms;
  out["maxLiveSessions"] = size_value(s.session.max_live_sessions);
  out["maxMessageBytes"] = size_value(s.session.max_message_bytes);
  const auto& m = s.maintenance;
  bj::object maintenance{{"mode", actors::maintenance_mode_name(m.mode)},
                         {"pruneAfter", duration_text(m.prune_after_ms)},
                         {"maxEntries", m.max_entries}};
  if (m.reset_archive_retention_disabled)
    maintenance["resetArchiveRetention"] = false;
  else
    maintenance["resetArchiveRetention"] = duration_text(*actors::reset_archive_retention(m));
  if (m.max_disk_bytes) maintenance["maxDiskBytes"] = *m.max_disk_bytes;
  if (auto hw = actors::high_water_bytes(m)) maintenance["highWaterBytes"] = *hw;
  maintenance["archiveDashboardAfter"] =
      m.archive_dashboard_after_ms ? bj::value(duration_text(*m.archive_dashboard_after_ms)) : bj::value(false);
  maintenance["preserveRecent"] = m.preserve_recent_ms ? bj::value(duration_text(*m.preserve_recent_ms)) : bj::value(false);
  maintenance["coldStorage"] = bj::object{{"enabled", m.cold_storage_enabled}, {"afterDays", m.cold_storage_after_days}};
  out["maintenance"] = std::move(maintenance);
  return out;
}

bj::object binding_json(const actors::route_binding& binding) {
  const auto& match = binding.match;
  bj::object match_json{{"channel", match.channel}};
  if (!match.account_id.empty()) match_json["accountId"] = match.account_id;
  if (match.peer) match_json["peer"] = bj::object{{"kind", match.peer->kind}, {"id", match.peer->id}};
  if (!match.guild_id.empty()) match_json["guildId"] = match.guild_id;
  if (!match.team_id.empty()) match_json["teamId"] = match.team_id;
  if (!match.roles.empty()) match_json["roles"] = string_array(match.roles);
  bj::object out{{"agentId", binding.agent_id}, {"match", std::move(match_json)}};
  if (binding.session_dm_scope) out["session"] = bj::object{{"dmScope", actors::to_string(*binding.session_dm_scope)}};
  return out;
}

bj::object compaction_json(const runtime_settings& s) {
  const auto& c = s.compaction;
  const auto& flush = s.memory_flush;
  bj::object out{{"enabled", c.enabled},
                 {"reserveTokens", c.reserve_tokens},
                 {"keepRecentTokens", c.keep_recent_tokens},
                 {"reserveTokensFloor", c.reserve_tokens_floor},
                 {"truncateAfterCompaction", c.truncate_after_compaction},
                 {"midTurnPrecheck", bj::object{{"enabled", c.mid_turn_precheck}}}};
  if (c.max_active_transcript_bytes) out["maxActiveTranscriptBytes"] = size_value(*c.max_active_transcript_bytes);
  if (!s.compaction_provider.empty()) out["provider"] = s.compaction_provider;
  if (!s.compaction_model.empty()) out["model"] = s.compaction_model;
  out["memoryFlush"] = bj::object{{"enabled", flush.enabled},
                                  {"softThresholdTokens", flush.soft_threshold_tokens},
                                  {"forceFlushTranscriptBytes", flush.force_flush_transcript_bytes},
                                  {"prompt", flush.prompt},
                                  {"systemPrompt", flush.system_prompt},
                                  {"model", flush.model}};
  return out;
}

bj::object model_choice_json(const actors::model_choice& choice) {
  bj::object out;
  if (!choice.primary.empty()) out["primary"] = choice.primary;
  out["fallbacks"] = string_array(choice.fallbacks);
  return out;
}

// A secret as `config show` prints it: its "${VAR}", never its value.
bj::value secret_json(std::string_view source) {
  if (is_env_reference(source)) return bj::value(source);
  return "<redacted>";
}

bj::object provider_model_json(const actors::provider_model& m) {
  bj::object out{{"id", m.id}};
  if (!m.name.empty()) out["name"] = m.name;
  if (!m.api.empty()) out["api"] = m.api;
  out["contextWindow"] = m.context_window;
  if (m.context_tokens) out["contextTokens"] = *m.context_tokens;
  out["maxTokens"] = m.max_tokens;
  out["reasoning"] = m.reasoning;
  out["input"] = string_array(m.input);
  out["cost"] = bj::object{{"input", number_value(m.cost.input)},
                           {"output", number_value(m.cost.output)},
                           {"cacheRead", number_value(m.cost.cache_read)},
                           {"cacheWrite", number_value(m.cost.cache_write)}};
  bj::object compat;
  if (m.compat.supports_usage_in_streaming) compat["supportsUsageInStreaming"] = *m.compat.supports_usage_in_streaming;
  if (!m.compat.max_tokens_field.empty()) compat["maxTokensField"] = m.compat.max_tokens_field;
  if (m.compat.supports_developer_role) compat["supportsDeveloperRole"] = *m.compat.supports_developer_role;
  out["compat"] = std::move(compat);
  return out;
}

// A provider with its models; apiKey and credential-like header values never appear.
bj::object provider_json(const actors::provider_config& p) {
  bj::object out{{"baseUrl", p.base_url}};
  if (!p.api_key.empty() || !p.api_key_source.empty()) out["apiKey"] = secret_json(p.api_key_source);
  if (!p.api.empty()) out["api"] = p.api;
  bj::object headers;
  for (const auto& [name, value] : p.headers) {
    if (is_secret_header(name))
      headers[name] = secret_json("");
    else
      headers[name] = value;
  }
  out["headers"] = std::move(headers);
  out["timeoutSeconds"] = p.timeout_seconds;
  bj::array models;
  for (const auto& m : p.models) models.emplace_back(provider_model_json(m));
  out["models"] = std::move(models);
  return out;
}

bj::object agents_json(const runtime_settings& s) {
  bj::array agents;
  for (const auto& agent : s.routing.agents) {
    bj::object entry{{"id", agent.id}, {"default", agent.is_default}};
    const std::string normalized = actors::normalize_agent_id(agent.id);
    if (auto model = s.models.by_agent.find(normalized); model != s.models.by_agent.end() && !model->second.empty())
      entry["model"] = model_choice_json(model->second);
    if (auto prompt = s.prompts.by_agent.find(normalized); prompt != s.prompts.by_agent.end())
      entry["systemPrompt"] = prompt->second;
    agents.emplace_back(std::move(entry));
  }
  bj::object defaults{{"heartbeat", bj::object{{"isolatedSession", s.heartbeat_isolated_session}}}};
  if (!s.models.defaults.empty()) defaults["model"] = model_choice_json(s.models.defaults);
  bj::object aliases;
  for (const auto& provider : s.models.providers)
    for (const auto& model : provider.models)
      if (!model.aliases.empty()) aliases[provider.id + "/" + model.id] = bj::object{{"alias", model.aliases.front()}};
  if (!aliases.empty()) defaults["models"] = std::move(aliases);
  defaults["maxToolIterations"] = s.models.max_tool_iterations;
  if (!s.prompts.defaults.empty()) defaults["systemPrompt"] = s.prompts.defaults;
  return bj::object{{"list", std::move(agents)},
                    {"maxSpawnDepth", s.subagents.max_spawn_depth},
                    {"defaults", std::move(defaults)}};
}

// models.*; the legacy catalog only when it has entries (loading it warns).
bj::object models_json(const runtime_settings& s) {
  bj::object providers;
  for (const auto& provider : s.models.providers) providers[provider.id] = provider_json(provider);
  bj::object out{{"providers", std::move(providers)},
                 {"retry", bj::object{{"maxDelayMs", s.models.retry_max_delay_ms},
                                      {"maxAttempts", s.models.retry_max_attempts}}}};
  if (!s.models_catalog.empty()) {
    bj::array catalog;
    for (const auto& m : s.models_catalog) {
      bj::object model{{"provider", m.provider}, {"id", m.id}, {"aliases", string_array(m.aliases)}};
      if (m.context_window) model["contextWindow"] = *m.context_window;
      catalog.emplace_back(std::move(model));
    }
    out["catalog"] = std::move(catalog);
  }
  return out;
}

// model.*; the deprecated keys only when they differ from their defaults (loading them warns).
bj::object model_json(const actors::model_settings& m) {
  const actors::model_settings defaults;
  bj::object out;
  if (m.context_window != defaults.context_window) out["contextWindow"] = m.context_window;
  if (!m.provider.empty()) out["provider"] = m.provider;
  if (!m.model.empty()) out["model"] = m.model;
  if (m.max_tokens != defaults.max_tokens) out["maxTokens"] = m.max_tokens;
  out["maxConcurrent"] = size_value(m.max_concurrent);
  bj::object by_provider;
  for (const auto& [provider, n] : m.max_concurrent_by_provider) by_provider[provider] = size_value(n);
  out["maxConcurrentByProvider"] = std::move(by_provider);
  out["timeoutMs"] = m.timeout_ms;
  out["syncRunnerThreads"] = size_value(m.sync_runner_threads);
  if (!m.api.empty()) out["api"] = m.api;
  out["imageMaxDimensionPx"] = m.image_max_dimension_px;
  return out;
}

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
  load_state state{loaded.warnings, env, files, base_dir};
  SRT_RETURN_IF_ERROR(read_keys(*parsed, std::string(), top_level_keys, loaded.settings, state));
  SRT_RETURN_IF_ERROR(read_compaction_blocks(loaded.settings, state));
  SRT_RETURN_IF_ERROR(finish_models(loaded.settings, state));
  warn_unlisted_bound_agents(loaded.settings.routing, loaded.warnings);
  warn_maintenance(loaded.settings.maintenance, loaded.warnings);
  fold_unused_keys(state);
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
  bj::object out;
  out["stateDir"] = s.state_dir;
  out["workspaceDir"] = s.workspace_dir;
  out["workspaceWritable"] = s.workspace_writable;
  out["agents"] = agents_json(s);
  bj::array bindings;
  for (const auto& binding : s.routing.bindings) bindings.emplace_back(binding_json(binding));
  out["bindings"] = std::move(bindings);
  out["session"] = session_json(s);
  out["storage"] = bj::object{{"durability", storage::durability_name(s.storage.durability)},
                              {"batchWindowMs", s.storage.batch_window_ms},
                              {"maxLineBytes", size_value(s.storage.max_line_bytes)},
                              {"storeFlushWindowMs", s.storage.store_flush_window_ms},
                              {"storeDurableAck", s.storage.store_durable_ack},
                              {"storeSpillMinBytes", s.storage.store_spill_min_bytes ? size_value(*s.storage.store_spill_min_bytes)
                                                                                     : bj::value(nullptr)},
                              {"keepMaintenancePicture", s.storage.keep_maintenance_picture ? bj::value(*s.storage.keep_maintenance_picture)
                                                                                        : bj::value(nullptr)},
                              {"watchStoreEdits", s.storage.watch_store_edits}};
  out["model"] = model_json(s.model);
  out["models"] = models_json(s);
  out["messages"] = bj::object{{"queue", bj::object{{"mode", actors::queue_mode_name(s.queue.mode)},
                                                    {"cap", size_value(s.queue.cap)},
                                                    {"drop", actors::queue_drop_name(s.queue.drop)},
                                                    {"debounceMs", s.queue.debounce_ms}}}};
  out["compaction"] = compaction_json(s);
  bj::array fractions;
  for (double fraction : s.pressure.fractions) fractions.emplace_back(fraction);
  out["context"] = bj::object{{"pressureFractions", std::move(fractions)}};
  bj::object cron;
  if (s.cron.session_retention_ms)
    cron["sessionRetention"] = duration_text(*s.cron.session_retention_ms);
  else
    cron["sessionRetention"] = false;
  cron["runLog"] = bj::object{{"maxBytes", s.cron.run_log_max_bytes}, {"keepLines", s.cron.run_log_keep_lines}};
  out["cron"] = std::move(cron);
  out["gateway"] = bj::object{{"auth", bj::object{{"token", s.gateway.auth_token.empty() ? "" : "(set)"}}},
                              {"port", s.gateway.port},
                              {"bind", s.gateway.bind},
                              {"maxConnections", size_value(s.gateway.max_connections)},
                              {"maxBufferedBytes", size_value(s.gateway.max_buffered_bytes)},
                              {"maxPayload", size_value(s.gateway.max_payload)},
                              {"maxUnauthenticated", size_value(s.gateway.max_unauthenticated)},
                              {"fdReserve", size_value(s.gateway.fd_reserve)},
                              {"requestTimeoutMs", s.gateway.request_timeout_ms},
                              {"messageTimeoutMs", s.gateway.message_timeout_ms},
                              {"maxRequestsInFlight", size_value(s.gateway.max_requests_in_flight)},
                              {"maxQueuedRequests", size_value(s.gateway.max_queued_requests)},
                              {"controlUi", bj::object{{"enabled", s.gateway.control_ui_enabled},
                                                       {"root", s.gateway.control_ui_root},
                                                       {"allowedOrigins", string_array(s.gateway.control_ui_allowed_origins)}}}};
  out["logging"] = bj::object{{"level", s.logging.level},
                              {"file", s.logging.file},
                              {"format", s.logging.format},
                              {"maxFileBytes", size_value(s.logging.max_file_bytes)},
                              {"maxFiles", size_value(s.logging.max_files)}};
  return out;
}

}  // namespace sessionrt::runtime
