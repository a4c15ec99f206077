// store_actor: its typed interface answers what it declares, and a mistyped request is
// answered with an error at once instead of waiting in the mailbox.
#include "actors/store/store_actor.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "actors/events/event_bus.hpp"
#include "messages/clock.hpp"
#include "storage/fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

struct store_harness {
  testing::temp_dir dir;
  manual_clock clk{1700000000000};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor store;

  explicit store_harness(bool self_flushing = true) {
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    auto file = std::make_shared<storage::session_store_file>(storage::posix_fs(), clk, dir.file("sessions.json"));
    REQUIRE(file->load().ok());
    store_actor_config sc;
    sc.agent_id = "main";
    sc.hub = std::make_shared<event_hub>();
    sc.time = &clk;
    sc.self_flushing = self_flushing;
    store = caf::actor_cast<caf::actor>(sys->spawn(store_actor, file, sc));
  }
  ~store_harness() { caf::anon_send_exit(store, caf::exit_reason::user_shutdown); }
};

}  // namespace

TEST_CASE("store actor: a durable put is answered, then get finds the row") {
  store_harness h;
  caf::scoped_actor self{*h.sys};
  session_entry e;
  e.set_session_id("11111111-2222-4333-8444-555555555555");
  e.set_updated_at(1700000000000);
  bool stored = false;
  self->request(h.store, caf::infinite, put_atom::value, std::string("agent:main:main"), e, flush_atom::value)
      .receive([&](bool ok) { stored = ok; }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  CHECK(stored);
  entry_reply row;
  self->request(h.store, caf::infinite, get_atom::value, std::string("agent:main:main"))
      .receive([&](entry_reply& r) { row = std::move(r); }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  CHECK(row.found);
  CHECK(row.error.empty());
  CHECK(row.entry.session_id() == "11111111-2222-4333-8444-555555555555");
}

TEST_CASE("store actor: a request it does not declare is answered with unexpected_message, not left waiting") {
  store_harness h;
  caf::scoped_actor self{*h.sys};
  caf::error got;
  // (get, 42): the key as a number, a typo the dynamic handle cannot catch at compile time.
  self->request(h.store, std::chrono::seconds(30), get_atom::value, 42)
      .receive([&](entry_reply&) { FAIL("a mistyped get was answered with a row"); }, [&](caf::error& err) { got = err; });
  CHECK(got == caf::sec::unexpected_message);
  // The store still serves what follows.
  bool listed = false;
  self->request(h.store, caf::infinite, list_atom::value)
      .receive([&](entry_rows&) { listed = true; }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  CHECK(listed);
}

TEST_CASE("store actor: (list, changes) answers every row first, then only what puts and erases changed") {
  store_harness h;
  caf::scoped_actor self{*h.sys};
  auto put = [&](const std::string& key, std::int64_t updated_at) {
    session_entry e;
    e.set_updated_at(updated_at);
    bool ok = false;
    self->request(h.store, caf::infinite, put_atom::value, key, e, flush_atom::value)
        .receive([&](bool stored) { ok = stored; }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
    REQUIRE(ok);
  };
  auto changes = [&] {
    row_changes out;
    self->request(h.store, caf::infinite, list_atom::value, changes_atom::value)
        .receive([&](row_changes& c) { out = std::move(c); }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
    return out;
  };
  put("agent:main:a", 1);
  put("agent:main:b", 2);
  auto first = changes();
  CHECK(first.full);
  REQUIRE(first.rows.size() == 2);
  CHECK(first.rows[0].order < first.rows[1].order);

  put("agent:main:b", 3);
  std::size_t erased = 0;
  self->request(h.store, caf::infinite, erase_atom::value, std::vector<std::string>{"agent:main:a"},
                std::vector<std::int64_t>{1})
      .receive([&](std::size_t n) { erased = n; }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  REQUIRE(erased == 1);
  auto second = changes();
  CHECK_FALSE(second.full);
  REQUIRE(second.rows.size() == 1);
  CHECK(second.rows[0].key == "agent:main:b");
  CHECK(second.rows[0].entry.updated_at() == 3);
  CHECK(second.gone == std::vector<std::string>{"agent:main:a"});
  auto third = changes();
  CHECK(third.rows.empty());
  CHECK(third.gone.empty());
}

// Under virtual time the host decides when sessions.json is written (a simulation: at the end
// of each step), so what a crash finds does not depend on a real-time window.
TEST_CASE("store actor: without its own window, a put waits for the host's flush, and a durable put is written at once") {
  store_harness h(/*self_flushing=*/false);
  caf::scoped_actor self{*h.sys};
  const std::string path = h.dir.file("sessions.json");
  session_entry e;
  e.set_session_id("11111111-2222-4333-8444-555555555555");
  e.set_updated_at(1700000000000);
  self->send(h.store, put_atom::value, std::string("agent:main:a"), e);
  entry_reply row;
  self->request(h.store, caf::infinite, get_atom::value, std::string("agent:main:a"))
      .receive([&](entry_reply& r) { row = std::move(r); }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  CHECK(row.found);  // the put was handled before the get...
  CHECK(!testing::exists(path));  // ...and nothing wrote it
  bool written = false;
  self->request(h.store, caf::infinite, flush_atom::value, stop_atom::value)
      .receive([&](bool ok) { written = ok; }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  CHECK(written);
  CHECK(testing::read_text(path).find("agent:main:a") != std::string::npos);
  bool stored = false;
  self->request(h.store, caf::infinite, put_atom::value, std::string("agent:main:b"), e, flush_atom::value)
      .receive([&](bool ok) { stored = ok; }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  CHECK(stored);
  CHECK(testing::read_text(path).find("agent:main:b") != std::string::npos);
}
