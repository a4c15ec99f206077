// `sessionrt sessions cleanup` [R§5.5]: warn and --dry-run change no byte, --enforce applies
// the plan --dry-run printed, a store owned by a runtime is refused, bad files stop it cleanly.
#include <catch2/catch.hpp>

#include <set>

#include "storage/forwarding_fs.hpp"
#include "storage/system_clock.hpp"
#include "storage/write_lock.hpp"
#include "tests/runtime/cli_test_support.hpp"

namespace sessionrt::testing {
namespace {

// 2 stale rows (one labeled; archived in place) and a stale cron run row (removed), 2 recent
// ones, an old protected group row, an expired reset archive and an orphan transcript older
// than pruneAfter. The four rows' keys are `prefix` + 0, 1, 8, 9: by default ordinary ones
// (OpenClaw 2026.9 protects per-peer DM keys from age and cap: protected_key.hpp).
void build_cleanup_fixture(sessions_fixture& fx, const std::string& prefix = "agent:main:explicit:dm") {
  fx.row("agent:main:main", "m1", 1000, {{"model", "gpt-5.5"}});
  fx.row("agent:main:telegram:group:-100", "g1", 200 * day);
  for (int i = 0; i < 3; ++i) {
    std::string id = "old" + std::to_string(i);
    boost::json::object extra;
    if (i == 0) extra["label"] = "bob";
    fx.row(i == 2 ? "agent:main:cron:nightly:run:2" : prefix + std::to_string(i), id, (40 + i) * day, extra);
    fx.transcript(id, 300, 40 * day);
  }
  fx.row(prefix + "8", "new8", 2 * day);
  fx.row(prefix + "9", "new9", 3 * day);
  for (const char* id : {"m1", "g1", "new8", "new9"}) fx.transcript(id, 300, day);
  fx.file(storage::archive_name("x.jsonl", storage::archive_reason::reset, fixture_now - 45 * day), 100, 45 * day);
  fx.transcript("orphan", 300, 50 * day);
  fx.save();
}

std::string config_file(temp_dir& dir, const std::string& text) {
  write_text(dir.file("config.json"), text);
  return dir.file("config.json");
}

}  // namespace

TEST_CASE("cli cleanup: warn mode and --dry-run change no byte and print the plan of [R§5.5]", "[cli]") {
  sessions_fixture fx;
  build_cleanup_fixture(fx);
  const auto before = fx.checksum();
  auto warn = run_cli_args({"sessions", "cleanup", "--state-dir", fx.state_dir()});
  REQUIRE(warn.code == 0);
  CHECK(fx.checksum() == before);
  auto lines = split_lines(warn.out);
  REQUIRE(lines.size() > 12);
  CHECK(lines[0] == "Session store: " + fx.store_path());
  CHECK(lines[1] == "Maintenance mode: warn");
  CHECK(lines[2] == "Entries: 7 -> 6 (remove 1)");
  CHECK(lines[3] == "Would repair sessionFile metadata: 0");
  CHECK(lines[4] == "Would prune missing transcripts: 0");
  CHECK(lines[5] == "Would retire stale direct DM sessions: 0");
  CHECK(lines[6] == "Would prune stale model-run probes: 0");
  // OpenClaw 2026.9: stale rows archived in place, only synthetic ones pruned.
  CHECK(lines[7] == "Would archive inactive sessions: 2");
  CHECK(lines[8] == "Would archive cap overflow: 0");
  CHECK(lines[9] == "Would prune stale: 1");
  CHECK(lines[10] == "Would cap overflow: 0");
  CHECK(lines[11] == "Would prune unreferenced artifacts: 1");
  CHECK(lines[12] == "");
  CHECK(lines[13] == "Planned session actions:");
  // Keys whole (as --active-key takes them): the Key column is as wide as the longest.
  CHECK(lines[14] == "Action              Key                            Age       Model          Flags");
  CHECK(lines[15] == "keep                agent:main:main                just now  gpt-5.5        id:m1 protected");
  CHECK(warn.out.find("archive-age         agent:main:explicit:dm0        40d ago   -              id:old0\n") !=
        std::string::npos);
  CHECK(warn.out.find("prune-stale         agent:main:cron:nightly:run:2  42d ago   -              id:old2\n") !=
        std::string::npos);
  CHECK(warn.out.find("keep                agent:main:telegram:group:-100 200d ago  -              id:g1 protected\n") !=
        std::string::npos);
  CHECK(warn.out.find("Summary by Label:\n(unlabeled)  5 kept, 1 pruned\nbob  1 kept, 0 pruned\nTotal: 6 kept, 1 pruned\n") !=
        std::string::npos);
  CHECK(warn.out.find("Maintenance mode is warn: nothing was changed") != std::string::npos);

  auto dry = run_cli_args({"sessions", "cleanup", "--dry-run", "--json", "--state-dir", fx.state_dir()});
  REQUIRE(dry.code == 0);
  CHECK(fx.checksum() == before);
  auto j = dry.json();
  CHECK(j.at("agentId").as_string() == "main");
  CHECK(j.at("storePath").as_string() == fx.store_path());
  CHECK(j.at("mode").as_string() == "warn");
  CHECK(j.at("dryRun").as_bool());
  CHECK(j.at("beforeCount").as_int64() == 7);
  CHECK(j.at("afterCount").as_int64() == 6);
  CHECK(j.at("pruned").as_int64() == 1);
  CHECK(j.at("archived").as_int64() == 2);
  CHECK(j.at("capped").as_int64() == 0);
  CHECK(j.at("missing").as_int64() == 0);
  CHECK(j.at("dmScopeRetired").as_int64() == 0);
  CHECK(j.at("modelRunPruned").as_int64() == 0);
  CHECK(j.at("unreferencedArtifacts").as_object().at("removedFiles").as_int64() == 1);
  CHECK(j.at("unreferencedArtifacts").as_object().at("olderThanMs").as_int64() == 30 * day);
  CHECK(j.at("diskBudget").is_null());
  CHECK(j.at("wouldMutate").as_bool());
  CHECK_FALSE(j.contains("appliedCount"));
}

TEST_CASE("cli cleanup: --enforce applies exactly the plan --dry-run printed", "[cli]") {
  sessions_fixture fx;
  build_cleanup_fixture(fx);
  temp_dir cfg;
  // maxEntries 2: the cap archives dm9 and dm8 (4 unarchived rows, the group and main rows
  // protected), and phase C of the budget evicts them: it takes only rows the cap archived.
  auto config = config_file(cfg, R"({"session": {"maintenance": {"maxEntries": 2, "maxDiskBytes": 2600, "highWaterBytes": 2000}}})");
  auto dry = run_cli_args({"sessions", "cleanup", "--dry-run", "--json", "--state-dir", fx.state_dir(), "--config", config});
  REQUIRE(dry.code == 0);
  auto planned = dry.json();
  const auto before = fx.checksum();
  CHECK(planned.at("diskBudget").as_object().at("overBudget").as_bool());
  CHECK(planned.at("capArchived").as_int64() == 2);
  CHECK(planned.at("diskBudget").as_object().at("removedEntries").as_int64() >= 1);
  auto applied = run_cli_args({"sessions", "cleanup", "--enforce", "--json", "--state-dir", fx.state_dir(), "--config", config});
  REQUIRE(applied.code == 0);
  CHECK(fx.checksum() != before);
  auto done = applied.json();
  CHECK_FALSE(done.at("dryRun").as_bool());
  CHECK(done.at("mode").as_string() == "enforce");
  // The same actions; the applier writes a batch's row actions first (phase C's evictions come
  // before the file actions planned ahead of them), so compare them as sets.
  auto sorted_actions = [](const boost::json::value& v) {
    std::multiset<std::string> out;
    for (const auto& a : v.as_array()) out.insert(boost::json::serialize(a));
    return out;
  };
  CHECK(sorted_actions(done.at("appliedActions")) == sorted_actions(planned.at("actions")));
  CHECK(done.at("appliedCount").as_int64() == static_cast<std::int64_t>(planned.at("actions").as_array().size()));
  CHECK(done.at("afterCount") == planned.at("afterCount"));
  CHECK(done.at("diskBudget") == planned.at("diskBudget"));
  CHECK(done.at("skipped").as_array().empty());
  // The files are what the plan said: each acted on is gone; an archive is there unless a
  // later action (the disk budget) deleted it.
  std::set<std::string> deleted;
  for (const auto& a : planned.at("actions").as_array())
    if (a.as_object().at("action").as_string() == "delete-file") deleted.insert(std::string(a.as_object().at("file").as_string()));
  bool budget_deleted_an_archive = false;
  for (const auto& a : planned.at("actions").as_array()) {
    const auto& o = a.as_object();
    if (o.at("action").as_string() == "remove-row" || o.at("action").as_string() == "archive-row") continue;
    CHECK_FALSE(exists(fx.path(std::string(o.at("file").as_string()))));
    if (!o.contains("target")) continue;
    const std::string target(o.at("target").as_string());
    CHECK(exists(fx.path(target)) != deleted.count(target) > 0);
    budget_deleted_an_archive |= deleted.count(target) > 0;
  }
  CHECK(budget_deleted_an_archive);
  auto keys = fx.keys_on_disk();
  CHECK(std::find(keys.begin(), keys.end(), "agent:main:telegram:group:-100") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "agent:main:main") != keys.end());
  CHECK(keys.size() == static_cast<std::size_t>(done.at("afterCount").as_int64()));
  CHECK_FALSE(exists(fx.store_path() + ".lock"));  // the cleanup's own lock is gone
  // Nothing left to do: the next dry run plans nothing.
  auto again = run_cli_args({"sessions", "cleanup", "--dry-run", "--json", "--state-dir", fx.state_dir(), "--config", config});
  CHECK_FALSE(again.json().at("wouldMutate").as_bool());

