// session_core sends the store its row as the text the store writes (session_store::
// append_row_text): what the store is sent, what entry() gives and what the next turn continues
// from must all be the same row. A row with invalid UTF-8 (its text would not parse back) is
// sent as the object. trim() leaves a row the store was sent to the store (restore_row).
#include <catch2/catch.hpp>

#include <algorithm>

#include <boost/json.hpp>

#include "actors/session/session_core.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store.hpp"
#include "tests/actors/session/core_harness.hpp"
#include "tests/actors/session/turn_driver.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00.000Z
const std::string kKey = "agent:main:main";

class echo_model final : public model_runner {
 public:
  result<boost::json::object> run(const model_request& req) override {
    assistant_fields a;
    a.content.push_back(text_block("ok " + std::to_string(req.messages.size())));
    a.model = "echo";
    a.usage.input = 10;
    a.usage.output = 2;
    a.timestamp_ms = kT0;
    return assistant_message(std::move(a));
  }
};

struct core_harness : testing::core_harness<echo_model> {
  core_harness() : testing::core_harness<echo_model>(kT0) {}
};

}  // namespace

TEST_CASE("session_core: the row goes to the store as the text the store writes, and the next turn continues the same row") {
  core_harness h;
  session_core core(kKey, std::nullopt, h.deps());
  core.set_io(&h.io);
  core_effects fx1;
  turn_outcome t1 = testing::drive(core.chat(testing::dm("1", "hello"), testing::direct_route(), fx1));
  REQUIRE(t1.st.ok());
  REQUIRE(fx1.store_put);
  REQUIRE_FALSE(fx1.store_text.empty());
  // What the store is sent is the row entry() gives, written as the store writes it.
  std::string expected;
  storage::session_store::append_row_text(expected, kKey, *core.entry());
  CHECK(fx1.store_text == expected);
  auto parsed = storage::session_store::parse_row_text(kKey, fx1.store_text);
  REQUIRE(parsed.ok());
  CHECK(json::to_compact(parsed->json()) == json::to_compact(core.entry()->json()));

  h.clk.advance(1000);
  core_effects fx2;
  turn_outcome t2 = testing::drive(core.chat(testing::dm("1", "again"), testing::direct_route(), fx2));
  REQUIRE(t2.st.ok());
  CHECK(t2.session_id == t1.session_id);  // continued from the woken row, not a new session
  CHECK(core.entry()->updated_at() == std::optional<std::int64_t>(kT0 + 1000));
  CHECK(*t2.reply == "ok 3");  // the context kept both turns: user, reply, user
  std::string second;
  storage::session_store::append_row_text(second, kKey, *core.entry());
  CHECK(fx2.store_text == second);
  CHECK(fx2.store_text != fx1.store_text);
}

TEST_CASE("session_core: a row with invalid UTF-8 stays parsed and goes to the store as the object") {
  core_harness h;
  session_entry row;
  row.set_session_id("0a1b2c3d-0000-4000-8000-000000000002");
  row.set_updated_at(kT0 - 1000);
  row.set_label(std::string("Caf\xe9"));
  session_core core(kKey, row, h.deps());
  core.set_io(&h.io);
  core_effects fx;
  REQUIRE(testing::drive(core.chat(testing::dm("1", "hello"), testing::direct_route(), fx)).st.ok());
  CHECK(fx.store_put);
  CHECK(fx.store_text.empty());  // the actor sends entry() instead
  CHECK(core.entry()->label() == std::optional<std::string_view>("Caf\xe9"));
  CHECK(core.entry()->session_id() == std::optional<std::string_view>("0a1b2c3d-0000-4000-8000-000000000002"));
}

