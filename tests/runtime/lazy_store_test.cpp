// sessions.json with durability batch (#34): every row change of a turn is a record of the
// state dir's commit log, durable when the turn is acknowledged, so the store rewrites the
// file lazily (storage.storeFlushWindowMs: the age of the file readers see; virtual time: the
// host's flush) — not per turn, not even with storage.storeDurableAck. A power cut after the
// ack finds the row at the next start (replayed into sessions.json before anything else reads
// it), and a hand edit the store merged stays, with the runtime's changes made after it.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "messages/clock.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/session_store_file.hpp"
#include "storage/write_lock.hpp"
#include "tests/runtime/power_cut.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace cl = sessionrt::storage::commit_log;

namespace {

const std::string kState = "/state";
const std::string kSessions = "/state/agents/main/sessions";
const std::string kStore = kSessions + "/sessions.json";

// Counts the writes of sessions.json (each ends with a rename onto it).
class counting_fs final : public storage::forwarding_fs {
 public:
  using storage::forwarding_fs::forwarding_fs;
  std::atomic<int> store_writes{0};
  status rename(const std::string& a, const std::string& b) override {
    if (b == kStore) ++store_writes;
    return forwarding_fs::rename(a, b);
  }
};

chat_event group_turn(const std::string& group, const std::string& subject, const std::string& text) {
  chat_event ev;
  ev.channel = "telegram";
  ev.peer_kind = "group";
  ev.peer_id = group;
  ev.sender_id = "77";
  ev.subject = subject;
  ev.text = text;
  return ev;
}

struct harness {
  manual_clock clk{1'796'000'000'000};
  storage::memory_fs mem{clk};
  storage::power_loss_fs power{mem, 5, /*forward_syncs=*/false};
  counting_fs files{power};
  std::unique_ptr<runtime::runtime> rt;

  status start(bool durable_ack = false) {
    runtime::runtime_options o;
    o.settings.state_dir = kState;
    o.settings.session.reset.timezone = "UTC";
    actors::reset_config off;
    off.mode = actors::reset_mode::none;
    o.settings.session.reset.reset = off;
    o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
    o.settings.storage.store_durable_ack = durable_ack;
    o.runner = std::make_shared<runtime::simulated_model>(clk);
    o.time = &clk;
    o.virtual_time = true;
    o.files = &files;
    o.files_block = false;
    auto started = runtime::runtime::start(o);
    if (!started.ok()) return started.error();
    rt = std::move(*started);
    return {};
  }
  ~harness() {
    if (rt) (void)rt->stop();
  }
  turn_outcome turn(const chat_event& ev) { return rt->send(ev).get(); }
  // The process dies with the power: what was not synced is lost (locks go with the process).
  void power_cut() {
    testing::power_cut(power, mem, rt, kSessions);
  }
  boost::json::object row(const std::string& key) {
    auto text = storage::read_file(mem, kStore, 1 << 24);
    REQUIRE(text.ok());
    auto parsed = json::parse_object(*text);
    REQUIRE(parsed.ok());
    if (!parsed->contains(key)) return {};
    return parsed->at(key).as_object();
  }
};

std::string field(const boost::json::object& row, const char* name) {
  return std::string(json::get_string(row, name).value_or(""));
}

}  // namespace

TEST_CASE("durability batch: sessions.json is not rewritten per turn, not even with storeDurableAck") {
  harness h;
  REQUIRE(h.start(/*durable_ack=*/true).ok());
  const int at_start = h.files.store_writes;
  for (int i = 0; i < 30; ++i) {
    auto out = h.turn(testing::dm("p" + std::to_string(i % 5), "said " + std::to_string(i)));
    REQUIRE(out.st.ok());
    h.clk.advance(10);
  }
  CHECK(h.files.store_writes - at_start == 0);  // every row is durable in the commit log
  REQUIRE(h.rt->flush().ok());                  // the host's write (virtual time: no window)
  CHECK(h.files.store_writes - at_start == 1);
}

TEST_CASE("durability batch: a row change acknowledged before a power cut is in sessions.json after the restart") {
  harness h;
  REQUIRE(h.start().ok());
  REQUIRE(h.turn(group_turn("-100", "first subject", "hello")).st.ok());
  REQUIRE(h.rt->flush().ok());  // sessions.json holds the row as it was then
  h.clk.advance(60000);
  auto out = h.turn(group_turn("-100", "renamed subject", "again"));
  REQUIRE(out.st.ok());  // acknowledged: its row change is durable in the log
  h.power_cut();         // before any write of sessions.json
  CHECK(field(h.row(out.session_key), "subject") == "first subject");
  REQUIRE(h.start().ok());  // replays the log into sessions.json
  const auto row = h.row(out.session_key);
  CHECK(field(row, "subject") == "renamed subject");
  CHECK(json::get_int(row, "updatedAt") == std::optional<std::int64_t>(h.clk.now_ms()));
  CHECK(cl::list_logs(h.mem, cl::log_dir(kState))->size() == 1);  // the old logs went; this run writes its own
}

TEST_CASE("durability batch: a hand edit the store merged stays, with the runtime's later changes, after a power cut") {
  harness h;
  REQUIRE(h.start().ok());
  auto a = h.turn(testing::dm("a", "said a"));
  REQUIRE(a.st.ok());
  REQUIRE(h.rt->flush().ok());
  // Someone labels the row by hand (OpenClaw documents sessions.json as safe to edit).
  {
    auto text = storage::read_file(h.mem, kStore, 1 << 24);
    REQUIRE(text.ok());
    auto parsed = json::parse_object(*text);
    REQUIRE(parsed.ok());
    (*parsed)[a.session_key].as_object()["label"] = "by hand";
    REQUIRE(storage::replace_file_atomic(h.files, kStore, json::to_pretty(*parsed) + "\n").ok());
  }
  REQUIRE(h.rt->flush().ok());  // the store takes the edit (virtual time: checked at each flush)
  h.clk.advance(1000);
  // The runtime changes the edited row and adds another after the merge; no write follows.
  REQUIRE(h.turn(testing::dm("a", "said a again")).st.ok());
  auto b = h.turn(testing::dm("b", "said b"));
  REQUIRE(b.st.ok());
  h.power_cut();
  REQUIRE(h.start().ok());
  const auto row_a = h.row(a.session_key);
  CHECK(field(row_a, "label") == "by hand");
  CHECK(json::get_int(row_a, "updatedAt") == std::optional<std::int64_t>(h.clk.now_ms()));
  CHECK(field(h.row(b.session_key), "sessionId") == b.session_id);
}