  // Text of an applied cleanup.
  sessions_fixture fx2;
  build_cleanup_fixture(fx2);
  auto text = run_cli_args({"sessions", "cleanup", "--enforce", "--state-dir", fx2.state_dir()});
  CHECK(text.out == "Session store: " + fx2.store_path() +
                        "\nApplied maintenance. Current entries: 6\nPruned unreferenced artifacts: 1\n");
}

TEST_CASE("cli cleanup: mode enforce in the config applies without --enforce, --fix-dm-scope retires per-peer rows",
          "[cli]") {
  sessions_fixture fx;
  build_cleanup_fixture(fx, "agent:main:telegram:direct:");  // per-peer DM rows: protected, but retired
  temp_dir cfg;
  auto config = config_file(cfg, R"({"session": {"dmScope": "main", "maintenance": {"mode": "enforce"}}})");
  auto r = run_cli_args({"sessions", "cleanup", "--fix-dm-scope", "--json", "--state-dir", fx.state_dir(), "--config", config});
  REQUIRE(r.code == 0);
  auto j = r.json();
  CHECK_FALSE(j.at("dryRun").as_bool());
  CHECK(j.at("dmScopeRetired").as_int64() == 4);  // direct:0, 1, 8, 9 (the cron row: pruned as stale)
  CHECK(j.at("afterCount").as_int64() == 2);
  auto keys = fx.keys_on_disk();
  CHECK(keys == std::vector<std::string>{"agent:main:main", "agent:main:telegram:group:-100"});
  CHECK(has_name_starting(list_names(fx.dir()), "new8.jsonl.deleted."));

  sessions_fixture other;
  build_cleanup_fixture(other, "agent:main:telegram:direct:");
  auto per_peer = config_file(cfg, R"({"session": {"dmScope": "per-peer"}})");
  auto note = run_cli_args({"sessions", "cleanup", "--dry-run", "--fix-dm-scope", "--state-dir", other.state_dir(), "--config", per_peer});
  CHECK(note.out.find("Note: --fix-dm-scope retires nothing: session.dmScope is \"per-peer\"") != std::string::npos);
}

