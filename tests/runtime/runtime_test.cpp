// The embedded runtime end to end: turns through the public API with the simulated model,
// lifecycle events, /new, restart continuity, one runtime per state dir, passivation order,
// the daily and idle timers on virtual time, and heartbeat traffic.
#include <catch2/catch.hpp>

#include <filesystem>
#include <mutex>

#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "tests/runtime/lifecycle_harness.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/transcript_reader.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

// node: new Date("2026-11-30T03:59:00.000Z").getTime()
constexpr std::int64_t kT0 = testing::lifecycle_harness::kT0;

// The lifecycle harness (its events) with the simulated model itself (asynchronous) as the runner.
struct harness : testing::lifecycle_harness {
  std::shared_ptr<simulated_model> sim = std::make_shared<simulated_model>(clk);

  runtime_options options(std::function<void(actors::runtime_settings&)> tweak = {}) {
    return lifecycle_harness::options(tweak, sim);
  }
  std::unique_ptr<runtime::runtime> start(std::function<void(actors::runtime_settings&)> tweak = {}) {
    return start_with(options(std::move(tweak)));
  }
  std::vector<std::string> types_for(const std::string& key) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<std::string> out;
    for (const auto& e : events)
      if (e.session_key == key) out.push_back(e.type);
    return out;
  }
  std::size_t count(std::string_view type) {
    std::lock_guard<std::mutex> g(mu);
    return std::count_if(events.begin(), events.end(), [&](const lifecycle_event& e) { return e.type == type; });
  }
};

using testing::dm;

turn_outcome turn(runtime::runtime& rt, chat_event ev) {
  auto out = rt.send(std::move(ev)).get();
  INFO(out.st.to_string());
  return out;
}

std::vector<std::string> transcript_texts(const std::string& path) {
  auto rd = storage::transcript_reader::open(storage::posix_fs(), path);
  REQUIRE(rd.ok());
  auto ctx = storage::build_context(**rd);
  REQUIRE(ctx.ok());
  std::vector<std::string> out;
  for (const auto& m : ctx->messages) {
    const auto& o = m.as_object();
    if (auto s = json::get_string(o, "content")) out.emplace_back(*s);
    else out.emplace_back(json::get_string(o.at("content").as_array()[0].as_object(), "text").value_or(""));
  }
  return out;
}

}  // namespace

TEST_CASE("a turn through the public API: routed, appended, answered, the row stored") {
  harness h;
  auto rt = h.start();
  auto out = turn(*rt, dm("123", "Hello there"));
  REQUIRE(out.st.ok());
  CHECK(out.session_key == "agent:main:main");  // dmScope main: every DM shares the main session
  CHECK(out.new_session);
  REQUIRE(out.reply.has_value());
  CHECK_FALSE(out.reply->empty());
  auto row = rt->session("agent:main:main").value();
  REQUIRE(row.has_value());
  CHECK(row->session_id() == std::optional<std::string_view>(out.session_id));
  CHECK(row->total_tokens().value_or(0) > 0);
  CHECK(row->last_channel() == std::optional<std::string_view>("telegram"));
  const std::string path(row->session_file().value_or(""));
  CHECK(transcript_texts(path).front() == "Hello there");
  REQUIRE(rt->stop().ok());
  CHECK(h.types_for("agent:main:main") ==
        std::vector<std::string>{"session.created", "message.appended", "message.appended", "turn.completed",
                                 "session.passivated"});
}

TEST_CASE("the stored user turn is what the user sent and runtime context reaches only the model") {
  harness h;
  auto rt = h.start();
  auto ev = dm("123", "What time is it?");
  ev.runtime_context = "[runtime] current time: 04:00";
  auto out = turn(*rt, ev);
  REQUIRE(out.st.ok());
  auto row = rt->session("agent:main:main").value();
  auto texts = transcript_texts(std::string(row->session_file().value_or("")));
  CHECK(texts.front() == "What time is it?");
  CHECK(out.reply->find("current time") != std::string::npos);  // the simulated model quotes its prompt's start
}

