// config: the runtime's configuration file <-> actors::runtime_settings (SPEC §9: a config
// file either works or gets a clear error that names what was wrong).
// - The file is one JSON5 object (OpenClaw's format: comments, unquoted keys, single quotes and
//   trailing commas allowed; messages/json5_reader.hpp; plain JSON reads the same) in
//   OpenClaw's shape where OpenClaw has the key [R§1.2, §4.1, §6.1, §7.1, §9]. Every key is
//   optional; an absent key or a JSON null keeps its default (the SPEC's; docs/config.md).
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
// The keys, their types, defaults and meanings: docs/config.md, which `sessionrt config keys`
// prints from the key tables of config.cpp and config_table_models.cpp (one row a key: name,
// reader, writer, meaning; the default is actors::runtime_settings' initializer, shown through
// the writer; runtime/config_table.hpp walks them). A new key is one row in its object's table;
// then `build/sessionrt config keys > docs/config.md` (tests/runtime/config_docs_test.cpp).
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

// The effective settings in the layout of docs/config.md (for `sessionrt config show`): every
// key, except those its row leaves out while unset or empty (session.reset, a model's name,
// agents.*.model when empty, ...) and the deprecated keys at their defaults. Secrets are never
// written: an apiKey is shown as its "${VAR}" when it came from one, else "<redacted>"; a header
// whose name looks like a credential (contains auth, token, key, secret, cookie, password or
// credential) as "<redacted>"; gateway.auth.token as "(set)". A systemPrompt is written as its
// text (also when it was read from a file). The defaults' model written here includes one
// derived from model.provider / model.model; an alias is written under agents.defaults.models
// only for the first alias of a model.
boost::json::object settings_to_json(const actors::runtime_settings& settings);

// docs/config.md: every key with its type, default and meaning, as markdown.
std::string config_keys_markdown();

}  // namespace sessionrt::runtime
