// sessions.cleanup on a real gateway (OpenClaw 2026.9 hands `sessions cleanup` to the running
// gateway [R§5.5]), the CLI handing its applying cleanup and `sessions archive|delete|tail` to
// it, and sessions.list bounded as 2026.9 answers it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "app/cli/command_line.hpp"
#include "gateway/remote_commands.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "storage/system_clock.hpp"
#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using namespace sessionrt::gateway::testing;
namespace bj = boost::json;

namespace {

constexpr std::int64_t kDay = 24LL * 3600 * 1000;

std::string sessions_dir(const std::string& state) { return state + "/agents/main/sessions"; }

// A state dir with an old synthetic row (60 days: removed, not archived in place), a fresh
// one, and their transcripts.
void seed(const std::string& state) {
  const std::int64_t now = storage::real_clock().now_ms();
  std::filesystem::create_directories(sessions_dir(state));
  auto header = [](const std::string& id) {
    return "{\"type\":\"session\",\"version\":3,\"id\":\"" + id + "\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";
  };
  sessionrt::testing::write_text(sessions_dir(state) + "/old-session.jsonl", header("old-session"));
  sessionrt::testing::write_text(sessions_dir(state) + "/new-session.jsonl", header("new-session"));
  sessionrt::testing::write_text(
      sessions_dir(state) + "/sessions.json",
      "{\n  \"agent:main:hook:old\": {\n    \"sessionId\": \"old-session\",\n    \"updatedAt\": " + std::to_string(now - 60 * kDay) +
          "\n  },\n  \"agent:main:new\": {\n    \"sessionId\": \"new-session\",\n    \"updatedAt\": " +
          std::to_string(now) + "\n  }\n}\n");
}

struct cli_result {
  int code = -1;
  std::string out, err;
};

// `sessionrt <args>` in this process with the remote commands (the live-gateway hook).
cli_result run_cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  auto io = runtime::process_cli_io();
  io.out = &out;
  io.err = &err;
  io.progress = false;
  args.insert(args.begin(), "sessionrt");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cli_result r;
  r.code = runtime::run_cli(static_cast<int>(argv.size()), argv.data(), io, {gateway::add_remote_commands});
  r.out = out.str();
  r.err = err.str();
  return r;
}

