// What every `sessionrt` command promises on its command line: --version, --config on each
// command that reads settings (the others say "(no --config)" in their help), and a mistyped
// command or option answered with the closest one (exit 2).
#include <catch2/catch.hpp>

#include "runtime/config_values.hpp"

#include <functional>
#include <map>

#include "runtime/cli/version.hpp"
#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {
namespace {

struct listed_command {
  std::string path;  // "sessions cleanup"
  const CLI::App* app = nullptr;
  bool documented_without_config = false;  // it or a group above it says "(no --config)"
};

// Every command a user can run: each subcommand that does not itself require a subcommand
// (a group such as `transcript` does), at any depth.
std::vector<listed_command> every_command(const CLI::App& top) {
  std::vector<listed_command> out;
  std::function<void(const CLI::App&, const std::string&, bool)> walk = [&](const CLI::App& app, const std::string& path,
                                                                           bool no_config) {
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      const std::string p = path.empty() ? sub->get_name() : path + " " + sub->get_name();
      const bool documented = no_config || sub->get_description().find("(no --config)") != std::string::npos;
      if (sub->get_require_subcommand_min() == 0) out.push_back({p, sub, documented});
      walk(*sub, p, documented);
    }
  };
  walk(top, "", false);
  return out;
}

std::vector<std::string> words(const std::string& path) {
  std::vector<std::string> w;
  std::istringstream in(path);
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

}  // namespace

TEST_CASE("sessionrt --version prints the version of the build", "[cli]") {
  const std::string version = runtime::version_string();
  CHECK(version.rfind("0.", 0) == 0);  // the CMake project version first
  auto r = run_sessionrt({"--version"});
  CHECK(r.code == 0);
  CHECK(r.out == "sessionrt " + version + "\n");
  CHECK(r.err.empty());
  auto help = run_sessionrt({"--help"});
  CHECK(help.code == 0);
  CHECK_THAT(help.out, Catch::Contains("--version"));
}

TEST_CASE("every command that reads settings takes --config, the others say they read none", "[cli]") {
  temp_dir dir;
  const std::string state = dir.path();
  const std::string missing = dir.file("no-such-config.json");
  // What each command needs besides --config to get as far as reading it, so the run below
  // shows --config is read, not only accepted. A command not listed here is only checked for
  // the option (a new command: add it here).
  const std::map<std::string, std::vector<std::string>> run_args = {
      {"sessions", {"--state-dir", state}},
      {"sessions cleanup", {"--state-dir", state, "--dry-run"}},
      {"status", {"--state-dir", state}},
      {"security audit", {"--state-dir", state}},
      {"config show", {}},
      {"config check", {}},
      {"models list", {}},
      {"models status", {}},
      {"gateway", {"--state-dir", state, "--port", "0"}},
      {"gateway run", {"--state-dir", state, "--port", "0"}},
      {"gateway status", {"--state-dir", state}},
      {"gateway stop", {"--state-dir", state}},
      {"send", {"--state-dir", state, "hello"}},
      {"compact", {"--state-dir", state}},
      {"tail", {"--state-dir", state}},
  };
  CLI::App app;
  runtime::cli_state st;
  std::ostringstream out, err;
  st.io = test_cli_io(out, err);
  runtime::add_all_commands(app, st, sessionrt_command_groups());
  auto commands = every_command(app);
  REQUIRE(commands.size() >= 20);
  std::size_t ran = 0;
  for (const auto& c : commands) {
    INFO("sessionrt " << c.path);
    const bool takes_config = c.app->get_option_no_throw("--config") != nullptr;
    CHECK((takes_config || c.documented_without_config));
    CHECK_FALSE((takes_config && c.documented_without_config));  // the help tells the truth
    if (!takes_config) continue;
    if (c.path == "gateway install") continue;  // writes --config into a unit file for `gateway run`
    auto it = run_args.find(c.path);
    if (it == run_args.end()) {
      WARN("sessionrt " << c.path << " takes --config but is not run by this test: add it to run_args");
      continue;
    }
    auto args = words(c.path);
    args.push_back("--config");
    args.push_back(missing);
    args.insert(args.end(), it->second.begin(), it->second.end());
    auto r = run_sessionrt(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("no-such-config.json"));
    ++ran;
  }
  CHECK(ran == run_args.size());  // every command of the table exists and was run
  // The commands that read no settings: one file each, or the scenario's own config.
  for (const char* p : {"transcript context", "transcript check", "transcript tail", "store check", "store rewrite", "simulate"}) {
    auto it = std::find_if(commands.begin(), commands.end(), [&](const listed_command& c) { return c.path == p; });
    REQUIRE(it != commands.end());
    CHECK(it->documented_without_config);
  }
}

