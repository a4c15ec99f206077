// Context management end to end (SPEC §4) through the public API, with the simulated model on
// a small window: a session grows past its window, flushes memory once, compacts and keeps
// talking; an overflow error mid-turn is compacted away; providers fall back or propagate a
// cancellation; silent replies; pressure events; /compact; the successor transcript.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <fmt/format.h>
#include <fstream>
#include <mutex>

#include "messages/json_access.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_file.hpp"
#include "storage/transcript_reader.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // node: new Date("2026-11-30T03:59:00.000Z").getTime()

struct scenario {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  std::shared_ptr<simulated_model> model;
  std::unique_ptr<runtime::runtime> rt;
  std::vector<lifecycle_event> events;
  std::mutex mu;

  explicit scenario(std::int64_t window, std::function<void(actors::runtime_settings&)> tweak = {},
                    std::function<void(const std::string& state_dir)> before_start = {},
                    std::function<std::shared_ptr<model_runner>(std::shared_ptr<simulated_model>)> wrap = {}) {
    if (before_start) before_start(dir.path());
    simulated_model_options mo;
    mo.context_window = window;
    model = std::make_shared<simulated_model>(clk, mo);
    runtime_options o;
    o.settings.state_dir = dir.path();
    o.settings.session.reset.timezone = "UTC";
    actors::reset_config off;
    off.mode = actors::reset_mode::none;
    o.settings.session.reset.reset = off;
    o.settings.model.context_window = window;
    // A small window needs small reserves (the defaults assume 200k).
    o.settings.compaction.reserve_tokens = 600;
    o.settings.compaction.reserve_tokens_floor = 500;
    o.settings.compaction.keep_recent_tokens = 400;
    o.settings.memory_flush.soft_threshold_tokens = 500;
    if (tweak) tweak(o.settings);
    o.runner = wrap ? wrap(model) : model;
    o.time = &clk;
    o.virtual_time = true;
    auto started = runtime::runtime::start(o);
    REQUIRE(started.ok());
    rt = std::move(*started);
    rt->subscribe({}, [this](const lifecycle_event& e) {
      std::lock_guard<std::mutex> g(mu);
      events.push_back(e);
    });
  }
  // The runtime stops (and delivers its last events) while the members the callback uses live.
  ~scenario() {
    if (rt) (void)rt->stop();
  }
  turn_outcome say(const std::string& text) {
    auto out = rt->send(testing::dm("1", text)).get();
    rt->settle();
    clk.advance(1000);
    return out;
  }
  std::vector<std::string> types() {
    std::lock_guard<std::mutex> g(mu);
    std::vector<std::string> out;
    for (auto& e : events) out.push_back(e.type);
    return out;
  }
  std::vector<lifecycle_event> of(std::string_view type) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<lifecycle_event> out;
    for (auto& e : events)
      if (e.type == type) out.push_back(e);
    return out;
  }
  session_entry row() { return *rt->session("agent:main:main").value(); }
  storage::session_context context() {
    auto rd = storage::transcript_reader::open(storage::posix_fs(), std::string(row().session_file().value_or("")));
    REQUIRE(rd.ok());
    auto ctx = storage::build_context(**rd);
    REQUIRE(ctx.ok());
    return std::move(*ctx);
  }
};

// Collects reply.delta events (opt-in: the scenario's catch-all subscription does not get them).
struct delta_log {
  std::mutex mu;
  std::vector<lifecycle_event> deltas;
  runtime::runtime& rt;
  std::uint64_t id;
  explicit delta_log(runtime::runtime& r) : rt(r) {
    id = rt.subscribe({{"reply.delta"}, "", ""}, [this](const lifecycle_event& e) {
      std::lock_guard<std::mutex> g(mu);
      deltas.push_back(e);
    });
  }
  ~delta_log() { rt.unsubscribe(id); }
  // The text shown for one attempt, and its closing delta.
  std::pair<std::string, std::optional<lifecycle_event>> attempt(std::int64_t n) {
    std::lock_guard<std::mutex> g(mu);
    std::string text;
    std::optional<lifecycle_event> done;
    for (const auto& e : deltas) {
      if (json::get_int(e.data, "attempt") != n) continue;
      text += json::get_string(e.data, "text").value_or("");
      if (e.data.contains("done")) done = e;
    }
    return {text, done};
  }
};

