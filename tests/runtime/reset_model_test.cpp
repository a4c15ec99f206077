// `/new <model> rest...` with models.catalog [R§4.4]: an alias, provider + model in two
// tokens, "provider/model", no match (the whole remainder is the first message), the first
// message reaching the model with the new override, and the catalog's config errors.
#include <catch2/catch.hpp>

#include "runtime/config.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using sessionrt::testing::inbound;
using sessionrt::testing::lifecycle_harness;

namespace {

const runtime::env_lookup no_env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };

void with_catalog(actors::runtime_settings& s) {
  s.model.provider = "anthropic";
  s.model.model = "claude-sonnet-4-5";
  s.models_catalog = {{"openai", "gpt-4o", {"4o", "omni"}, 128000},
                      {"anthropic", "claude-sonnet-4-5", {"sonnet"}, 200000},
                      {"anthropic", "claude-haiku-4-5", {"haiku"}, std::nullopt}};
}

}  // namespace

TEST_CASE("/new <model>: provider/model switches the override and sends the rest") {
  lifecycle_harness h;
  auto rt = h.start(with_catalog);
  REQUIRE(rt->send(inbound("telegram", "1", "hi")).get().st.ok());
  turn_outcome out = rt->send(inbound("telegram", "1", "/new openai/gpt-4o plan my week")).get();
  REQUIRE(out.st.ok());
  CHECK(out.new_session);
  REQUIRE(out.reply.has_value());
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[1].provider == "openai");
  CHECK(calls[1].model == "gpt-4o");
  CHECK(calls[1].last_user_text == "plan my week");
  auto row = rt->session("agent:main:main").value();
  REQUIRE(row.has_value());
  CHECK(row->provider_override() == std::optional<std::string_view>("openai"));
  CHECK(row->model_override() == std::optional<std::string_view>("gpt-4o"));
  CHECK(row->model_override_source() == std::optional<std::string_view>("user"));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("/new <model>: provider and model as two tokens") {
  lifecycle_harness h;
  auto rt = h.start(with_catalog);
  turn_outcome out = rt->send(inbound("telegram", "1", "/new anthropic claude-haiku-4-5 summarize this")).get();
  REQUIRE(out.st.ok());
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].provider == "anthropic");
  CHECK(calls[0].model == "claude-haiku-4-5");
  CHECK(calls[0].last_user_text == "summarize this");
  REQUIRE(rt->stop().ok());
}

TEST_CASE("/new <model>: an alias alone switches the model and says so, with no model call") {
  lifecycle_harness h;
  auto rt = h.start(with_catalog);
  turn_outcome out = rt->send(inbound("telegram", "1", "/new 4o")).get();
  REQUIRE(out.st.ok());
  CHECK(out.command == "/new");
  CHECK(out.command_output.find("Model: openai/gpt-4o.") != std::string::npos);
  CHECK(h.model->calls().empty());
  REQUIRE(rt->send(inbound("telegram", "1", "hello")).get().st.ok());
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].model == "gpt-4o");
  // The user's choice survives the next plain /reset [R§4.3].
  REQUIRE(rt->send(inbound("telegram", "1", "/reset")).get().st.ok());
  REQUIRE(rt->send(inbound("telegram", "1", "again")).get().st.ok());
  CHECK(h.model->calls().back().model == "gpt-4o");
  REQUIRE(rt->stop().ok());
}

TEST_CASE("/new <model>: no match leaves the model and sends the whole remainder") {
  lifecycle_harness h;
  auto rt = h.start(with_catalog);
  turn_outcome out = rt->send(inbound("telegram", "1", "/new plan my week please")).get();
  REQUIRE(out.st.ok());
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].provider == "anthropic");
  CHECK(calls[0].model == "claude-sonnet-4-5");
  CHECK(calls[0].last_user_text == "plan my week please");
  auto row = rt->session("agent:main:main").value();
  REQUIRE(row.has_value());
  CHECK(!row->model_override().has_value());
  REQUIRE(rt->stop().ok());
}

TEST_CASE("/new <model>: without a catalog the whole line after /new is the first message") {
  lifecycle_harness h;
  auto rt = h.start();
  REQUIRE(rt->send(inbound("telegram", "1", "/new openai/gpt-4o plan my week")).get().st.ok());
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].last_user_text == "openai/gpt-4o plan my week");
  REQUIRE(rt->stop().ok());
}

TEST_CASE("models.catalog: config entries are read, and duplicates and missing ids are errors naming the key") {
  auto ok = runtime::load_config_text(
      R"({"models":{"catalog":[{"provider":"openai","id":"gpt-4o","aliases":["4o"],"contextWindow":128000}]}})", no_env);
  REQUIRE(ok.ok());
  REQUIRE(ok->settings.models_catalog.size() == 1);
  CHECK(ok->settings.models_catalog[0].aliases == std::vector<std::string>{"4o"});
  CHECK(ok->settings.models_catalog[0].context_window == std::optional<std::int64_t>(128000));
  auto dup = runtime::load_config_text(
      R"({"models":{"catalog":[{"provider":"openai","id":"gpt-4o","aliases":["fast"]},)"
      R"({"provider":"anthropic","id":"claude-haiku-4-5","aliases":["Fast"]}]}})", no_env);
  REQUIRE(!dup.ok());
  CHECK(dup.error().message().find("models.catalog[1].aliases[0]") != std::string::npos);
  CHECK(dup.error().message().find("models.catalog[0].aliases[0]") != std::string::npos);
  auto missing = runtime::load_config_text(R"({"models":{"catalog":[{"provider":"openai"}]}})", no_env);
  REQUIRE(!missing.ok());
  CHECK(missing.error().message().find("models.catalog[0].id") != std::string::npos);
  auto depth = runtime::load_config_text(R"({"agents":{"maxSpawnDepth":9}})", no_env);
  REQUIRE(!depth.ok());
  CHECK(depth.error().message().find("agents.maxSpawnDepth") != std::string::npos);
}
