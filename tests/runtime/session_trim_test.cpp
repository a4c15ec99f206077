// session.trimIdleMs: a live session idle that long closes its transcript and
// drops its cached context but keeps its write lock; the next turn reopens the
// file and continues with the whole context. On virtual time (the router's
// sweep runs on advance()).
#include <catch2/catch.hpp>
#include <filesystem>
#include <mutex>
#include <set>

#include "messages/json_access.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "tests/runtime/lifecycle_harness.hpp"
#include "storage/context_builder.hpp"
#include "storage/session_paths.hpp"
#include "storage/transcript_reader.hpp"
#include "storage/write_lock.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr const char *kKey = "agent:main:main";

// The lifecycle harness (its recording model counts the context messages each turn was given)
// with the daily reset off and the trim / passivation times of each test.
struct harness : testing::lifecycle_harness {
  // How many context messages each turn was given.
  std::vector<std::size_t> sizes() {
    std::vector<std::size_t> out;
    for (const auto &c : model->calls()) out.push_back(c.messages);
    return out;
  }

  std::unique_ptr<runtime::runtime> start(std::int64_t trim_idle_ms,
                                          std::function<void(actors::runtime_settings&)> tweak = {}) {
    return lifecycle_harness::start([&](actors::runtime_settings &s) {
      actors::reset_config off;  // keep the 04:00 daily reset out of these tests
      off.mode = actors::reset_mode::none;
      s.session.reset.reset = off;
      s.session.trim_idle_ms = trim_idle_ms;
      s.session.passivate_idle_ms = 3600 * 1000;
      if (tweak) tweak(s);
    });
  }
};

turn_outcome turn(runtime::runtime &rt, const std::string &text) {
  auto out = rt.send(testing::dm("123", text)).get();
  INFO(out.st.to_string());
  return out;
}

// Whether this process has `path` open (its fds as /proc/self/fd shows them).
bool process_has_open(const std::string &path) {
  const auto want = std::filesystem::weakly_canonical(path);
  for (const auto &fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(fd.path(), ec);
    if (!ec && target == want) return true;
  }
  return false;
}

std::string transcript_of(runtime::runtime &rt) {
  auto row = rt.session(kKey).value();
  REQUIRE(row.has_value());
  return std::string(row->session_file().value_or(""));
}

}  // namespace

TEST_CASE("trim: an idle live session closes its transcript, keeps its lock and continues with the whole context") {
  harness h;
  auto rt = h.start(30000);
  REQUIRE(turn(*rt, "first").st.ok());
  auto second = turn(*rt, "second");
  REQUIRE(second.st.ok());
  const std::string path = transcript_of(*rt);
  auto lock_path = storage::write_lock_path(storage::posix_fs(), path);
  REQUIRE(lock_path.ok());
  CHECK(process_has_open(path));

  REQUIRE(rt->advance(29000).ok());  // not idle long enough yet
  rt->settle();
  CHECK(process_has_open(path));

  REQUIRE(rt->advance(2000).ok());
  rt->settle();
  CHECK_FALSE(process_has_open(path));                 // reader, writer and index are gone
  CHECK(std::filesystem::exists(*lock_path));          // ... the lock is not: the session still owns the file
  const runtime_stats idle = rt->stats();
  CHECK(idle.live == 1);     // trimmed, not passivated
  CHECK(idle.trimmed == 1);
  CHECK(idle.routes == 0);   // its memoized route is forgotten

  auto third = turn(*rt, "third");
  REQUIRE(third.st.ok());
  CHECK(rt->stats().live == 1);
  CHECK(rt->stats().trimmed == 0);
  CHECK_FALSE(third.new_session);
  CHECK(third.session_id == second.session_id);
  // The model saw both earlier exchanges: 1, 3, then 5 messages.
  CHECK(h.sizes() == std::vector<std::size_t>{1, 3, 5});
  CHECK(process_has_open(path));

  // The file continues the same chain: six messages on the active path, ids unique.
  {
    auto rd = storage::transcript_reader::open(storage::posix_fs(), path);
    REQUIRE(rd.ok());
    auto ctx = storage::build_context(**rd);
    REQUIRE(ctx.ok());
    REQUIRE(ctx->messages.size() == 6);
    CHECK(json::get_string(ctx->messages[4].as_object(), "content") == std::optional<std::string_view>("third"));
    REQUIRE((*rd)->index_all().ok());
    std::set<std::string> ids;
    for (auto p = (*rd)->index().first_position(); p < (*rd)->index().end_position(); ++p)
      ids.insert((*rd)->index().at(p).id);
    CHECK(ids.size() == (*rd)->index().size());
  }  // this test's reader is closed: the fd check below sees only the runtime's

  // Idle again: trimmed again (the flag is reset by traffic).
  REQUIRE(rt->advance(31000).ok());
  rt->settle();
  CHECK_FALSE(process_has_open(path));
  REQUIRE(rt->stop().ok());
  CHECK_FALSE(std::filesystem::exists(*lock_path));  // released at stop
}

