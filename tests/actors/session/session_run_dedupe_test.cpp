// A chat.send retried with the same idempotencyKey after its session's owner died reaches a new
// owner, which opens the transcript the first one wrote (issue #36): the run's user line is
// there, so the turn does not run again — no model call, the transcript unchanged — and the
// caller gets the stored answer. The same holds for a repeat within one session's life.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "actors/session/session_core.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/session_paths.hpp"
#include "tests/actors/session/core_harness.hpp"
#include "tests/actors/session/turn_driver.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00.000Z
const std::string kKey = "agent:main:main";

class counting_model final : public model_runner {
 public:
  int calls = 0;
  bool fail = false;
  result<boost::json::object> run(const model_request&) override {
    ++calls;
    if (fail) return status(errc::io_error, "the model went away");
    assistant_fields a;
    a.content.push_back(text_block("answer " + std::to_string(calls)));
    a.model = "echo";
    a.timestamp_ms = kT0;
    return assistant_message(std::move(a));
  }
};

struct core_harness : testing::core_harness<counting_model> {
  core_harness() : testing::core_harness<counting_model>(kT0) {}
};

// A chat.send's event as the gateway makes it (gateway/chat_methods.cpp).
chat_event send_of_run(const std::string& run, const std::string& text) {
  chat_event ev = testing::dm("1", text);
  ev.run_id = run;
  ev.message_fields = boost::json::object{{"idempotencyKey", run + ":user"},
                                          {"__openclaw", boost::json::object{{"runId", run}}}};
  return ev;
}

bool appended_any(const core_effects& fx) {
  for (const auto& e : fx.events)
    if (e.type == event_types::message_appended) return true;
  return false;
}

}  // namespace

TEST_CASE("session_core: a run whose user line a previous owner stored does not run again on the new owner", "[session][run_dedupe]") {
  core_harness h;
  std::optional<session_entry> row;
  std::string transcript;
  {
    session_core first(kKey, std::nullopt, h.deps());
    first.set_io(&h.io);
    core_effects fx;
    turn_outcome t = testing::drive(first.chat(send_of_run("run-x", "hello"), testing::direct_route(), fx));
    REQUIRE(t.st.ok());
    REQUIRE(t.reply == std::optional<std::string>("answer 1"));
    row = first.entry();
    auto path = storage::transcript_path(h.dir.file("sessions"), std::string(*row->session_id()));
    REQUIRE(path.ok());
    transcript = *path;
    REQUIRE(first.close().ok());
  }  // the owner is gone; its lock with it
  REQUIRE(h.model.calls == 1);
  const std::string before = testing::read_text(transcript);

  // The new owner opens the session from its row and the transcript; the client retries run-x.
  h.clk.advance(1000);
  session_core second(kKey, row, h.deps());
  second.set_io(&h.io);
  core_effects fx;
  turn_outcome again = testing::drive(second.chat(send_of_run("run-x", "hello"), testing::direct_route(), fx));
  CHECK(again.st.ok());
  CHECK(h.model.calls == 1);                                    // not run again
  CHECK(testing::read_text(transcript) == before);              // no second user line, no second reply
  CHECK_FALSE(appended_any(fx));
  CHECK_FALSE(fx.store_put);                                    // the row is not touched either
  CHECK(again.reply == std::optional<std::string>("answer 1"));  // the caller gets the stored answer
  CHECK(again.run_id == "run-x");
  CHECK(again.session_id == std::string(*row->session_id()));
  CHECK_FALSE(again.turn_event);

  // Another run goes on as usual, and a repeat of it in the same life is caught too.
  core_effects fx2;
  turn_outcome other = testing::drive(second.chat(send_of_run("run-y", "next"), testing::direct_route(), fx2));
  REQUIRE(other.st.ok());
  CHECK(other.reply == std::optional<std::string>("answer 2"));
  CHECK(h.model.calls == 2);
  const std::string after_y = testing::read_text(transcript);
  core_effects fx3;
  turn_outcome repeat = testing::drive(second.chat(send_of_run("run-y", "next"), testing::direct_route(), fx3));
  CHECK(repeat.st.ok());
  CHECK(h.model.calls == 2);
  CHECK(repeat.reply == std::optional<std::string>("answer 2"));
  CHECK(testing::read_text(transcript) == after_y);

  // A message without a run id is never taken for a repeat.
  core_effects fx4;
  turn_outcome plain = testing::drive(second.chat(testing::dm("1", "next"), testing::direct_route(), fx4));
  REQUIRE(plain.st.ok());
  CHECK(h.model.calls == 3);
}

TEST_CASE("session_core: a retried run whose user line is stored but unanswered is not run again", "[session][run_dedupe]") {
  // The first owner's model call ended without a reply (as when it died during the call): the
  // user's line was durable before the call (issue #34), no answer after it.
  core_harness h;
  std::optional<session_entry> row;
  {
    session_core first(kKey, std::nullopt, h.deps());
    first.set_io(&h.io);
    h.model.fail = true;
    core_effects fx;
    turn_outcome t = testing::drive(first.chat(send_of_run("run-z", "retry me"), testing::direct_route(), fx));
    REQUIRE_FALSE(t.st.ok());
    row = first.entry();
    REQUIRE(first.close().ok());
  }
  h.model.fail = false;
  auto path = storage::transcript_path(h.dir.file("sessions"), std::string(*row->session_id()));
  REQUIRE(path.ok());
  const std::string before = testing::read_text(*path);
  REQUIRE(before.find("run-z:user") != std::string::npos);
  const int calls = h.model.calls;

  session_core second(kKey, row, h.deps());
  second.set_io(&h.io);
  core_effects fx;
  turn_outcome again = testing::drive(second.chat(send_of_run("run-z", "retry me"), testing::direct_route(), fx));
  CHECK(again.st.ok());  // a duplicate, as the gateway answers a repeated idempotencyKey
  CHECK_FALSE(again.reply);
  CHECK(again.run_id == "run-z");
  CHECK(h.model.calls == calls);
  CHECK(testing::read_text(*path) == before);
}
