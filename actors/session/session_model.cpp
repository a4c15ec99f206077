#include "actors/session/session_model.hpp"

#include <algorithm>

#include "actors/router/session_key.hpp"

namespace sessionrt::actors {
namespace {

const model_choice& choice_of(const runtime_settings& s, std::string_view agent_id) {
  auto it = s.models.by_agent.find(std::string(agent_id));
  if (it != s.models.by_agent.end() && !it->second.primary.empty()) return it->second;
  return s.models.defaults;
}

const std::vector<std::string>& fallbacks_of(const runtime_settings& s, std::string_view agent_id) {
  auto it = s.models.by_agent.find(std::string(agent_id));
  if (it != s.models.by_agent.end() && !it->second.fallbacks.empty()) return it->second.fallbacks;
  return s.models.defaults.fallbacks;
}

void describe(const runtime_settings& s, session_model& out) {
  const provider_config* p = nullptr;
  if (const provider_model* m = find_provider_model(s, out.provider, out.model, &p)) {
    out.described = true;
    out.provider = p->id;
    out.model = m->id;
    out.api = api_of(*p, m);
    out.context_window = m->effective_window();
    out.max_tokens = m->max_tokens;
    return;
  }
  out.api = s.model.api;
  out.context_window = s.model.context_window;
  out.max_tokens = s.model.max_tokens;
  for (const auto& c : s.models_catalog)
    if (same_model_id(c.provider, out.provider) && same_model_id(c.id, out.model) && c.context_window) {
      out.context_window = *c.context_window;
      break;
    }
  // A provider configured without this model still says which API it speaks.
  if (const provider_config* prov = find_provider(s.models.providers, out.provider)) out.api = api_of(*prov, nullptr);
}

}  // namespace


const provider_model* find_provider_model(const runtime_settings& s, std::string_view provider, std::string_view model,
                                          const provider_config** provider_out) {
  const provider_config* p = find_provider(s.models.providers, provider);
  const provider_model* m = p ? find_model(*p, model) : nullptr;
  if (m && provider_out) *provider_out = p;
  return m;
}

std::optional<model_ref> resolve_model_ref(const runtime_settings& s, std::string_view ref,
                                           std::string_view default_provider) {
  while (!ref.empty() && ref.front() == ' ') ref.remove_prefix(1);
  while (!ref.empty() && ref.back() == ' ') ref.remove_suffix(1);
  if (ref.empty()) return std::nullopt;
  for (const auto& p : s.models.providers)
    for (const auto& m : p.models)
      for (const auto& a : m.aliases)
        if (same_model_id(a, ref)) return model_ref{p.id, m.id};
  for (const auto& c : s.models_catalog)
    for (const auto& a : c.aliases)
      if (same_model_id(a, ref)) return model_ref{c.provider, c.id};
  const auto slash = ref.find('/');
  if (slash != std::string_view::npos && slash > 0)
    return model_ref{std::string(ref.substr(0, slash)), std::string(ref.substr(slash + 1))};
  return model_ref{std::string(default_provider), std::string(ref)};
}

session_model model_of(const runtime_settings& s, std::string provider, std::string model) {
  session_model out;
  out.provider = std::move(provider);
  out.model = std::move(model);
  describe(s, out);
  return out;
}

std::string agent_of_key(std::string_view key) {
  // Asked several times a turn (model(), system_prompt()) for a key the router normalized.
  if (auto plain = agent_id_of_plain_key(key)) return std::string(*plain);
  auto parsed = parse_agent_session_key(key);
  return parsed ? parsed->agent_id : std::string(default_agent_id);
}

// The agent's fallbacks as "provider/model", without duplicates and without `self`.
static std::vector<std::string> fallback_labels(const runtime_settings& s, std::string_view agent_id, const session_model& self) {
  std::vector<std::string> out;
  const std::string own = model_label(self.provider, self.model);
  for (const auto& f : fallbacks_of(s, agent_id)) {
    auto ref = resolve_model_ref(s, f, self.provider);
    if (!ref) continue;
    std::string label = model_label(ref->provider, ref->model);
    if (same_model_id(label, own)) continue;
    if (std::find(out.begin(), out.end(), label) == out.end()) out.push_back(std::move(label));
  }
  return out;
}

session_model default_model(const runtime_settings& s, std::string_view agent_id) {
  session_model out;
  const model_choice& choice = choice_of(s, agent_id);
  if (auto ref = resolve_model_ref(s, choice.primary, s.model.provider)) {
    out.provider = ref->provider;
    out.model = ref->model;
  } else {
    out.provider = s.model.provider;
    out.model = s.model.model;
  }
  describe(s, out);
  out.fallbacks = fallback_labels(s, agent_id, out);
  return out;
}

session_model resolve_session_model(const runtime_settings& s, std::string_view agent_id, const session_entry* row) {
  session_model out = default_model(s, agent_id);
  if (!row) return out;
  const auto provider = row->provider_override();
  const auto model = row->model_override();
  if (!provider && !model) return out;
  if (model) {
    auto ref = provider ? std::optional<model_ref>(model_ref{std::string(*provider), std::string(*model)})
                        : resolve_model_ref(s, *model, out.provider);
    if (ref) {
      out.provider = ref->provider;
      out.model = ref->model;
    }
  } else {
    out.provider = std::string(*provider);
  }
  out.described = false;
  describe(s, out);
  out.fallbacks = fallback_labels(s, agent_id, out);
  return out;
}

model_catalog_settings effective_catalog(const runtime_settings& s) {
  model_catalog_settings out = s.models_catalog;
  for (const auto& p : s.models.providers)
    for (const auto& m : p.models) {
      catalog_model c;
      c.provider = p.id;
      c.id = m.id;
      c.aliases = m.aliases;
      c.context_window = m.effective_window();
      out.push_back(std::move(c));
    }
  return out;
}

std::string system_prompt_of(const runtime_settings& s, std::string_view agent_id) {
  std::string prompt = s.prompts.defaults;
  if (auto it = s.prompts.by_agent.find(std::string(agent_id)); it != s.prompts.by_agent.end()) prompt = it->second;
  if (s.prompts.include_agents_md && !s.prompts.project_context.empty()) {
    if (!prompt.empty()) prompt += "\n\n";
    prompt += "# Project Context\n\n## AGENTS.md\n\n" + s.prompts.project_context;
  }
  return prompt;
}

}  // namespace sessionrt::actors
