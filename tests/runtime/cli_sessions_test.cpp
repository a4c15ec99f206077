// `sessionrt sessions` [R§11.1], `status`, `security audit` and `config show|check`, offline on
// fixtures; bad input gets a clear error and changes nothing.
#include <catch2/catch.hpp>

#include <algorithm>

#include "runtime/config.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/write_lock.hpp"
#include "tests/runtime/cli_test_support.hpp"

namespace sessionrt::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) { return split_lines(text); }

void build_listing_fixture(sessions_fixture& fx, int dm_rows) {
  fx.row("agent:main:main", "m1", 60 * 1000,
         {{"model", "gpt-5.5"}, {"totalTokens", 12345}, {"contextTokens", 200000}, {"thinkingLevel", "low"}});
  fx.row("agent:main:telegram:group:-100123", "g1", 2 * day, {{"chatType", "group"}});
  for (int i = 0; i < dm_rows; ++i)
    fx.row("agent:main:telegram:direct:" + std::to_string(1000 + i), "d" + std::to_string(i), (10 + i) * 60 * 1000);
  fx.save();
}

}  // namespace

TEST_CASE("cli sessions: the table of [R§11.1], newest first, 100 rows by default", "[cli]") {
  sessions_fixture fx;
  build_listing_fixture(fx, 103);  // 105 rows
  auto r = run_cli_args({"sessions", "--state-dir", fx.state_dir()});
  REQUIRE(r.code == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 2 + 1 + 100);
  CHECK(lines[0] == "Session store: " + fx.store_path());
  CHECK(lines[1] == "Sessions listed: 100 of 105 (limit 100; --limit all shows every row)");
  CHECK(lines[2] ==
        "Kind        Key                             Age       Model          Runtime            Tokens (ctx %)       Flags");
  // Kind(11) Key(26, or the longest key shown: keys are printed whole, to be copied into
  // --session) Age(9) Model(14) Runtime(18) Tokens(20), one space between columns.
  CHECK(lines[3] ==
        "direct      agent:main:main                 1m ago    gpt-5.5        sessionrt          12.3k/200k (6%)      "
        "think:low id:m1");
  CHECK(lines[4] ==
        "direct      agent:main:telegram:direct:1000 10m ago   -              sessionrt          -/200k               id:d0");
  CHECK(std::none_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find("id:g1") != std::string::npos; }));

  auto all = run_cli_args({"sessions", "--state-dir", fx.state_dir(), "--limit", "all"});
  CHECK(lines_of(all.out).size() == 3 + 105);
  auto active = run_cli_args({"sessions", "--state-dir", fx.state_dir(), "--active", "12"});
  CHECK(lines_of(active.out)[1] == "Sessions listed: 4 of 105 (active in the last 12 min)");
}

TEST_CASE("cli sessions: keys are printed whole so they can be copied into --session", "[cli]") {
  sessions_fixture fx;
  const std::string long_key = "agent:main:discord:acct-7:channel:1234567890123456789:thread:9876543210";
  fx.row(long_key, "t1", 60 * 1000);
  fx.row("agent:main:main", "m1", 2 * 60 * 1000);
  fx.save();
  auto r = run_cli_args({"sessions", "--state-dir", fx.state_dir()});
  REQUIRE(r.code == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 5);
  const std::string key_column = long_key + " ";  // the column is as wide as the longest key
  CHECK(lines[2].rfind("Kind        Key" + std::string(key_column.size() - 3, ' ') + "Age ", 0) == 0);
  CHECK(lines[3].rfind("group       " + key_column + "1m ago", 0) == 0);
  CHECK(lines[4].rfind("direct      agent:main:main" + std::string(key_column.size() - 15, ' ') + "2m ago", 0) == 0);
  CHECK(r.out.find("...") == std::string::npos);
}

