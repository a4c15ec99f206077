// Work on an archived row (session_rollover.hpp archived_row_refusal, OpenClaw 2026.9's
// resolveSessionWorkStartError), at each place session_core starts system work:
//   - a heartbeat / cron-event / exec-event notice (system_turn): refused with
//     `Session "<key>" is archived. Restore it before starting new work.`, turn.failed
//     published, the notice not queued, nothing stored;
//   - an isolated cron run (cron_run): refused, reported by cron.completed with the error and a
//     run log line with status "error", nothing stored;
//   - an isolated heartbeat (heartbeat_run): an archived row of the heartbeat's own (with
//     heartbeatIsolatedBaseSessionKey) gets a new session out of the archive, as
//     resolveCronSession's canRollArchivedHeartbeat; any other archived row is refused.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "actors/session/session_core.hpp"
#include "messages/json_reader.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/durable_file.hpp"
#include "tests/actors/session/core_harness.hpp"
#include "tests/actors/session/turn_driver.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00.000Z
constexpr const char* kSessionId = "0a1b2c3d-0000-4000-8000-000000000007";

class echo_model final : public model_runner {
 public:
  int calls = 0;
  result<boost::json::object> run(const model_request&) override {
    ++calls;
    assistant_fields a;
    a.content.push_back(text_block("ok"));
    a.model = "echo";
    a.timestamp_ms = kT0;
    return assistant_message(std::move(a));
  }
};

struct harness : testing::core_harness<echo_model> {
  harness() : testing::core_harness<echo_model>(kT0) { settings.state_dir = dir.path(); }
};

// A row archived by maintenance an hour ago (archivedAt, archiveReason), updated a minute ago.
session_entry archived_row() {
  session_entry row;
  row.set_session_id(kSessionId);
  row.set_updated_at(kT0 - 60'000);
  row.set_session_started_at(kT0 - 3'600'000);
  row.json()["archivedAt"] = kT0 - 3'600'000;
  row.json()["archiveReason"] = "age";
  return row;
}

std::string refusal_for(const std::string& key) {
  return "Session \"" + key + "\" is archived. Restore it before starting new work.";
}

const lifecycle_event* find_event(const core_effects& fx, std::string_view type) {
  for (const auto& e : fx.events)
    if (e.type == type) return &e;
  return nullptr;
}

system_event notice(system_event_kind kind, std::string text) {
  system_event ev;
  ev.kind = kind;
  ev.text = std::move(text);
  return ev;
}

}  // namespace

TEST_CASE("archived row: a heartbeat, cron or exec notice is refused, published as turn.failed, and nothing is kept") {
  const std::string key = "agent:main:main";
  for (auto kind : {system_event_kind::heartbeat, system_event_kind::cron, system_event_kind::exec}) {
    harness h;
    const session_entry before = archived_row();
    session_core core(key, before, h.deps());
    core.set_io(&h.io);
    core_effects fx;
    turn_outcome out = testing::drive(core.system(notice(kind, "exec finished: 0"), fx));
    CHECK(out.st.code() == errc::invalid_argument);
    CHECK(out.st.message() == refusal_for(key));
    CHECK_FALSE(fx.store_put);  // the row stays as stored: still archived, updatedAt untouched
    CHECK(fx.store_text.empty());
    REQUIRE(core.entry());
    CHECK(core.entry()->json() == before.json());
    CHECK(core.queued_system_events() == 0);  // the notice waits for nothing
    const lifecycle_event* failed = find_event(fx, event_types::turn_failed);
    REQUIRE(failed);
    CHECK(failed->data.at("error").as_string() == refusal_for(key));
    CHECK(h.model.calls == 0);
  }
  // The same notice to the row out of the archive is queued and stored as before.
  harness h;
  session_entry row = archived_row();
  row.erase("archivedAt");
  row.erase("archiveReason");
  session_core core(key, row, h.deps());
  core.set_io(&h.io);
  core_effects fx;
  turn_outcome out = testing::drive(core.system(notice(system_event_kind::exec, "exec finished: 0"), fx));
  CHECK(out.st.ok());
  CHECK(fx.store_put);
  CHECK(core.queued_system_events() == 1);
  CHECK_FALSE(find_event(fx, event_types::turn_failed));
}

