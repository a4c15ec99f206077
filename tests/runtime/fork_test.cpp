// Forks (SPEC §3): a sub-agent spawned with fork, and a thread's first session, start from the
// parent's active branch: a new transcript whose header names the parent's in parentSession and
// whose context at the copied leaf equals the parent's (compaction summary included); the row
// says forkedFromParent. A branch past fork_token_limit() starts the child isolated: the
// parent's latest compaction summary alone, or nothing. (pi's SessionManager builds the same
// first context: tests/compat, the rtfork_* files.)
#include <catch2/catch.hpp>

#include "actors/session/fork_planner.hpp"
#include "messages/json_writer.hpp"
#include "storage/context_builder.hpp"
#include "storage/fs.hpp"
#include "storage/transcript_reader.hpp"
#include "tests/runtime/lifecycle_harness.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using sessionrt::testing::inbound;
using sessionrt::testing::lifecycle_harness;

namespace {

const std::string kParent = "agent:main:main";

struct file_context {
  boost::json::object header;
  std::string leaf;
  boost::json::array messages;
};

// The context of `path` at `leaf` ("" = its active leaf), as sessionrt builds it.
file_context context_of(const std::string& path, const std::string& leaf = "") {
  auto reader = storage::transcript_reader::open(storage::posix_fs(), path);
  REQUIRE(reader.ok());
  auto ctx = storage::build_context(**reader, leaf.empty() ? storage::leaf_selector::active()
                                                           : storage::leaf_selector::of(leaf));
  REQUIRE(ctx.ok());
  return {(*reader)->header(), ctx->leaf_id.value_or(""), std::move(ctx->messages)};
}

std::string file_of(runtime::runtime& rt, const std::string& key) {
  auto row = rt.session(key).value();
  REQUIRE(row.has_value());
  return std::string(row->session_file().value_or(""));
}

actors::subagent_spec forked(const std::string& text) {
  actors::subagent_spec s;
  s.task = text;
  s.fork = true;
  return s;
}

// A small window: fork_token_limit = (20000 - 2000) / 2 = 9000 tokens; compaction at 18000.
void small_window(actors::runtime_settings& s) {
  s.model.context_window = 20000;
  s.compaction.reserve_tokens = 2000;
  s.compaction.reserve_tokens_floor = 0;
  s.compaction.keep_recent_tokens = 10;
  s.memory_flush.enabled = false;
}

}  // namespace

TEST_CASE("fork: the size limit is half the compaction threshold, at most 100k tokens") {
  CHECK(actors::fork_token_limit(200000, 20000) == 90000);
  CHECK(actors::fork_token_limit(1000000, 20000) == actors::kForkMaxTokensCap);
  CHECK(actors::fork_token_limit(20000, 2000) == 9000);
  CHECK(actors::fork_token_limit(1000, 2000) == 0);
}

TEST_CASE("fork: a forked sub-agent's first context is the parent's branch") {
  lifecycle_harness h;
  auto rt = h.start([](actors::runtime_settings& s) { s.compaction.keep_recent_tokens = 10; });
  for (const char* text : {"We are porting the session store.", "It must stay byte-compatible.", "Next: locks."})
    REQUIRE(rt->send(inbound("telegram", "1", text)).get().st.ok());
  REQUIRE(rt->send(inbound("telegram", "1", "/compact keep the decisions")).get().st.ok());
  REQUIRE(rt->send(inbound("telegram", "1", "And after the compaction?")).get().st.ok());
  const std::string parent_path = file_of(*rt, kParent);
  const file_context parent = context_of(parent_path);
  REQUIRE(parent.messages.size() >= 3);
  CHECK(json::get_string(parent.messages[0].as_object(), "role") == std::optional<std::string_view>("compactionSummary"));

  turn_outcome out = rt->spawn_subagent(kParent, forked("Write the lock section")).get();
  REQUIRE(out.st.ok());
  auto row = rt->session(out.session_key).value();
  REQUIRE(row.has_value());
  CHECK(row->forked_from_parent() == std::optional<bool>(true));
  const std::string child_path = std::string(row->session_file().value_or(""));
  CHECK(child_path.find("_" + out.session_id + ".jsonl") != std::string::npos);  // pi's fork name
  // The child's context at the parent's leaf is the parent's context, and its model saw it.
  const file_context first = context_of(child_path, parent.leaf);
  CHECK(first.header.at("parentSession").as_string() == parent_path);
  CHECK(first.header.at("id").as_string() == out.session_id);
  CHECK(json::to_compact(first.messages) == json::to_compact(parent.messages));
  auto calls = h.model->calls();
  CHECK(calls.back().messages == parent.messages.size() + 1);
  CHECK(calls.back().last_user_text == "Write the lock section");
  // The parent's transcript is unchanged by the fork.
  CHECK(json::to_compact(context_of(parent_path).messages) == json::to_compact(parent.messages));
  rt->settle();
  auto done = h.of_type("subagent.completed");
  REQUIRE(done.size() == 1);
  CHECK(done[0].data.at("fork").as_string() == "branch");
  REQUIRE(rt->stop().ok());
}