TEST_CASE("cli sessions --json: the object of [R§11.1]", "[cli]") {
  sessions_fixture fx;
  build_listing_fixture(fx, 103);
  auto r = run_cli_args({"sessions", "--json", "--store", fx.store_path()});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  auto o = r.json();
  CHECK(o.at("path").as_string() == fx.store_path());
  CHECK(o.at("count").as_int64() == 100);
  CHECK(o.at("totalCount").as_int64() == 105);
  CHECK(o.at("limitApplied").as_int64() == 100);
  CHECK(o.at("hasMore").as_bool());
  CHECK(o.at("activeMinutes").is_null());
  CHECK_FALSE(o.contains("allAgents"));
  const auto& first = o.at("sessions").as_array().at(0).as_object();
  CHECK(first.at("key").as_string() == "agent:main:main");
  CHECK(first.at("updatedAt").as_int64() == fixture_now - 60000);
  CHECK(first.at("ageMs").as_int64() == 60000);
  CHECK(first.at("sessionId").as_string() == "m1");
  CHECK(first.at("totalTokens").as_int64() == 12345);
  CHECK(first.at("totalTokensFresh").as_bool());
  CHECK(first.at("model").as_string() == "gpt-5.5");
  CHECK(first.at("contextTokens").as_int64() == 200000);
  CHECK(first.at("agentId").as_string() == "main");
  CHECK(first.at("kind").as_string() == "direct");
  CHECK(first.at("thinkingLevel").as_string() == "low");
  CHECK_FALSE(first.contains("label"));  // undefined fields are omitted
  const auto& second = o.at("sessions").as_array().at(1).as_object();
  CHECK(second.at("totalTokens").is_null());

  auto limited = run_cli_args({"sessions", "--json", "--store", fx.store_path(), "--limit", "all"}).json();
  CHECK(limited.at("limitApplied").is_null());
  CHECK_FALSE(limited.at("hasMore").as_bool());
  CHECK(limited.at("sessions").as_array().size() == 105);
  auto group = limited.at("sessions").as_array().back().as_object();
  CHECK(group.at("kind").as_string() == "group");

  auto agg = run_cli_args({"sessions", "--json", "--state-dir", fx.state_dir(), "--all-agents"}).json();
  CHECK(agg.at("path").is_null());
  CHECK(agg.at("allAgents").as_bool());
  REQUIRE(agg.at("stores").as_array().size() == 1);
  CHECK(agg.at("stores").as_array()[0].as_object().at("agentId").as_string() == "main");
}

TEST_CASE("cli sessions: bad input gets a clear error and changes nothing", "[cli]") {
  sessions_fixture fx;
  build_listing_fixture(fx, 3);
  const auto before = fx.checksum();
  auto bad_active = run_cli_args({"sessions", "--state-dir", fx.state_dir(), "--active", "ten"});
  CHECK(bad_active.code == 2);
  CHECK(bad_active.out.empty());
  CHECK(bad_active.err == "sessionrt: --active expects a whole number of minutes, got \"ten\"\n");
  auto bad_limit = run_cli_args({"sessions", "--state-dir", fx.state_dir(), "--limit", "0"});
  CHECK(bad_limit.code == 2);
  CHECK(bad_limit.err.find("--limit expects") != std::string::npos);
  auto missing = run_cli_args({"sessions", "--store", fx.dir() + "/nope.json"});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("no session store at " + fx.dir() + "/nope.json") != std::string::npos);
  auto missing_agent = run_cli_args({"status", "--state-dir", fx.state_dir(), "--agent", "work"});
  CHECK(missing_agent.code == 2);
  CHECK(missing_agent.err.find("agents/work/sessions/sessions.json") != std::string::npos);
  auto cleanup_missing = run_cli_args({"sessions", "cleanup", "--enforce", "--store", fx.dir() + "/nope.json"});
  CHECK(cleanup_missing.code == 2);
  auto bad_key = run_cli_args({"sessions", "cleanup", "--state-dir", fx.state_dir(), "--active-key", "../../etc"});
  CHECK(bad_key.code == 2);
  CHECK(bad_key.err.find("--active-key") != std::string::npos);
  // An unreadable sessions.json: the error names it, nothing is set aside or rewritten.
  struct unreadable_store : storage::forwarding_fs {
    using forwarding_fs::forwarding_fs;
    result<int> open(const std::string& p, int flags, mode_t mode) override {
      if (p.size() >= 13 && p.compare(p.size() - 13, 13, "sessions.json") == 0)
        return storage::errno_status(EACCES, "open", p);
      return forwarding_fs::open(p, flags, mode);
    }
  };
  unreadable_store no_read(storage::posix_fs());
  for (auto args : std::vector<std::vector<std::string>>{{"sessions", "--state-dir", fx.state_dir()},
                                                         {"sessions", "cleanup", "--enforce", "--state-dir", fx.state_dir()},
                                                         {"status", "--state-dir", fx.state_dir()}}) {
    auto r = run_cli_with(no_read, args);
    CHECK(r.code == 2);
    CHECK(r.err.find(fx.store_path()) != std::string::npos);
    CHECK(r.err.find("Permission denied") != std::string::npos);
  }
  CHECK(fx.checksum() == before);
}

