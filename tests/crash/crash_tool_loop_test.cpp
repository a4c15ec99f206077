// Tool-loop crash tests: a child runtime (crash_tool_loop.cpp) runs turns whose model
// (tests/providers/fake_provider.mjs, model tools-3) asks for 3 rounds of tool calls before it
// answers, through the built-in provider_runner over real HTTP, and the parent kills it with
// SIGKILL mid-loop: at fixed points (the tool's 1st, 3rd or 4th call never answers: before
// round 1 was reported, after round 1, after round 2) and after a random number of the child's
// lines (tool calls and acks of 3 conversations).
// 1. Kills one after another on one state dir: after each, every transcript opens the way a
//    session opens it (repaired if it must be), every line parses, and its messages are whole
//    turns and rounds: a user message, then rounds (an assistant with tool calls, then one
//    toolResult per call, by id, right after it), then the final text after exactly 3 rounds;
//    only a turn a kill cut may end early (and only its last round may lack results). Then a
//    runtime in this process starts on the dir with the `echo` model, every conversation takes
//    another turn, the hygiene pipeline changes no pairing in its context beyond answering the
//    calls a cut left open, and the fake saw no request that broke an API rule (children's
//    included). Once per API.
// 2. The turn a kill cuts kept its user message and the rounds it had finished (at most the
//    round in flight is lost).
// 3. The states a kill leaves when messages are written as they come (made from real
//    transcripts: cut after round 1 with a torn line, inside round 2, after the user message):
//    repair takes them and a restart goes on with every API.
// Random kills per API in 1: max(3, SESSIONRT_CRASH_KILLS / 25) (scripts/test.sh --long: 4).
// A failure in 1 prints the random kill points' seed; SESSIONRT_CRASH_SEED=<seed> repeats them.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>

#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/model_setup.hpp"
#include "runtime/runtime.hpp"
#include "storage/archive_names.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_open.hpp"
#include "tests/crash/child_process.hpp"
#include "tests/crash/crash_seed.hpp"
#include "tests/runtime/fake_provider_process.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace bj = boost::json;

namespace {

const char* const kApis[] = {"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"};
constexpr int kConversations = 3;

int random_kills() {
  const char* v = std::getenv("SESSIONRT_CRASH_KILLS");
  return std::max(3, v ? std::atoi(v) / 25 : 0);
}

// The child's stdout, a line at a time; every wait bounded.
class line_reader {
 public:
  explicit line_reader(int fd) : fd_(fd) {}
  // The next line (without '\n'); nullopt at EOF or when none came within `limit`.
  std::optional<std::string> next(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      if (eof_) return std::nullopt;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[4096];
      const ssize_t got = ::read(fd_, chunk, sizeof chunk);
      if (got <= 0) eof_ = true;
      else buf_.append(chunk, static_cast<std::size_t>(got));
    }
  }

 private:
  int fd_;
  std::string buf_;
  bool eof_ = false;
};

std::string role_of(const bj::value& m) {
  return m.is_object() ? std::string(json::get_string(m.as_object(), "role").value_or("")) : "";
}

std::vector<std::string> tool_call_ids(const bj::object& assistant) {
  std::vector<std::string> ids;
  if (const auto* content = json::get_array(assistant, "content"))
    for (const auto& b : *content)
      if (b.is_object() && json::get_string(b.as_object(), "type") == std::optional<std::string_view>("toolCall"))
        ids.emplace_back(json::get_string(b.as_object(), "id").value_or(""));
  return ids;
}

std::string text_of(const bj::object& m) {
  std::string text;
  if (const auto* content = json::get_array(m, "content"))
    for (const auto& b : *content)
      if (b.is_object() && json::get_string(b.as_object(), "type") == std::optional<std::string_view>("text"))
        text += json::get_string(b.as_object(), "text").value_or("");
  return text;
}

