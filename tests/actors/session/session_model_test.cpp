#include "actors/session/session_model.hpp"

#include <catch2/catch.hpp>

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

runtime_settings configured() {
  runtime_settings s;
  provider_config openai;
  openai.id = "openai";
  openai.api = "openai-responses";
  provider_model gpt;
  gpt.id = "gpt-4o";
  gpt.context_window = 128000;
  gpt.max_tokens = 16384;
  gpt.aliases = {"4o"};
  provider_model mini;
  mini.id = "gpt-4o-mini";
  mini.context_window = 128000;
  mini.context_tokens = 16000;  // caps the window
  mini.aliases = {"Fast"};
  openai.models = {gpt, mini};
  provider_config local;
  local.id = "local";
  local.base_url = "http://127.0.0.1:1234/v1";  // no api: openai-completions
  provider_model qwen;
  qwen.id = "qwen3";
  qwen.context_window = 32768;
  qwen.api = "";
  local.models = {qwen};
  provider_config anthropic;
  anthropic.id = "anthropic";
  anthropic.api = "anthropic-messages";
  provider_model sonnet;
  sonnet.id = "claude-sonnet-4-6";
  sonnet.context_window = 200000;
  sonnet.max_tokens = 64000;
  anthropic.models = {sonnet};
  s.models.providers = {openai, local, anthropic};
  s.models.defaults.primary = "openai/gpt-4o";
  s.models.defaults.fallbacks = {"anthropic/claude-sonnet-4-6", "openai/gpt-4o"};
  return s;
}

}  // namespace

TEST_CASE("session model: the configured primary is described from models.providers", "[session_model]") {
  const auto s = configured();
  const auto m = resolve_session_model(s, "main", nullptr);
  CHECK(m.provider == "openai");
  CHECK(m.model == "gpt-4o");
  CHECK(m.api == "openai-responses");
  CHECK(m.context_window == 128000);
  CHECK(m.max_tokens == 16384);
  CHECK(m.described);
  // The model itself is never its own fallback.
  REQUIRE(m.fallbacks == std::vector<std::string>{"anthropic/claude-sonnet-4-6"});
}

TEST_CASE("session model: the row's override switches window, API and max tokens together", "[session_model]") {
  const auto s = configured();
  session_entry row;
  row.set_provider_override("local");
  row.set_model_override("qwen3");
  const auto m = resolve_session_model(s, "main", &row);
  CHECK(m.model == "qwen3");
  CHECK(m.api == "openai-completions");  // a provider with a baseUrl and no api
  CHECK(m.context_window == 32768);
  CHECK(m.max_tokens == 0);
  CHECK(m.fallbacks == std::vector<std::string>{"anthropic/claude-sonnet-4-6", "openai/gpt-4o"});
}

TEST_CASE("session model: an alias override and contextTokens capping the window", "[session_model]") {
  const auto s = configured();
  session_entry row;
  row.set_model_override("fast");  // an alias, matched case-insensitively, no provider
  const auto m = resolve_session_model(s, "main", &row);
  CHECK(m.provider == "openai");
  CHECK(m.model == "gpt-4o-mini");
  CHECK(m.context_window == 16000);
}

TEST_CASE("session model: an agent's own model wins over the defaults", "[session_model]") {
  auto s = configured();
  s.models.by_agent["work"] = model_choice{"anthropic/claude-sonnet-4-6", {"local/qwen3"}};
  const auto m = resolve_session_model(s, "work", nullptr);
  CHECK(m.provider == "anthropic");
  CHECK(m.api == "anthropic-messages");
  CHECK(m.context_window == 200000);
  CHECK(m.fallbacks == std::vector<std::string>{"local/qwen3"});
  CHECK(resolve_session_model(s, "main", nullptr).model == "gpt-4o");
}