TEST_CASE("cli status: store path, owner, counts, disk use against the budget, recent activity", "[cli]") {
  sessions_fixture fx;
  build_listing_fixture(fx, 2);
  fx.transcript("m1", 1000, 0);
  fx.file(storage::archive_name("old.jsonl", storage::archive_reason::reset, fixture_now - day), 2048, day);
  temp_dir cfg;
  write_text(cfg.file("c.json"), R"({"session": {"maintenance": {"maxDiskBytes": "1mb"}}})");
  auto r = run_cli_args({"status", "--state-dir", fx.state_dir(), "--config", cfg.file("c.json")});
  REQUIRE(r.code == 0);
  auto lines = lines_of(r.out);
  CHECK(lines[0] == "Session store: " + fx.store_path());
  CHECK(lines[1] == "Runtime: not running");
  // OpenClaw 2026.9 protects the main key and per-peer DM keys too (protected_key.hpp).
  CHECK(lines[2] == "Sessions: 4 (direct 3, group 1); protected 4");
  CHECK(lines[3].rfind("Disk: ", 0) == 0);
  CHECK(lines[3].find("archives 2.0 KB") != std::string::npos);
  CHECK(lines[4].rfind("Budget: ", 0) == 0);
  CHECK(lines[4].find("of 1.0 MB") != std::string::npos);
  CHECK(lines[4].find("high water 819.2 KB") != std::string::npos);
  CHECK(lines[6] == "Recent activity:");
  CHECK(lines[7].find("agent:main:main") != std::string::npos);

  auto j = run_cli_args({"status", "--json", "--state-dir", fx.state_dir(), "--config", cfg.file("c.json")}).json();
  const auto& s = j.at("stores").as_array().at(0).as_object();
  CHECK(s.at("path").as_string() == fx.store_path());
  CHECK_FALSE(s.at("runtime").as_object().at("running").as_bool());
  CHECK(s.at("sessions").as_object().at("count").as_int64() == 4);
  CHECK(s.at("disk").as_object().at("maxBytes").as_int64() == 1048576);
  CHECK(s.at("disk").as_object().at("highWaterBytes").as_int64() == 838860);
  CHECK(s.at("disk").as_object().at("archiveBytes").as_int64() == 2048);
  CHECK_FALSE(s.at("disk").as_object().at("overBudget").as_bool());
  CHECK(s.at("recent").as_array().size() == 4);
}

TEST_CASE("cli security audit: dmScope main shared by two people, with the fix", "[cli]") {
  sessions_fixture fx;
  fx.row("agent:main:main", "m1", 1000,
         {{"chatType", "direct"}, {"origin", boost::json::object{{"from", "telegram:111"}, {"chatType", "direct"}}},
          {"lastTo", "telegram:222"}});
  fx.row("agent:main:telegram:direct:333", "d1", 1000);
  fx.save();
  auto r = run_cli_args({"security", "audit", "--state-dir", fx.state_dir()});
  CHECK(r.code == 1);
  // The identity-link fix points at origin.from in `sessionrt sessions --json`: it is there.
  auto listed = run_cli_args({"sessions", "--json", "--state-dir", fx.state_dir()}).json();
  CHECK(listed.at("sessions").as_array().at(0).as_object().at("origin").as_object().at("from").as_string() ==
        "telegram:111");
  CHECK(r.out.find("CRITICAL dm-scope-main-shared") != std::string::npos);
  CHECK(r.out.find("fix: Set session.dmScope") != std::string::npos);
  CHECK(r.out.find("sessionrt sessions cleanup --fix-dm-scope") != std::string::npos);
  auto j = run_cli_args({"security", "audit", "--json", "--state-dir", fx.state_dir()}).json();
  CHECK(j.at("summary").as_object().at("critical").as_int64() == 1);
  const auto& f = j.at("findings").as_array().at(0).as_object();
  CHECK(f.at("check").as_string() == "dm-scope-main-shared");
  CHECK(f.at("evidenceKeys").as_array().size() >= 1);

  temp_dir cfg;
  write_text(cfg.file("c.json"), R"({"session": {"dmScope": "per-channel-peer"}})");
  auto fixed = run_cli_args({"security", "audit", "--state-dir", fx.state_dir(), "--config", cfg.file("c.json")});
  CHECK(fixed.code == 0);
  CHECK(fixed.out.find("No evidence") != std::string::npos);
}