TEST_CASE("cli cleanup: a store owned by a running runtime is refused, read-only commands still work", "[cli]") {
  sessions_fixture fx;
  build_cleanup_fixture(fx);
  auto lock = storage::acquire_write_lock(storage::posix_fs(), storage::real_clock(), storage::real_process_probe(),
                                          fx.store_path());
  REQUIRE(lock.ok());
  const auto before = fx.checksum();
  const std::string pid = std::to_string(::getpid());
  auto r = run_cli_args({"sessions", "cleanup", "--enforce", "--state-dir", fx.state_dir()}, storage::real_clock().now_ms());
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("is owned by a running runtime (pid " + pid + ")") != std::string::npos);
  CHECK(fx.checksum() == before);
  auto dry = run_cli_args({"sessions", "cleanup", "--dry-run", "--state-dir", fx.state_dir()}, storage::real_clock().now_ms());
  CHECK(dry.code == 0);
  CHECK(run_cli_args({"sessions", "--state-dir", fx.state_dir()}).code == 0);
  auto st = run_cli_args({"status", "--state-dir", fx.state_dir()}, storage::real_clock().now_ms());
  CHECK(st.code == 0);
  CHECK(st.out.find("Runtime: running (pid " + pid + ")") != std::string::npos);
  CHECK(fx.checksum() == before);
  REQUIRE(lock->release().ok());
  CHECK(run_cli_args({"sessions", "cleanup", "--enforce", "--state-dir", fx.state_dir()}).code == 0);
}

