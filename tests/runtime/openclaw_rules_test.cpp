// OpenClaw's rules where sessionrt used to differ, through the public API: a Telegram forum
// topic is `...:topic:<id>` in `<sessionId>-topic-<id>.jsonl` [R§1.1, §3.1]; a legacy row
// without sessionStartedAt takes its start from the transcript header [R§4.2]; and a
// context.pressure fraction fires once per compaction cycle even across a restart.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fmt/format.h>
#include <mutex>

#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "tests/runtime/event_log.hpp"
#include "tests/runtime/lifecycle_harness.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr std::int64_t kT0 = testing::lifecycle_harness::kT0;  // 2026-11-30T03:59:00Z
constexpr std::int64_t kHour = 3600 * 1000;

// The lifecycle harness with a simulated model (asynchronous) of the configured window.
struct harness : testing::lifecycle_harness {
  testing::event_log log;  // what happens after start
  std::function<void(actors::runtime_settings&)> tweak;

  std::unique_ptr<runtime::runtime> start() {
    auto o = options(tweak);
    simulated_model_options mo;
    mo.context_window = o.settings.model.context_window;
    o.runner = std::make_shared<simulated_model>(clk, mo);
    auto rt = start_with(std::move(o));
    log.attach(*rt);
    return rt;
  }
  std::size_t count(std::string_view type, double fraction = -1) {
    std::size_t n = 0;
    for (const auto& e : log.of(type))
      if (fraction < 0 || e.data.at("fraction").as_double() == fraction) ++n;
    return n;
  }
};

}  // namespace

TEST_CASE("openclaw rules: a Telegram forum topic is keyed :topic: and stored in <id>-topic-<topic>.jsonl") {
  harness h;
  auto rt = h.start();
  chat_event ev;
  ev.channel = "telegram";
  ev.peer_kind = "group";
  ev.peer_id = "-1001234";
  ev.sender_id = "77";
  ev.thread_id = "42";
  ev.text = "hello topic";
  auto out = rt->send(ev).get();
  INFO(out.st.to_string());
  REQUIRE(out.st.ok());
  CHECK(out.session_key == "agent:main:telegram:group:-1001234:topic:42");
  auto row = rt->session(out.session_key).value();
  REQUIRE(row.has_value());
  const std::string file(row->session_file().value_or(""));
  CHECK(storage::path_basename(file) == out.session_id + "-topic-42.jsonl");
  CHECK(testing::exists(file));
  // The group itself, and a Discord thread, keep their own forms.
  chat_event group = ev;
  group.thread_id.clear();
  CHECK(rt->send(group).get().session_key == "agent:main:telegram:group:-1001234");
  chat_event discord = ev;
  discord.channel = "discord";
  CHECK(rt->send(discord).get().session_key == "agent:main:discord:group:-1001234:thread:42");
  REQUIRE(rt->stop().ok());
}

TEST_CASE("openclaw rules: a legacy row without sessionStartedAt is as old as its transcript header") {
  harness h;
  h.tweak = [](actors::runtime_settings& s) {
    actors::reset_config daily;
    daily.mode = actors::reset_mode::daily;
    daily.at_hour = 4;
    s.session.reset.reset = daily;
  };
  // Touched an hour ago, begun two days ago: stale by the daily reset at 04:00.
  const std::string id = "0d6c1b6e-2f4a-4f51-9d3e-0123456789ab";
  const std::string sessions = h.dir.path() + "/agents/main/sessions";
  std::filesystem::create_directories(sessions);
  testing::write_text(sessions + "/" + id + ".jsonl",
                      fmt::format(R"({{"type":"session","version":3,"id":"{}","timestamp":"{}","cwd":"/w"}})" "\n",
                                  id, format_iso_ms(kT0 - 48 * kHour)));
  testing::write_text(sessions + "/sessions.json",
                      fmt::format(R"({{"agent:main:main":{{"sessionId":"{}","updatedAt":{}}}}})", id, kT0 - kHour));
  auto rt = h.start();
  auto out = rt->send(testing::dm("123", "good morning")).get();
  INFO(out.st.to_string());
  REQUIRE(out.st.ok());
  CHECK(out.new_session);
  CHECK(out.reset_reason == "daily");
  CHECK(out.session_id != id);
  REQUIRE(rt->stop().ok());

  // A legacy row whose transcript began after the last boundary is continued, and the row
  // now carries the start it was given.
  harness fresh;
  fresh.tweak = h.tweak;
  const std::string sessions2 = fresh.dir.path() + "/agents/main/sessions";
  std::filesystem::create_directories(sessions2);
  testing::write_text(sessions2 + "/" + id + ".jsonl",
                      fmt::format(R"({{"type":"session","version":3,"id":"{}","timestamp":"{}","cwd":"/w"}})" "\n",
                                  id, format_iso_ms(kT0 - 10 * 60 * 1000)));
  testing::write_text(sessions2 + "/sessions.json",
                      fmt::format(R"({{"agent:main:main":{{"sessionId":"{}","updatedAt":{}}}}})", id, kT0 - 60000));
  auto rt2 = fresh.start();
  auto kept = rt2->send(testing::dm("123", "still here")).get();
  REQUIRE(kept.st.ok());
  CHECK_FALSE(kept.new_session);
  CHECK(kept.session_id == id);
  auto row = rt2->session("agent:main:main").value();
  REQUIRE(row.has_value());
  CHECK(json::get_number(row->json(), "sessionStartedAt") == std::optional<double>(kT0 - 10 * 60 * 1000));
  REQUIRE(rt2->stop().ok());
}