struct shape {
  std::size_t messages = 0, complete_turns = 0, cut_turns = 0, rounds = 0, error_results = 0;
  std::size_t unanswered_calls = 0;  // tool calls of a cut turn's last round without a result
  shape& operator+=(const shape& o) {
    messages += o.messages, complete_turns += o.complete_turns, cut_turns += o.cut_turns, rounds += o.rounds;
    error_results += o.error_results, unanswered_calls += o.unanswered_calls;
    return *this;
  }
};

std::ostream& operator<<(std::ostream& os, const shape& s) {
  return os << s.messages << " messages, " << s.complete_turns << " complete turns, " << s.cut_turns
            << " cut turns, " << s.rounds << " rounds, " << s.unanswered_calls << " unanswered calls, "
            << s.error_results << " error results";
}

// Whole turns of whole rounds (see the top). A complete turn's final text is the fake's
// "Tool results: ..." after 3 rounds (tools-3), or "Echo: ..." after none (echo).
void check_turns(const bj::array& msgs, shape& out) {
  out.messages += msgs.size();
  std::size_t i = 0;
  while (i < msgs.size()) {
    INFO("message " << i << ": " << json::to_compact(msgs[i]));
    REQUIRE(role_of(msgs[i]) == "user");  // a turn starts with the user's message
    ++i;
    std::size_t rounds = 0;
    bool complete = false;
    while (i < msgs.size() && role_of(msgs[i]) == "assistant") {
      const auto& a = msgs[i].as_object();
      const auto ids = tool_call_ids(a);
      ++i;
      if (ids.empty()) {  // the final text
        INFO("final message " << json::to_compact(a));
        CHECK(json::get_string(a, "stopReason") == std::optional<std::string_view>("stop"));
        const std::string text = text_of(a);
        if (rounds == 0)
          CHECK(text.rfind("Echo: ", 0) == 0);
        else
          CHECK((rounds == 3 && text.rfind("Tool results:", 0) == 0));
        complete = true;
        break;
      }
      CHECK(json::get_string(a, "stopReason") == std::optional<std::string_view>("toolUse"));
      // One toolResult per call, by id, right after the assistant that made it; only the last
      // round of a cut turn may lack results (the file ends, or the next turn's user message
      // comes): the hygiene pipeline answers those in the request.
      std::size_t answered = 0;
      for (const auto& id : ids) {
        INFO("tool call " << id << " of " << json::to_compact(a));
        if (i == msgs.size() || role_of(msgs[i]) == "user") break;
        REQUIRE(role_of(msgs[i]) == "toolResult");
        CHECK(json::get_string(msgs[i].as_object(), "toolCallId") == std::optional<std::string_view>(id));
        if (json::get_bool(msgs[i].as_object(), "isError").value_or(false)) ++out.error_results;  // our tool never errs
        ++i, ++answered;
      }
      ++rounds;
      if (answered < ids.size()) {
        out.unanswered_calls += ids.size() - answered;
        break;  // the turn was cut inside this round
      }
    }
    CHECK(rounds <= 3);
    out.rounds += rounds;
    if (complete)
      ++out.complete_turns;  // (a cut round ends the turn: complete stays false)
    else
      ++out.cut_turns;  // a kill cut it; what follows is the next turn's user message, or nothing
  }
}

struct transcripts_report {
  shape s;  // summed over the files
  std::size_t files = 0, repaired = 0;
  std::vector<std::string> repairs;
  std::map<std::string, shape> by_file;                           // by path
  std::map<std::string, storage::repair_report> repair_by_file;  // by path, when repaired
};

