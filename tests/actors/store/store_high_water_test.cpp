// The store actor's high-water notice counts unarchived rows, as the cap does (OpenClaw 2026.9:
// maxEntries counts rows without archivedAt): archived rows never bring the store to the mark,
// and once the rows the notice was about are archived (maintenance archives in place, it does
// not erase), the mark reached again is told again. Rows put as objects and as the text a
// session writes (archived_rows.hpp row_text_archived) count alike.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "actors/store/archived_rows.hpp"
#include "actors/store/store_actor.hpp"
#include "messages/clock.hpp"
#include "storage/fs.hpp"
#include "storage/session_store.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

session_entry row(std::int64_t updated_at, bool archived) {
  session_entry e;
  e.set_session_id("11111111-2222-4333-8444-" + std::to_string(555555555555 + updated_at));
  e.set_updated_at(updated_at);
  if (archived) {
    e.json()["archivedAt"] = updated_at;
    e.json()["archiveReason"] = "active-session-cap";
  }
  return e;
}

struct harness {
  testing::temp_dir dir;
  manual_clock clk{1700000000000};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> maintenance;  // receives the notices
  caf::actor store;

  explicit harness(std::size_t high_water_rows) {
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    maintenance = std::make_unique<caf::scoped_actor>(*sys);
    auto file = std::make_shared<storage::session_store_file>(storage::posix_fs(), clk, dir.file("sessions.json"));
    REQUIRE(file->load().ok());
    store_actor_config sc;
    sc.agent_id = "main";
    sc.hub = std::make_shared<event_hub>();
    sc.time = &clk;
    sc.self_flushing = false;
    sc.maintenance = caf::actor_cast<high_water_port>(*maintenance);
    sc.high_water_rows = high_water_rows;
    store = caf::actor_cast<caf::actor>(sys->spawn(store_actor, file, sc));
  }
  ~harness() { caf::anon_send_exit(store, caf::exit_reason::user_shutdown); }

  // A put answered once it is in the store (a notice it caused is in the mailbox by then).
  void put(const std::string& key, const session_entry& e, bool as_text = false) {
    caf::scoped_actor self{*sys};
    bool ok = false;
    if (as_text) {
      std::string text;
      storage::session_store::append_row_text(text, key, e);
      self->request(store, caf::infinite, put_atom::value, key, std::move(text), flush_atom::value)
          .receive([&](bool stored) { ok = stored; }, [&](caf::error& err) { FAIL(sys->render(err)); });
    } else {
      self->request(store, caf::infinite, put_atom::value, key, e, flush_atom::value)
          .receive([&](bool stored) { ok = stored; }, [&](caf::error& err) { FAIL(sys->render(err)); });
    }
    REQUIRE(ok);
  }
  // The notices received so far (taken).
  int notices() {
    int n = 0;
    bool more = true;
    while (more)
      (*maintenance)->receive([&](high_water_atom, const std::string& agent) { CHECK(agent == "main"); ++n; },
                              caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
    return n;
  }
};

}  // namespace

TEST_CASE("store actor: archived rows do not bring the store to the high-water mark") {
  harness h(3);
  h.put("agent:main:a", row(1, true));
  h.put("agent:main:b", row(2, true), true);  // a session's text: counted as archived too
  h.put("agent:main:c", row(3, false));
  CHECK(h.notices() == 0);  // 3 rows, 1 unarchived
  h.put("agent:main:d", row(4, false), true);
  CHECK(h.notices() == 0);  // 2 unarchived
  h.put("agent:main:e", row(5, false));
  CHECK(h.notices() == 1);  // 3 unarchived: the mark
  h.put("agent:main:f", row(6, false));
  CHECK(h.notices() == 0);  // told once
}

TEST_CASE("store actor: rows archived in place take the store below the mark, and reaching it again is told again") {
  harness h(2);
  h.put("agent:main:a", row(1, false));
  h.put("agent:main:b", row(2, false));
  CHECK(h.notices() == 1);
  // Maintenance archives one in place (a put, not an erase): 1 unarchived.
  h.put("agent:main:a", row(1, true));
  CHECK(h.notices() == 0);
  // A session takes the other out of the archive again: the mark again, told again.
  h.put("agent:main:a", row(7, false), true);
  CHECK(h.notices() == 1);
}

TEST_CASE("archived_rows: a row text has archivedAt only as the row's own member") {
  auto text_of = [](const session_entry& e) {
    std::string t;
    storage::session_store::append_row_text(t, "agent:main:x", e);
    return t;
  };
  CHECK(row_text_archived(text_of(row(1, true))));
  CHECK_FALSE(row_text_archived(text_of(row(1, false))));
  session_entry nested = row(1, false);
  nested.json()["origin"] = boost::json::object{{"archivedAt", 5}, {"label", "a\n    \"archivedAt\": 1"}};
  CHECK_FALSE(row_text_archived(text_of(nested)));
}
