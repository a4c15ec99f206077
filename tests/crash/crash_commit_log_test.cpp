// Commit log crash test (SPEC §1.2, durability batch through actors/commit_log): a child
// (crash_commit_log.cpp) replays the state dir's log, then appends through the commit log with
// a 64 KiB checkpoint size (checkpoints every ~80 appends); the parent kills it with SIGKILL
// after a random number of acknowledged appends — or, one round in four, a few milliseconds
// after it started, often inside its replay — and then does what a power loss could do to
// what is not durable: it cuts every transcript the logs cover at a random point after the
// first byte a log record holds for it (tearing or zero-filling the rest sometimes), and
// sometimes tears the newest log after its last acknowledged record. Every third round, and at
// the end, the parent replays the logs itself; otherwise the next child does (and may be killed
// in it). After each replay: every acknowledged append is in its transcript, every transcript
// opens the way a session opens it, and every line parses.
// Kills: SESSIONRT_CRASH_KILLS (default 20; scripts/test.sh --long runs 1000).
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
#include <set>
#include <thread>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_open.hpp"
#include "tests/crash/child_process.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace cl = sessionrt::storage::commit_log;

namespace {

int kills_wanted() {
  const char* v = std::getenv("SESSIONRT_CRASH_KILLS");
  return v ? std::max(1, std::atoi(v)) : 20;
}

struct damage_stats {
  std::size_t transcripts_cut = 0, logs_torn = 0, rounds_with_two_logs = 0, killed_before_replay_done = 0;
  std::size_t rewritten = 0, replays_in_parent = 0, repairs = 0;
};

// The records of every log, oldest log first: for each transcript the first offset a record
// holds; and which log is the newest.
struct logged {
  std::map<std::string, std::uint64_t> first_offset;  // absolute path -> offset
  std::string newest;
  std::uint64_t newest_size = 0;
  std::size_t logs = 0;
};

logged read_logs(const std::string& state) {
  logged out;
  const std::string dir = cl::log_dir(state);
  auto numbers = cl::list_logs(storage::posix_fs(), dir);
  REQUIRE(numbers.ok());
  out.logs = numbers->size();
  for (auto n : *numbers) {
    const std::string path = cl::log_path(dir, n);
    auto fd = storage::posix_fs().open(path, O_RDONLY, 0);
    REQUIRE(fd.ok());
    cl::log_reader r(storage::posix_fs(), *fd, path);
    std::string payload;
    while (r.next(payload)) {
      auto rec = cl::decode(payload);
      REQUIRE(rec.ok());
      const auto* a = std::get_if<cl::transcript_append>(&*rec);
      if (!a) continue;
      const std::string file = state + "/" + a->path;
      if (!out.first_offset.count(file)) out.first_offset[file] = a->offset;
    }
    (void)storage::posix_fs().close(*fd);
    out.newest = path;
    out.newest_size = std::filesystem::file_size(path);
  }
  return out;
}

// Where the newest log's last record holding an acknowledged text ends (its tail after that
// was never acknowledged and may be torn).
std::uint64_t acked_end_of(const std::string& log, const std::set<std::string>& acked) {
  auto fd = storage::posix_fs().open(log, O_RDONLY, 0);
  REQUIRE(fd.ok());
  cl::log_reader r(storage::posix_fs(), *fd, log);
  std::string payload;
  std::uint64_t end = 0, start = 0;
  std::vector<std::pair<std::uint64_t, std::string>> records;
  while (r.next(payload, &start)) records.emplace_back(start, payload);
  const std::uint64_t stop = r.stop().offset;
  (void)storage::posix_fs().close(*fd);
  // A record ends where the next begins (or where the valid log ends).
  for (std::size_t i = 0; i < records.size(); ++i) {
    bool has = false;
    for (const auto& text : acked)
      if (records[i].second.find(text + " ") != std::string::npos) {
        has = true;
        break;
      }
    if (has) end = i + 1 < records.size() ? records[i + 1].first : stop;
  }
  return end;
}

void cut_file(const std::string& path, std::uint64_t at, int tail_kind, std::mt19937& rng) {
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(at)) == 0);
  if (tail_kind == 0) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
  REQUIRE(fd >= 0);
  std::string tail(std::uniform_int_distribution<int>(1, 300)(rng), '\0');
  if (tail_kind == 2)
    for (auto& c : tail) c = static_cast<char>('a' + rng() % 26);
  REQUIRE(::write(fd, tail.data(), tail.size()) == static_cast<ssize_t>(tail.size()));
  ::close(fd);
}