// Every transcript of `dir` opened as a session opens it (repairing what a kill left), every
// line parsed, its messages checked.
transcripts_report check_transcripts(const std::string& dir) {
  transcripts_report r;
  if (!std::filesystem::exists(dir)) return r;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    // Transcripts only: a repair's `.dropped-<ts>.jsonl` and `.corrupt-…jsonl` also end in .jsonl.
    if (!storage::is_transcript_kind(storage::classify(name).kind)) continue;
    INFO("transcript " << name);
    ++r.files;
    header_fields h;
    h.id = "unused";
    h.cwd = "/unused";
    auto t = storage::open_or_create_transcript(storage::posix_fs(), storage::real_clock(), f.path().string(), h, {});
    REQUIRE(t.ok());
    REQUIRE_FALSE(t->created);
    if (t->repair) {
      ++r.repaired;
      r.repairs.push_back(t->repair->summary());
      r.repair_by_file[f.path().string()] = *t->repair;
    }
    t->file.reset();
    bj::array msgs;
    bool header = false;
    for (const auto& line : testing::split_lines(testing::read_text(f.path().string()))) {
      INFO("line " << line);
      auto o = json::parse_object(line);
      REQUIRE(o.ok());
      if (json::get_string(*o, "type") == std::optional<std::string_view>("session")) header = true;
      if (json::get_string(*o, "type") != std::optional<std::string_view>("message")) continue;
      const auto* msg = json::get_object(*o, "message");
      REQUIRE(msg);
      msgs.push_back(*msg);
    }
    CHECK(header);
    shape file;
    check_turns(msgs, file);
    r.s += file;
    r.by_file[f.path().string()] = file;
  }
  return r;
}

// What a kill in the middle of a tool-loop turn leaves, now that the runtime writes each message
// as it comes (the user's before the model is called, each round when the runner reports it), at
// points a real kill hits only by chance, plus a torn line a real kill rarely leaves. Made from
// the transcript's own lines: the file cut inside its last complete tool-loop turn, at `kind`:
//   0  after round 1's last toolResult, plus half of the next line (a torn tail: repair drops it)
//   1  after round 2's assistant line (its toolResult never written: the request answers it)
//   2  after the turn's user message
// Everything after the cut is gone too (the next turn's user message and rounds, when the
// child's next turn had begun). nullopt when the file has no complete tool-loop turn. (File
// repair, as OpenClaw's, inserts results only for code-mode and delivery-mirror calls; the
// hygiene pipeline pairs the rest in each request.)
struct made_cut {
  int kind = 0;
  std::string kept;   // the whole lines left: the file once repair dropped the torn line
  std::string torn;   // the torn tail after them (kind 0), or nothing
  shape expected;     // what check_turns must find in the file after the cut
};

std::optional<made_cut> cut_last_tool_turn(const std::string& path, int kind) {
  const auto lines = testing::split_lines(testing::read_text(path));
  // Message lines: their index and message; the last user message that starts a 3-round turn.
  std::vector<std::pair<std::size_t, bj::object>> msgs;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto o = json::parse_object(lines[i]);
    if (!o.ok() || json::get_string(*o, "type") != std::optional<std::string_view>("message")) continue;
    if (const auto* m = json::get_object(*o, "message")) msgs.emplace_back(i, *m);
  }
  // user, assistant, toolResult x2, assistant, toolResult, assistant, toolResult, assistant
  const std::vector<std::string> turn{"user",      "assistant",  "toolResult", "toolResult", "assistant",
                                      "toolResult", "assistant", "toolResult", "assistant"};
  for (std::size_t k = msgs.size(); k-- > 0;) {
    if (k + turn.size() > msgs.size()) continue;
    bool match = true;
    for (std::size_t j = 0; j < turn.size() && match; ++j) match = role_of(msgs[k + j].second) == turn[j];
    if (!match) continue;
    made_cut c;
    c.kind = kind;
    // The turns before the cut one stay as they were; the cut one keeps what `kind` says.
    bj::array earlier;
    for (std::size_t j = 0; j < k; ++j) earlier.push_back(msgs[j].second);
    check_turns(earlier, c.expected);
    std::size_t keep_through = 0;  // the last line kept whole
    shape cut_turn;
    cut_turn.cut_turns = 1;
    if (kind == 0) {
      keep_through = msgs[k + 3].first;
      c.torn = lines[keep_through + 1].substr(0, lines[keep_through + 1].size() / 2);
      cut_turn.messages = 4, cut_turn.rounds = 1;  // user, assistant (2 calls), 2 toolResults
    } else if (kind == 1) {
      keep_through = msgs[k + 4].first;
      cut_turn.messages = 5, cut_turn.rounds = 2, cut_turn.unanswered_calls = 1;  // + round 2's assistant
    } else {
      keep_through = msgs[k].first;
      cut_turn.messages = 1;  // the user's message
    }
    c.expected += cut_turn;
    for (std::size_t i = 0; i <= keep_through; ++i) c.kept += lines[i] + "\n";
    testing::write_text(path, c.kept + c.torn);
    return c;
  }
  return std::nullopt;
}

