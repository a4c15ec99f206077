// run_ids_seen: the run ids of a transcript's user lines and of the turns run, bounded, and the
// stored answer of a run (issue #36: a chat.send retried on a new owner must not run twice).
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "actors/session/run_ids_seen.hpp"
#include "messages/user_run_identity.hpp"

using namespace sessionrt::actors;
namespace bj = boost::json;

namespace {

bj::object user_line(const std::string& text, const std::string& run = "") {
  bj::object m{{"role", "user"}, {"content", text}};
  if (!run.empty()) {
    m["idempotencyKey"] = run + ":user";
    m["__openclaw"] = bj::object{{"runId", run}};
  }
  return m;
}

bj::object reply_line(const std::string& text, const std::string& stop = "stop") {
  return bj::object{{"role", "assistant"},
                    {"content", bj::array{bj::object{{"type", "text"}, {"text", text}}}},
                    {"stopReason", stop}};
}

}  // namespace

TEST_CASE("run_ids_seen: the run a user line names, by idempotencyKey or __openclaw.runId", "[session][run_ids_seen]") {
  CHECK(sessionrt::run_of_user_message(user_line("hi", "r1")) == "r1");
  CHECK(sessionrt::run_of_user_message(bj::object{{"role", "user"}, {"__openclaw", bj::object{{"runId", "r2"}}}}) == "r2");
  CHECK(sessionrt::run_of_user_message(bj::object{{"role", "user"}, {"idempotencyKey", "r3:user"}}) == "r3");
  CHECK(sessionrt::run_of_user_message(bj::object{{"role", "user"}, {"idempotencyKey", ":user"}}).empty());
  CHECK(sessionrt::run_of_user_message(user_line("plain")).empty());
}

TEST_CASE("run_ids_seen: filled from the context's user lines and by add, \"\" never seen", "[session][run_ids_seen]") {
  bj::array ctx{user_line("a", "r1"), reply_line("A"), user_line("b"), reply_line("B"), user_line("c", "r2"),
                // an assistant line that names a run is not a user line
                bj::object{{"role", "assistant"}, {"idempotencyKey", "r9:user"}}};
  run_ids_seen seen;
  seen.add_from_context(ctx);
  CHECK(seen.size() == 2);
  CHECK(seen.contains("r1"));
  CHECK(seen.contains("r2"));
  CHECK_FALSE(seen.contains("r9"));
  CHECK_FALSE(seen.contains(""));
  seen.add("");
  CHECK(seen.size() == 2);
  seen.add("r3");
  CHECK(seen.contains("r3"));
  seen.add_from_context(ctx);  // reopened after a trim: nothing new
  CHECK(seen.size() == 3);
}

TEST_CASE("run_ids_seen: bounded, the oldest forgotten first", "[session][run_ids_seen]") {
  run_ids_seen seen(3);
  for (const char* r : {"r1", "r2", "r3"}) seen.add(r);
  seen.add("r2");  // known: keeps its place
  seen.add("r4");
  CHECK(seen.size() == 3);
  CHECK_FALSE(seen.contains("r1"));
  CHECK(seen.contains("r2"));
  seen.add("r5");
  CHECK_FALSE(seen.contains("r2"));
  CHECK(seen.contains("r3"));
  CHECK(seen.contains("r4"));
  CHECK(seen.contains("r5"));

  // From a long context only the last `capacity` runs.
  bj::array ctx;
  for (int i = 0; i < 10; ++i) ctx.emplace_back(user_line("m", "c" + std::to_string(i)));
  run_ids_seen few(4);
  few.add_from_context(ctx);
  CHECK(few.size() == 4);
  CHECK_FALSE(few.contains("c5"));
  CHECK(few.contains("c6"));
  CHECK(few.contains("c9"));
  few.add("c10");  // the ring wraps over the oldest of those
  CHECK_FALSE(few.contains("c6"));
  CHECK(few.contains("c7"));
}

TEST_CASE("run_ids_seen: the stored answer of a run is its last reply before the next user line", "[session][run_ids_seen]") {
  bj::array ctx{user_line("a", "r1"),
                reply_line("calling", "toolUse"),
                bj::object{{"role", "toolResult"}, {"content", "42"}},
                reply_line("A"),
                user_line("b", "r2"),
                reply_line("B"),
                user_line("c", "r3"),
                reply_line("half", "toolUse"),
                user_line("d", "r4")};
  const bj::object* a = stored_reply_of_run(ctx, "r1");
  REQUIRE(a);
  CHECK(a->at("content").at(0).at("text") == "A");
  const bj::object* b = stored_reply_of_run(ctx, "r2");
  REQUIRE(b);
  CHECK(b->at("content").at(0).at("text") == "B");
  CHECK(stored_reply_of_run(ctx, "r3") == nullptr);  // the tool loop did not finish
  CHECK(stored_reply_of_run(ctx, "r4") == nullptr);  // not answered yet
  CHECK(stored_reply_of_run(ctx, "r5") == nullptr);  // not here
  CHECK(stored_reply_of_run(ctx, "") == nullptr);
}
