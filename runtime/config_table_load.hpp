// config_table_load: what runtime/config.cpp and config_table_models.cpp share while one config
// file is read: the load's state (warnings, unknown keys, the environment, what is checked after
// the walk) and the table types over it. Private to those two files; nothing here is API.
#pragma once
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime_settings.hpp"
#include "messages/ascii_text.hpp"
#include "messages/status.hpp"
#include "runtime/config.hpp"
#include "runtime/config_table.hpp"
#include "runtime/config_values.hpp"
#include "storage/fs.hpp"

namespace sessionrt::runtime::config_tables {

namespace bj = boost::json;
using actors::runtime_settings;
using config_table::assign;
using config_table::boolean;
using config_table::bytes;
using config_table::duration_text;
using config_table::millis;
using config_table::missing_key;
using config_table::number;
using config_table::number_json;
using config_table::one_of;
using config_table::self;
using config_table::strings;
using config_table::strings_json;
using config_table::text;
using config_table::whole;

// ---- what one load collects besides the settings -------------------------------------------------

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

struct load_state : config_table::key_walk {
  const env_lookup& env;        // ${VAR} in secrets, ~ in prompt file paths
  storage::fs& files;           // {file: ...} values
  const std::string& base_dir;  // ... relative to this ("" = the working directory)
  const bj::value* compaction_block = nullptr;  // `compaction`, read after the walk
  const bj::value* compaction_alias = nullptr;  // `agents.defaults.compaction`, read before it
  bool defaults_model_set = false;              // agents.defaults.model is in the file
  bool replace_mode = false;                    // models.mode "replace": no built-in providers
  std::vector<pending_ref> model_refs;
  std::vector<pending_alias> aliases;
};

// The tables: one per config object, each row one key (config_table.hpp).
template <class Target>
using table = config_table::object<Target, load_state>;
template <class Target>
using keys = config_table::keys<Target, load_state>;
template <class Target>
using row_of = config_table::row<Target, load_state>;

// Reads an array item by item; `read_item` appends to `target`.
template <class Target, class ReadItem>
status read_items(const bj::value& value, const std::string& path, Target& target, ReadItem read_item) {
  if (!value.is_array()) return config_key_error(path, "expected an array, got " + describe_json_value(value));
  const auto& items = value.get_array();
  for (std::size_t i = 0; i < items.size(); ++i)
    SRT_RETURN_IF_ERROR(read_item(items[i], item_key_path(path, i), target));
  return {};
}

// ---- the tables of config_table_models.cpp ---------------------------------------------------------

const table<runtime_settings>& agents_table();  // agents.*
const table<runtime_settings>& models_table();  // models.*
// After the walk: the legacy model.provider/model.model as the default primary, the aliases
// given to their models, and every ref of agents.*.model checked.
status finish_models(runtime_settings& s, load_state& state);

}  // namespace sessionrt::runtime::config_tables
