// Models as OpenClaw configures them (docs/gateway/config-tools/custom-providers.md, 2026.9.6;
// ../shared/reference/provider-apis.md): `models.providers.<id>` lists each provider's endpoint,
// key and models; `agents.defaults.model` / `agents.list[].model` pick a primary model and its
// fallbacks as "provider/model" refs; `agents.defaults.models.<ref>.alias` names them for
// `/new <alias>`. Plain values read by runtime/config.cpp; resolved per session by
// actors/session/session_model.hpp and per call by runtime/providers/provider_runner.hpp.
//
// The legacy `models.catalog[]` ({provider, id, aliases, contextWindow}) still loads (with a
// warning naming `models.providers`): its entries become catalog_models with no endpoint.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sessionrt::actors {

// Per million tokens, in the provider's currency (pi-ai's Model.cost).
struct model_cost {
  double input = 0, output = 0, cache_read = 0, cache_write = 0;
};

// Provider quirks (pi-ai's OpenAICompletionsCompat, the subset OpenClaw documents). Unset:
// detected from the base URL as pi-ai does.
struct model_compat {
  std::optional<bool> supports_usage_in_streaming;  // compat.supportsUsageInStreaming
  std::string max_tokens_field;                     // compat.maxTokensField: "max_tokens" | "max_completion_tokens"
  std::optional<bool> supports_developer_role;      // compat.supportsDeveloperRole
};

// One entry of models.providers.<id>.models[].
struct provider_model {
  std::string id;                                 // the id the API knows ("gpt-4o")
  std::string name;                               // display name ("" = id)
  std::string api;                                // a per-model api override ("" = the provider's)
  std::int64_t context_window = 200000;           // contextWindow
  std::optional<std::int64_t> context_tokens;     // contextTokens: caps the effective window
  std::int64_t max_tokens = 0;                    // maxTokens (0 = unknown: no max field is sent,
                                                  // except Anthropic, which requires one)
  bool reasoning = false;
  std::vector<std::string> input{"text"};         // "text", "image"
  model_cost cost;
  model_compat compat;
  std::vector<std::string> aliases;               // from agents.defaults.models.<ref>.alias, or the legacy catalog

  // The window a session may fill: contextTokens when it is smaller than contextWindow.
  std::int64_t effective_window() const {
    return context_tokens && *context_tokens > 0 && *context_tokens < context_window ? *context_tokens
                                                                                      : context_window;
  }
};

// One models.providers.<id>.
struct provider_config {
  std::string id;                                 // the key under models.providers ("openai", "local")
  std::string base_url;                           // baseUrl ("" = the API's public endpoint)
  // apiKey as resolved at load: a literal, or the value of "${VAR}". Never printed: `config
  // show`, logs, events and errors name api_key_source instead.
  std::string api_key;
  std::string api_key_source;                     // "literal" | "${VAR}" | "" (none)
  std::string api;                                // api ("" + baseUrl = openai-completions)
  std::vector<std::pair<std::string, std::string>> headers;  // extra request headers
  std::int64_t timeout_seconds = 0;               // timeoutSeconds (0 = the runner's default)
  std::vector<provider_model> models;
};

// A primary model and its fallbacks, each "provider/model" (or an alias).
struct model_choice {
  std::string primary;
  std::vector<std::string> fallbacks;
  bool empty() const { return primary.empty() && fallbacks.empty(); }
};

// The legacy catalog entry (models.catalog[]), kept as the shape `/new <model>` matches.
struct catalog_model {
  std::string provider;                        // "openai"
  std::string id;                              // "gpt-4o"
  std::vector<std::string> aliases;            // "4o", "fast", ... (matched case-insensitively)
  std::optional<std::int64_t> context_window;  // tokens; unset: model.contextWindow
};

using model_catalog_settings = std::vector<catalog_model>;

// Provider ids, model ids and aliases match ignoring ASCII case, as OpenClaw's refs do. These
// lookups are the one place the config's providers are searched (the session's model, the
// runner's candidates, the operator's commands).
inline bool same_model_id(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// "provider/model" (the model alone without a provider), as refs and messages name a model.
inline std::string model_label(std::string_view provider, std::string_view model) {
  if (provider.empty()) return std::string(model);
  return std::string(provider) + "/" + std::string(model);
}

inline const provider_config* find_provider(const std::vector<provider_config>& providers, std::string_view id) {
  for (const auto& p : providers)
    if (same_model_id(p.id, id)) return &p;
  return nullptr;
}

inline const provider_model* find_model(const provider_config& p, std::string_view id) {
  for (const auto& m : p.models)
    if (same_model_id(m.id, id)) return &m;
  return nullptr;
}

// The API a provider's model speaks (`m` null: a model the provider does not list): the model's
// api, else the provider's, else openai-completions for a provider with a baseUrl (OpenClaw's
// rule), else the API of a built-in provider id (anthropic, google, openai), else "".
inline std::string api_of(const provider_config& p, const provider_model* m) {
  if (m && !m->api.empty()) return m->api;
  if (!p.api.empty()) return p.api;
  if (!p.base_url.empty()) return "openai-completions";
  if (same_model_id(p.id, "anthropic")) return "anthropic-messages";
  if (same_model_id(p.id, "google")) return "google-generative-ai";
  if (same_model_id(p.id, "openai")) return "openai-responses";
  return {};
}

// Everything models.* and agents.*.model say.
struct models_settings {
  std::vector<provider_config> providers;          // models.providers, in file order
  model_choice defaults;                           // agents.defaults.model (a string is {primary})
  std::map<std::string, model_choice> by_agent;    // agents.list[].model, by normalized agent id
  std::int64_t retry_max_delay_ms = 60000;         // models.retry.maxDelayMs: a longer wait -> next fallback
  int retry_max_attempts = 4;                      // models.retry.maxAttempts: tries of one model before its fallback
  int max_tool_iterations = 20;                    // agents.defaults.maxToolIterations: model calls in one turn
};

// The system prompt of each agent: text, or read from a file at load.
struct system_prompt_settings {
  std::string defaults;                            // agents.defaults.systemPrompt
  std::map<std::string, std::string> by_agent;     // agents.list[].systemPrompt
  bool include_agents_md = true;                   // workspaceDir/AGENTS.md appended as project context
  // The workspace's AGENTS.md, read once when the runtime starts (not a config key).
  std::string project_context;
};

}  // namespace sessionrt::actors
