// The maintenance actor in a running runtime (runtime::maintain, virtual time): warn changes no
// byte and reports what enforce would do; enforce applies the plan while turns flow, loses
// nothing acknowledged and never moves a live session's transcript from under it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <future>
#include <mutex>

#include "messages/json_access.hpp"
#include "storage/archive_names.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "tests/actors/maintenance/maintenance_fixture.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;
using sessionrt::testing::day;
using sessionrt::testing::fixture_now;
using sessionrt::testing::sessions_fixture;

namespace {

struct maintenance_harness {
  sessions_fixture fx;
  manual_clock clk{fixture_now};
  std::shared_ptr<simulated_model> model = std::make_shared<simulated_model>(clk);
  std::mutex mu;
  std::vector<lifecycle_event> events;

  std::unique_ptr<runtime::runtime> start(std::function<void(actors::runtime_settings&)> tweak = {}) {
    runtime_options o;
    o.settings.state_dir = fx.state_dir();
    o.settings.session.reset.timezone = "UTC";
    actors::reset_config off;
    off.mode = actors::reset_mode::none;
    o.settings.session.reset.reset = off;
    o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
    o.runner = model;
    o.time = &clk;
    o.virtual_time = true;
    o.threads = 2;
    if (tweak) tweak(o.settings);
    auto rt = runtime::runtime::start(std::move(o));
    REQUIRE(rt.ok());
    (*rt)->subscribe({}, [this](const lifecycle_event& e) {
      std::lock_guard<std::mutex> g(mu);
      events.push_back(e);
    });
    return std::move(*rt);
  }
  std::vector<lifecycle_event> of_type(std::string_view type) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<lifecycle_event> out;
    for (const auto& e : events)
      if (e.type == type) out.push_back(e);
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& e : std::filesystem::directory_iterator(fx.dir())) out.push_back(e.path().filename().string());
    return out;
  }
};

// Sessions maintenance may archive: OpenClaw 2026.9 protects the main key, external delivery
// routes and rows delivered to an external channel (actors/router/protected_key.hpp), so these
// are the Control UI's kind: an explicit key, delivered on webchat.
std::string peer_key(const std::string& peer) { return "agent:main:explicit:" + peer; }
chat_event turn(const std::string& peer, std::string text) {
  chat_event ev = testing::dm(peer, std::move(text), "webchat");
  ev.session_key = peer_key(peer);
  return ev;
}

// The maintenance plan's part of a report (the cron reaper's comes first when it ran).
const boost::json::object& first_store(const lifecycle_event& e) {
  for (const auto& s : e.data.at("stores").as_array())
    if (json::get_string(s.as_object(), "plan") == std::optional<std::string_view>("maintenance")) return s.as_object();
  FAIL("no maintenance plan in the report");
  throw 0;
}

}  // namespace

