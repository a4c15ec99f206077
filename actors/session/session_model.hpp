// session_model: which model a session talks to, and what that model is (window, API, max
// tokens, fallbacks), resolved from the config and the session's row. Every place that needs
// the window, the reserve, the API or max tokens (thresholds, pressure, precheck, flush,
// /status, /context list, the hygiene policy, token estimates) reads this, so `/new <alias>`,
// `sessions.patch {model}` and the row's overrides switch all of it at once.
//
// Order (the first that names a model wins):
//   1. the row's providerOverride / modelOverride (a bare model: an alias, else the primary's provider)
//   2. the agent's agents.list[].model.primary
//   3. agents.defaults.model.primary
//   4. the legacy model.provider / model.model
// The description comes from models.providers (the model's effective window, maxTokens, api;
// the provider's api; openai-completions for a provider with a baseUrl and no api), else from
// the legacy models.catalog entry's window, else the legacy model.contextWindow / maxTokens /
// api. Fallbacks are the agent's (else the defaults') list, minus the model itself.
// Pure: no I/O, no clock, no CAF.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime_settings.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::actors {

struct session_model {
  std::string provider;                 // "" = the runner's default
  std::string model;
  std::string api;                      // "" = unknown (hygiene then guesses from the provider)
  std::int64_t context_window = 200000;
  std::int64_t max_tokens = 0;          // 0 = the runner's default
  std::vector<std::string> fallbacks;   // "provider/model" refs, in order
  bool described = false;               // found in models.providers
};

struct model_ref {
  std::string provider;
  std::string model;
};

// "provider/model", or an alias from agents.defaults.models / the legacy catalog (matched
// case-insensitively); a bare name without "/" that is no alias gets `default_provider`.
// nullopt for "".
std::optional<model_ref> resolve_model_ref(const runtime_settings& s, std::string_view ref,
                                           std::string_view default_provider);

// The configured model entry for provider/model (ids compared case-insensitively), or null.
const provider_model* find_provider_model(const runtime_settings& s, std::string_view provider, std::string_view model,
                                          const provider_config** provider_out = nullptr);

// The session's model. `agent_id` is the session key's agent ("main" when unscoped).
session_model resolve_session_model(const runtime_settings& s, std::string_view agent_id, const session_entry* row);

// provider/model described from the config (no fallbacks).
session_model model_of(const runtime_settings& s, std::string provider, std::string model);

// The session key's agent ("main" when the key names none).
std::string agent_of_key(std::string_view key);

// The default model of an agent (no row overrides): what `sessionrt gateway` says it serves.
session_model default_model(const runtime_settings& s, std::string_view agent_id = "main");

// The models `/new <model>` may pick: the legacy models.catalog[] followed by every model of
// models.providers with its aliases and effective window.
model_catalog_settings effective_catalog(const runtime_settings& s);

// The system prompt of an agent: agents.list[].systemPrompt, else agents.defaults.systemPrompt,
// then the workspace's AGENTS.md (read at start-up into prompts.project_context) as OpenClaw's
// "project context".
std::string system_prompt_of(const runtime_settings& s, std::string_view agent_id);


}  // namespace sessionrt::actors