TEST_CASE("session_core: trim leaves a row the store was sent to the store, and the next turn continues from it") {
  core_harness h;
  session_core core(kKey, std::nullopt, h.deps());
  core.set_io(&h.io);
  core_effects fx1;
  turn_outcome t1 = testing::drive(core.chat(testing::dm("1", "hello"), testing::direct_route(), fx1));
  REQUIRE(t1.st.ok());
  REQUIRE(core.trim());
  CHECK(core.trimmed());
  CHECK(core.needs_row());
  CHECK(core.session_id() == t1.session_id);
  CHECK_FALSE(core.entry().has_value());  // nothing kept but its sessionId

  // A turn before the row is back changes nothing.
  core_effects refused_fx;
  CHECK_FALSE(testing::drive(core.chat(testing::dm("1", "too early"), testing::direct_route(), refused_fx)).st.ok());
  CHECK_FALSE(refused_fx.store_put);

  auto stored = storage::session_store::parse_row_text(kKey, fx1.store_text);
  REQUIRE(stored.ok());
  core.restore_row(std::move(*stored));
  CHECK_FALSE(core.needs_row());
  h.clk.advance(1000);
  core_effects fx2;
  turn_outcome t2 = testing::drive(core.chat(testing::dm("1", "again"), testing::direct_route(), fx2));
  REQUIRE(t2.st.ok());
  CHECK(t2.session_id == t1.session_id);
  CHECK(*t2.reply == "ok 3");  // the context was rebuilt from the file: user, reply, user
}

TEST_CASE("session_core: trim keeps a row the store was not sent as it is") {
  core_harness h;
  // A row from the store that no turn has sent back yet stays parsed: trim keeps it.
  session_core first(kKey, std::nullopt, h.deps());
  first.set_io(&h.io);
  core_effects fx;
  REQUIRE(testing::drive(first.chat(testing::dm("1", "hello"), testing::direct_route(), fx)).st.ok());
  session_entry row = *first.entry();
  REQUIRE(first.close().ok());
  session_core core(kKey, row, h.deps());
  core.set_io(&h.io);
  core_effects system_fx;
  system_event hb;
  hb.kind = system_event_kind::heartbeat;
  hb.session_key = kKey;
  hb.text = "beat";
  (void)testing::drive(core.system(hb, system_fx));  // opens nothing: a notice waits for the next prompt
  CHECK_FALSE(core.trim());    // nothing was open
  CHECK_FALSE(core.needs_row());
  REQUIRE(core.entry().has_value());
  CHECK(core.entry()->session_id() == row.session_id());
}

TEST_CASE("session_core: a transcript it closed clean is reopened without a check, one changed meanwhile is checked") {
  core_harness h;
  auto deps = h.deps();
  auto verified = std::make_shared<storage::verified_transcripts>();
  deps.verified = verified;
  session_core core(kKey, std::nullopt, deps);
  core.set_io(&h.io);
  core_effects fx1;
  turn_outcome t1 = testing::drive(core.chat(testing::dm("1", "hello"), testing::direct_route(), fx1));
  REQUIRE(t1.st.ok());
  CHECK(verified->size() == 0);  // open: nothing noted
  REQUIRE(core.trim());
  CHECK(verified->size() == 1);  // closed clean by trim()
  const std::string path = h.dir.file("sessions") + "/" + t1.session_id + ".jsonl";
  REQUIRE(storage::posix_fs().lstat(path).ok());

  auto again = [&](const std::string& text, core_effects& fx) {
    auto stored = storage::session_store::parse_row_text(kKey, fx1.store_text);
    REQUIRE(stored.ok());
    core.restore_row(std::move(*stored));
    h.clk.advance(1000);
    return testing::drive(core.chat(testing::dm("1", text), testing::direct_route(), fx));
  };
  auto repaired = [](const core_effects& fx) {
    return std::count_if(fx.events.begin(), fx.events.end(),
                         [](const lifecycle_event& e) { return e.type == payloads::transcript_repaired::type; });
  };
  SECTION("unchanged: the entry is taken, nothing repaired, the context read back whole") {
    core_effects fx2;
    turn_outcome t2 = again("again", fx2);
    REQUIRE(t2.st.ok());
    CHECK(*t2.reply == "ok 3");
    CHECK(repaired(fx2) == 0);
    CHECK(verified->size() == 0);
  }
  SECTION("another program appended a malformed line: checked, repaired, reported") {
    std::string text = testing::read_text(path);
    testing::write_text(path, text + "{not json}\n");
    core_effects fx2;
    turn_outcome t2 = again("again", fx2);
    REQUIRE(t2.st.ok());
    CHECK(repaired(fx2) == 1);
    CHECK(*t2.reply == "ok 3");
    CHECK(testing::read_text(path).find("{not json}") == std::string::npos);
  }
  SECTION("close() notes it too") {
    core_effects fx2;
    REQUIRE(again("again", fx2).st.ok());
    REQUIRE(core.close().ok());
    CHECK(verified->size() == 1);
  }
}