TEST_CASE("maintenance warn mode reports what enforce would do and changes no byte of the state dir") {
  maintenance_harness h;
  for (int i = 0; i < 5; ++i) {
    const std::string id = "00000000-0000-4000-8000-00000000000" + std::to_string(i);
    h.fx.row(peer_key("old" + std::to_string(i)), id, 40 * day);
    h.fx.transcript(id, 500, 40 * day);
  }
  h.fx.row(peer_key("fresh"), "00000000-0000-4000-8000-0000000000ff", day);
  h.fx.transcript("00000000-0000-4000-8000-0000000000ff", 500, day);
  h.fx.file("00000000-0000-4000-8000-00000000aaaa.jsonl.reset.2026-11-01T00-00-00.000Z", 100, 60 * day);
  h.fx.save();
  auto rt = h.start();  // session.maintenance.mode defaults to warn
  const std::string before = h.fx.checksum();
  auto report = rt->maintain();
  REQUIRE(report.ok());
  rt->settle();
  CHECK(h.fx.checksum() == before);

  CHECK(report->type == "maintenance.report");
  CHECK(json::get_string(report->data, "mode") == std::optional<std::string_view>("warn"));
  CHECK(json::get_string(report->data, "trigger") == std::optional<std::string_view>("request"));
  CHECK(report->data.at("applied").as_bool() == false);
  CHECK(report->data.at("wouldMutate").as_bool());
  CHECK(report->data.at("rowsRemoved").to_number<std::int64_t>() == 0);
  const auto& store = first_store(*report);
  CHECK(json::get_string(store, "agentId") == std::optional<std::string_view>("main"));
  CHECK(store.at("beforeCount").to_number<std::int64_t>() == 6);
  // Stale rows stay, archived in place with their transcripts (OpenClaw 2026.9).
  CHECK(store.at("afterCount").to_number<std::int64_t>() == 6);
  CHECK(store.at("pruned").to_number<std::int64_t>() == 0);
  CHECK(store.at("ageArchived").to_number<std::int64_t>() == 5);
  CHECK(store.at("archivedFiles").to_number<std::int64_t>() == 0);
  CHECK(store.at("deletedFiles").to_number<std::int64_t>() == 1);  // the .reset. archive past retention
  bool listed = false;
  for (const auto& a : store.at("actions").as_array())
    if (json::get_string(a.as_object(), "key") == std::optional<std::string_view>(peer_key("old3")))
      listed = json::get_string(a.as_object(), "label") == std::optional<std::string_view>("archive-age");
  CHECK(listed);
  // The subscribers saw the same report.
  auto seen = h.of_type("maintenance.report");
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].data == report->data);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("maintenance enforce applies the plan while turns flow and loses nothing acknowledged") {
  const bool keep_picture = GENERATE(true, false);  // storage.keepMaintenancePicture
  INFO("keepMaintenancePicture " << keep_picture);
  maintenance_harness h;
  constexpr int kStale = 40;
  for (int i = 0; i < kStale; ++i) {
    char id[64];
    std::snprintf(id, sizeof id, "00000000-0000-4000-8000-%012d", i);
    h.fx.row(peer_key("p" + std::to_string(i)), id, 40 * day);
    h.fx.transcript(id, 400, 40 * day);
  }
  h.fx.save();
  auto rt = h.start([keep_picture](actors::runtime_settings& s) {
    s.maintenance.mode = actors::maintenance_mode::enforce;
    s.storage.keep_maintenance_picture = keep_picture;
  });
  // A live session with a fresh row before the pass.
  auto live = rt->send(turn("live", "before the pass")).get();
  REQUIRE(live.st.ok());
  // Turns for stale keys and fresh keys race the pass.
  std::vector<std::pair<std::string, std::future<turn_outcome>>> turns;
  for (int i = 0; i < 10; ++i) {
    const std::string text = "racing turn " + std::to_string(i);
    turns.emplace_back(text, rt->send(turn("p" + std::to_string(i), text)));
    turns.emplace_back(text + " fresh", rt->send(turn("new" + std::to_string(i), text + " fresh")));
  }
  turns.emplace_back("live again", rt->send(turn("live", "live again")));
  auto report = rt->maintain();
  REQUIRE(report.ok());
  std::vector<turn_outcome> outs;
  for (auto& [text, f] : turns) outs.push_back(f.get());
  rt->settle();
  REQUIRE(rt->flush().ok());

  CHECK(json::get_string(report->data, "mode") == std::optional<std::string_view>("enforce"));
  CHECK(report->data.at("applied").as_bool());
  // Stale rows are archived in place (OpenClaw 2026.9): none removed, no transcript moved.
  CHECK(report->data.at("rowsRemoved").to_number<std::int64_t>() == 0);
  CHECK(report->data.at("rowsArchived").to_number<std::int64_t>() >= kStale - 10);
  CHECK(report->data.at("filesArchived").to_number<std::int64_t>() == 0);

  // Every acknowledged turn is in the transcript its outcome names, and that file is in place.
  for (std::size_t i = 0; i < outs.size(); ++i) {
    INFO(turns[i].first << ": " << outs[i].st.to_string());
    REQUIRE(outs[i].st.ok());
    const std::string path = h.fx.path(outs[i].session_id + ".jsonl");
    REQUIRE(std::filesystem::exists(path));
    CHECK(testing::read_text(path).find(turns[i].first) != std::string::npos);
    auto row = rt->session(outs[i].session_key).value();
    REQUIRE(row.has_value());
    CHECK(row->session_id() == std::optional<std::string_view>(outs[i].session_id));
  }
  // Every row left references a transcript that exists.
  auto rows = rt->sessions();
  REQUIRE(rows.ok());
  for (const auto& r : *rows)
    CHECK(std::filesystem::exists(h.fx.path(std::string(r.entry.session_id().value_or("")) + ".jsonl")));
  // The stale keys no turn touched stay, archived, with their transcripts in place; those a
  // person's turn touched are not archived (the turn came first, or took the row out again).
  for (int i = 0; i < kStale; ++i) {
    char id[64];
    std::snprintf(id, sizeof id, "00000000-0000-4000-8000-%012d", i);
    auto row = rt->session(peer_key("p" + std::to_string(i))).value();
    REQUIRE(row.has_value());
    CHECK(row->json().contains("archivedAt") == (i >= 10));
    CHECK(std::filesystem::exists(h.fx.path(std::string(id) + ".jsonl")));
    CHECK_FALSE(testing::has_name_starting(h.names(), std::string(id) + ".jsonl.deleted."));
  }
  REQUIRE(rt->stop().ok());
}