actors::provider_config fake_provider(const testing::fake_provider_process& fake, const std::string& api) {
  actors::provider_config p;
  p.id = "fake";
  p.api = api;
  p.base_url = fake.base_url(api);
  p.api_key = "test-key";
  p.api_key_source = "literal";
  p.timeout_seconds = 20;
  for (const char* id : {"tools-3", "echo"}) {
    actors::provider_model m;
    m.id = id;
    m.context_window = 200000;
    m.max_tokens = 1024;
    p.models.push_back(m);
  }
  return p;
}

std::shared_ptr<providers::tool_registry> answering_tools() {
  auto reg = std::make_shared<providers::tool_registry>();
  providers::tool t;
  t.spec.name = "lookup";
  t.spec.description = "Looks a word up.";
  t.spec.parameters =
      bj::parse(R"({"type":"object","properties":{"word":{"type":"string"}},"required":["word"]})").as_object();
  t.execute = [](bj::object, std::shared_ptr<const cancellation>, std::function<void(providers::tool_result)> done) {
    done(providers::tool_result::text("a definition"));
  };
  REQUIRE(reg->add(std::move(t)).ok());
  return reg;
}

struct kill_point {
  std::string mode;  // block | run
  // block: the tool call that never answers; run: lines (tool calls, acks) read before the
  // kill, 0 = until every conversation acknowledged a turn.
  int arg = 0;
  std::string describe() const {
    if (mode == "block") return "the tool's call " + std::to_string(arg) + " blocked";
    return arg ? "after " + std::to_string(arg) + " lines" : "after every conversation's first ack";
  }
};

struct child_counts {
  std::size_t children = 0, acked = 0, log_lines = 0;
};

// One child on `dir` until `point`, then SIGKILL; bounded (a child silent for 60 s fails).
void run_and_kill(const std::string& dir, const testing::fake_provider_process& fake, const std::string& api,
                  const kill_point& point, child_counts& counts) {
  const std::string arg = std::to_string(point.mode == "block" ? point.arg : kConversations);
  auto c = testing::spawn_child(SESSIONRT_CRASH_TOOL_LOOP, {dir, std::to_string(fake.port()), api, point.mode, arg});
  ++counts.children;
  line_reader lines(fileno(c.out));
  int counted = 0;
  bool blocked = false;
  std::set<std::string> acked_peers;
  auto take = [&](const std::string& l) {
    if (l.rfind("ok ", 0) == 0) {
      ++counts.acked, ++counted;
      acked_peers.insert(l.substr(3, l.find(' ', 3) - 3));
    } else if (l.rfind("tool ", 0) == 0) {
      ++counted;
    } else if (l.rfind("blocked ", 0) == 0) {
      blocked = true;
    } else if (l.rfind("[", 0) == 0) {
      ++counts.log_lines;  // the runtime's log
    } else {
      FAIL("the child said: " << l);
    }
  };
  auto done = [&] {
    if (point.mode == "block") return blocked;
    return point.arg ? counted >= point.arg : acked_peers.size() == static_cast<std::size_t>(kConversations);
  };
  bool timed_out = false;
  while (!done()) {
    auto l = lines.next(std::chrono::seconds(60));
    if (!l) {
      timed_out = true;
      break;
    }
    take(*l);
  }
  kill(c.pid, SIGKILL);
  int wstatus = 0;
  waitpid(c.pid, &wstatus, 0);
  while (auto l = lines.next(std::chrono::seconds(5))) take(*l);  // what was already in the pipe
  fclose(c.out);
  REQUIRE_FALSE(timed_out);
  REQUIRE(WIFSIGNALED(wstatus));
}