TEST_CASE("session model: the legacy keys describe a model models.providers does not list", "[session_model]") {
  runtime_settings s;
  s.model.provider = "openai";
  s.model.model = "gpt-4o";
  s.model.context_window = 64000;
  s.model.api = "openai-completions";
  s.models_catalog.push_back(catalog_model{"openai", "gpt-4.1", {"big"}, 1000000});
  auto m = resolve_session_model(s, "main", nullptr);
  CHECK(m.model == "gpt-4o");
  CHECK(m.context_window == 64000);
  CHECK(m.api == "openai-completions");
  CHECK_FALSE(m.described);
  // A catalog window follows the override (/new big): it showed 200k before.
  session_entry row;
  row.set_model_override("big");
  m = resolve_session_model(s, "main", &row);
  CHECK(m.model == "gpt-4.1");
  CHECK(m.context_window == 1000000);
}

TEST_CASE("session model: refs, aliases and the /new catalog", "[session_model]") {
  const auto s = configured();
  auto r = resolve_model_ref(s, " 4O ", "x");
  REQUIRE(r);
  CHECK(r->provider == "openai");
  CHECK(r->model == "gpt-4o");
  r = resolve_model_ref(s, "ollama/qwen3:8b", "openai");  // split at the first '/'
  REQUIRE(r);
  CHECK(r->provider == "ollama");
  CHECK(r->model == "qwen3:8b");
  r = resolve_model_ref(s, "o3", "openai");
  REQUIRE(r);
  CHECK(r->provider == "openai");
  CHECK_FALSE(resolve_model_ref(s, "  ", "openai"));
  const auto catalog = effective_catalog(s);
  REQUIRE(catalog.size() == 4);
  CHECK(catalog[1].id == "gpt-4o-mini");
  CHECK(catalog[1].context_window == 16000);
  CHECK(catalog[1].aliases == std::vector<std::string>{"Fast"});
}

TEST_CASE("session model: the system prompt per agent, with AGENTS.md as project context", "[session_model]") {
  runtime_settings s;
  CHECK(system_prompt_of(s, "main").empty());
  s.prompts.defaults = "You are terse.";
  s.prompts.by_agent["work"] = "You review code.";
  CHECK(system_prompt_of(s, "main") == "You are terse.");
  CHECK(system_prompt_of(s, "work") == "You review code.");
  s.prompts.project_context = "Run the tests before you push.";
  const std::string p = system_prompt_of(s, "main");
  CHECK(p.rfind("You are terse.\n\n# Project Context", 0) == 0);
  CHECK(p.find("## AGENTS.md\n\nRun the tests before you push.") != std::string::npos);
  s.prompts.include_agents_md = false;
  CHECK(system_prompt_of(s, "main") == "You are terse.");
}

TEST_CASE("session model: the agent of a key", "[session_model]") {
  CHECK(agent_of_key("agent:work:telegram:direct:1") == "work");
  CHECK(agent_of_key("global") == "main");
}

TEST_CASE("session model: the API of a provider, from the model, the provider, a baseUrl or a built-in id",
          "[session_model]") {
  provider_config p;
  p.id = "Anthropic";  // ids match ignoring ASCII case
  CHECK(api_of(p, nullptr) == "anthropic-messages");
  p.id = "google";
  CHECK(api_of(p, nullptr) == "google-generative-ai");
  p.id = "openai";
  CHECK(api_of(p, nullptr) == "openai-responses");
  p.id = "local";
  CHECK(api_of(p, nullptr).empty());
  p.base_url = "http://127.0.0.1:1234/v1";
  CHECK(api_of(p, nullptr) == "openai-completions");
  p.api = "anthropic-messages";
  CHECK(api_of(p, nullptr) == "anthropic-messages");
  provider_model m;
  m.id = "Qwen3";
  m.api = "openai-responses";
  p.models = {m};
  REQUIRE(find_model(p, "qwen3"));
  CHECK(api_of(p, find_model(p, "qwen3")) == "openai-responses");
  CHECK_FALSE(find_model(p, "qwen"));
  CHECK(find_provider({p}, "LOCAL") != nullptr);
}
