// The store actor with durability batch (a commit log to record row changes in): the sessions'
// rows come from the log and sessions.json is written with the window, not per row nor for a
// durable put (answered once the log made its record durable); an erase is answered once its
// removals are durable; after each write, and when the log asks with nothing to write, the
// store records that sessions.json holds everything it took (kStoreWritten, with the last
// session row's number).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/store/store_actor.hpp"
#include "messages/clock.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

const std::string kStore = "/s/sessions.json";

// Counts the writes of sessions.json (each ends with a rename onto it).
class counting_fs final : public storage::forwarding_fs {
 public:
  using storage::forwarding_fs::forwarding_fs;
  int store_writes = 0;
  status rename(const std::string& a, const std::string& b) override {
    if (b == kStore) ++store_writes;
    return forwarding_fs::rename(a, b);
  }
};

// Stands in for the commit log: keeps the store's appends; answers them when told to.
struct log_view {
  std::vector<commit_log_append> got;
  caf::actor from;
};
caf::behavior fake_log(caf::event_based_actor* self, int, std::shared_ptr<log_view> view) {
  return {
      [self, view](log_append_atom, commit_log_append& a) {
        view->from = caf::actor_cast<caf::actor>(self->current_sender());
        view->got.push_back(std::move(a));
      },
  };
}

std::string row_text(const std::string& key, std::int64_t updated_at) {
  std::string out;
  storage::session_store::append_row_text(
      out, key, session_entry(boost::json::object{{"sessionId", "s-" + key}, {"updatedAt", updated_at}}));
  return out;
}

struct harness {
  manual_clock clk{1700000000000};
  storage::memory_fs mem{clk};
  counting_fs files{mem};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  caf::actor store, log;
  std::shared_ptr<log_view> view = std::make_shared<log_view>();

  explicit harness(std::uint64_t rewrite_bytes_per_sec = 0) {
    REQUIRE(storage::ensure_dir(mem, "/s").ok());
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    log = sys->spawn(fake_log, 0, view);
    auto file = std::make_shared<storage::session_store_file>(files, clk, kStore);
    REQUIRE(file->load().ok());
    store_actor_config sc;
    sc.agent_id = "main";
    sc.hub = std::make_shared<event_hub>();
    sc.time = &clk;
    sc.pace.window_ms = 5000;
    sc.pace.rewrite_bytes_per_sec = rewrite_bytes_per_sec;
    sc.pace.max_lazy_ms = 60000;  // the commit log's checkpoint interval, as store_write_pace sets it
    sc.watch_edits = false;
    sc.commit_log = caf::actor_cast<commit_log_actor>(log);
    store = caf::actor_cast<caf::actor>(sys->spawn(store_actor, file, sc));
    sched->run();
  }
  ~harness() {
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(log, caf::exit_reason::user_shutdown);
    sched->run();
  }
  // The log answers the store's appends up to `seq`.
  void answer(std::uint64_t seq, const std::string& error = "") {
    caf::anon_send(store, synced_atom::value, std::uint64_t{0}, seq, error);
    sched->run();
  }
  std::vector<const commit_log_append*> written_records() {
    std::vector<const commit_log_append*> out;
    for (const auto& a : view->got)
      if (a.store_written) out.push_back(&a);
    return out;
  }
};

}  // namespace

TEST_CASE("store actor, durability batch: rows and durable puts wait for the window, answered by the log") {
  harness h;
  for (std::uint64_t i = 1; i <= 50; ++i) {
    row_batch b;
    b.rows.push_back({"agent:main:k" + std::to_string(i % 7), row_text("agent:main:k" + std::to_string(i % 7), i), 100 + i});
    caf::anon_send(h.store, log_rows_atom::value, std::move(b));
  }
  std::optional<bool> answered;
  h.sys->spawn([&, s = h.store](caf::event_based_actor* self) {
    self->request(s, caf::infinite, put_atom::value, std::string("agent:main:admin"), row_text("agent:main:admin", 7),
                  flush_atom::value)
        .then([&](bool ok) { answered = ok; }, [&](caf::error&) { answered = false; });
  });
  h.sched->run();
  CHECK(h.files.store_writes == 0);  // 50 rows and a durable put: no write yet
  CHECK_FALSE(answered.has_value());
  REQUIRE(h.view->got.size() == 1);  // the durable put, recorded as the store's own change
  const auto& put = h.view->got[0];
  CHECK(put.from_store);
  CHECK(put.store_order == 150);  // after the last session row the store took
  REQUIRE(put.rows.size() == 1);
  CHECK(put.rows[0].key == "agent:main:admin");
  h.answer(put.seq);
  CHECK(answered == std::optional<bool>(true));
  CHECK(h.files.store_writes == 0);
  // The window closes: one write, then the record that sessions.json holds it all.
  REQUIRE(h.sched->trigger_timeout());
  h.sched->run();
  CHECK(h.files.store_writes == 1);
  auto written = h.written_records();
  REQUIRE(written.size() == 1);
  CHECK(written[0]->store_order == 150);
  CHECK(written[0]->agent == "main");
}