TEST_CASE("trim: a trimmed session rolls over on /new, archiving the file it had open") {
  harness h;
  auto rt = h.start(30000);
  auto first = turn(*rt, "first");
  REQUIRE(first.st.ok());
  const std::string old_path = transcript_of(*rt);
  REQUIRE(rt->advance(31000).ok());
  rt->settle();
  REQUIRE_FALSE(process_has_open(old_path));

  auto fresh = turn(*rt, "/new");
  REQUIRE(fresh.st.ok());
  CHECK(fresh.new_session);
  CHECK(fresh.session_id != first.session_id);
  CHECK_FALSE(std::filesystem::exists(old_path));  // archived as .reset.<ts>
  bool archived = false;
  for (const auto &f : std::filesystem::directory_iterator(std::filesystem::path(old_path).parent_path()))
    archived = archived || f.path().filename().string().rfind(
                               std::filesystem::path(old_path).filename().string() + ".reset.", 0) == 0;
  CHECK(archived);
  auto old_lock = storage::write_lock_path(storage::posix_fs(), old_path);
  REQUIRE(old_lock.ok());
  CHECK_FALSE(std::filesystem::exists(*old_lock));  // the old session's lock went with it
  REQUIRE(rt->stop().ok());
}

TEST_CASE("trim: trimIdleMs 0 never trims") {
  harness h;
  auto rt = h.start(0);
  REQUIRE(turn(*rt, "first").st.ok());
  const std::string path = transcript_of(*rt);
  REQUIRE(rt->advance(30 * 60 * 1000).ok());
  rt->settle();
  CHECK(process_has_open(path));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("trim: events sent to a trimmed session wait for its row and keep their order") {
  harness h;
  auto rt = h.start(30000);
  auto first = turn(*rt, "first");
  REQUIRE(first.st.ok());
  const auto tokens_before = rt->session(kKey).value()->total_tokens().value_or(0);
  REQUIRE(rt->advance(31000).ok());
  rt->settle();
  // A heartbeat and five messages at once: the session fetches its row from the store first.
  system_event hb;
  hb.kind = system_event_kind::heartbeat;
  hb.session_key = kKey;
  hb.text = "heartbeat after trim";
  rt->send(hb);
  std::vector<std::future<turn_outcome>> futures;
  for (int i = 0; i < 5; ++i) futures.push_back(rt->send(testing::dm("123", "burst " + std::to_string(i))));
  for (auto& f : futures) {
    auto out = f.get();
    INFO(out.st.to_string());
    REQUIRE(out.st.ok());
    CHECK(out.session_id == first.session_id);
    CHECK_FALSE(out.new_session);
  }
  auto row = rt->session(kKey).value();
  REQUIRE(row.has_value());
  CHECK(row->session_id() == std::optional<std::string_view>(first.session_id));
  CHECK(row->total_tokens().value_or(0) > tokens_before);  // the restored row went on being updated
  auto rd = storage::transcript_reader::open(storage::posix_fs(), transcript_of(*rt));
  REQUIRE(rd.ok());
  auto ctx = storage::build_context(**rd);
  REQUIRE(ctx.ok());
  REQUIRE(ctx->messages.size() == 12);
  for (int i = 0; i < 5; ++i) {
    const auto& m = ctx->messages[static_cast<std::size_t>(2 + 2 * i)].as_object();
    CHECK(json::get_string(m, "content") == std::optional<std::string_view>("burst " + std::to_string(i)));
  }
  // The heartbeat's notice went into the first burst turn's prompt (queued across the fetch).
  CHECK(h.sizes() == std::vector<std::size_t>{1, 3, 5, 7, 9, 11});
  REQUIRE(rt->stop().ok());
}

TEST_CASE("trim: a passivated trimmed session reports its sessionId") {
  harness h;
  auto rt = h.start(30000, [](auto& s) { s.session.passivate_idle_ms = 120000; });
  auto first = turn(*rt, "first");
  REQUIRE(first.st.ok());
  REQUIRE(rt->advance(31000).ok());
  rt->settle();
  REQUIRE(rt->advance(120000).ok());
  rt->settle();
  auto passivated = h.of_type("session.passivated");
  REQUIRE(passivated.size() == 1);
  CHECK(passivated[0].session_id == first.session_id);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("trim: a trimmed session whose row cannot be read back fails its turn and starts nothing") {
  harness h;
  auto rt = h.start(30000, [](auto& s) {
    s.storage.store_durable_ack = true;  // acked once sessions.json has the row (then it is spilled)
    s.storage.store_spill_min_bytes = 0;  // spilled at any size
    s.storage.watch_store_edits = false;  // on, the edit is merged (tests/runtime/hand_edit_runtime_test.cpp)
  });
  auto first = turn(*rt, "first");
  REQUIRE(first.st.ok());
  REQUIRE(rt->advance(31000).ok());
  rt->settle();
  REQUIRE(rt->flush().ok());

  // Another program appends to sessions.json in place while the runtime owns it.
  const std::string path = h.dir.path() + "/agents/main/sessions/sessions.json";
  const std::string edited = testing::read_text(path) + "\n";
  testing::write_text(path, edited);

  auto out = turn(*rt, "again");
  CHECK_FALSE(out.st.ok());
  CHECK_THAT(out.st.message(), Catch::Contains("the session row cannot be read"));
  CHECK(h.of_type("session.created").size() == 1);  // no new session over the unreadable row
  CHECK(h.of_type("session.reset").empty());
  CHECK(testing::read_text(path) == edited);
}

TEST_CASE("trim: a trimmed session whose transcript was removed meanwhile starts the file again") {
  harness h;
  auto rt = h.start(30000);
  auto first = turn(*rt, "first");
  REQUIRE(first.st.ok());
  const std::string path = transcript_of(*rt);
  REQUIRE(rt->advance(31000).ok());
  rt->settle();
  REQUIRE(std::filesystem::remove(path));  // another tool archived or deleted it

  auto next = turn(*rt, "after removal");
  INFO(next.st.to_string());
  REQUIRE(next.st.ok());
  CHECK(next.session_id == first.session_id);  // the session goes on; its file restarts
  REQUIRE(std::filesystem::exists(path));
  auto rd = storage::transcript_reader::open(storage::posix_fs(), path);
  REQUIRE(rd.ok());
  auto ctx = storage::build_context(**rd);
  REQUIRE(ctx.ok());
  REQUIRE(ctx->messages.size() == 2);
  CHECK(json::get_string(ctx->messages[0].as_object(), "content") == std::optional<std::string_view>("after removal"));
  REQUIRE(rt->stop().ok());
}