// A runner that streams: the first turn call shows some text and then fails with an overflow;
// later turn calls stream "NO_REPLY\nHello there NO_REPLY" in pieces (what is shown must be
// "Hello there"). Everything else goes to the simulated model.
class streaming_runner final : public model_runner {
 public:
  explicit streaming_runner(std::shared_ptr<simulated_model> inner) : inner_(std::move(inner)) {}
  result<boost::json::object> run(const model_request& request) override {
    if (request.purpose != "turn" || !request.on_text) return inner_->run(request);
    if (overflows_left_ > 0) {
      --overflows_left_;
      request.on_text("Let me th");
      request.on_text("ink about it. ");
      return status(errc::limit_exceeded, "prompt is too long: 213456 tokens > 200000 maximum");
    }
    model_request quiet = request;
    quiet.on_text = nullptr;
    auto reply = inner_->run(quiet);
    if (!reply.ok()) return reply;
    const std::string text = "NO_REPLY\nHello there NO_REPLY";
    (*reply)["content"].as_array()[0].as_object()["text"] = text;
    for (std::string_view piece : {"NO_R", "EPLY\nHel", "lo there NO_", "REPLY"}) request.on_text(piece);
    return reply;
  }
  int overflows_left_ = 0;

 private:
  std::shared_ptr<simulated_model> inner_;
};

std::string long_message(int i) {
  return fmt::format("Message {}: {}", i, std::string(300, static_cast<char>('a' + i % 26)));
}

}  // namespace