TEST_CASE("cli cleanup: an unreadable file in the directory stops it before anything changes", "[cli]") {
  struct failing_fs : storage::forwarding_fs {
    using forwarding_fs::forwarding_fs;
    std::string bad;
    result<storage::file_info> lstat(const std::string& p) override {
      if (p.find(bad) != std::string::npos) return storage::errno_status(EACCES, "lstat", p);
      return forwarding_fs::lstat(p);
    }
    result<int> open(const std::string& p, int flags, mode_t mode) override {
      if (p.find(bad) != std::string::npos) return storage::errno_status(EACCES, "open", p);
      return forwarding_fs::open(p, flags, mode);
    }
  };
  sessions_fixture fx;
  build_cleanup_fixture(fx);
  fx.row("agent:main:hook:small", "tiny", 1000);
  fx.transcript("tiny", 10, 1000, false);
  fx.save();
  const auto before = fx.checksum();
  failing_fs f(storage::posix_fs());
  f.bad = "old1.jsonl";  // cannot be stat'ed
  auto r = run_cli_with(f, {"sessions", "cleanup", "--enforce", "--state-dir", fx.state_dir()});
  CHECK(r.code == 2);
  CHECK(r.err.find(fx.path("old1.jsonl")) != std::string::npos);
  CHECK(r.err.find("Permission denied") != std::string::npos);
  CHECK(fx.checksum() == before);
  f.bad = "tiny.jsonl";  // --fix-missing must read it
  auto m = run_cli_with(f, {"sessions", "cleanup", "--enforce", "--fix-missing", "--state-dir", fx.state_dir()});
  CHECK(m.code == 2);
  CHECK(m.err.find(fx.path("tiny.jsonl")) != std::string::npos);
  CHECK(fx.checksum() == before);
  CHECK_FALSE(exists(fx.store_path() + ".lock"));
}

TEST_CASE("cli cleanup: a disk budget that cannot be met is reported, exit 1", "[cli]") {
  sessions_fixture fx;
  fx.row("agent:main:telegram:group:-1", "g1", day);
  fx.transcript("g1", 5000, day);
  fx.save();
  temp_dir cfg;
  auto config = config_file(cfg, R"({"session": {"maintenance": {"maxDiskBytes": 1000}}})");
  auto r = run_cli_args({"sessions", "cleanup", "--dry-run", "--state-dir", fx.state_dir(), "--config", config});
  CHECK(r.code == 1);
  CHECK(r.out.find("Warning: session disk budget cannot be met") != std::string::npos);
  auto j = run_cli_args({"sessions", "cleanup", "--enforce", "--json", "--state-dir", fx.state_dir(), "--config", config});
  CHECK(j.code == 1);
  auto o = j.json();
  CHECK(o.at("diskBudget").as_object().at("overBudget").as_bool());
  CHECK_FALSE(o.at("diskBudget").as_object().at("met").as_bool());
  CHECK(o.at("warnings").as_array().size() == 1);
  CHECK(exists(fx.path("g1.jsonl")));
}

}  // namespace sessionrt::testing
