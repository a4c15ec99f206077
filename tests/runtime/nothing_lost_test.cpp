// Nothing a turn reports as stored may be missing from the transcript: a line the transcript
// refuses (storage.maxLineBytes) and a runner reply the loader would drop both fail the turn,
// with an error that says why, a turn.failed event, and nothing but well-formed lines on disk.
#include <catch2/catch.hpp>

#include <mutex>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/runtime.hpp"
#include "storage/transcript_repair.hpp"
#include "tests/runtime/event_log.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr std::int64_t kT0 = 1796011140000;

// Answers every turn with `reply` (the test decides its shape); counts the calls.
class fixed_runner : public model_runner {
 public:
  explicit fixed_runner(boost::json::object reply) : reply_(std::move(reply)) {}
  result<boost::json::object> run(const model_request& r) override {
    if (r.purpose == "turn") ++calls;
    return reply_;
  }
  std::atomic<int> calls{0};

 private:
  boost::json::object reply_;
};

boost::json::object assistant_text(std::string text) {
  return {{"role", "assistant"},
          {"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", text}}}},
          {"stopReason", "stop"},
          {"usage", boost::json::object{{"input", 10}, {"output", 10}, {"totalTokens", 20}}}};
}

struct harness {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  testing::event_log events;

  std::unique_ptr<runtime::runtime> start(std::shared_ptr<model_runner> runner, std::size_t max_line_bytes = 16u << 20) {
    runtime_options o;
    o.settings.state_dir = dir.path();
    o.settings.session.reset.timezone = "UTC";
    o.settings.storage.max_line_bytes = max_line_bytes;
    o.runner = std::move(runner);
    o.time = &clk;
    o.virtual_time = true;
    o.threads = 2;
    auto rt = runtime::runtime::start(o);
    REQUIRE(rt.ok());
    events.attach(**rt);
    return std::move(*rt);
  }
  std::vector<std::string> types() { return events.types(); }
};

// Every line of the transcript, parsed; and the repair that loading would make finds nothing.
std::vector<boost::json::object> transcript_lines(const std::string& path) {
  const std::string text = testing::read_text(path);
  auto repaired = storage::repair_transcript_text(text, kT0);
  CHECK_FALSE(repaired.report.changed());
  std::vector<boost::json::object> out;
  for (const auto& l : testing::split_lines(text)) {
    auto o = json::parse_object(l);
    REQUIRE(o.ok());
    out.push_back(std::move(*o));
  }
  return out;
}

std::string session_file(runtime::runtime& rt, const std::string& key) {
  auto row = rt.session(key).value();
  REQUIRE(row.has_value());
  return std::string(row->session_file().value_or(""));
}

bool has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("a reply over storage.maxLineBytes fails the turn, naming the limit, and is not delivered") {
  harness h;
  auto runner = std::make_shared<fixed_runner>(assistant_text(std::string(5000, 'r')));
  auto rt = h.start(runner, 2000);
  auto out = rt->send(testing::dm("123", "hello")).get();
  REQUIRE_FALSE(out.st.ok());
  CHECK_THAT(out.st.message(), Catch::Contains("storage.maxLineBytes"));
  CHECK_THAT(out.st.message(), Catch::Contains("storing the reply"));
  CHECK_FALSE(out.reply.has_value());
  CHECK(runner->calls == 1);
  const std::string path = session_file(*rt, out.session_key);
  REQUIRE(rt->stop().ok());
  auto lines = transcript_lines(path);
  REQUIRE(lines.size() == 2);  // the header and the user's line: what was acknowledged as kept
  CHECK(json::get_string(lines[1], "type") == std::optional<std::string_view>("message"));
  auto types = h.types();
  CHECK(has(types, "turn.failed"));
  CHECK_FALSE(has(types, "turn.completed"));
}

TEST_CASE("a user message over storage.maxLineBytes fails the turn before any model call") {
  harness h;
  auto runner = std::make_shared<fixed_runner>(assistant_text("short"));
  auto rt = h.start(runner, 2000);
  auto out = rt->send(testing::dm("123", std::string(5000, 'u'))).get();
  REQUIRE_FALSE(out.st.ok());
  CHECK(out.st.code() == errc::limit_exceeded);
  CHECK_THAT(out.st.message(), Catch::Contains("storing the user's message"));
  CHECK_THAT(out.st.message(), Catch::Contains("2000"));
  CHECK(runner->calls == 0);
  // The session goes on: a message that fits is answered and kept.
  auto next = rt->send(testing::dm("123", "small")).get();
  INFO(next.st.to_string());
  REQUIRE(next.st.ok());
  CHECK(next.reply == std::optional<std::string>("short"));
  const std::string path = session_file(*rt, next.session_key);
  REQUIRE(rt->stop().ok());
  auto lines = transcript_lines(path);
  CHECK(lines.size() == 3);
  CHECK(has(h.types(), "turn.failed"));
}