TEST_CASE("fork: a branch too large starts the child isolated, with nothing of the parent") {
  lifecycle_harness h;
  auto rt = h.start(small_window);
  for (int i = 0; i < 3; ++i)  // about 12,000 tokens: past the 9,000-token limit, under compaction
    REQUIRE(rt->send(inbound("telegram", "1", std::to_string(i) + std::string(16000, 'a' + i))).get().st.ok());
  turn_outcome out = rt->spawn_subagent(kParent, forked("Summarize the plan")).get();
  REQUIRE(out.st.ok());  // not a failure
  auto row = rt->session(out.session_key).value();
  REQUIRE(row.has_value());
  CHECK(!row->forked_from_parent().has_value());  // nothing was copied
  const file_context child = context_of(std::string(row->session_file().value_or("")));
  CHECK(child.header.at("parentSession").as_string() == file_of(*rt, kParent));
  CHECK(h.model->calls().back().messages == 1);
  rt->settle();
  CHECK(h.of_type("subagent.completed").at(0).data.at("fork").as_string() == "isolated");
  REQUIRE(rt->stop().ok());
}

TEST_CASE("fork: a branch too large with a compaction starts from the summary alone") {
  lifecycle_harness h;
  auto rt = h.start(small_window);
  for (const char* text : {"Decision: JSONL.", "Decision: one writer per session."})
    REQUIRE(rt->send(inbound("telegram", "1", text)).get().st.ok());
  REQUIRE(rt->send(inbound("telegram", "1", "/compact")).get().st.ok());
  for (int i = 0; i < 3; ++i)
    REQUIRE(rt->send(inbound("telegram", "1", std::to_string(i) + std::string(16000, 'a' + i))).get().st.ok());
  const file_context parent = context_of(file_of(*rt, kParent));
  REQUIRE(json::get_string(parent.messages[0].as_object(), "role") == std::optional<std::string_view>("compactionSummary"));
  turn_outcome out = rt->spawn_subagent(kParent, forked("Go on")).get();
  REQUIRE(out.st.ok());
  auto row = rt->session(out.session_key).value();
  REQUIRE(row.has_value());
  CHECK(row->forked_from_parent() == std::optional<bool>(true));
  // Before the task: the summary only.
  auto calls = h.model->calls();
  CHECK(calls.back().messages == 2);
  const file_context child = context_of(std::string(row->session_file().value_or("")));
  REQUIRE(child.messages.size() >= 1);
  CHECK(json::to_compact(child.messages[0]) == json::to_compact(parent.messages[0]));
  rt->settle();
  CHECK(h.of_type("subagent.completed").at(0).data.at("fork").as_string() == "summary");
  REQUIRE(rt->stop().ok());
}

