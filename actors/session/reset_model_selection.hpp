// reset_model_selection: `/new <model> rest...` on a session's new row [R§4.4]. The config's
// models.catalog becomes the model_catalog parse_reset_model() matches against (provider +
// model in two tokens, an alias or "provider/model", then the fuzzy match for longer words);
// a match writes the row's user model override (apply_model_selection) and leaves the rest of
// the line as the first message. No match: nothing changes and the whole remainder is the
// first message, as in OpenClaw. Pure: no I/O, no clock.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "actors/session/model_catalog_settings.hpp"
#include "actors/session/reset_trigger.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::actors {

// The catalog `/new` matches against: every configured model and alias; the configured
// default (model.provider / model.model) is the default key, and a bare model name resolves
// against model.provider.
model_catalog catalog_of(const model_catalog_settings& models, const std::string& default_provider,
                         const std::string& default_model);

struct reset_model_applied {
  std::string first_message;               // what the new session is sent ("" = nothing)
  std::optional<model_selection> selected;  // set when the row's override changed
  std::optional<std::int64_t> context_window;  // the selected model's, when the catalog gives one
};

// Reads `first_message` of a reset against `catalog` and applies a match to `row`.
reset_model_applied apply_reset_model(session_entry& row, std::string_view first_message,
                                      const model_catalog& catalog, const model_catalog_settings& models);

// "Model: openai/gpt-4o." (or "Model: the configured default.") for the reply to the user.
std::string model_switch_notice(const reset_model_applied& applied);

// The context window a row's model override selects, from the catalog (nullopt: the config's).
std::optional<std::int64_t> catalog_context_window(const session_entry& row, const model_catalog_settings& models);

}  // namespace sessionrt::actors