TEST_CASE("/new starts a new sessionId, archives the old transcript, says why, keeps preferences") {
  harness h;
  auto rt = h.start();
  auto first = turn(*rt, dm("123", "one"));
  REQUIRE(first.st.ok());
  auto row = rt->session("agent:main:main").value();
  const std::string old_path(row->session_file().value_or(""));
  auto reset = turn(*rt, dm("123", "/new"));
  REQUIRE(reset.st.ok());
  CHECK(reset.new_session);
  CHECK(reset.reset_reason == "new");
  CHECK(reset.command == "/new");
  CHECK_FALSE(reset.reply.has_value());
  CHECK(reset.session_id != first.session_id);
  CHECK_FALSE(testing::exists(old_path));
  bool archived = false;
  for (const auto& n : testing::list_names(storage::path_dirname(old_path)))
    if (n.rfind(storage::path_basename(old_path) + ".reset.", 0) == 0) archived = true;
  CHECK(archived);
  auto after = turn(*rt, dm("123", "/new and carry on"));
  REQUIRE(after.st.ok());
  CHECK(after.reply.has_value());
  REQUIRE(rt->stop().ok());
  std::lock_guard<std::mutex> g(h.mu);
  auto it = std::find_if(h.events.begin(), h.events.end(), [](auto& e) { return e.type == "session.reset"; });
  REQUIRE(it != h.events.end());
  CHECK(json::get_string(it->data, "reason") == std::optional<std::string_view>("new"));
  CHECK(json::get_string(it->data, "oldSessionId") == std::optional<std::string_view>(first.session_id));
  CHECK(json::get_string(it->data, "newSessionId") == std::optional<std::string_view>(reset.session_id));
}

TEST_CASE("restart: a new runtime on the same dir continues every session with the same id and context") {
  harness h;
  std::string id, path;
  {
    auto rt = h.start([](auto& s) { s.routing.session.direct_message_scope = actors::dm_scope::per_channel_peer; });
    auto a = turn(*rt, dm("alice", "remember the number 42"));
    auto b = turn(*rt, dm("bob", "hi from bob", "discord"));
    REQUIRE(a.st.ok());
    REQUIRE(b.st.ok());
    CHECK(a.session_key == "agent:main:telegram:direct:alice");
    CHECK(b.session_key == "agent:main:discord:direct:bob");
    id = a.session_id;
    REQUIRE(rt->stop().ok());
  }
  auto rt = h.start([](auto& s) { s.routing.session.direct_message_scope = actors::dm_scope::per_channel_peer; });
  auto again = turn(*rt, dm("alice", "what was the number?"));
  REQUIRE(again.st.ok());
  CHECK(again.session_id == id);
  CHECK_FALSE(again.new_session);
  auto row = rt->session("agent:main:telegram:direct:alice").value();
  auto texts = transcript_texts(std::string(row->session_file().value_or("")));
  REQUIRE(texts.size() == 4);
  CHECK(texts[0] == "remember the number 42");
  CHECK(texts[2] == "what was the number?");
  CHECK(rt->sessions()->size() == 2);
}

TEST_CASE("a second runtime on the same state dir fails at start with the lock holder named") {
  harness h;
  auto rt = h.start();
  REQUIRE(turn(*rt, dm("1", "hi")).st.ok());
  auto opts = h.options();
  opts.store_lock_timeout_ms = 0;
  auto second = runtime::runtime::start(opts);
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.error().message(), Catch::Contains("sessions.json.lock"));
  CHECK_THAT(second.error().message(), Catch::Contains("another runtime owns"));
}

TEST_CASE("passivated sessions come back in order and lose nothing") {
  harness h;
  auto rt = h.start([](auto& s) {
    s.session.passivate_idle_ms = 60000;
    actors::reset_config off;  // the clock starts at 03:59: keep the 04:00 reset out of this test
    off.mode = actors::reset_mode::none;
    s.session.reset.reset = off;
  });
  std::vector<std::future<turn_outcome>> futures;
  for (int i = 0; i < 20; ++i) futures.push_back(rt->send(dm("123", "message " + std::to_string(i))));
  for (auto& f : futures) REQUIRE(f.get().st.ok());
  CHECK(rt->stats().routes == 1);
  REQUIRE(rt->advance(61000).ok());  // idle: the sweep passivates the actor
  CHECK(h.count("session.passivated") == 1);
  CHECK(rt->stats().live == 0);
  CHECK(rt->stats().routes == 0);  // a passivated session keeps no memoized route
  futures.clear();
  for (int i = 20; i < 40; ++i) futures.push_back(rt->send(dm("123", "message " + std::to_string(i))));
  for (auto& f : futures) REQUIRE(f.get().st.ok());
  auto row = rt->session("agent:main:main").value();
  auto texts = transcript_texts(std::string(row->session_file().value_or("")));
  REQUIRE(texts.size() == 80);
  for (int i = 0; i < 40; ++i) CHECK(texts[static_cast<std::size_t>(2 * i)] == "message " + std::to_string(i));
}

