#include "actors/session/reset_model_selection.hpp"

#include "actors/session/session_rollover.hpp"
#include "messages/ascii_text.hpp"

#include <algorithm>
#include <cctype>

namespace sessionrt::actors {
namespace {

const catalog_model* find_model(const model_catalog_settings& models, std::string_view provider, std::string_view id) {
  for (const auto& m : models)
    if (ascii_lower(m.provider) == ascii_lower(provider) && ascii_lower(m.id) == ascii_lower(id)) return &m;
  return nullptr;
}

}  // namespace

model_catalog catalog_of(const model_catalog_settings& models, const std::string& default_provider,
                         const std::string& default_model) {
  model_catalog c;
  for (const auto& m : models) {
    const std::string key = ascii_lower(m.provider) + "/" + m.id;
    c.allowed_keys.push_back(key);
    for (const auto& alias : m.aliases) c.aliases.emplace(ascii_lower(alias), key);
    if (std::find(c.provider_ids.begin(), c.provider_ids.end(), ascii_lower(m.provider)) == c.provider_ids.end())
      c.provider_ids.push_back(ascii_lower(m.provider));
  }
  c.default_provider = ascii_lower(default_provider);
  if (!default_provider.empty() && !default_model.empty()) c.default_key = ascii_lower(default_provider) + "/" + default_model;
  return c;
}

reset_model_applied apply_reset_model(session_entry& row, std::string_view first_message,
                                      const model_catalog& catalog, const model_catalog_settings& models) {
  reset_model_applied out;
  reset_model_choice choice = parse_reset_model(first_message, catalog);
  out.first_message = std::move(choice.first_message);
  if (!choice.selection) return out;
  apply_model_selection(row, *choice.selection);
  if (const auto* m = find_model(models, choice.selection->provider, choice.selection->model))
    out.context_window = m->context_window;
  out.selected = std::move(choice.selection);
  return out;
}

std::string model_switch_notice(const reset_model_applied& applied) {
  if (!applied.selected) return std::string();
  if (applied.selected->is_default) return "Model: the configured default.";
  return "Model: " + applied.selected->provider + "/" + applied.selected->model + ".";
}

std::optional<std::int64_t> catalog_context_window(const session_entry& row, const model_catalog_settings& models) {
  auto provider = row.provider_override();
  auto model = row.model_override();
  if (!provider || !model) return std::nullopt;
  if (const auto* m = find_model(models, *provider, *model)) return m->context_window;
  return std::nullopt;
}

}  // namespace sessionrt::actors
