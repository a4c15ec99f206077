// Row crash test (#34, durability batch: every row change of a turn is a record of the commit
// log, sessions.json is written lazily): a child runtime (crash_rows.cpp) renames 6 groups turn
// after turn; the parent kills it with SIGKILL after a random number of acknowledged turns —
// one round in four a few milliseconds after it started, often inside its replay — with
// storage.storeFlushWindowMs a few ms (kills inside sessions.json writes) or 10 minutes (the
// rows only in the log), and one round in three tears the newest log after its last record
// holding an acknowledged row (what a power loss may do to the unsynced tail). Every third
// round, and at the end, the parent starts a runtime on the dir itself (which replays the log
// into sessions.json) and stops it; then every group's row holds its last acknowledged subject
// or a later one, and sessions.json loads. Otherwise the next child replays (and may be killed
// in it). Kills: max(8, SESSIONRT_CRASH_KILLS / 5); SESSIONRT_CRASH_SEED repeats a run.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"
#include "tests/crash/child_process.hpp"
#include "tests/crash/crash_seed.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace cl = sessionrt::storage::commit_log;

namespace {

int row_kills() {
  const char* v = std::getenv("SESSIONRT_CRASH_KILLS");
  return std::max(8, v ? std::atoi(v) / 5 : 0);
}

using mark = std::pair<int, int>;  // (round, k) of a subject "r<round>n<k>"

std::optional<mark> parse_subject(std::string_view s) {
  const auto n = s.find('n');
  if (s.empty() || s[0] != 'r' || n == std::string_view::npos) return std::nullopt;
  return mark{std::atoi(std::string(s.substr(1, n - 1)).c_str()), std::atoi(std::string(s.substr(n + 1)).c_str())};
}

// Cuts the newest log somewhere after the end of its last record holding an acknowledged row
// (the tail a power loss may take); returns whether it cut.
bool tear_newest_log(const std::string& state, const std::map<std::string, mark>& acked, std::mt19937& rng) {
  auto numbers = cl::list_logs(storage::posix_fs(), cl::log_dir(state));
  REQUIRE(numbers.ok());
  if (numbers->empty()) return false;
  const std::string path = cl::log_path(cl::log_dir(state), numbers->back());
  auto fd = storage::posix_fs().open(path, O_RDONLY, 0);
  REQUIRE(fd.ok());
  cl::log_reader r(storage::posix_fs(), *fd, path);
  std::string payload;
  std::uint64_t start = 0;
  std::vector<std::pair<std::uint64_t, bool>> records;  // (start, holds an acknowledged row)
  while (r.next(payload, &start)) {
    bool has = false;
    if (auto rec = cl::decode(payload); rec.ok())
      if (auto* c = std::get_if<cl::row_change>(&*rec))
        if (auto it = acked.find(c->key); it != acked.end()) {
          const std::string subject = "r" + std::to_string(it->second.first) + "n" + std::to_string(it->second.second);
          has = c->text.find("\"subject\": \"" + subject + "\"") != std::string::npos;
        }
    records.emplace_back(start, has);
  }
  const std::uint64_t stop = r.stop().offset;
  (void)storage::posix_fs().close(*fd);
  std::uint64_t keep = 0;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].second) keep = i + 1 < records.size() ? records[i + 1].first : stop;
  const auto size = std::filesystem::file_size(path);
  if (keep == 0 || keep >= size) return false;
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(std::uniform_int_distribution<std::uint64_t>(keep, size)(rng))) == 0);
  return true;
}

// A runtime starts on the dir (replaying the log into sessions.json) and stops.
void start_and_stop(const std::string& state) {
  runtime::runtime_options o;
  o.settings.state_dir = state;
  o.settings.session.reset.timezone = "UTC";
  o.settings.session.write_lock.acquire_timeout_ms = 5000;
  o.runner = std::make_shared<runtime::simulated_model>(storage::real_clock());
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  REQUIRE((*rt)->stop().ok());
}

void check_rows(const std::string& store, const std::map<std::string, mark>& acked, int round) {
  auto report = storage::check_store_file(storage::posix_fs(), store);
  REQUIRE(report.ok());
  REQUIRE(report->parse_status.ok());
  auto parsed = json::parse_object(testing::read_text(store));
  REQUIRE(parsed.ok());
  for (const auto& [key, last] : acked) {
    INFO("round " << round << ": " << key << " acknowledged r" << last.first << "n" << last.second);
    REQUIRE(parsed->contains(key));
    auto got = parse_subject(json::get_string(parsed->at(key).as_object(), "subject").value_or(""));
    REQUIRE(got.has_value());
    CHECK(*got >= last);
  }
}

}  // namespace

TEST_CASE("kill -9 of a runtime that writes sessions.json lazily loses no acknowledged row change") {
  testing::temp_dir dir;
  const std::string store = dir.file("agents/main/sessions/sessions.json");
  const std::uint32_t seed = testing::crash_seed();
  INFO(testing::crash_seed_info(seed));
  std::mt19937 rng(seed);
  std::map<std::string, mark> acked;  // key -> its last acknowledged subject
  std::size_t turns = 0, torn = 0, early_kills = 0, parent_replays = 0, lazy_rounds = 0;
  const int kills = row_kills();
  for (int round = 0; round < kills; ++round) {
    const bool lazy = rng() % 2;  // rows only in the log until the runtime stops
    lazy_rounds += lazy;
    auto c = testing::spawn_child(SESSIONRT_CRASH_ROWS, {dir.path(), std::to_string(round), lazy ? "600000" : "3"});
    const bool early = round % 4 == 3;
    bool started = false;
    char line[1024];
    auto take = [&](std::string l) {
      if (!l.empty() && l.back() == '\n') l.pop_back();
      if (l.rfind("ok ", 0) == 0) {
        char key[256];
        int r = 0, k = 0;
        REQUIRE(std::sscanf(l.c_str() + 3, "%255s %d %d", key, &r, &k) == 3);
        auto& last = acked[key];
        last = std::max(last, mark{r, k});
        ++turns;
      } else if (l == "started") {
        started = true;
      } else if (l.rfind("[", 0) != 0) {  // the runtime's own log lines pass
        FAIL("the child said: " << l);
      }
    };
    if (early) {
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 20000)(rng)));
    } else {
      const int want = std::uniform_int_distribution<int>(1, 120)(rng);
      int got = 0;
      while (got < want && std::fgets(line, sizeof line, c.out)) {
        take(line);
        got += line[0] == 'o';
      }
      REQUIRE(got == want);
    }
    testing::kill_and_drain(c, take);
    early_kills += !started;
    if (rng() % 3 == 0) torn += tear_newest_log(dir.path(), acked, rng);
    if (round % 3 == 2 || round + 1 == kills) {
      start_and_stop(dir.path());
      ++parent_replays;
      check_rows(store, acked, round);
    }
  }
  CHECK(turns > 0);
  WARN("row crash test: " << kills << " kills (" << lazy_rounds << " with rows only in the log, " << early_kills
                          << " before the runtime was up), " << turns << " acknowledged turns over " << acked.size()
                          << " rows, all in sessions.json after " << parent_replays << " replays in the test; "
                          << torn << " torn logs");
}