TEST_CASE("store actor, durability batch: an erase is answered once its removals are durable") {
  harness h;
  row_batch b;
  b.rows.push_back({"agent:main:x", row_text("agent:main:x", 42), 9});
  caf::anon_send(h.store, log_rows_atom::value, std::move(b));
  std::optional<std::size_t> removed;
  h.sys->spawn([&, s = h.store](caf::event_based_actor* self) {
    self->request(s, caf::infinite, erase_atom::value, std::vector<std::string>{"agent:main:x"},
                  std::vector<std::int64_t>{42})
        .then([&](std::size_t n) { removed = n; });
  });
  h.sched->run();
  CHECK_FALSE(removed.has_value());
  CHECK(h.files.store_writes == 0);
  REQUIRE(h.view->got.size() == 1);
  REQUIRE(h.view->got[0].rows.size() == 1);
  CHECK(h.view->got[0].rows[0].text.empty());  // a removal
  CHECK(h.view->got[0].store_order == 9);
  h.answer(h.view->got[0].seq);
  CHECK(removed == std::optional<std::size_t>(1));
}

TEST_CASE("store actor, durability batch: asked by the log, it records a write at once when nothing waits, else after the window") {
  harness h;
  caf::anon_send(h.store, checkpoint_atom::value);
  h.sched->run();
  REQUIRE(h.written_records().size() == 1);
  CHECK(h.files.store_writes == 0);
  row_batch b;
  b.rows.push_back({"agent:main:y", row_text("agent:main:y", 1), 77});
  caf::anon_send(h.store, log_rows_atom::value, std::move(b));
  caf::anon_send(h.store, checkpoint_atom::value);
  h.sched->run();
  CHECK(h.written_records().size() == 1);  // the row waits for the window's write
  REQUIRE(h.sched->trigger_timeout());
  h.sched->run();
  CHECK(h.files.store_writes == 1);
  REQUIRE(h.written_records().size() == 2);
  CHECK(h.written_records()[1]->store_order == 77);
}

// The rewrite rate (write_pace.hpp) stretches the window for a large file, but a log that waits
// to be dropped gets its write after the window alone. At 1 byte a second any written file
// waits the 60 s cap (the checkpoint interval).
TEST_CASE("store actor, durability batch: the rewrite rate spaces the writes, a checkpoint's write keeps the window") {
  harness h(/*rewrite_bytes_per_sec=*/1);
  auto put_row = [&](const std::string& key, std::uint64_t order) {
    row_batch b;
    b.rows.push_back({key, row_text(key, order), order});
    caf::anon_send(h.store, log_rows_atom::value, std::move(b));
    h.sched->run();
  };
  auto advance = [&](int seconds) {
    h.sched->clock().advance_time(std::chrono::seconds(seconds));
    h.sched->run();
  };
  put_row("agent:main:a", 10);
  advance(5);  // no file yet: the window
  REQUIRE(h.files.store_writes == 1);
  put_row("agent:main:b", 11);
  advance(30);
  CHECK(h.files.store_writes == 1);  // the file has bytes now: 60 s
  advance(30);
  CHECK(h.files.store_writes == 2);
  put_row("agent:main:c", 12);
  advance(1);
  caf::anon_send(h.store, checkpoint_atom::value);
  h.sched->run();
  const std::size_t records = h.written_records().size();
  advance(4);
  CHECK(h.files.store_writes == 2);
  advance(1);  // 5 s after the log asked
  CHECK(h.files.store_writes == 3);
  REQUIRE(h.written_records().size() == records + 1);
  CHECK(h.written_records().back()->store_order == 12);
  advance(60);  // the rate's timer finds nothing left to write
  CHECK(h.files.store_writes == 3);
}