TEST_CASE("a runner reply without a role fails the turn and writes no entry the loader would drop") {
  harness h;
  boost::json::object reply = assistant_text("no role here");
  reply.erase("role");
  auto rt = h.start(std::make_shared<fixed_runner>(reply));
  auto out = rt->send(testing::dm("123", "hello")).get();
  REQUIRE_FALSE(out.st.ok());
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK_THAT(out.st.message(), Catch::Contains("no \"role\""));
  CHECK_FALSE(out.reply.has_value());
  const std::string path = session_file(*rt, out.session_key);
  REQUIRE(rt->stop().ok());
  CHECK(transcript_lines(path).size() == 2);
  CHECK(has(h.types(), "turn.failed"));
}

TEST_CASE("runner replies with a wrong role or unreadable blocks are refused with the rule they break") {
  struct bad_case {
    const char* name;
    boost::json::object reply;
    const char* says;
  };
  boost::json::object user_role = assistant_text("x");
  user_role["role"] = "user";
  boost::json::object text_number = assistant_text("x");
  text_number["content"] = boost::json::array{boost::json::object{{"type", "text"}, {"text", 42}}};
  boost::json::object no_content = assistant_text("x");
  no_content.erase("content");
  boost::json::object call_without_args = assistant_text("x");
  call_without_args["content"] =
      boost::json::array{boost::json::object{{"type", "toolCall"}, {"id", "c1"}, {"name", "read"}}};
  for (const auto& c : {bad_case{"user role", user_role, "role \"user\""},
                        bad_case{"text not a string", text_number, "content[0] (text block)"},
                        bad_case{"no content", no_content, "no \"content\""},
                        bad_case{"toolCall without arguments", call_without_args, "\"arguments\""}}) {
    {
      INFO(c.name);
      harness h;
      auto rt = h.start(std::make_shared<fixed_runner>(c.reply));
      auto out = rt->send(testing::dm("123", "hello")).get();
      REQUIRE_FALSE(out.st.ok());
      CHECK_THAT(out.st.message(), Catch::Contains(c.says));
      const std::string path = session_file(*rt, out.session_key);
      REQUIRE(rt->stop().ok());
      CHECK(transcript_lines(path).size() == 2);
    }
  }
}

TEST_CASE("a tool loop round the loader would drop fails the turn and is not written") {
  // The runner reports one good round (assistant tool call), then a tool result without its
  // toolCallId, then answers: the turn fails at the bad round; the good round stays stored.
  class looping_runner : public model_runner {
   public:
    result<boost::json::object> run(const model_request& r) override {
      if (r.purpose != "turn" || !r.on_message) return assistant_text("done");
      boost::json::object call = assistant_text("x");
      call["content"] = boost::json::array{boost::json::object{
          {"type", "toolCall"}, {"id", "c1"}, {"name", "read"}, {"arguments", boost::json::object{}}}};
      call["stopReason"] = "toolUse";
      r.on_message(call);
      r.on_message(boost::json::object{{"role", "toolResult"}, {"toolName", "read"},
                                       {"content", boost::json::array{}}, {"isError", false}});
      return assistant_text("done");
    }
  };
  harness h;
  auto rt = h.start(std::make_shared<looping_runner>());
  auto out = rt->send(testing::dm("123", "hello")).get();
  REQUIRE_FALSE(out.st.ok());
  CHECK_THAT(out.st.message(), Catch::Contains("toolCallId"));
  const std::string path = session_file(*rt, out.session_key);
  REQUIRE(rt->stop().ok());
  auto lines = transcript_lines(path);
  REQUIRE(lines.size() == 3);  // header, the user's line, the good round
  const auto* m = json::get_object(lines[2], "message");
  REQUIRE(m);
  CHECK(json::get_string(*m, "stopReason") == std::optional<std::string_view>("toolUse"));
}
