// Crash test (SPEC §1.2 durability): a child appends with durability=sync and prints each
// acknowledged entry id; the parent kills it with SIGKILL after a random number of acks,
// while it is in the middle of later appends. After every kill the file must open (after the
// torn-tail repair a session performs), every acknowledged id must be present, and every line
// must parse. Kills: SESSIONRT_CRASH_KILLS (default 20; scripts/test.sh --long runs 1000).
// A failure prints the kill points' seed; SESSIONRT_CRASH_SEED=<seed> repeats them.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <set>

#include "messages/json_reader.hpp"
#include "storage/transcript_open.hpp"
#include "storage/system_clock.hpp"
#include "tests/crash/child_process.hpp"
#include "tests/crash/crash_seed.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

int kills_wanted() {
  const char* v = std::getenv("SESSIONRT_CRASH_KILLS");
  return v ? std::max(1, std::atoi(v)) : 20;
}

void run_kills(const char* mode) {
  testing::temp_dir dir;
  const std::string file = dir.file("crash.jsonl");
  const std::uint32_t seed = testing::crash_seed();  // printed with any failure below
  INFO(testing::crash_seed_info(seed));
  std::mt19937 rng(seed);
  std::set<std::string> acked;
  const int kills = kills_wanted();
  std::size_t repaired_rounds = 0;
  for (int round = 0; round < kills; ++round) {
    auto c = testing::spawn_child(SESSIONRT_CRASH_APPENDER, {file, mode});
    const int acks_before_kill = std::uniform_int_distribution<int>(1, 60)(rng);
    char line[128];
    int got = 0;
    while (got < acks_before_kill && std::fgets(line, sizeof line, c.out)) {
      std::string id(line);
      if (!id.empty() && id.back() == '\n') id.pop_back();
      acked.insert(id);
      ++got;
    }
    REQUIRE(got == acks_before_kill);  // the child kept acknowledging until we killed it
    kill(c.pid, SIGKILL);
    // Acks already in the pipe were acknowledged before the kill: they count too.
    while (std::fgets(line, sizeof line, c.out)) {
      std::string id(line);
      if (!id.empty() && id.back() == '\n') id.pop_back();
      if (id.size() == 8) acked.insert(id);
    }
    fclose(c.out);
    int wstatus = 0;
    waitpid(c.pid, &wstatus, 0);
    REQUIRE(WIFSIGNALED(wstatus));

    // The file opens the way a session opens it (repairing a torn tail), every acked id is
    // there, and every line parses.
    header_fields h;
    h.id = "crash";
    h.cwd = "/crash";
    auto t = open_or_create_transcript(posix_fs(), real_clock(), file, h, {});
    REQUIRE(t.ok());
    if (t->repair && t->repair->changed()) ++repaired_rounds;
    REQUIRE(t->file->reader().index_all().ok());
    for (const auto& id : acked) {
      auto p = t->file->reader().locate(id);
      REQUIRE(p.ok());
      INFO("round " << round << " acknowledged id " << id);
      REQUIRE(p->has_value());
    }
    t->file.reset();
    for (const auto& l : testing::split_lines(testing::read_text(file))) REQUIRE(json::parse_object(l).ok());
  }
  WARN("crash test (" << mode << "): " << kills << " kills, " << acked.size() << " acknowledged entries all present, "
                      << repaired_rounds << " torn tails repaired");
}

}  // namespace

TEST_CASE("kill -9 during durability=sync appends loses no acknowledged entry and leaves no torn line") {
  run_kills("sync");
}

TEST_CASE("kill -9 during durability=batch group commits loses no acknowledged entry") { run_kills("batch"); }
