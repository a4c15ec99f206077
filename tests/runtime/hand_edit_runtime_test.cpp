// sessions.json edited by hand while a runtime owns it (OpenClaw documents the file as safe to
// edit): the edit is taken at the store's next read or write, the runtime's own later changes
// to other rows are kept, a live session whose row was edited starts again from the edited row,
// a hand-deleted row stays deleted until its session talks again, an edit written in place
// over rows the runtime keeps only on disk is taken (it made their turns fail until a restart),
// and an edit that does not parse is reported and neither taken nor written over.
#include <catch2/catch.hpp>

#include <cstdio>
#include <mutex>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/session_store_file.hpp"
#include "tests/runtime/lifecycle_harness.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr std::int64_t kT0 = testing::lifecycle_harness::kT0;

// The lifecycle harness (its of_type() reads the events) with the simulated model itself
// (asynchronous) as the runner, one session per peer.
struct edit_harness : testing::lifecycle_harness {
  std::shared_ptr<simulated_model> sim = std::make_shared<simulated_model>(clk);

  std::unique_ptr<runtime::runtime> start(const std::function<void(actors::runtime_settings&)>& tweak = {}) {
    return lifecycle_harness::start(
        [&](actors::runtime_settings& s) {
          s.routing.session.direct_message_scope = actors::dm_scope::per_peer;
          // storage.watchStoreEdits is left at its default: on.
          if (tweak) tweak(s);
        },
        sim);
  }
  std::string store() const { return dir.path() + "/agents/main/sessions/sessions.json"; }
  // The file as it is on disk now.
  storage::session_store on_disk() const {
    auto parsed = storage::load_from_text(testing::read_text(store()));
    REQUIRE(parsed.ok());
    return std::move(parsed->store);
  }
  // An operator's edit: the file rewritten whole and renamed into place, as editors save.
  void edit(const std::function<void(storage::session_store&)>& change) const {
    storage::session_store s = on_disk();
    change(s);
    testing::write_text(store() + ".edit", storage::serialize_store(s, true));
    REQUIRE(std::rename((store() + ".edit").c_str(), store().c_str()) == 0);
  }
};

std::string key(const std::string& peer) { return "agent:main:direct:" + peer; }

void talk(runtime::runtime& rt, const std::string& peer, const std::string& text) {
  auto out = rt.send(testing::dm(peer, text)).get();
  INFO(out.st.to_string());
  REQUIRE(out.st.ok());
}

std::string label(const storage::session_store& s, const std::string& k) {
  const session_entry* e = s.find(k);
  return e && e->label() ? std::string(*e->label()) : std::string();
}

}  // namespace