TEST_CASE("daily reset: the 04:00 timer expires the session, the next message starts a new one (reason daily)") {
  harness h;  // clock at 03:59 UTC
  auto rt = h.start();
  auto before = turn(*rt, dm("123", "at 03:59"));
  REQUIRE(before.st.ok());
  REQUIRE(rt->advance(60 * 1000).ok());  // 04:00:00.000: the boundary
  REQUIRE(rt->advance(1).ok());
  CHECK(h.count("session.expired") == 1);
  CHECK(h.count("session.passivated") == 1);
  REQUIRE(rt->advance(60 * 1000).ok());  // 04:01
  auto after = turn(*rt, dm("123", "at 04:01"));
  REQUIRE(after.st.ok());
  CHECK(after.new_session);
  CHECK(after.reset_reason == "daily");
  CHECK(after.session_id != before.session_id);
  REQUIRE(rt->stop().ok());
  std::lock_guard<std::mutex> g(h.mu);
  auto it = std::find_if(h.events.begin(), h.events.end(), [](auto& e) { return e.type == "session.expired"; });
  REQUIRE(it != h.events.end());
  CHECK(json::get_string(it->data, "reason") == std::optional<std::string_view>("daily"));
}

TEST_CASE("heartbeats do not keep a session alive: idle expiry still happens, then a new session") {
  harness h;
  auto rt = h.start([](auto& s) {
    actors::reset_config r;
    r.mode = actors::reset_mode::idle;
    r.idle_minutes = 60;
    s.session.reset.reset = r;
  });
  auto first = turn(*rt, dm("123", "hello"));
  REQUIRE(first.st.ok());
  for (int i = 0; i < 6; ++i) {
    REQUIRE(rt->advance(10 * 60 * 1000).ok());
    system_event hb;
    hb.kind = system_event_kind::heartbeat;
    hb.session_key = "agent:main:main";
    hb.text = "heartbeat " + std::to_string(i);
    rt->send(hb);
    rt->settle();
  }
  REQUIRE(rt->advance(60 * 1000 + 1).ok());  // 61 minutes after the last real message
  auto row = rt->session("agent:main:main").value();
  CHECK(row->last_interaction_at() == std::optional<std::int64_t>(kT0));
  auto next = turn(*rt, dm("123", "back"));
  REQUIRE(next.st.ok());
  CHECK(next.new_session);
  CHECK(next.reset_reason == "idle");
  CHECK(h.count("session.expired") >= 1);
}

TEST_CASE("bad input is refused with the limit named and nothing stored") {
  harness h;
  auto rt = h.start([](auto& s) { s.session.max_message_bytes = 100; });
  auto big = turn(*rt, dm("123", std::string(200, 'x')));
  REQUIRE_FALSE(big.st.ok());
  CHECK(big.st.code() == errc::limit_exceeded);
  CHECK_THAT(big.st.message(), Catch::Contains("maxMessageBytes"));
  auto bad_key = dm("123", "hi");
  bad_key.session_key = "agent:main:../../etc";
  auto out = turn(*rt, bad_key);
  REQUIRE_FALSE(out.st.ok());
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK_FALSE(rt->session("agent:main:main").value().has_value());
}

TEST_CASE("session.maxLiveSessions bounds the open sessions: a burst of new keys waits its turn, nothing is lost") {
  harness h;
  auto rt = h.start([](auto& s) {
    s.session.max_live_sessions = 3;
    s.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  });
  std::vector<std::future<turn_outcome>> futures;
  for (int i = 0; i < 40; ++i) futures.push_back(rt->send(dm(std::to_string(i % 10), "n" + std::to_string(i))));
  for (auto& f : futures) REQUIRE(f.get().st.ok());
  rt->settle();
  CHECK(rt->stats().queued == 0);
  CHECK(rt->sessions()->size() == 10);
  CHECK(h.count("session.passivated") >= 7);  // 10 keys through 3 slots: 7 at least made room
  for (int peer = 0; peer < 10; ++peer) {     // each peer's messages, all there, in the order sent
    auto row = rt->session("agent:main:direct:" + std::to_string(peer)).value();
    REQUIRE(row.has_value());
    auto texts = transcript_texts(std::string(row->session_file().value_or("")));
    REQUIRE(texts.size() == 8);
    for (int k = 0; k < 4; ++k) CHECK(texts[static_cast<std::size_t>(2 * k)] == "n" + std::to_string(peer + 10 * k));
  }
}