TEST_CASE("fork: a thread's first session starts from its channel's branch") {
  lifecycle_harness h;
  auto rt = h.start();
  chat_event room = inbound("discord", "c1", "We ship on Friday.");
  room.peer_kind = "channel";
  REQUIRE(rt->send(room).get().st.ok());
  room.text = "Docs are still missing.";
  REQUIRE(rt->send(room).get().st.ok());
  const std::string base = "agent:main:discord:channel:c1";
  const std::string parent_path = file_of(*rt, base);
  const file_context parent = context_of(parent_path);
  chat_event thread = room;
  thread.thread_id = "T1";
  thread.text = "Who writes the docs?";
  turn_outcome out = rt->send(thread).get();
  REQUIRE(out.st.ok());
  CHECK(out.session_key == base + ":thread:t1");
  auto row = rt->session(out.session_key).value();
  REQUIRE(row.has_value());
  CHECK(row->forked_from_parent() == std::optional<bool>(true));
  CHECK(row->parent_session_key() == std::optional<std::string_view>(base));
  const file_context first = context_of(std::string(row->session_file().value_or("")), parent.leaf);
  CHECK(first.header.at("parentSession").as_string() == parent_path);
  CHECK(json::to_compact(first.messages) == json::to_compact(parent.messages));
  CHECK(h.model->calls().back().messages == parent.messages.size() + 1);
  // Only the first session forks: the thread's second message continues its own transcript.
  thread.text = "Thanks.";
  REQUIRE(rt->send(thread).get().st.ok());
  CHECK(h.model->calls().back().messages == parent.messages.size() + 3);
  REQUIRE(rt->stop().ok());
}

namespace {

boost::json::object message_of_role(const std::string& role, const std::string& text, const char* stop = nullptr) {
  boost::json::object m{{"role", role}, {"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", text}}}}};
  if (stop) m["stopReason"] = stop;
  return m;
}

// A parent transcript: one finished turn at 10 s before `t`, then `tail` (entries stamped `t`).
std::string parent_file(const testing::temp_dir& dir, std::int64_t t, const std::vector<boost::json::object>& tail) {
  header_fields h;
  h.id = "parent";
  h.timestamp_ms = t - 20000;
  h.cwd = dir.path();
  std::string text = json::to_compact(make_header(h)) + "\n";
  text += json::to_compact(make_message_entry("u1", std::nullopt, t - 10000, message_of_role("user", "earlier"))) + "\n";
  text += json::to_compact(make_message_entry("a1", "u1", t - 10000, message_of_role("assistant", "ok", "stop"))) + "\n";
  std::string parent = "a1";
  int n = 0;
  for (const auto& m : tail) {
    const std::string id = "t" + std::to_string(++n);
    text += json::to_compact(make_message_entry(id, parent, t, m)) + "\n";
    parent = id;
  }
  const std::string path = dir.file("parent.jsonl");
  testing::write_text(path, text);
  return path;
}

std::size_t forked_entries(const testing::temp_dir& dir, const std::string& parent, std::int64_t t,
                           std::optional<std::int64_t> before_ms) {
  static int child = 0;
  actors::fork_request fr;
  fr.parent_path = parent;
  fr.child_path = dir.file("child" + std::to_string(++child) + ".jsonl");
  fr.child_header.id = "child";
  fr.child_header.timestamp_ms = t;
  fr.child_header.cwd = dir.path();
  fr.before_ms = before_ms;
  auto out = actors::write_fork(storage::posix_fs(), fr);
  REQUIRE(out.ok());
  CHECK(testing::split_lines(testing::read_text(fr.child_path)).size() == out->entries + 1);
  return out->entries;
}

}  // namespace

// A thread's first message and its channel's message in one instant (the simulated month's
// 10 s grid): the channel's turn may or may not have written its user line when the thread
// forks, whichever actor ran first. The fork leaves out a turn of that instant not finished, so
// it is the same either way; a turn finished in the instant is kept.
TEST_CASE("fork: a thread leaves out its channel's turn of the same instant that has not finished") {
  testing::temp_dir dir;
  const std::int64_t t = 1791629180000;
  const auto user_now = message_of_role("user", "concurrent");
  SECTION("the channel's user line of this instant, unanswered, is not copied") {
    const auto p = parent_file(dir, t, {user_now});
    CHECK(forked_entries(dir, p, t, t) == 2);
    CHECK(forked_entries(dir, p, t, std::nullopt) == 3);  // a sub-agent's fork takes it all
    CHECK(forked_entries(dir, p, t + 1, t + 1) == 3);     // written a millisecond before the fork
  }
  SECTION("nor one waiting on its tool's result") {
    const auto p = parent_file(dir, t, {user_now, message_of_role("assistant", "calling", "toolUse")});
    CHECK(forked_entries(dir, p, t, t) == 2);
  }
  SECTION("a turn finished in the same instant is kept, a later one of that instant not") {
    const auto p = parent_file(
        dir, t, {user_now, message_of_role("assistant", "done", "stop"), message_of_role("user", "another")});
    CHECK(forked_entries(dir, p, t, t) == 4);
  }
}
