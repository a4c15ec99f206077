// model_setup: the model runner a config asks for, as `sessionrt gateway`, `sessionrt models`
// and a host that wants the built-in runners build it. A config names a model when
// agents.defaults.model (or the legacy model.provider + model.model) names one of
// models.providers; then the runner is the built-in provider_runner for every configured
// provider, else there is none (the caller picks the simulated model, and says so).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "actors/runtime_settings.hpp"
#include "runtime/providers/provider_runner.hpp"

namespace sessionrt::runtime {

struct model_setup {
  std::shared_ptr<providers::provider_runner> runner;  // null: no model configured
  // One line each, for the operator: which model serves, its API and endpoint, where its key
  // came from (never the key), the fallbacks; or that none is configured.
  std::vector<std::string> said;
};

// `tools` may be null. Errors: a configured primary whose provider speaks an API this build has
// no runner for; the HTTP loop failing to start.
result<model_setup> runner_for_config(const actors::runtime_settings& s,
                                      std::shared_ptr<const providers::tool_registry> tools = nullptr);

// "openai/gpt-4o: openai-completions at https://api.openai.com/v1, key from ${OPENAI_API_KEY}".
std::string describe_model(const actors::runtime_settings& s, const std::string& provider, const std::string& model);

}  // namespace sessionrt::runtime