TEST_CASE("stop answers every event, also those that arrived while their session was passivating") {
  for (int round = 0; round < 20; ++round) {  // the interleaving varies from run to run
    harness h;
    auto rt = h.start([](auto& s) {
      s.session.max_live_sessions = 1;
      s.routing.session.direct_message_scope = actors::dm_scope::per_peer;
    });
    auto a = rt->send(dm("a", "first"));
    auto b = rt->send(dm("b", "b takes the only slot: a is passivated"));
    REQUIRE(a.get().st.ok());
    auto again = rt->send(dm("a", "arrives while a passivates"));
    REQUIRE(rt->stop().ok());
    for (auto* f : {&b, &again}) {
      turn_outcome out;
      REQUIRE_NOTHROW(out = f->get());  // a dropped answer is a broken promise here
      if (!out.st.ok()) CHECK(out.st.code() == errc::cancelled);
    }
  }
}

TEST_CASE("an isolated cron run starts a new session every time and runs its prompt") {
  harness h;
  auto rt = h.start();
  auto run = [&](const std::string& text) {
    system_event ev;
    ev.kind = system_event_kind::cron;
    ev.job_id = "digest";
    ev.job_name = "Morning digest";
    ev.text = text;
    rt->send(ev);
    rt->settle();
  };
  run("Summarize the news");
  const std::string key = "agent:main:cron:digest";
  auto first = rt->session(key).value();
  REQUIRE(first.has_value());
  CHECK(first->label() == std::optional<std::string_view>("Cron: Morning digest"));
  const std::string first_id(first->session_id().value_or(""));
  const std::string first_path(first->session_file().value_or(""));
  CHECK(transcript_texts(first_path).front() == "Summarize the news");

  REQUIRE(rt->advance(60 * 1000).ok());
  run("Summarize again");
  auto second = rt->session(key).value();
  REQUIRE(second.has_value());
  CHECK(second->session_id() != std::optional<std::string_view>(first_id));
  auto texts = transcript_texts(std::string(second->session_file().value_or("")));
  REQUIRE(texts.size() == 2);  // the prompt and the reply; nothing of the first run
  CHECK(texts[0] == "Summarize again");
  CHECK(std::filesystem::exists(first_path));  // kept for its run row (cron_runs_test.cpp)

  std::vector<lifecycle_event> done;
  {
    std::lock_guard<std::mutex> g(h.mu);
    for (const auto& e : h.events)
      if (e.type == "cron.completed") done.push_back(e);
  }
  REQUIRE(done.size() == 2);
  CHECK(json::get_string(done[0].data, "sessionId") == std::optional<std::string_view>(first_id));
  CHECK(json::get_string(done[1].data, "jobId") == std::optional<std::string_view>("digest"));
  CHECK_FALSE(json::get_string(done[1].data, "reply").value_or("").empty());
  const auto types = h.types_for(key);
  CHECK(std::count(types.begin(), types.end(), "session.reset") == 1);
}