TEST_CASE("openclaw rules: a context.pressure fraction fires once per compaction cycle across a restart") {
  harness h;
  h.tweak = [](actors::runtime_settings& s) {
    s.model.context_window = 3000;
    s.compaction.enabled = false;
    s.memory_flush.enabled = false;
    s.compaction.reserve_tokens = 600;  // threshold 2400: 75% at 1800 tokens
    s.compaction.reserve_tokens_floor = 500;
    s.session.reset.reset = actors::reset_config{.mode = actors::reset_mode::none};
  };
  {
    auto rt = h.start();
    for (int i = 0; i < 40 && h.count("context.pressure", 0.75) == 0; ++i) {
      REQUIRE(rt->send(testing::dm("1", fmt::format("Message {}: {}", i, std::string(200, 'a' + i % 26)))).get().st.ok());
      rt->settle();
      h.clk.advance(1000);
    }
    REQUIRE(h.count("context.pressure", 0.75) == 1);
    REQUIRE(rt->stop().ok());
  }
  auto rt = h.start();
  REQUIRE(rt->send(testing::dm("1", "one more short message")).get().st.ok());
  rt->settle();
  CHECK(h.count("context.pressure", 0.75) == 1);  // not again: no compaction since
  REQUIRE(rt->stop().ok());
}

TEST_CASE("openclaw rules: history shows stored turns without OpenClaw's metadata wrappers, a page at a time") {
  harness h;
  const std::string id = "0d6c1b6e-2f4a-4f51-9d3e-0123456789ab";
  const std::string sessions = h.dir.path() + "/agents/main/sessions";
  std::filesystem::create_directories(sessions);
  std::string text = fmt::format(R"({{"type":"session","version":3,"id":"{}","timestamp":"{}","cwd":"/w"}})" "\n", id,
                                 format_iso_ms(kT0 - kHour));
  boost::json::object wrapped{
      {"role", "user"},
      {"content", "Conversation info (untrusted metadata):\n```json\n{\"message_id\": \"1\"}\n```\n\n"
                  "[Thu 2026-11-26 14:48 GMT+8] what is the plan?"},
      {"timestamp", kT0 - kHour}};
  std::string parent = "null";
  for (int i = 0; i < 30; ++i) {
    const std::string eid = fmt::format("{:08x}", i + 1);
    text += fmt::format(R"({{"type":"message","id":"{}","parentId":{},"timestamp":"{}","message":{}}})" "\n", eid, parent,
                        format_iso_ms(kT0 - kHour), json::to_compact(wrapped));
    parent = "\"" + eid + "\"";
  }
  testing::write_text(sessions + "/" + id + ".jsonl", text);
  testing::write_text(sessions + "/sessions.json",
                      fmt::format(R"({{"agent:main:main":{{"sessionId":"{}","updatedAt":{},"sessionStartedAt":{}}}}})", id,
                                  kT0 - kHour, kT0 - kHour));
  auto rt = h.start();
  auto page = rt->history("agent:main:main", 5);
  REQUIRE(page.ok());
  CHECK(page->total_messages == 30);
  REQUIRE(page->messages.size() == 5);
  for (const auto& m : page->messages) CHECK(m.at("content") == "what is the plan?");
  // The file keeps what it had: only the view changes.
  CHECK(testing::read_text(sessions + "/" + id + ".jsonl") == text);
  REQUIRE(rt->stop().ok());
}