void check_store(const std::string& sessions_dir) {
  const std::string store = sessions_dir + "/sessions.json";
  if (!std::filesystem::exists(store)) return;
  auto checked = storage::check_store_file(storage::posix_fs(), store);
  REQUIRE(checked.ok());
  INFO(checked->parse_status.to_string());
  REQUIRE(checked->parse_status.ok());
}

// A runtime in this process on what the dead children left (their locks are stale): every
// conversation in `peers` takes a turn with the echo model; its context is whole turns of whole
// rounds and needs no pairing repair from the hygiene pipeline.
void restart_and_go_on(const std::string& dir, const testing::fake_provider_process& fake, const std::string& api,
                       const std::vector<int>& peers) {
  actors::runtime_settings s;
  s.state_dir = dir;
  s.session.reset.timezone = "UTC";
  s.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  s.session.write_lock.acquire_timeout_ms = 5000;
  s.models.providers.push_back(fake_provider(fake, api));
  s.models.defaults.primary = "fake/echo";
  auto setup = runtime::runner_for_config(s, answering_tools());
  REQUIRE(setup.ok());
  REQUIRE(setup->runner);
  runtime::runtime_options o;
  o.settings = s;
  o.async_runner = setup->runner;
  o.threads = 2;
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  for (int p : peers) {
    INFO("conversation p" << p);
    chat_event ev = testing::dm("p" + std::to_string(p), "after the crashes");
    auto f = (*rt)->send(ev);
    REQUIRE(f.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    auto out = f.get();
    // The roles the conversation ends with, to tell which shape a failure came from.
    std::string tail;
    if (auto h = (*rt)->history(out.session_key); h.ok())
      for (std::size_t k = h->messages.size() > 8 ? h->messages.size() - 8 : 0; k < h->messages.size(); ++k)
        tail += role_of(h->messages[k]) + "(" +
                std::to_string(h->messages[k].is_object() ? tool_call_ids(h->messages[k].as_object()).size() : 0) +
                " calls) ";
    INFO("the conversation ends: " << tail);
    INFO(out.st.to_string());
    CHECK(out.st.ok());
    if (!out.st.ok()) continue;  // the other conversations still tell
    REQUIRE(out.reply);
    INFO("reply: " << *out.reply);
    // The echo of the last user text (a policy may merge it with a user message before it).
    CHECK(out.reply->rfind("Echo: ", 0) == 0);
    CHECK(out.reply->find("after the crashes") != std::string::npos);
    auto h = (*rt)->history(out.session_key);
    REQUIRE(h.ok());
    shape restarted;
    check_turns(h->messages, restarted);
    CHECK(role_of(h->messages.back()) == "assistant");
    bj::array copy = h->messages;
    const auto policy = actors::hygiene::resolve_transcript_policy("fake", api, "echo");
    const auto hy = actors::hygiene::sanitize_for_provider(copy, policy, {});
    INFO("hygiene: " << json::to_compact(hy.to_json()));
    CHECK(hy.orphan_results_dropped == 0);
    CHECK(hy.duplicate_results_dropped == 0);
    CHECK(hy.displaced_results_moved == 0);
    // The calls a cut left unanswered are answered (or removed) in the request, nothing else.
    CHECK(hy.synthetic_results_inserted + hy.unanswered_calls_removed + hy.dangling_tool_uses_dropped ==
          restarted.unanswered_calls);
    CHECK(hy.tool_calls_dropped == 0);
    if (restarted.unanswered_calls)
      WARN(api << " p" << p << ": hygiene of a cut round: " << json::to_compact(hy.to_json()));
  }
  REQUIRE((*rt)->stop().ok());
}

void check_fake_saw_no_broken_rule(const testing::fake_provider_process& fake) {
  const auto stats = fake.get("/__stats");
  REQUIRE(stats.is_object());
  INFO(json::to_compact(stats));
  CHECK(stats.as_object().at("rejected").as_object().empty());  // no request broke an API rule
  CHECK(stats.as_object().at("unauthorized").to_number<std::int64_t>() == 0);
}

}  // namespace

