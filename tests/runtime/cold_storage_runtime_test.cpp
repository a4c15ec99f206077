// OpenClaw 2026.9's two maintenance keys in a running runtime (virtual time):
// coldStorage compresses an idle session's transcript, history and `sessions tail` read it, and
// the session's next turn restores it and sees its whole old context; archiveDashboardAfter
// archives a stale dashboard session in place (enforce), and the next message restores it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <mutex>

#include "messages/json_access.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/context_builder.hpp"
#include "storage/transcript_reader.hpp"
#include "tests/runtime/cli_test_support.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00Z
constexpr std::int64_t kDay = 24LL * 3600 * 1000;

// The simulated model, recording how many context messages each turn was given.
class counting_model : public model_runner {
 public:
  explicit counting_model(sessionrt::clock& c) : inner_(c) {}
  result<boost::json::object> run(const model_request& r) override {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (r.purpose == "turn") sizes_.push_back(r.messages.size());
    }
    return inner_.run(r);
  }
  std::vector<std::size_t> sizes() {
    std::lock_guard<std::mutex> g(mu_);
    return sizes_;
  }

 private:
  simulated_model inner_;
  std::mutex mu_;
  std::vector<std::size_t> sizes_;
};

struct harness {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  std::shared_ptr<counting_model> model = std::make_shared<counting_model>(clk);

  std::unique_ptr<runtime::runtime> start(const std::function<void(actors::runtime_settings&)>& tweak) {
    runtime_options o;
    o.settings.state_dir = dir.path();
    o.settings.session.reset.timezone = "UTC";
    actors::reset_config off;
    off.mode = actors::reset_mode::none;
    o.settings.session.reset.reset = off;
    o.runner = model;
    o.time = &clk;
    o.virtual_time = true;
    o.threads = 2;
    tweak(o.settings);
    auto rt = runtime::runtime::start(std::move(o));
    REQUIRE(rt.ok());
    return std::move(*rt);
  }
};

turn_outcome turn(runtime::runtime& rt, const std::string& text, const std::string& key = "") {
  // An explicit key is a Control UI session (webchat): delivered on an external channel it would
  // be protected from maintenance, as OpenClaw 2026.9 protects it (protected_key.hpp).
  auto ev = testing::dm("123", text, key.empty() ? "telegram" : "webchat");
  ev.session_key = key;
  auto out = rt.send(std::move(ev)).get();
  INFO(out.st.to_string());
  return out;
}

// Sets a file's mtime (the files are on the real disk; the clock is virtual).
void set_mtime(const std::string& path, std::int64_t ms) {
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ms / 1000;
  times[0].tv_nsec = times[1].tv_nsec = (ms % 1000) * 1000000;
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

const boost::json::object* store_of(const lifecycle_event& e, std::string_view plan) {
  for (const auto& s : e.data.at("stores").as_array())
    if (json::get_string(s.as_object(), "plan") == std::optional<std::string_view>(plan)) return &s.as_object();
  return nullptr;
}

std::int64_t num(const boost::json::object& o, std::string_view key) { return o.at(key).to_number<std::int64_t>(); }

}  // namespace