TEST_CASE("a mistyped command gets the closest command, exit 2", "[cli]") {
  auto r = run_sessionrt({"sesions"});
  CHECK(r.code == 2);
  CHECK(r.err == "sessionrt: unknown command 'sesions'; did you mean 'sessions'?\n");
  CHECK(r.out.empty());

  auto nested = run_sessionrt({"sessions", "clenup", "--dry-run"});
  CHECK(nested.code == 2);
  CHECK(nested.err == "sessionrt: unknown command 'sessions clenup'; did you mean 'sessions cleanup'?\n");

  auto group = run_sessionrt({"transcript", "chek", "x.jsonl"});
  CHECK(group.code == 2);
  CHECK(group.err == "sessionrt: unknown command 'transcript chek'; did you mean 'transcript check'?\n");

  auto prefix = run_sessionrt({"simul", "x.json"});
  CHECK(prefix.code == 2);
  CHECK_THAT(prefix.err, Catch::Contains("did you mean 'simulate'?"));

  auto far = run_sessionrt({"frobnicate"});
  CHECK(far.code == 2);
  CHECK_THAT(far.err, Catch::StartsWith("sessionrt: unknown command 'frobnicate'; the commands of `sessionrt` are: "));
  CHECK_THAT(far.err, Catch::Contains("sessions"));
  CHECK_THAT(far.err, Catch::Contains("simulate"));
}

TEST_CASE("a mistyped option gets the closest option of its command, exit 2", "[cli]") {
  temp_dir dir;
  auto r = run_sessionrt({"sessions", "--jsn", "--state-dir", dir.path()});
  CHECK(r.code == 2);
  CHECK(r.err == "sessionrt: unknown option '--jsn' for `sessionrt sessions`; did you mean '--json'? "
                 "(`sessionrt sessions --help` lists its options)\n");

  auto nested = run_sessionrt({"sessions", "cleanup", "--dry-rn", "--state-dir", dir.path()});
  CHECK(nested.code == 2);
  CHECK_THAT(nested.err, Catch::Contains("unknown option '--dry-rn' for `sessionrt sessions cleanup`; did you mean '--dry-run'?"));

  auto value = run_sessionrt({"tail", "--limt=5", "--state-dir", dir.path()});
  CHECK(value.code == 2);
  CHECK_THAT(value.err, Catch::Contains("unknown option '--limt' for `sessionrt tail`; did you mean '--limit'?"));

  auto top = run_sessionrt({"--verison"});
  CHECK(top.code == 2);
  CHECK_THAT(top.err, Catch::Contains("did you mean '--version'?"));

  auto none = run_sessionrt({"status", "--zzzzzz", "--state-dir", dir.path()});
  CHECK(none.code == 2);
  CHECK(none.err == "sessionrt: unknown option '--zzzzzz' for `sessionrt status` (`sessionrt status --help` lists its "
                    "options)\n");
}

TEST_CASE("closest_word suggests within a few edits or a prefix, else nothing", "[cli]") {
  const std::vector<std::string> commands = {"sessions", "status", "send", "store", "simulate"};
  CHECK(runtime::closest_word("sesions", commands) == "sessions");
  CHECK(runtime::closest_word("stauts", commands) == "status");  // a swap is one edit
  CHECK(runtime::closest_word("snd", commands) == "send");
  CHECK(runtime::closest_word("stor", commands) == "store");
  CHECK_FALSE(runtime::closest_word("gateway", commands).has_value());
  CHECK(runtime::key_distance("kitten", "sitting") == 3);
  CHECK(runtime::key_distance("", "abc") == 3);
  CHECK(runtime::key_distance("stauts", "status") == 1);
}

}  // namespace sessionrt::testing