TEST_CASE("archived row: an isolated cron run is refused, reported by cron.completed and the run log, and nothing runs") {
  harness h;
  const std::string key = "agent:main:cron:digest";
  session_entry before = archived_row();
  before.json()["archiveReason"] = "manual";
  session_core core(key, before, h.deps());
  core.set_io(&h.io);
  system_event ev = notice(system_event_kind::cron, "Summarize the day");
  ev.job_id = "digest";
  core_effects fx;
  turn_outcome out = testing::drive(core.system(ev, fx));
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK(out.st.message() == refusal_for(key));
  CHECK(h.model.calls == 0);
  CHECK_FALSE(fx.store_put);
  CHECK(fx.extra_rows.empty());  // no run row either
  REQUIRE(core.entry());
  CHECK(core.entry()->json() == before.json());
  CHECK(core.entry()->session_id() == std::optional<std::string_view>(kSessionId));
  const lifecycle_event* done = find_event(fx, event_types::cron_completed);
  REQUIRE(done);
  CHECK(done->data.at("jobId").as_string() == "digest");
  CHECK(std::string(done->data.at("error").as_string()).find(refusal_for(key)) != std::string::npos);
  // The run log has the failed run, as OpenClaw logs a run that ended in an error.
  std::istringstream log(testing::read_text(h.dir.path() + "/cron/runs/digest.jsonl"));
  std::string line;
  REQUIRE(std::getline(log, line));
  auto parsed = json::parse(line);
  REQUIRE(parsed.ok());
  const auto& entry = parsed->as_object();
  CHECK(entry.at("status").as_string() == "error");
  CHECK(entry.at("action").as_string() == "finished");
  CHECK(std::string(entry.at("error").as_string()).find("is archived") != std::string::npos);
  CHECK_FALSE(entry.contains("sessionId"));
  CHECK_FALSE(std::getline(log, line));
}

TEST_CASE("archived row: an isolated heartbeat starts a new session out of the archive of its own row") {
  harness h;
  const std::string key = "agent:main:main:heartbeat";
  session_entry row = archived_row();
  row.set_heartbeat_isolated_base_session_key("agent:main:main");
  row.json()["archivedBy"] = "maintenance";
  session_core core(key, row, h.deps());
  core.set_io(&h.io);
  core_effects fx;
  turn_outcome out = testing::drive(core.system(notice(system_event_kind::heartbeat, "Read HEARTBEAT.md"), fx));
  REQUIRE(out.st.ok());
  CHECK(out.new_session);
  CHECK(out.session_id != kSessionId);
  CHECK(h.model.calls == 1);  // the heartbeat ran
  CHECK(fx.store_put);
  REQUIRE(core.entry());
  const auto& stored = core.entry()->json();
  CHECK_FALSE(stored.contains("archivedAt"));
  CHECK_FALSE(stored.contains("archivedBy"));
  CHECK_FALSE(stored.contains("archiveReason"));
  CHECK(core.entry()->session_id() == std::optional<std::string_view>(out.session_id));
  CHECK(core.entry()->heartbeat_isolated_base_session_key() == std::optional<std::string_view>("agent:main:main"));
  CHECK_FALSE(find_event(fx, event_types::turn_failed));
}

TEST_CASE("archived row: an isolated heartbeat on an archived row that is not a heartbeat's own is refused") {
  harness h;
  const std::string key = "agent:main:main:heartbeat";
  const session_entry before = archived_row();  // no heartbeatIsolatedBaseSessionKey
  session_core core(key, before, h.deps());
  core.set_io(&h.io);
  core_effects fx;
  turn_outcome out = testing::drive(core.system(notice(system_event_kind::heartbeat, "Read HEARTBEAT.md"), fx));
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK(out.st.message() == refusal_for(key));
  CHECK(h.model.calls == 0);
  CHECK_FALSE(fx.store_put);
  REQUIRE(core.entry());
  CHECK(core.entry()->json() == before.json());
  const lifecycle_event* failed = find_event(fx, event_types::turn_failed);
  REQUIRE(failed);
  CHECK(failed->data.at("error").as_string() == refusal_for(key));
}