bool has_file(const std::string& dir, const std::string& prefix, const std::string& infix = "") {
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.find(infix) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("sessions.cleanup runs the forced maintenance plan in the running gateway and answers what it applied") {
  running_gateway g([](gateway_options& o) { seed(o.runtime.settings.state_dir); });
  auto c = g.client();
  REQUIRE(c);
  // Mode warn (the default) and no enforce: planned, nothing changed.
  auto plan = c->request("sessions.cleanup", bj::object{}, std::chrono::seconds(30));
  REQUIRE(plan.ok());
  const auto& p = plan->as_object();
  CHECK(json::get_bool(p, "dryRun") == true);
  CHECK(json::get_int(p, "pruned") == 1);
  CHECK(p.contains("actions"));
  CHECK(std::filesystem::exists(sessions_dir(g.dir.path()) + "/old-session.jsonl"));

  auto done = c->request("sessions.cleanup", bj::object{{"enforce", true}}, std::chrono::seconds(30));
  REQUIRE(done.ok());
  const auto& d = done->as_object();
  CHECK(json::get_string(d, "mode") == std::optional<std::string_view>("enforce"));
  CHECK(json::get_bool(d, "dryRun") == false);
  CHECK(json::get_int(d, "beforeCount") == 2);
  CHECK(json::get_int(d, "afterCount") == 1);
  REQUIRE(d.contains("appliedActions"));
  CHECK(json::get_int(d, "appliedCount") == static_cast<std::int64_t>(d.at("appliedActions").as_array().size()));
  bool removed_old = false;
  for (const auto& a : d.at("appliedActions").as_array())
    removed_old |= json::get_string(a.as_object(), "key") == std::optional<std::string_view>("agent:main:hook:old");
  CHECK(removed_old);
  // The running runtime's own rows and files changed.
  auto listed = c->request("sessions.list", bj::object{}, std::chrono::seconds(30));
  REQUIRE(listed.ok());
  CHECK(json::get_int(listed->as_object(), "totalCount") == 1);
  CHECK_FALSE(std::filesystem::exists(sessions_dir(g.dir.path()) + "/old-session.jsonl"));
  CHECK(has_file(sessions_dir(g.dir.path()), "old-session.jsonl.deleted."));

  auto bad = c->request("sessions.cleanup", bj::object{{"bogus", 1}}, std::chrono::seconds(30));
  CHECK_FALSE(bad.ok());
}

TEST_CASE("sessions cleanup --enforce is handed to the running gateway instead of refused") {
  running_gateway g([](gateway_options& o) { seed(o.runtime.settings.state_dir); });
  auto r = run_cli({"sessions", "cleanup", "--enforce", "--json", "--state-dir", g.dir.path(), "--token", "tok"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto j = json::parse(r.out);
  REQUIRE(j.ok());
  CHECK(json::get_int(j->as_object(), "afterCount") == 1);
  CHECK(json::get_bool(j->as_object(), "applied") == true);
  auto text = run_cli({"sessions", "cleanup", "--enforce", "--state-dir", g.dir.path(), "--token", "tok"});
  INFO(text.err);
  CHECK(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("cleaned by the running gateway"));
  auto listed = g.client()->request("sessions.list", bj::object{}, std::chrono::seconds(30));
  REQUIRE(listed.ok());
  CHECK(json::get_int(listed->as_object(), "totalCount") == 1);
}

TEST_CASE("sessions archive and delete go through the running gateway, sessions tail reads its history") {
  running_gateway g([](gateway_options& o) { seed(o.runtime.settings.state_dir); });
  auto tail = run_cli({"sessions", "tail", "agent:main:new", "--state-dir", g.dir.path(), "--token", "tok", "--json"});
  INFO(tail.err);
  CHECK(tail.code == 0);
  CHECK_THAT(tail.out, Catch::Contains("\"messages\""));

  auto archived = run_cli({"sessions", "archive", "agent:main:hook:old", "--state-dir", g.dir.path(), "--token", "tok"});
  INFO(archived.err);
  REQUIRE(archived.code == 0);
  // Archived in place through sessions.patch (OpenClaw 2026.9): the row and its transcript stay.
  CHECK(archived.out == "Archived session agent:main:hook:old.\n");
  CHECK_FALSE(has_file(sessions_dir(g.dir.path()), "old-session.jsonl.deleted."));
  CHECK(std::filesystem::exists(sessions_dir(g.dir.path()) + "/old-session.jsonl"));
  auto shelved = g.client()->request("sessions.list", bj::object{{"archived", true}}, std::chrono::seconds(30));
  REQUIRE(shelved.ok());
  CHECK(json::get_int(shelved->as_object(), "totalCount") == 1);
  auto again = run_cli({"sessions", "archive", "agent:main:hook:old", "--state-dir", g.dir.path(), "--token", "tok"});
  CHECK(again.out == "Session agent:main:hook:old is already archived.\n");

  auto refused = run_cli({"sessions", "delete", "agent:main:new", "--state-dir", g.dir.path(), "--token", "tok"});
  CHECK(refused.code != 0);
  CHECK_THAT(refused.err, Catch::Contains("--yes"));
  auto deleted =
      run_cli({"sessions", "delete", "agent:main:new", "--yes", "--state-dir", g.dir.path(), "--token", "tok"});
  INFO(deleted.err);
  REQUIRE(deleted.code == 0);
  CHECK_FALSE(std::filesystem::exists(sessions_dir(g.dir.path()) + "/new-session.jsonl"));
  auto listed = g.client()->request("sessions.list", bj::object{}, std::chrono::seconds(30));
  REQUIRE(listed.ok());
  CHECK(json::get_int(listed->as_object(), "totalCount") == 0);
}