TEST_CASE("maintenance passivates a live session before archiving its stale row in place, and a message restores it") {
  maintenance_harness h;
  h.fx.save();
  auto rt = h.start([](actors::runtime_settings& s) {
    s.maintenance.mode = actors::maintenance_mode::enforce;
    s.maintenance.prune_after_ms = 60 * 1000;
    s.session.passivate_idle_ms = 0;  // it stays live until something passivates it
  });
  auto out = rt->send(turn("q", "soon stale")).get();
  REQUIRE(out.st.ok());
  const std::string path = h.fx.path(out.session_id + ".jsonl");
  REQUIRE(std::filesystem::exists(path));
  // A pass while the row is fresh keeps the live session as it is.
  auto kept = rt->maintain();
  REQUIRE(kept.ok());
  CHECK(kept->data.at("plannedActions").to_number<std::int64_t>() == 0);
  CHECK(std::filesystem::exists(path));
  CHECK(h.of_type("session.passivated").empty());

  h.clk.advance(2 * 60 * 1000);  // the row is stale now; the session is still live
  auto report = rt->maintain();
  REQUIRE(report.ok());
  rt->settle();
  // Archiving asks the idle live session to passivate, then holds the key (OpenClaw 2026.9
  // archives a stale row in place; nothing moves its transcript).
  auto passivated = h.of_type("session.passivated");
  REQUIRE(passivated.size() == 1);
  CHECK(passivated[0].session_key == out.session_key);
  CHECK(json::get_string(passivated[0].data, "why") == std::optional<std::string_view>("maintenance"));
  CHECK(report->data.at("rowsRemoved").to_number<std::int64_t>() == 0);
  CHECK(report->data.at("filesArchived").to_number<std::int64_t>() == 0);
  auto row = rt->session(out.session_key).value();
  REQUIRE(row.has_value());
  CHECK(row->session_id() == std::optional<std::string_view>(out.session_id));
  CHECK(std::filesystem::exists(path));
  if (report->data.at("rowsArchived").to_number<std::int64_t>() == 1)
    CHECK(json::get_string(row->json(), "archiveReason") == std::optional<std::string_view>("age-retention"));
  else  // the passivation wrote the row back after the plan: skipped as changed
    CHECK_FALSE(row->json().contains("archivedAt"));
  // The next message continues the session and takes the row out of the archive.
  auto again = rt->send(turn("q", "after the pass")).get();
  REQUIRE(again.st.ok());
  CHECK(again.session_id == out.session_id);
  auto after = rt->session(out.session_key).value();
  REQUIRE(after.has_value());
  CHECK_FALSE(after->json().contains("archivedAt"));
  CHECK_FALSE(after->json().contains("archiveReason"));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("the store tells maintenance when its rows reach high water and the pass caps them") {
  maintenance_harness h;
  h.fx.save();
  auto rt = h.start([](actors::runtime_settings& s) {
    s.maintenance.mode = actors::maintenance_mode::enforce;
    s.maintenance.max_entries = 5;  // high water 6
  });
  for (int i = 0; i < 6; ++i) {
    REQUIRE(rt->send(turn("c" + std::to_string(i), "hello")).get().st.ok());
    h.clk.advance(1000);
  }
  rt->settle();
  CHECK(h.of_type("maintenance.report").empty());
  // Under virtual time the pass the notice made due runs at the next step of the clock (real
  // time: at once), after the turns that filled the store.
  REQUIRE(rt->advance(0).ok());
  auto reports = h.of_type("maintenance.report");
  REQUIRE(reports.size() == 1);
  CHECK(json::get_string(reports.front().data, "trigger") == std::optional<std::string_view>("high-water"));
  // The least active row is archived in place (OpenClaw 2026.9): it stays, out of the count.
  CHECK(rt->sessions().value().size() == 6);
  auto c0 = rt->session(peer_key("c0")).value();
  REQUIRE(c0.has_value());
  CHECK(json::get_string(c0->json(), "archiveReason") == std::optional<std::string_view>("active-session-cap"));
  for (int i = 1; i < 6; ++i) CHECK_FALSE(rt->session(peer_key("c" + std::to_string(i))).value()->json().contains("archivedAt"));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("keepMaintenancePicture false: every pass lists the dir again and sees a file made behind the runtime's back") {
  maintenance_harness h;
  for (int i = 0; i < 3; ++i) {
    char id[64];
    std::snprintf(id, sizeof id, "00000000-0000-4000-8000-%012d", i);
    h.fx.row(peer_key("p" + std::to_string(i)), id, day);
    h.fx.transcript(id, 400, day);
  }
  h.fx.save();
  // A `.deleted.` archive older than pruneAfter (30 days), by the timestamp in its name.
  const std::string archive = storage::archive_name("0a0a0a0a-0000-4000-8000-000000000000.jsonl",
                                                    storage::archive_reason::deleted, fixture_now - 40 * day);
  // Unset: kept, this runtime being on virtual time.
  for (const std::optional<bool> setting : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
    const bool keep_picture = setting.value_or(true);
    INFO("keepMaintenancePicture " << (setting ? (*setting ? "true" : "false") : "unset"));
    auto rt = h.start([setting](actors::runtime_settings& s) {
      s.maintenance.mode = actors::maintenance_mode::enforce;
      s.storage.keep_maintenance_picture = setting;
    });
    auto first = rt->maintain();
    REQUIRE(first.ok());
    CHECK(first->data.at("filesDeleted").to_number<std::int64_t>() == 0);
    // Made by another program: the runtime's change feed does not see it.
    h.fx.file(archive, 100, 40 * day);
    auto second = rt->maintain();
    REQUIRE(second.ok());
    if (keep_picture) {
      // The kept listing learns of it at its next full scan (hourly, real time).
      CHECK(std::filesystem::exists(h.fx.path(archive)));
      CHECK(second->data.at("filesDeleted").to_number<std::int64_t>() == 0);
    } else {
      CHECK_FALSE(std::filesystem::exists(h.fx.path(archive)));
      CHECK(second->data.at("filesDeleted").to_number<std::int64_t>() == 1);
    }
    // The rows are read in full each time: all three stay, their transcripts too.
    auto rows = rt->sessions();
    REQUIRE(rows.ok());
    CHECK(rows->size() == 3);
    REQUIRE(rt->stop().ok());
    std::filesystem::remove(h.fx.path(archive));
  }
}
