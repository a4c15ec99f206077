// The store actor and hand edits of its sessions.json (storage.watchStoreEdits, on by default):
// the maintenance actor's picture of the rows, kept from (list, changes), stays the store's
// after an edit is merged. A merge replaces the store with one built from the file, whose rows
// get new order numbers (session_store::order_of), and the picture is keyed by them: reading
// only the edited keys left it with rows out of place and two rows under one number, so the
// disk-budget and cap passes planned on a wrong picture.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/maintenance/row_cache.hpp"
#include "actors/store/store_actor.hpp"
#include "messages/clock.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_store_file.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1789041600000;

struct harness {
  manual_clock clk{kT0};
  storage::memory_fs mem{clk};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor store;
  std::shared_ptr<storage::session_store_file> file;

  harness() {
    REQUIRE(mem.mkdir("/s", 0700).ok());
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    file = std::make_shared<storage::session_store_file>(mem, clk, "/s/sessions.json");
    REQUIRE(file->load().ok());
    store_actor_config sc;
    sc.agent_id = "main";
    sc.hub = std::make_shared<event_hub>();
    sc.time = &clk;
    sc.self_flushing = false;  // virtual time: the checks come with the requests
    sc.watch_edits = true;     // the default (storage.watchStoreEdits)
    store = caf::actor_cast<caf::actor>(sys->spawn(store_actor, file, sc));
  }
  ~harness() { caf::anon_send_exit(store, caf::exit_reason::user_shutdown); }

  void put(caf::scoped_actor& self, const std::string& key, std::int64_t updated_at, const std::string& label = "") {
    session_entry e;
    e.set_session_id("id-" + key.substr(key.rfind(':') + 1));
    e.set_updated_at(updated_at);
    if (!label.empty()) e.set_label(label);
    bool ok = false;
    self->request(store, caf::infinite, put_atom::value, key, e, flush_atom::value)
        .receive([&](bool stored) { ok = stored; }, [&](caf::error& err) { FAIL(sys->render(err)); });
    REQUIRE(ok);
  }
  row_changes changes(caf::scoped_actor& self) {
    row_changes out;
    self->request(store, caf::infinite, list_atom::value, changes_atom::value)
        .receive([&](row_changes& c) { out = std::move(c); }, [&](caf::error& err) { FAIL(sys->render(err)); });
    return out;
  }
  std::vector<std::string> listed_keys(caf::scoped_actor& self) {
    std::vector<std::string> keys;
    self->request(store, caf::infinite, list_atom::value)
        .receive([&](entry_rows& rows) {
                   for (auto& r : rows) keys.push_back(r.first);
                 },
                 [&](caf::error& err) { FAIL(sys->render(err)); });
    return keys;
  }
};

std::vector<std::string> keys_of(const row_cache& picture) {
  std::vector<std::string> keys;
  for (const auto& r : picture.rows()) keys.emplace_back(r.key());
  return keys;
}

}  // namespace

TEST_CASE("store actor: after a hand edit is merged, the maintenance picture from (list, changes) is the store's") {
  harness h;
  caf::scoped_actor self{*h.sys};
  h.put(self, "agent:main:a", kT0 + 1);
  h.put(self, "agent:main:b", kT0 + 2);
  h.put(self, "agent:main:c", kT0 + 3);
  row_cache picture;
  picture.apply(h.changes(self));
  // The maintenance pass removes a; its session talks again: a comes back last (a new order).
  std::size_t erased = 0;
  self->request(h.store, caf::infinite, erase_atom::value, std::vector<std::string>{"agent:main:a"},
                std::vector<std::int64_t>{kT0 + 1})
      .receive([&](std::size_t n) { erased = n; }, [&](caf::error& err) { FAIL(h.sys->render(err)); });
  REQUIRE(erased == 1);
  h.put(self, "agent:main:a", kT0 + 4);
  picture.apply(h.changes(self));
  REQUIRE(keys_of(picture) == std::vector<std::string>{"agent:main:b", "agent:main:c", "agent:main:a"});

  // The operator labels b, saving by rename.
  auto text = storage::read_file(h.mem, h.file->path(), 1 << 20);
  REQUIRE(text.ok());
  auto edited = storage::load_from_text(*text);
  REQUIRE(edited.ok());
  edited->store.find_for_update("agent:main:b")->set_label("by hand");
  REQUIRE(storage::replace_file_atomic(h.mem, h.file->path(), storage::serialize_store(edited->store, true)).ok());
  h.clk.advance(1000);

  h.put(self, "agent:main:d", kT0 + 5);  // merged before this write; d follows
  const auto changed = h.changes(self);
  CHECK(changed.full);  // every row has a new order in the merged store
  picture.apply(changed);
  const auto listed = h.listed_keys(self);
  CHECK(listed == std::vector<std::string>{"agent:main:b", "agent:main:c", "agent:main:a", "agent:main:d"});
  CHECK(keys_of(picture) == listed);
  for (const auto& r : picture.rows())
    if (r.key() == "agent:main:b") CHECK(r.label() == "by hand");

  // Later changes are incremental again, and the picture stays the store's.
  h.put(self, "agent:main:c", kT0 + 6);
  h.put(self, "agent:main:e", kT0 + 7);
  const auto after = h.changes(self);
  CHECK_FALSE(after.full);
  picture.apply(after);
  CHECK(keys_of(picture) == h.listed_keys(self));
}