TEST_CASE("a session grows past its window: it flushes memory once, compacts, and keeps talking") {
  scenario s(3000);
  for (int i = 0; i < 30; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  auto flushes = s.of("memory_flush.completed");
  auto compactions = s.of("compaction.completed");
  REQUIRE_FALSE(compactions.empty());
  REQUIRE_FALSE(flushes.empty());
  // Once per compaction cycle: never more flushes than cycles.
  CHECK(flushes.size() <= compactions.size() + 1);
  // The flush of a cycle comes before that cycle's compaction.
  auto t = s.types();
  auto first_flush = std::find(t.begin(), t.end(), "memory_flush.completed");
  auto first_compaction = std::find(t.begin(), t.end(), "compaction.completed");
  CHECK(first_flush < first_compaction);
  CHECK(s.model->counters().memory_flush_calls == static_cast<std::int64_t>(flushes.size()));
  auto row = s.row();
  CHECK(row.compaction_count().value_or(0) == static_cast<std::int64_t>(compactions.size()));
  CHECK(row.memory_flush_compaction_count().has_value());
  CHECK(row.total_tokens().value_or(0) < 3000);
  auto ctx = s.context();
  REQUIRE_FALSE(ctx.messages.empty());
  CHECK(ctx.messages[0].as_object().at("role").as_string() == "compactionSummary");
  CHECK(json::get_string(compactions.back().data, "provider") == std::optional<std::string_view>("builtin"));
  // The flush prompt and its reply are not stored in the transcript.
  for (const auto& m : ctx.messages)
    if (auto c = json::get_string(m.as_object(), "content")) CHECK(c->find("Pre-compaction memory flush") == std::string::npos);
}

TEST_CASE("a read-only workspace: no flush turn, each due flush said once per turn as skipped, compaction still runs") {
  scenario s(3000, [](actors::runtime_settings& st) { st.workspace_writable = false; });
  for (int i = 0; i < 30; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  CHECK(s.model->counters().memory_flush_calls == 0);
  CHECK(s.of("memory_flush.started").empty());
  REQUIRE_FALSE(s.of("compaction.completed").empty());
  auto skipped = s.of("memory_flush.skipped");
  // Said only when a flush was due (not on every early turn), with the count that made it due.
  REQUIRE_FALSE(skipped.empty());
  CHECK(skipped.size() < 30);
  for (const auto& e : skipped) {
    CHECK(json::get_string(e.data, "reason") == std::optional<std::string_view>("read_only_workspace"));
    const auto count = json::get_int(e.data, "tokenCount");
    const auto threshold = json::get_int(e.data, "threshold");
    REQUIRE(count);
    REQUIRE(threshold);
    CHECK(*count >= *threshold);
  }
}

TEST_CASE("an overflow error mid-turn: the context is compacted and the turn retried, the failed reply dropped") {
  scenario s(100000);
  for (int i = 0; i < 12; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  CHECK(s.of("compaction.completed").empty());
  s.model->fail_next(1, "prompt is too long: 213456 tokens > 200000 maximum");
  auto out = s.say("after the overflow");
  REQUIRE(out.st.ok());
  CHECK(out.reply.has_value());
  REQUIRE(s.of("overflow.recovered").size() == 1);
  auto c = s.of("compaction.completed");
  REQUIRE(c.size() == 1);
  CHECK(json::get_string(c[0].data, "reason") == std::optional<std::string_view>("overflow"));
  auto ctx = s.context();
  CHECK(ctx.messages.back().as_object().at("role").as_string() == "assistant");
  std::size_t assistants_after_user = 0;  // exactly one reply to the last user message
  for (std::size_t i = ctx.messages.size(); i-- > 0;) {
    if (ctx.messages[i].as_object().at("role").as_string() == "user") break;
    ++assistants_after_user;
  }
  CHECK(assistants_after_user == 1);
}

TEST_CASE("overflow that compaction cannot cure fails the turn after 3 attempts with the provider's text") {
  scenario s(100000);
  for (int i = 0; i < 12; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  s.model->fail_next(10, "prompt is too long: 213456 tokens > 200000 maximum");
  auto out = s.say("still too big");
  REQUIRE_FALSE(out.st.ok());
  CHECK_THAT(out.st.message(), Catch::Contains("prompt is too long"));
  CHECK(s.of("compaction.completed").size() + s.of("compaction.failed").size() <= 3);
  CHECK(s.of("turn.failed").size() == 1);
}

TEST_CASE("a compaction provider that fails falls back to the built-in summarizer, with a warning") {
  scenario s(100000, [](auto& st) { st.compaction_provider = "ext"; });
  auto provider = std::make_shared<simulated_compaction_provider>();
  provider->fail_with(status(errc::io_error, "provider down"));
  s.rt->register_compaction_provider("ext", provider);
  for (int i = 0; i < 12; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  auto out = s.say("/compact");
  REQUIRE(out.st.ok());
  CHECK(out.command == "/compact");
  auto c = s.of("compaction.completed");
  REQUIRE(c.size() == 1);
  CHECK(json::get_string(c[0].data, "provider") == std::optional<std::string_view>("builtin"));
  CHECK_THAT(std::string(json::get_string(c[0].data, "warning").value_or("")), Catch::Contains("provider down"));
  CHECK(provider->calls() == 1);
}

TEST_CASE("a working provider is used, and one that returns nothing falls back") {
  scenario s(100000, [](auto& st) { st.compaction_provider = "ext"; });
  auto provider = std::make_shared<simulated_compaction_provider>();
  s.rt->register_compaction_provider("ext", provider);
  for (int i = 0; i < 12; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  REQUIRE(s.say("/compact").st.ok());
  for (int i = 12; i < 20; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  provider->return_empty();
  REQUIRE(s.say("/compact").st.ok());
  auto c = s.of("compaction.completed");
  REQUIRE(c.size() == 2);
  CHECK(json::get_string(c[0].data, "provider") == std::optional<std::string_view>("ext"));
  CHECK(json::get_string(c[1].data, "provider") == std::optional<std::string_view>("builtin"));
  CHECK_THAT(std::string(json::get_string(c[1].data, "warning").value_or("")), Catch::Contains("empty summary"));
}

TEST_CASE("a cancelled provider stops the compaction: the cancellation is propagated, not swallowed") {
  scenario s(100000, [](auto& st) { st.compaction_provider = "ext"; });
  auto provider = std::make_shared<simulated_compaction_provider>();
  provider->fail_with(status(errc::cancelled, "cancelled by the host"));
  s.rt->register_compaction_provider("ext", provider);
  for (int i = 0; i < 12; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  const auto before = s.row().compaction_count().value_or(0);
  auto out = s.say("/compact");
  REQUIRE_FALSE(out.st.ok());
  CHECK(out.st.code() == errc::cancelled);
  auto f = s.of("compaction.failed");
  REQUIRE(f.size() == 1);
  CHECK(f[0].data.at("cancelled").as_bool());
  CHECK(s.of("compaction.completed").empty());
  CHECK(s.model->counters().compaction_summary_calls == 0);  // no fallback
  CHECK(s.row().compaction_count().value_or(0) == before);
}

TEST_CASE("a NO_REPLY answer is recorded but not delivered") {
  scenario s(100000);
  auto out = s.say("nothing to say [sim:silent]");
  REQUIRE(out.st.ok());
  CHECK(out.suppressed);
  CHECK_FALSE(out.reply.has_value());
  CHECK(s.of("reply.suppressed").size() == 1);
  auto ctx = s.context();
  auto last = ctx.messages.back().as_object();
  CHECK(last.at("role").as_string() == "assistant");
  CHECK(last.at("content").as_array()[0].as_object().at("text").as_string() == "NO_REPLY");
}

TEST_CASE("context pressure fires each fraction once per compaction cycle") {
  scenario s(3000, [](auto& st) {
    st.memory_flush.enabled = false;
    st.compaction.reserve_tokens = 600;  // compaction threshold 2400
  });
  for (int i = 0; i < 30; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  auto p = s.of("context.pressure");
  auto cycles = s.of("compaction.completed").size() + 1;
  REQUIRE_FALSE(p.empty());
  std::size_t at75 = 0, at90 = 0;
  for (auto& e : p) {
    const double f = e.data.at("fraction").as_double();
    if (f == 0.75) ++at75;
    if (f == 0.90) ++at90;
    CHECK(e.data.at("compactionThreshold").as_int64() == 2400);
  }
  CHECK(at75 >= 1);
  CHECK(at75 <= cycles);
  CHECK(at90 <= cycles);
}

TEST_CASE("/compact with instructions, and truncateAfterCompaction continues in a successor transcript") {
  scenario s(100000, [](auto& st) { st.compaction.truncate_after_compaction = true; });
  for (int i = 0; i < 12; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  const auto old_row = s.row();
  const std::string old_file(old_row.session_file().value_or(""));
  auto out = s.say("/compact focus on the letters");
  REQUIRE(out.st.ok());
  auto c = s.of("compaction.completed");
  REQUIRE(c.size() == 1);
  const std::string successor(json::get_string(c[0].data, "successorSessionId").value_or(""));
  REQUIRE_FALSE(successor.empty());
  auto row = s.row();
  CHECK(row.session_id() == std::optional<std::string_view>(successor));
  CHECK(row.session_id() != old_row.session_id());
  CHECK(testing::exists(old_file));  // the checkpoint stays
  const std::string new_file(row.session_file().value_or(""));
  CHECK(new_file != old_file);
  auto header = storage::read_file(storage::posix_fs(), new_file, 1 << 20);
  REQUIRE(header.ok());
  CHECK(header->find("\"parentSession\":\"" + old_file + "\"") != std::string::npos);
  auto after = s.say("and now?");
  REQUIRE(after.st.ok());
  CHECK(after.session_id == successor);
  auto ctx = s.context();
  CHECK(ctx.messages[0].as_object().at("role").as_string() == "compactionSummary");
  CHECK(ctx.messages.back().as_object().at("role").as_string() == "assistant");
  // /new archives the file the session was writing: the successor, not <id>.jsonl.
  REQUIRE(s.say("/new").st.ok());
  CHECK_FALSE(testing::exists(new_file));
  bool archived = false;
  for (const auto& name : testing::list_names(storage::path_dirname(new_file)))
    archived |= name.rfind(storage::path_basename(new_file) + ".reset.", 0) == 0;
  CHECK(archived);
}

TEST_CASE("messages sent while a compaction runs are all kept, in the order sent") {
  scenario s(3000);
  std::vector<std::future<turn_outcome>> pending;
  for (int i = 0; i < 30; ++i) {  // all sent at once: later ones wait in the mailbox behind compactions
    pending.push_back(s.rt->send(testing::dm("1", long_message(i))));
  }
  for (auto& f : pending) REQUIRE(f.get().st.ok());
  s.rt->settle();
  REQUIRE_FALSE(s.of("compaction.completed").empty());
  // Every line of the transcript, in file order (the context after compaction no longer has them all).
  std::ifstream in(std::string(s.row().session_file().value_or("")));
  std::vector<std::string> users;
  for (std::string line; std::getline(in, line);) {
    auto entry = boost::json::parse(line).as_object();
    const auto* msg = json::get_object(entry, "message");
    if (msg && json::get_string(*msg, "role") == std::optional<std::string_view>("user"))
      users.emplace_back(json::get_string(*msg, "content").value_or(""));
  }
  REQUIRE(users.size() == 30);
  for (int i = 0; i < 30; ++i) CHECK(users[i] == long_message(i));
}

TEST_CASE("a transcript far larger than the window compacts in stages instead of overflowing forever") {
  // A 40,000-token conversation (an imported legacy transcript, say) for a 3,000-token model:
  // one summary request could never fit; without stages every turn would fail.
  std::string session_id;
  auto write_big_transcript = [&](const std::string& state) {
    auto dir = storage::agent_sessions_dir(state, "main");
    REQUIRE(dir.ok());
    REQUIRE(storage::ensure_dir(storage::posix_fs(), *dir).ok());
    session_id = "big-legacy-session";
    header_fields h;
    h.id = session_id;
    h.timestamp_ms = kT0 - 3600 * 1000;
    h.cwd = "/work";
    h.session_key = "agent:main:main";
    manual_clock at{kT0 - 3600 * 1000};
    auto tf = storage::transcript_file::create(storage::posix_fs(), at, *storage::transcript_path(*dir, session_id), h, {});
    REQUIRE(tf.ok());
    for (int i = 0; i < 200; ++i) {
      REQUIRE((*tf)->append_message(user_message(long_message(i), at.now_ms())).ok());
      assistant_fields a;
      a.content.push_back(text_block("Noted: " + long_message(i + 1)));
      a.usage.input = (i + 1) * 160;  // the prompt grew with the conversation
      a.usage.output = 80;
      REQUIRE((*tf)->append_message(assistant_message(std::move(a))).ok());
    }
    REQUIRE((*tf)->flush().ok());
  };
  scenario s(3000, {}, write_big_transcript);
  auto out = s.say("Where were we?");
  INFO(out.st.to_string());
  REQUIRE(out.st.ok());
  CHECK(out.session_id == session_id);  // adopted, compacted, not thrown away
  REQUIRE_FALSE(s.of("compaction.completed").empty());
  CHECK(s.of("compaction.failed").empty());
  // 40k tokens through a ~1,000-token chunk budget: dozens of summary stages.
  CHECK(s.model->counters().compaction_summary_calls > 20);
  CHECK(s.model->counters().window_overflows == 0);
  // No flush turn on a context that cannot fit: skipped, said so, compaction first.
  auto skipped = s.of("memory_flush.skipped");
  REQUIRE(skipped.size() == 1);
  CHECK(json::get_string(skipped[0].data, "reason") == std::optional<std::string_view>("context_over_window"));
  CHECK(s.model->counters().memory_flush_calls == 0);
  auto ctx = s.context();
  CHECK(ctx.messages.size() < 20);
}

TEST_CASE("a streamed reply is published as reply.delta pieces that join to the delivered reply") {
  scenario s(100000);
  delta_log log(*s.rt);
  auto out = s.say("Tell me about the weather in Lisbon");
  REQUIRE(out.st.ok());
  REQUIRE(out.reply.has_value());
  auto [shown, done] = log.attempt(1);
  CHECK(shown == *out.reply);
  REQUIRE(done.has_value());
  CHECK(json::get_bool(done->data, "silent") == false);
  CHECK(json::get_bool(done->data, "discarded") == false);
  {
    std::lock_guard<std::mutex> g(log.mu);
    CHECK(log.deltas.size() > 2);  // streamed in pieces, not in one go
    for (std::size_t i = 0; i < log.deltas.size(); ++i)
      CHECK(json::get_int(log.deltas[i].data, "index") == static_cast<std::int64_t>(i));
  }
  CHECK(s.of("reply.delta").empty());  // opt-in: "every type" does not include it

  // NO_REPLY streamed: nothing shown, the closing delta says silent.
  const std::size_t before = log.deltas.size();
  auto quiet = s.say("nothing to say [sim:silent]");
  REQUIRE(quiet.suppressed);
  std::lock_guard<std::mutex> g(log.mu);
  REQUIRE(log.deltas.size() == before + 1);
  CHECK(json::get_string(log.deltas.back().data, "text") == std::optional<std::string_view>(""));
  CHECK(json::get_bool(log.deltas.back().data, "silent") == true);
}

TEST_CASE("streaming: an attempt dropped for overflow is marked discarded, the retry's tokens are held back") {
  std::shared_ptr<streaming_runner> runner;
  scenario s(100000, {}, {}, [&](std::shared_ptr<simulated_model> m) {
    runner = std::make_shared<streaming_runner>(std::move(m));
    return runner;
  });
  for (int i = 0; i < 12; ++i) REQUIRE(s.say(long_message(i)).st.ok());
  delta_log log(*s.rt);
  runner->overflows_left_ = 1;
  auto out = s.say("after the overflow");
  REQUIRE(out.st.ok());
  CHECK(out.reply == std::optional<std::string>("Hello there"));
  auto [first, first_done] = log.attempt(1);
  CHECK(first == "Let me think about it.");  // the trailing space was still held when it failed
  REQUIRE(first_done.has_value());
  CHECK(json::get_bool(first_done->data, "discarded") == true);
  auto [second, second_done] = log.attempt(2);
  CHECK(second == "Hello there");
  REQUIRE(second_done.has_value());
  CHECK(json::get_bool(second_done->data, "discarded") == false);
  CHECK(s.of("overflow.recovered").size() == 1);
  // The transcript keeps what the model said, tokens included.
  auto last = s.context().messages.back().as_object();
  CHECK(last.at("content").as_array()[0].as_object().at("text").as_string() == "NO_REPLY\nHello there NO_REPLY");
}