// What a power loss may do to what is not durable.
void lose_unsynced(const std::string& state, const std::set<std::string>& acked, std::mt19937& rng, damage_stats& ds) {
  const logged l = read_logs(state);
  if (l.logs >= 2) ++ds.rounds_with_two_logs;
  for (const auto& [file, first] : l.first_offset) {
    if (!std::filesystem::exists(file) || rng() % 2) continue;
    const auto size = std::filesystem::file_size(file);
    if (size <= first) continue;
    cut_file(file, std::uniform_int_distribution<std::uint64_t>(first, size)(rng), static_cast<int>(rng() % 3), rng);
    ++ds.transcripts_cut;
  }
  if (!l.newest.empty() && rng() % 3 == 0) {
    const std::uint64_t keep = acked_end_of(l.newest, acked);
    if (keep > 0 && keep < l.newest_size) {
      cut_file(l.newest, std::uniform_int_distribution<std::uint64_t>(keep, l.newest_size)(rng),
               static_cast<int>(rng() % 3), rng);
      ++ds.logs_torn;
    }
  }
}

// Every transcript opens as a session opens it, its lines parse; the user texts in it.
std::set<std::string> stored_texts(const std::string& sessions, std::size_t& repairs) {
  std::set<std::string> texts;
  for (const auto& f : std::filesystem::directory_iterator(sessions)) {
    const std::string name = f.path().filename().string();
    // The writers' transcripts (a repair's backups beside them are not transcripts to open).
    if (name.size() != 8 || name[0] != 'w' || name.compare(2, 6, ".jsonl") != 0) continue;
    INFO("transcript " << name);
    header_fields h;
    h.id = "unused";
    h.cwd = "/unused";
    auto t = storage::open_or_create_transcript(storage::posix_fs(), storage::real_clock(), f.path().string(), h, {});
    REQUIRE(t.ok());
    // A repair may drop what a kill or the loss tore (never acknowledged): checked below.
    if (t->repair) ++repairs;
    t->file.reset();
    for (const auto& line : testing::split_lines(testing::read_text(f.path().string()))) {
      auto o = json::parse_object(line);
      REQUIRE(o.ok());
      const auto* msg = json::get_object(*o, "message");
      if (!msg) continue;
      if (auto text = json::get_string(*msg, "content")) texts.emplace(text->substr(0, text->find(' ', text->find(" n") + 1)));
    }
  }
  return texts;
}

void check_all(const std::string& sessions, const std::set<std::string>& acked, int round, std::size_t& repairs) {
  const auto texts = stored_texts(sessions, repairs);
  for (const auto& text : acked) {
    INFO("round " << round << ": acknowledged append \"" << text << "\"");
    REQUIRE(texts.count(text) == 1);
  }
}

}  // namespace

TEST_CASE("kill -9 during commit log appends, checkpoints and replays, then a power loss, loses no acknowledged append") {
  testing::temp_dir dir;
  const std::string sessions = dir.file("agents/main/sessions");
  std::mt19937 rng(std::random_device{}());
  std::set<std::string> acked;
  damage_stats ds;
  const int kills = kills_wanted();
  for (int round = 0; round < kills; ++round) {
    auto c = testing::spawn_child(SESSIONRT_CRASH_COMMIT_LOG, {dir.path(), "65536"});
    const bool early = round % 4 == 3;
    bool replay_done = false;
    char line[1024];
    auto take = [&](std::string l) {
      if (!l.empty() && l.back() == '\n') l.pop_back();
      if (l.rfind("ok ", 0) == 0) acked.insert(l.substr(3));
      else if (l.rfind("replayed ", 0) == 0) replay_done = true;
      else FAIL("the child said: " << l);
    };
    if (early) {
      // A few milliseconds in: inside the replay when the last round left it work.
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 8000)(rng)));
    } else {
      const int want = std::uniform_int_distribution<int>(1, 150)(rng);
      int got = 0;
      while (got < want && std::fgets(line, sizeof line, c.out)) {
        take(line);
        got += line[0] == 'o';
      }
      REQUIRE(got == want);
    }
    testing::kill_and_drain(c, take);
    if (!replay_done) ++ds.killed_before_replay_done;
    lose_unsynced(dir.path(), acked, rng, ds);
    if (round % 3 == 2 || round + 1 == kills) {
      auto rec = cl::recover_logs(storage::posix_fs(), dir.path());
      REQUIRE(rec.ok());
      ds.rewritten += rec->report.rewritten;
      ++ds.replays_in_parent;
      check_all(sessions, acked, round, ds.repairs);
    }
  }
  CHECK(ds.transcripts_cut > 0);
  CHECK(ds.rewritten > 0);
  WARN("commit log crash test: " << kills << " kills, " << acked.size() << " acknowledged appends all stored; "
                                 << ds.transcripts_cut << " transcript cuts, " << ds.logs_torn << " torn logs, "
                                 << ds.rounds_with_two_logs << " kills with a checkpoint pending, "
                                 << ds.killed_before_replay_done << " kills before the replay was done, "
                                 << ds.rewritten << " records written again by " << ds.replays_in_parent
                                 << " replays in the test, " << ds.repairs << " torn tails repaired on open");
}
