// The session administration the gateway's sessions.* methods use (runtime::patch_session):
// a model set there is the user's choice, as /new <model> makes it.
#include <catch2/catch.hpp>

#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using namespace sessionrt::testing;

TEST_CASE("patch_session: a model is a user override (provider/model or the configured provider), null clears it") {
  lifecycle_harness h;
  auto rt = h.start([](actors::runtime_settings& s) { s.model.provider = "anthropic"; });
  runtime::runtime::session_patch p;
  p.model = std::optional<std::string>("openai/gpt-4o");
  auto row = rt->patch_session("agent:main:main", p);
  REQUIRE(row.ok());
  CHECK(row->entry.provider_override() == std::optional<std::string_view>("openai"));
  CHECK(row->entry.model_override() == std::optional<std::string_view>("gpt-4o"));
  CHECK(row->entry.model_override_source() == std::optional<std::string_view>("user"));

  p.model = std::optional<std::string>("claude-x");
  row = rt->patch_session("agent:main:main", p);
  REQUIRE(row.ok());
  CHECK(row->entry.provider_override() == std::optional<std::string_view>("anthropic"));
  CHECK(row->entry.model_override() == std::optional<std::string_view>("claude-x"));

  p.model = std::optional<std::string>(std::nullopt);
  row = rt->patch_session("agent:main:main", p);
  REQUIRE(row.ok());
  CHECK_FALSE(row->entry.provider_override().has_value());
  CHECK_FALSE(row->entry.model_override().has_value());
  CHECK_FALSE(row->entry.model_override_source().has_value());
  REQUIRE(rt->stop().ok());
}
