// Row changes through the commit log actor (durability batch): a session's rows are records of
// its append's round, answered with it, numbered in the log's row sequence and handed to the
// agent's store after the write; the store's own changes and its written records go in as it
// sends them; a checkpoint drops a log only once a written record covers its rows, asking the
// store when a log retires holding them; and the shutdown checkpoint keeps a log whose rows no
// write covers, for the next start to replay into sessions.json.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <memory>
#include <string>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/commit_log/commit_log_actor.hpp"
#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_store_file.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;
namespace cl = sessionrt::storage::commit_log;

namespace {

const std::string kState = "/state";
const std::string kSessions = "/state/agents/main/sessions";
const std::string kStore = kSessions + "/sessions.json";

// What the stand-in store saw.
struct store_view {
  std::vector<logged_row> rows;  // from the log, in order
  int asked = 0;                 // (checkpt) requests
  std::vector<std::string> answers;
};

// Stands in for the agent's store: records what the log sends; sends what a test asks it to.
caf::behavior fake_store(caf::event_based_actor* self, int, std::shared_ptr<store_view> view, caf::actor log) {
  return {
      [view](log_rows_atom, row_batch& b) {
        for (auto& r : b.rows) view->rows.push_back(std::move(r));
      },
      [view](checkpoint_atom) { ++view->asked; },
      [view](synced_atom, std::uint64_t, std::uint64_t, const std::string& error) { view->answers.push_back(error); },
      [self, log](log_append_atom, commit_log_append& a) { self->send(log, log_append_atom::value, std::move(a)); },
  };
}

// A session: forwards appends as its own and records the answers.
caf::behavior fake_session(caf::event_based_actor* self, int, caf::actor log,
                           std::shared_ptr<std::vector<std::string>> answers) {
  return {
      [self, log](log_append_atom, commit_log_append& a) { self->send(log, log_append_atom::value, std::move(a)); },
      [answers](synced_atom, std::uint64_t, std::uint64_t, const std::string& error) { answers->push_back(error); },
  };
}

std::string row_text(const std::string& key, const std::string& id) {
  std::string out;
  storage::session_store::append_row_text(out, key, session_entry(boost::json::object{{"sessionId", id}}));
  return out;
}

struct harness {
  manual_clock clk{1'000'000};
  storage::memory_fs mem{clk};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  caf::actor log, store, session;
  std::shared_ptr<store_view> view = std::make_shared<store_view>();
  std::shared_ptr<std::vector<std::string>> answers = std::make_shared<std::vector<std::string>>();
  std::uint64_t first_log = 0;

  explicit harness(std::uint64_t checkpoint_bytes = kCheckpointBytes) {
    REQUIRE(storage::ensure_dir(mem, kSessions).ok());
    auto rec = cl::recover_logs(mem, kState, &clk);
    REQUIRE(rec.ok());
    auto made = cl::create_log(mem, clk, cl::log_dir(kState), rec->next_number, rec->state_id);
    REQUIRE(made.ok());
    first_log = made->number;
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    commit_log_config lc;
    lc.files = &mem;
    lc.time = &clk;
    lc.state_dir = kState;
    lc.state_id = rec->state_id;
    lc.first = *made;
    lc.parallel_syncs = 0;
    lc.files_block = false;
    lc.self_scheduling = false;
    lc.checkpoint_bytes = checkpoint_bytes;
    log = caf::actor_cast<caf::actor>(sys->spawn(commit_log, lc));
    store = sys->spawn(fake_store, 0, view, log);
    session = sys->spawn(fake_session, 0, log, answers);
    store_routes routes;
    routes.by_agent["main"] = {kStore, caf::actor_cast<log_store_port>(store)};
    caf::anon_send(log, spawned_atom::value, std::move(routes));
    sched->run();
  }
  ~harness() {
    for (auto* a : {&session, &store, &log}) caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    sched->run();
  }
  // A turn's rows alone (no transcript bytes), as a session sends them.
  void turn_rows(const std::string& key, const std::string& id, std::uint64_t seq) {
    commit_log_append a;
    a.seq = seq;
    a.agent = "main";
    a.rows.push_back({key, row_text(key, id), 0});
    caf::anon_send(session, log_append_atom::value, std::move(a));
  }
  void store_written(std::uint64_t order) {
    commit_log_append a;
    a.agent = "main";
    a.from_store = true;
    a.store_written = true;
    a.store_order = order;
    caf::anon_send(store, log_append_atom::value, std::move(a));
  }
  std::vector<cl::log_record> records() {
    std::vector<cl::log_record> out;
    const std::vector<std::uint64_t> numbers = *cl::list_logs(mem, cl::log_dir(kState));
    for (auto n : numbers) {
      auto fd = mem.open(cl::log_path(cl::log_dir(kState), n), O_RDONLY, 0);
      REQUIRE(fd.ok());
      cl::log_reader r(mem, *fd, "log");
      std::string rec;
      while (r.next(rec)) out.push_back(*cl::decode(rec));
      (void)mem.close(*fd);
    }
    return out;
  }
  std::size_t logs() { return cl::list_logs(mem, cl::log_dir(kState))->size(); }
  std::string checkpoint() {
    std::string error = "unanswered";
    sys->spawn([&, l = log](caf::event_based_actor* self) {
      self->request(l, caf::infinite, checkpoint_atom::value).then([&](const std::string& e) { error = e; });
    });
    sched->run();
    return error;
  }
};

}  // namespace