TEST_CASE("coldStorage: an idle session's transcript is compressed, read where shown, and restored by its next turn") {
  harness h;
  auto rt = h.start([](actors::runtime_settings& s) {
    s.maintenance.cold_storage_enabled = true;  // mode stays warn: cold storage has its own switch
    s.maintenance.cold_storage_after_days = 30;
  });
  for (const char* text : {"first", "second", "third"}) REQUIRE(turn(*rt, text).st.ok());
  auto row = rt->session("agent:main:main").value();
  REQUIRE(row.has_value());
  const std::string path(row->session_file().value_or(""));
  REQUIRE(testing::exists(path));
  const std::string original = testing::read_text(path);
  set_mtime(path, kT0);

  // Not idle long enough: nothing.
  REQUIRE(rt->advance_clock(29 * kDay).ok());
  auto early = rt->maintain();
  REQUIRE(early.ok());
  CHECK(num(early->data, "filesCompressed") == 0);
  CHECK(testing::exists(path));

  REQUIRE(rt->advance_clock(2 * kDay).ok());
  auto report = rt->maintain();
  REQUIRE(report.ok());
  CHECK(json::get_string(report->data, "mode") == std::optional<std::string_view>("warn"));
  CHECK(num(report->data, "filesCompressed") == 1);
  CHECK(num(report->data, "bytesBeforeCompression") == static_cast<std::int64_t>(original.size()));
  const auto* cold = store_of(*report, "cold-storage");
  REQUIRE(cold);
  CHECK(num(*cold, "filesCompressed") == 1);
  CHECK_FALSE(testing::exists(path));
  REQUIRE(testing::exists(path + ".zst"));
  CHECK(num(report->data, "bytesAfterCompression") == static_cast<std::int64_t>(testing::read_text(path + ".zst").size()));
  CHECK(storage::read_transcript_bytes(storage::posix_fs(), path, 1 << 20).value() == original);

  // Shown without restoring: the runtime's history (chat.history) and `sessions tail`.
  auto history = rt->history("agent:main:main");
  REQUIRE(history.ok());
  REQUIRE(history->messages.size() == 6);
  CHECK(message_text(history->messages[0].as_object().if_contains("content")) == "first");
  REQUIRE(rt->flush().ok());  // virtual time: sessions.json is written at flush points
  auto tail = testing::run_cli_with(storage::posix_fs(),
                                    {"sessions", "tail", "main", "-n", "2", "--json", "--state-dir", h.dir.path()});
  INFO(tail.err);
  REQUIRE(tail.code == 0);
  const auto tail_json = tail.json();
  const auto& tailed = tail_json.at("messages").as_array();
  REQUIRE(tailed.size() == 2);
  CHECK(message_text(tailed[0].as_object().if_contains("content")) == "third");
  CHECK_FALSE(testing::exists(path));  // still compressed

  // The next turn restores the file first and continues the same session with every message.
  auto fourth = turn(*rt, "fourth");
  REQUIRE(fourth.st.ok());
  CHECK_FALSE(fourth.new_session);
  CHECK(h.model->sizes() == std::vector<std::size_t>{1, 3, 5, 7});
  CHECK(testing::exists(path));
  CHECK_FALSE(testing::exists(path + ".zst"));
  CHECK(testing::read_text(path).rfind(original, 0) == 0);  // the old bytes, then the new turn
  REQUIRE(rt->stop().ok());
}

TEST_CASE("coldStorage off (the default): an idle transcript stays as it is") {
  harness h;
  auto rt = h.start([](actors::runtime_settings&) {});
  REQUIRE(turn(*rt, "first").st.ok());
  const std::string path(rt->session("agent:main:main").value()->session_file().value_or(""));
  set_mtime(path, kT0);
  REQUIRE(rt->advance_clock(60 * kDay).ok());
  auto report = rt->maintain();
  REQUIRE(report.ok());
  CHECK(num(report->data, "filesCompressed") == 0);
  CHECK_FALSE(store_of(*report, "cold-storage"));
  CHECK(testing::exists(path));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("archiveDashboardAfter: a stale dashboard session is archived in place under enforce, and a message restores it") {
  const std::string key = "agent:main:dashboard:5e1c";
  for (auto mode : {actors::maintenance_mode::warn, actors::maintenance_mode::enforce}) {
    INFO(actors::maintenance_mode_name(mode));
    harness h;
    auto rt = h.start([mode](actors::runtime_settings& s) { s.maintenance.mode = mode; });
    auto first = turn(*rt, "hello from the Control UI", key);
    REQUIRE(first.st.ok());
    REQUIRE(turn(*rt, "an ordinary chat").st.ok());
    const auto updated = rt->session(key).value()->updated_at();
    REQUIRE(rt->advance_clock(8 * kDay).ok());
    auto report = rt->maintain();
    REQUIRE(report.ok());
    const auto* store = store_of(*report, "maintenance");
    REQUIRE(store);
    CHECK(num(*store, "dashboardsArchived") == 1);  // planned in both modes
    auto row = rt->session(key).value();
    REQUIRE(row.has_value());
    CHECK(row->updated_at() == updated);
    CHECK_FALSE(rt->session("agent:main:main").value()->json().contains("archivedAt"));
    if (mode == actors::maintenance_mode::warn) {
      CHECK(num(report->data, "rowsArchived") == 0);
      CHECK_FALSE(row->json().contains("archivedAt"));
    } else {
      CHECK(num(report->data, "rowsArchived") == 1);
      CHECK(row->json().at("archivedAt").to_number<std::int64_t>() == kT0 + 8 * kDay);
      CHECK(json::get_string(row->json(), "archiveReason") == std::optional<std::string_view>("stale-dashboard"));
      // A second pass: archived already, nothing more.
      auto again = rt->maintain();
      REQUIRE(again.ok());
      CHECK(num(*store_of(*again, "maintenance"), "dashboardsArchived") == 0);
      // The next message takes it out of the archive and continues the session.
      auto back = turn(*rt, "I am back", key);
      REQUIRE(back.st.ok());
      CHECK_FALSE(back.new_session);
      CHECK(back.session_id == first.session_id);
      auto restored = rt->session(key).value();
      CHECK_FALSE(restored->json().contains("archivedAt"));
      CHECK_FALSE(restored->json().contains("archiveReason"));
    }
    REQUIRE(rt->stop().ok());
  }
}
