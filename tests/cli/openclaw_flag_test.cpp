// --openclaw: a command works on what OpenClaw itself would use, its state dir and its config,
// whatever sessionrt's own variables say.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {

TEST_CASE("sessionrt status --openclaw reads OpenClaw's state dir and config", "[cli]") {
  temp_dir dir;
  const std::string oc = dir.path() + "/dot-openclaw";
  std::filesystem::create_directories(oc + "/agents/main/sessions");
  write_text(oc + "/agents/main/sessions/sessions.json",
             R"({"agent:main:main": {"sessionId": "s1", "updatedAt": 1800000000000}})" "\n");
  write_text(oc + "/openclaw.json", "{ session: { maintenance: { maxDiskBytes: '5mb' } } }  // JSON5, as OpenClaw writes it\n");
  std::map<std::string, std::string> vars{{"HOME", dir.path()}, {"OPENCLAW_STATE_DIR", oc},
                                          {"SESSIONRT_STATE_DIR", dir.path() + "/elsewhere"}};
  std::ostringstream out, err;
  auto io = test_cli_io(out, err);
  io.env = [&vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  std::vector<std::string> args{"sessionrt", "status", "--openclaw"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const int code = runtime::run_cli(static_cast<int>(argv.size()), argv.data(), io, sessionrt_command_groups());
  INFO(out.str() << err.str());
  REQUIRE(code == 0);
  CHECK_THAT(out.str(), Catch::Contains("Session store: " + oc + "/agents/main/sessions/sessions.json"));
  CHECK_THAT(out.str(), Catch::Contains("of 5.0 MB"));  // the budget of OpenClaw's config file
}

}  // namespace sessionrt::testing