TEST_CASE("commit log actor: a turn's rows are records answered with it, then handed to the store in order") {
  harness h;
  h.turn_rows("agent:main:a", "a1", 1);
  h.turn_rows("agent:main:b", "b1", 2);
  h.sched->run();
  CHECK(*h.answers == std::vector<std::string>{"", ""});
  REQUIRE(h.view->rows.size() == 2);
  CHECK(h.view->rows[0].key == "agent:main:a");
  CHECK(h.view->rows[0].seq == (h.first_log << 32) + 1);
  CHECK(h.view->rows[1].seq == (h.first_log << 32) + 2);
  CHECK(h.view->rows[1].text == row_text("agent:main:b", "b1"));
  std::vector<cl::row_change> changes;
  for (auto& r : h.records())
    if (auto* c = std::get_if<cl::row_change>(&r)) changes.push_back(*c);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].store == "agents/main/sessions/sessions.json");  // relative to the state dir
  CHECK(changes[0].origin == cl::kFromSession);
  CHECK(changes[1].order == (h.first_log << 32) + 2);
  CHECK(changes[1].text == row_text("agent:main:b", "b1"));
}

TEST_CASE("commit log actor: a checkpoint drops a log only after sessions.json was written with its rows") {
  harness h(/*checkpoint_bytes=*/2048);
  std::uint64_t seq = 0;
  // Enough rows to pass the checkpoint size: the log retires holding them.
  while (h.logs() < 2) {
    h.turn_rows("agent:main:k" + std::to_string(seq % 3), "id" + std::to_string(seq), seq + 1);
    ++seq;
    h.sched->run();
  }
  CHECK(h.view->asked == 1);  // the store was asked to write
  h.sched->run();
  CHECK(h.logs() == 2);       // ... and the old log waits for it
  // The store wrote, holding every row it took so far.
  h.store_written(h.view->rows.back().seq);
  h.sched->run();
  CHECK(h.logs() == 1);
  // A power loss now (the log of the written record is synced): nothing of the rows is lost,
  // as sessions.json holds them (the store's write is the test's to do: here, none needed).
  CHECK(h.answers->size() == seq);
}

TEST_CASE("commit log actor: a written record older than the log's last rows does not free it") {
  harness h(/*checkpoint_bytes=*/2048);
  std::uint64_t seq = 0;
  while (h.logs() < 2) {
    h.turn_rows("agent:main:k", "id" + std::to_string(seq), seq + 1);
    ++seq;
    h.sched->run();
  }
  const auto last = h.view->rows.back().seq;
  h.store_written(last - 1);  // a write that missed the last row
  h.sched->run();
  CHECK(h.logs() == 2);
  h.store_written(last);
  h.sched->run();
  CHECK(h.logs() == 1);
}

TEST_CASE("commit log actor: the shutdown checkpoint keeps a log whose rows no write covers, and a start replays them") {
  harness h;
  h.turn_rows("agent:main:a", "a1", 1);
  h.sched->run();
  CHECK(h.checkpoint().empty());
  CHECK(h.logs() == 1);  // kept
  auto rec = cl::recover_logs(h.mem, kState, &h.clk);
  REQUIRE(rec.ok());
  storage::session_store_file file(h.mem, h.clk, kStore);
  REQUIRE(file.load().ok());
  CHECK(file.store().find("agent:main:a")->session_id() == std::optional<std::string_view>("a1"));
  CHECK(h.logs() == 0);
}

TEST_CASE("commit log actor: with every row written the shutdown checkpoint removes every log") {
  harness h;
  h.turn_rows("agent:main:a", "a1", 1);
  h.sched->run();
  h.store_written(h.view->rows.back().seq);
  h.sched->run();
  CHECK(h.view->answers == std::vector<std::string>{""});  // the written record is answered too
  CHECK(h.checkpoint().empty());
  CHECK(h.logs() == 0);
}