TEST_CASE("kill -9 mid tool loop: the transcript loads, its rounds are whole, and a restart goes on") {
  testing::fake_provider_process fake;
  const std::uint32_t seed = testing::crash_seed();  // printed with any failure below
  INFO(testing::crash_seed_info(seed));
  std::mt19937 rng(seed);
  const int randoms = random_kills();
  child_counts counts;
  std::size_t total_repairs = 0, error_results = 0;
  // block N -> what the blocked child's one turn left on disk, summed over the APIs.
  std::map<int, std::size_t> rounds_kept_when_blocked, messages_kept_when_blocked;
  for (const char* api : kApis) {
    INFO("api " << api);
    testing::temp_dir dir;
    const std::string sessions_dir = dir.file("agents/main/sessions");
    shape before;  // what the transcripts held before the child ran
    // Call 3 blocked first (after round 1 was reported), random points, a run until every
    // conversation acknowledged a turn, then calls 4 and 1 blocked.
    std::vector<kill_point> points{{"block", 3}};
    for (int k = 0; k < randoms; ++k) points.push_back({"run", std::uniform_int_distribution<int>(1, 40)(rng)});
    points.push_back({"run", 0});
    points.push_back({"block", 4});
    points.push_back({"block", 1});
    for (const auto& point : points) {
      INFO("kill point: " << point.describe());
      run_and_kill(dir.path(), fake, api, point, counts);
      const auto report = check_transcripts(sessions_dir);
      CHECK(report.files >= 1);
      total_repairs += report.repaired;
      if (point.mode == "block") {
        rounds_kept_when_blocked[point.arg] += report.s.rounds - before.rounds;
        messages_kept_when_blocked[point.arg] += report.s.messages - before.messages;
      }
      for (const auto& line : report.repairs) WARN(api << ": " << point.describe() << ": " << line);
      check_store(sessions_dir);
      before = report.s;
    }

    error_results += before.error_results;
    restart_and_go_on(dir.path(), fake, api, {0, 1, 2});
  }
  check_fake_saw_no_broken_rule(fake);
  WARN("tool-loop crash test: " << counts.children << " children killed, " << counts.acked << " turns acknowledged, "
                                << total_repairs << " transcript repairs, " << error_results
                                << " error tool results; the blocked child's turn left on disk (summed "
                                   "over the APIs) when blocked at call 1/3/4: messages "
                                << messages_kept_when_blocked[1] << "/" << messages_kept_when_blocked[3] << "/"
                                << messages_kept_when_blocked[4] << ", rounds " << rounds_kept_when_blocked[1] << "/"
                                << rounds_kept_when_blocked[3] << "/" << rounds_kept_when_blocked[4] << "; "
                                << counts.log_lines << " log lines from the children, fake stats "
                                << json::to_compact(fake.get("/__stats")));
}

// The turn a kill cuts keeps what it had finished: its user message, and every round the runner
// reported (the assistant's tool calls and their results) before the kill; at most the round in
// flight is missing. Then a restart goes on from there.
TEST_CASE("kill -9 mid tool loop keeps the turn's user message and the rounds it finished") {
  testing::fake_provider_process fake;
  child_counts counts;
  // block N: the calls before N answered. Call 1 is round 1's first (2 calls), call 3 round 2's,
  // call 4 round 3's: rounds reported before the kill: 0, 1, 2.
  for (const auto& [block_at, rounds_done] : std::vector<std::pair<int, std::size_t>>{{1, 0}, {3, 1}, {4, 2}}) {
    INFO("the tool's call " << block_at << " blocked");
    testing::temp_dir dir;
    const std::string sessions_dir = dir.file("agents/main/sessions");
    run_and_kill(dir.path(), fake, "openai-completions", {"block", block_at}, counts);
    const auto report = check_transcripts(sessions_dir);
    REQUIRE(report.files == 1);
    INFO("on disk: " << report.s.messages << " messages, " << report.s.rounds << " rounds");
    CHECK(report.s.cut_turns == 1);
    CHECK(report.s.messages == std::size_t(1) + (rounds_done >= 1 ? 3 : 0) + (rounds_done >= 2 ? 2 : 0));
    CHECK(report.s.rounds == rounds_done);
    check_store(sessions_dir);
    restart_and_go_on(dir.path(), fake, "openai-completions", {0});
  }
  check_fake_saw_no_broken_rule(fake);
}