TEST_CASE("a hand edit of sessions.json survives the runtime's next write, with the runtime's change to another row") {
  edit_harness h;
  auto rt = h.start();
  talk(*rt, "alice", "hello");
  talk(*rt, "bob", "hello");
  REQUIRE(rt->flush().ok());
  const auto bob_before = h.on_disk().find(key("bob"))->updated_at();

  h.edit([](storage::session_store& s) {
    s.find_for_update(key("alice"))->set_label("labelled by hand");
    session_entry added;
    added.set_session_id("hand-made-session");
    added.set_updated_at(kT0);
    s.upsert(key("zed"), added);
  });
  h.clk.advance(60000);
  talk(*rt, "bob", "again");  // the runtime changes another row
  REQUIRE(rt->flush().ok());

  auto disk = h.on_disk();
  CHECK(label(disk, key("alice")) == "labelled by hand");
  REQUIRE(disk.contains(key("zed")));
  CHECK(disk.find(key("zed"))->session_id() == std::optional<std::string_view>("hand-made-session"));
  CHECK(disk.find(key("bob"))->updated_at() > bob_before);
  // The runtime reads what the operator wrote too, and said so.
  auto row = rt->session(key("zed"));
  REQUIRE(row.ok());
  CHECK(row->has_value());
  rt->settle();  // the store's events reach the subscriber through the bus
  auto reloaded = h.of_type("store.reloaded");
  REQUIRE(reloaded.size() == 1);
  CHECK(json::get_int(reloaded[0].data, "addedCount") == 1);
  CHECK(json::get_int(reloaded[0].data, "changedCount") == 1);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("a live session whose row was edited by hand takes the edit at its next turn") {
  edit_harness h;
  auto rt = h.start();
  talk(*rt, "alice", "hello");  // alice's session stays live, holding her row
  REQUIRE(rt->flush().ok());
  h.edit([](storage::session_store& s) { s.find_for_update(key("alice"))->set_label("edited while live"); });
  REQUIRE(rt->flush().ok());  // the store notices at its next write
  h.clk.advance(60000);
  talk(*rt, "alice", "still there?");
  REQUIRE(rt->flush().ok());
  auto disk = h.on_disk();
  CHECK(label(disk, key("alice")) == "edited while live");
  CHECK(disk.find(key("alice"))->updated_at() == kT0 + 60000);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("a row deleted by hand stays deleted until its session talks again") {
  edit_harness h;
  auto rt = h.start();
  talk(*rt, "alice", "hello");
  talk(*rt, "bob", "hello");
  REQUIRE(rt->flush().ok());
  h.edit([](storage::session_store& s) { s.erase(key("alice")); });
  h.clk.advance(1000);
  talk(*rt, "bob", "more");
  REQUIRE(rt->flush().ok());
  CHECK_FALSE(h.on_disk().contains(key("alice")));
  auto gone = rt->session(key("alice"));
  REQUIRE(gone.ok());
  CHECK_FALSE(gone->has_value());

  talk(*rt, "alice", "I am back");
  REQUIRE(rt->flush().ok());
  CHECK(h.on_disk().contains(key("alice")));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("a malformed hand edit is reported, not written over, and nothing is lost once it is fixed") {
  edit_harness h;
  auto rt = h.start();
  talk(*rt, "alice", "hello");
  REQUIRE(rt->flush().ok());
  const std::string good = testing::read_text(h.store());
  const std::string broken = good.substr(0, good.size() / 2);  // cut in the middle of a row
  testing::write_text(h.store() + ".edit", broken);
  REQUIRE(std::rename((h.store() + ".edit").c_str(), h.store().c_str()) == 0);

  talk(*rt, "bob", "hello");  // a change the runtime must keep
  status flushed = rt->flush();
  CHECK_FALSE(flushed.ok());
  CHECK(flushed.message().find("changed by another program") != std::string::npos);
  CHECK(testing::read_text(h.store()) == broken);
  rt->settle();  // the store's event reaches the subscriber through the bus, after flush() answered
  REQUIRE(h.of_type("store.edit_refused").size() == 1);
  CHECK(rt->session(key("alice")).ok());

  // The operator fixes the file (and labels alice while at it).
  auto fixed = storage::load_from_text(good);
  REQUIRE(fixed.ok());
  fixed->store.find_for_update(key("alice"))->set_label("fixed");
  testing::write_text(h.store() + ".edit", storage::serialize_store(fixed->store, true));
  REQUIRE(std::rename((h.store() + ".edit").c_str(), h.store().c_str()) == 0);
  REQUIRE(rt->flush().ok());
  auto disk = h.on_disk();
  CHECK(label(disk, key("alice")) == "fixed");
  CHECK(disk.contains(key("bob")));
  rt->settle();
  CHECK(h.of_type("store.edit_refused").size() == 1);  // the fixed file is not reported
  REQUIRE(rt->stop().ok());
}

// The case: rows of passivated sessions live only in sessions.json (spilled), and an
// edit written in place (same inode, truncate + write) moved their bytes. Without the watch
// each such session's next turn failed ("changed in place by another program") until a
// restart; with it the edit is merged first and the turn goes on from the edited row.
TEST_CASE("an edit written in place over rows kept only on disk is taken, and their sessions go on") {
  edit_harness h;
  auto rt = h.start([](actors::runtime_settings& s) {
    s.session.passivate_idle_ms = 60000;
    s.storage.store_spill_min_bytes = 0;  // rows spilled at any size
  });
  talk(*rt, "alice", "hello");
  talk(*rt, "bob", "hello");
  REQUIRE(rt->flush().ok());
  REQUIRE(rt->advance(61000).ok());  // both passivated: their rows live only in sessions.json
  CHECK(rt->stats().live == 0);

  auto s = h.on_disk();
  s.find_for_update(key("bob"))->set_label("relabelled in place");
  testing::write_text(h.store(), storage::serialize_store(s, true));  // same inode: truncate + write

  talk(*rt, "alice", "again");
  REQUIRE(rt->flush().ok());
  auto disk = h.on_disk();
  CHECK(label(disk, key("bob")) == "relabelled in place");
  CHECK(disk.find(key("alice"))->updated_at() > disk.find(key("bob"))->updated_at());
  CHECK(h.of_type("store.edit_refused").empty());
  REQUIRE(rt->stop().ok());
}