TEST_CASE("storage.storeDurableAck: a turn is acknowledged once sessions.json on disk has its row") {
  harness h;
  auto rt = h.start([](auto& s) {
    s.storage.store_durable_ack = true;
    // With durability batch the row is durable in the commit log with the turn instead, and
    // sessions.json follows lazily (lazy_store_test.cpp).
    s.storage.durability = storage::durability::sync;
    s.session.passivate_idle_ms = 60000;
    actors::reset_config off;  // the clock starts at 03:59: keep the 04:00 reset out of this test
    off.mode = actors::reset_mode::none;
    s.session.reset.reset = off;
  });
  const std::string store_path = h.dir.path() + "/agents/main/sessions/sessions.json";
  auto on_disk = [&]() {
    auto parsed = json::parse_object(testing::read_text(store_path));
    REQUIRE(parsed.ok());
    REQUIRE(parsed->contains("agent:main:main"));
    return session_entry(parsed->at("agent:main:main").as_object());
  };
  auto first = turn(*rt, dm("123", "first"));
  REQUIRE(first.st.ok());
  auto row = on_disk();  // no flush window waited for: the ack came after the write
  CHECK(row.session_id() == std::optional<std::string_view>(first.session_id));
  const auto tokens_after_first = row.total_tokens().value_or(0);
  CHECK(tokens_after_first > 0);

  h.clk.advance(1000);
  REQUIRE(turn(*rt, dm("123", "second, a longer message than the first one")).st.ok());
  CHECK(on_disk().updated_at() == std::optional<std::int64_t>(kT0 + 1000));
  CHECK(on_disk().total_tokens().value_or(0) > tokens_after_first);

  // The store keeps saved rows as text; a passivated session comes back from that text intact.
  REQUIRE(rt->advance(61000).ok());
  CHECK(h.count("session.passivated") == 1);
  auto third = turn(*rt, dm("123", "third"));
  REQUIRE(third.st.ok());
  CHECK(third.session_id == first.session_id);
  CHECK_FALSE(third.new_session);
  auto listed = rt->session("agent:main:main").value();
  REQUIRE(listed.has_value());
  CHECK(listed->session_id() == std::optional<std::string_view>(first.session_id));
  CHECK(transcript_texts(std::string(listed->session_file().value_or(""))).size() == 6);
}

TEST_CASE("a session row that cannot be read back fails its turn with the reason and sessions.json is left alone") {
  harness h;
  auto rt = h.start([](auto& s) {
    s.session.passivate_idle_ms = 60000;
    s.storage.store_durable_ack = true;  // acked once sessions.json has the row (and the row is spilled)
    s.storage.store_spill_min_bytes = 0;  // spilled at any size
    s.storage.watch_store_edits = false;  // on, the edit is merged (tests/runtime/hand_edit_runtime_test.cpp)
    actors::reset_config off;
    off.mode = actors::reset_mode::none;
    s.session.reset.reset = off;
    s.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  });
  REQUIRE(turn(*rt, dm("1", "hello")).st.ok());
  REQUIRE(turn(*rt, dm("2", "hello")).st.ok());
  REQUIRE(rt->advance(61000).ok());  // both passivated: their rows live only in sessions.json
  CHECK(rt->stats().live == 0);

  // Another program appends to sessions.json in place while the runtime owns it.
  const std::string path = h.dir.path() + "/agents/main/sessions/sessions.json";
  const std::string edited = testing::read_text(path) + "\n";
  testing::write_text(path, edited);  // same inode: truncate + write

  turn_outcome out = turn(*rt, dm("1", "again"));
  CHECK_FALSE(out.st.ok());
  CHECK_THAT(out.st.message(), Catch::Contains("the session row cannot be read"));
  CHECK_THAT(out.st.message(), Catch::Contains("changed in place"));
  CHECK(h.count("session.created") == 2);  // no new session over the unreadable row
  CHECK(testing::read_text(path) == edited);
}

TEST_CASE("a subscription given at start sees store.quarantined for a sessions.json set aside while loading") {
  harness h;
  const std::string sessions = h.dir.path() + "/agents/main/sessions";
  std::filesystem::create_directories(sessions);
  testing::write_text(sessions + "/sessions.json", "{\"agent:main:main\": {\"sessionId\": ");  // cut short
  runtime_options o = h.options();
  std::vector<lifecycle_event> seen;
  std::mutex mu;
  o.subscriptions.push_back({event_filter{}, [&](const lifecycle_event& e) {
                               std::lock_guard<std::mutex> g(mu);
                               seen.push_back(e);
                             }});
  auto rt = runtime::runtime::start(std::move(o));
  REQUIRE(rt.ok());
  (*rt)->settle();  // every event published so far has been delivered
  {
    std::lock_guard<std::mutex> g(mu);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].type == "store.quarantined");
    const std::string moved(json::get_string(seen[0].data, "path").value_or(""));
    CHECK_THAT(moved, Catch::Contains("sessions.json.corrupt-"));
    CHECK(std::filesystem::exists(moved));
  }
  REQUIRE((*rt)->startup().stores.size() == 1);
  CHECK((*rt)->startup().stores[0].quarantine);
  CHECK((*rt)->stop().ok());
}