// What a kill mid-turn leaves, now that each message is written as it comes (the state the
// second test checks, made here deterministically from real transcripts, see
// cut_last_tool_turn), and what a tool-loop turn that failed after some rounds leaves too: each
// conversation's last complete tool-loop turn cut after round 1 with a torn line after it, inside
// round 2 (a toolCall without its result), or after its user message. Every file loads, repair
// drops the torn line and nothing else, each file holds exactly the turns before the cut one plus
// what the cut kept, and a restart goes on from each with every API: the hygiene pipeline and
// the wire format make requests the fake accepts.
TEST_CASE("kill -9 mid tool loop: a turn cut inside its rounds loads, and a restart goes on with every API") {
  testing::fake_provider_process fake;
  child_counts counts;
  for (const char* api : kApis) {
    INFO("api " << api);
    testing::temp_dir dir;
    const std::string sessions_dir = dir.file("agents/main/sessions");
    // Every conversation has a whole turn; the kill may have left the next one begun (its user
    // message, maybe rounds): the cut drops that with the rest of the file after the cut.
    run_and_kill(dir.path(), fake, api, {"run", 0}, counts);
    const auto killed = check_transcripts(sessions_dir);
    REQUIRE(killed.files == 3);
    std::vector<std::string> files;
    for (const auto& entry : killed.by_file) files.push_back(entry.first);  // sorted
    std::map<std::string, made_cut> cuts;
    for (const auto& f : files) {
      INFO("transcript " << f << " after the kill: " << killed.by_file.at(f));
      auto c = cut_last_tool_turn(f, static_cast<int>(cuts.size()));
      REQUIRE(c);  // each conversation has a complete tool-loop turn to cut
      CHECK(c->expected.cut_turns == 1);  // the turns before it are whole (one child, killed after them)
      cuts.emplace(f, std::move(*c));
    }
    const auto report = check_transcripts(sessions_dir);
    std::string repairs;
    for (const auto& line : report.repairs) repairs += line + "\n";
    INFO(repairs);
    REQUIRE(report.files == 3);
    CHECK(report.repaired == 1);  // the torn line dropped (a missing result is the request's to answer)
    for (const auto& [f, c] : cuts) {
      INFO("transcript " << f << ", cut " << c.kind << ": expected " << c.expected << "; found "
                         << report.by_file.at(f));
      // Repair dropped the torn line and nothing else: the whole lines are as the cut left them.
      CHECK(testing::read_text(f) == c.kept);
      const auto rep = report.repair_by_file.find(f);
      CHECK((rep != report.repair_by_file.end()) == !c.torn.empty());
      if (rep != report.repair_by_file.end()) {
        CHECK(rep->second.torn_tail_lines == 1);
        CHECK(rep->second.torn_tail_bytes == c.torn.size());
        CHECK(rep->second.dropped.size() == 1);
        CHECK(rep->second.inserted_tool_results == 0);
      }
      const auto& found = report.by_file.at(f);
      CHECK(found.messages == c.expected.messages);
      CHECK(found.complete_turns == c.expected.complete_turns);
      CHECK(found.cut_turns == c.expected.cut_turns);
      CHECK(found.rounds == c.expected.rounds);
      CHECK(found.unanswered_calls == c.expected.unanswered_calls);
      CHECK(found.error_results == 0);
    }
    CHECK(report.s.cut_turns == 3);         // one per conversation: the cut one
    CHECK(report.s.unanswered_calls == 1);  // round 2's call of the cut-1 file
    check_store(sessions_dir);
    restart_and_go_on(dir.path(), fake, api, {0, 1, 2});
  }
  check_fake_saw_no_broken_rule(fake);
}
