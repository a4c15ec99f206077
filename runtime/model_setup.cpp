#include "runtime/model_setup.hpp"

#include <fmt/format.h>

#include "actors/session/overflow_detector.hpp"
#include "actors/session/session_model.hpp"
#include "runtime/providers/wire_format.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::runtime {

std::string describe_model(const actors::runtime_settings& s, const std::string& provider, const std::string& model) {
  const actors::provider_config* p = actors::find_provider(s.models.providers, provider);
  const actors::provider_model* m = p ? actors::find_model(*p, model) : nullptr;
  const std::string ref = actors::model_label(provider, model);
  if (!p) return fmt::format("{}: provider {} is not configured (models.providers)", ref, provider);
  const std::string api = actors::api_of(*p, m);
  std::string where = p->base_url.empty() ? "its public endpoint" : p->base_url;
  std::string key = p->api_key_source.empty()        ? "no apiKey"
                    : p->api_key.empty()             ? "apiKey " + p->api_key_source + " is empty"
                    : p->api_key_source == "literal" ? "key written in the config"
                                                     : "key from " + p->api_key_source;
  std::string line = fmt::format("{}: {} at {}, {}", ref, api.empty() ? "no api" : api, where, key);
  if (m)
    line += fmt::format(", window {} tokens", m->effective_window());
  else
    line += " (a model the provider does not list: sent as written)";
  if (!api.empty() && !providers::find_wire_format(api))
    line += fmt::format(" [no runner for {} in this build: {}]", api, providers::known_wire_formats());
  return line;
}

result<model_setup> runner_for_config(const actors::runtime_settings& s,
                                      std::shared_ptr<const providers::tool_registry> tools) {
  model_setup out;
  const actors::session_model primary = actors::default_model(s);
  if (s.models.providers.empty() || primary.model.empty()) {
    out.said.push_back(
        "no model configured (models.providers + agents.defaults.model.primary): the simulated model answers");
    return out;
  }
  const actors::provider_config* p = actors::find_provider(s.models.providers, primary.provider);
  if (!p)
    return status(errc::invalid_argument,
                  fmt::format("agents.defaults.model.primary {} names provider {}, which models.providers does not list",
                              actors::model_label(primary.provider, primary.model), primary.provider));
  const std::string api = actors::api_of(*p, actors::find_model(*p, primary.model));
  if (!providers::find_wire_format(api))
    return status(errc::unsupported, fmt::format("provider {} speaks {}, which has no runner in this build (known: {})",
                                                 primary.provider, api.empty() ? "no api" : api,
                                                 providers::known_wire_formats()));
  providers::provider_runner_options o;
  o.models = s.models;
  if (o.models.defaults.primary.empty()) o.models.defaults.primary = actors::model_label(primary.provider, primary.model);
  o.tools = std::move(tools);
  o.time = &storage::real_clock();
  o.timers = &storage::real_alarms();
  o.is_overflow_error = [](std::string_view text) { return actors::is_context_overflow_error(text); };
  auto runner = providers::provider_runner::create(std::move(o));
  if (!runner.ok()) return runner.error().with_context("starting the model runner");
  out.runner = std::move(*runner);
  out.said.push_back("model: " + describe_model(s, primary.provider, primary.model));
  for (const auto& f : primary.fallbacks) {
    const auto slash = f.find('/');
    out.said.push_back("fallback: " + describe_model(s, f.substr(0, slash), slash == std::string::npos ? "" : f.substr(slash + 1)));
  }
  return out;
}

}  // namespace sessionrt::runtime
