// Runtime crash test (SPEC §1.2, §3): a child runtime (crash_runtime.cpp) serves 8
// conversations with durability=batch, trims idle sessions between turns and rolls some over
// with /new; the parent kills it with SIGKILL after a random number of acknowledged turns and
// starts the next child on the same state dir. After every kill: each acknowledged message is
// in a transcript, every transcript opens the way a session opens it (a torn tail repaired)
// and all its lines parse, and sessions.json loads. At the end a runtime starts on the dir
// (the dead children's locks are stale) and every conversation takes another turn.
// Kills: max(5, SESSIONRT_CRASH_KILLS / 10) (scripts/test.sh --long: 100). The first round is
// killed only after a trimmed session took its next turn. A failure prints the kill points'
// seed; SESSIONRT_CRASH_SEED=<seed> repeats them.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_open.hpp"
#include "tests/crash/child_process.hpp"
#include "tests/crash/crash_seed.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {

int runtime_kills() {
  const char* v = std::getenv("SESSIONRT_CRASH_KILLS");
  return std::max(5, v ? std::atoi(v) / 10 : 0);
}

// The user messages (string content) of every transcript in `dir`, archives included; each
// file is opened as a session opens it (repairing a torn tail) and every line must parse.
std::set<std::string> stored_texts(const std::string& dir) {
  std::set<std::string> texts;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    if (name.find(".jsonl") == std::string::npos || name.find(".lock") != std::string::npos) continue;
    INFO("transcript " << name);
    if (name.size() > 6 && name.compare(name.size() - 6, 6, ".jsonl") == 0) {
      header_fields h;
      h.id = "unused";
      h.cwd = "/unused";
      auto t = storage::open_or_create_transcript(storage::posix_fs(), storage::real_clock(), f.path().string(), h, {});
      REQUIRE(t.ok());
    }
    for (const auto& line : testing::split_lines(testing::read_text(f.path().string()))) {
      auto o = json::parse_object(line);
      REQUIRE(o.ok());
      const auto* msg = json::get_object(*o, "message");
      if (!msg || json::get_string(*msg, "role") != std::optional<std::string_view>("user")) continue;
      if (auto text = json::get_string(*msg, "content")) texts.emplace(*text);
    }
  }
  return texts;
}

}  // namespace

TEST_CASE("kill -9 of a runtime that trims and rolls over sessions loses no acknowledged turn") {
  testing::temp_dir dir;
  const std::string sessions_dir = dir.file("agents/main/sessions");
  const std::uint32_t seed = testing::crash_seed();  // printed with any failure below
  INFO(testing::crash_seed_info(seed));
  std::mt19937 rng(seed);
  std::set<std::string> acked;
  std::size_t resets = 0, trimmed_rounds = 0, logged = 0;
  const int kills = runtime_kills();
  for (int round = 0; round < kills; ++round) {
    auto c = testing::spawn_child(SESSIONRT_CRASH_RUNTIME, {dir.path()});
    const int acks_before_kill = std::uniform_int_distribution<int>(1, 400)(rng);
    bool trimmed = false, resumed = false;  // conversation 0 was trimmed, then its next turn acked
    int got = 0;
    char line[512];
    auto take = [&](std::string l) {
      if (!l.empty() && l.back() == '\n') l.pop_back();
      if (l.rfind("ok ", 0) == 0) {
        acked.insert(l.substr(3));
        ++got;
        resumed = resumed || (trimmed && l.find(" peer 0 turn 22") != std::string::npos);
      }
      else if (l.rfind("new ", 0) == 0) ++resets, ++got;
      else if (l.rfind("trimmed ", 0) == 0) trimmed = true;
      else if (l.rfind("[", 0) == 0) ++logged;  // the runtime's log (e.g. a transcript adopted after a lost row write)
      else FAIL("the child said: " << l);
    };
    // Round 0 runs until a trimmed session took its next turn (its row fetched from the store,
    // its transcript reopened), so at least one kill comes after that path ran.
    while ((got < acks_before_kill || (round == 0 && !resumed)) && std::fgets(line, sizeof line, c.out)) take(line);
    REQUIRE(got >= acks_before_kill);  // the child kept acknowledging until we killed it
    testing::kill_and_drain(c, take);
    trimmed_rounds += resumed;

    const auto texts = stored_texts(sessions_dir);
    for (const auto& text : acked) {
      INFO("round " << round << ": acknowledged turn \"" << text << "\"");
      REQUIRE(texts.count(text) == 1);
    }
    const std::string store = sessions_dir + "/sessions.json";
    if (std::filesystem::exists(store)) {
      auto report = storage::check_store_file(storage::posix_fs(), store);
      REQUIRE(report.ok());
      INFO(report->parse_status.to_string());
      REQUIRE(report->parse_status.ok());
    }
  }
  CHECK(trimmed_rounds >= 1);

  // A runtime starts on what the dead children left, and every conversation goes on.
  runtime::runtime_options o;
  o.settings.state_dir = dir.path();
  o.settings.session.reset.timezone = "UTC";
  o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  o.settings.session.write_lock.acquire_timeout_ms = 5000;
  o.runner = std::make_shared<runtime::simulated_model>(storage::real_clock());
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  for (int p = 0; p < 8; ++p) {
    chat_event ev = testing::dm("p" + std::to_string(p), "after the crashes");
    auto out = (*rt)->send(ev).get();
    INFO(out.st.to_string());
    CHECK(out.st.ok());
  }
  REQUIRE((*rt)->stop().ok());
  WARN("runtime crash test: " << kills << " kills, " << acked.size() << " acknowledged turns all stored, " << resets
                              << " /new, " << trimmed_rounds << " rounds killed after a trimmed session's next turn, " << logged
                              << " log lines from the children");
}