TEST_CASE("cli config show|check: the effective settings, the loader's errors and warnings", "[cli]") {
  temp_dir cfg;
  auto shown = run_cli_args({"config", "show"});
  REQUIRE(shown.code == 0);
  auto j = shown.json();
  const auto& m = j.at("session").as_object().at("maintenance").as_object();
  CHECK(m.at("mode").as_string() == "warn");
  CHECK(m.at("pruneAfter").as_string() == "30d");
  CHECK(m.at("maxEntries").as_int64() == 500);
  CHECK(m.at("resetArchiveRetention").as_string() == "30d");
  CHECK_FALSE(m.contains("maxDiskBytes"));
  const auto& cron = j.at("cron").as_object();
  CHECK(cron.at("sessionRetention").as_string() == "1d");
  CHECK(cron.at("runLog").as_object().at("maxBytes").as_int64() == 2000000);
  CHECK(cron.at("runLog").as_object().at("keepLines").as_int64() == 2000);

  write_text(cfg.file("a.json"),
             R"({"session": {"maintenance": {"mode": "enforce", "pruneAfter": 7, "resetArchiveRetention": false,
                 "maxDiskBytes": "10gb", "maxEntrys": 3}}, "cron": {"sessionRetention": "12", "runLog": {"keepLines": 50}}})");
  auto a = run_cli_args({"config", "show", "--config", cfg.file("a.json")});
  REQUIRE(a.code == 0);
  CHECK(a.err.find("warning: unknown config key session.maintenance.maxEntrys (did you mean "
                   "session.maintenance.maxEntries?)") != std::string::npos);
  auto aj = a.json();
  const auto& am = aj.at("session").as_object().at("maintenance").as_object();
  CHECK(am.at("mode").as_string() == "enforce");
  CHECK(am.at("pruneAfter").as_string() == "7d");
  CHECK(am.at("resetArchiveRetention").as_bool() == false);
  CHECK(am.at("maxDiskBytes").as_int64() == 10737418240);
  CHECK(am.at("highWaterBytes").as_int64() == 8589934592);
  CHECK(aj.at("cron").as_object().at("sessionRetention").as_string() == "12h");
  // What show prints loads back to the same settings.
  write_text(cfg.file("b.json"), a.out);
  CHECK(run_cli_args({"config", "show", "--config", cfg.file("b.json")}).out == a.out);

  auto check = run_cli_args({"config", "check", "--config", cfg.file("a.json")});
  CHECK(check.code == 1);
  CHECK(check.out.find(cfg.file("a.json") + ": valid") != std::string::npos);
  CHECK(check.out.find("1 warning(s)") != std::string::npos);
  write_text(cfg.file("bad.json"), R"({"session": {"maintenance": {"mode": "strict"}}})");
  auto bad = run_cli_args({"config", "check", "--config", cfg.file("bad.json")});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("config key session.maintenance.mode: expected one of \"warn\", \"enforce\", got \"strict\"") !=
        std::string::npos);
  write_text(cfg.file("bad2.json"), R"({"session": {"maintenance": {"pruneAfter": "soon"}}})");
  CHECK(run_cli_args({"config", "check", "--config", cfg.file("bad2.json")}).err.find("session.maintenance.pruneAfter") !=
        std::string::npos);
  CHECK(run_cli_args({"config", "check", "--config", cfg.file("none.json")}).code == 2);
}

}  // namespace sessionrt::testing
