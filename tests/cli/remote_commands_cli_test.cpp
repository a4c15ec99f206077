// `sessionrt send|compact|tail` without a gateway (in-process on the files): the session named
// as the first word or with --session, never a key taken as text; an unknown session named;
// errors that say what refused.
#include <catch2/catch.hpp>

#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {

TEST_CASE("send KEY TEXT sends TEXT to the session KEY, not KEY and TEXT to main", "[cli]") {
  temp_dir dir;
  auto sent = run_sessionrt({"send", "--state-dir", dir.path(), "agent:main:work", "hi", "there"});
  INFO(sent.err);
  REQUIRE(sent.code == 0);
  CHECK_FALSE(sent.out.empty());  // the simulated model's reply

  auto work = run_sessionrt({"tail", "--state-dir", dir.path(), "agent:main:work"});
  INFO(work.err);
  REQUIRE(work.code == 0);
  auto lines = split_lines(work.out);
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0] == "user: hi there");
  CHECK(lines[1].rfind("assistant: ", 0) == 0);

  // Nothing reached the main session: it has no row.
  auto main = run_sessionrt({"tail", "--state-dir", dir.path()});
  CHECK(main.code == 2);
  CHECK_THAT(main.err, Catch::Contains("no session 'agent:main:main' (from 'main')"));

  // --session KEY TEXT is the same thing.
  auto again = run_sessionrt({"send", "--state-dir", dir.path(), "--session", "agent:main:work", "second"});
  REQUIRE(again.code == 0);
  auto tail = run_sessionrt({"tail", "agent:main:work", "--state-dir", dir.path(), "--json"});
  REQUIRE(tail.code == 0);
  CHECK(split_lines(tail.out).size() == 4);
}

TEST_CASE("send takes the key of an existing row as the first word", "[cli]") {
  temp_dir dir;
  REQUIRE(run_sessionrt({"send", "--state-dir", dir.path(), "--session", "telegram:direct:111", "first"}).code == 0);
  auto r = run_sessionrt({"send", "--state-dir", dir.path(), "telegram:direct:111", "second"});
  REQUIRE(r.code == 0);
  auto tail = run_sessionrt({"tail", "telegram:direct:111", "--state-dir", dir.path()});
  REQUIRE(tail.code == 0);
  CHECK_THAT(tail.out, Catch::Contains("user: second\n"));
  CHECK_THAT(tail.out, !Catch::Contains("telegram:direct:111 second"));
  // A first word that names no session is text, to --session (default main).
  auto plain = run_sessionrt({"send", "--state-dir", dir.path(), "hello", "world"});
  REQUIRE(plain.code == 0);
  auto main = run_sessionrt({"tail", "main", "--state-dir", dir.path()});
  REQUIRE(main.code == 0);
  CHECK_THAT(main.out, Catch::StartsWith("user: hello world\n"));
}

TEST_CASE("send refuses a session key with no text, or a key beside --session, naming the right form", "[cli]") {
  temp_dir dir;
  auto alone = run_sessionrt({"send", "--state-dir", dir.path(), "agent:main:main"});
  CHECK(alone.code == 2);
  CHECK(alone.err == "sessionrt: 'agent:main:main' looks like a session key and no message follows: write `sessionrt "
                     "send agent:main:main TEXT` (or `sessionrt send --session KEY TEXT`)\n");
  auto both = run_sessionrt({"send", "--state-dir", dir.path(), "--session", "main", "agent:main:other", "hi"});
  CHECK(both.code == 2);
  CHECK_THAT(both.err, Catch::Contains("'agent:main:other' looks like a session key, and --session 'main' names the "
                                       "session too: write `sessionrt send KEY TEXT` or `sessionrt send --session KEY TEXT`"));
  // Neither started a runtime: no session was written.
  auto listed = run_sessionrt({"sessions", "--state-dir", dir.path(), "--json"});
  if (listed.code == 0) CHECK_THAT(listed.out, Catch::Contains("\"count\": 0"));
  // The whole message quoted as one argument is text, whatever its first word.
  auto quoted = run_sessionrt({"send", "--state-dir", dir.path(), "agent:main:main is the key"});
  CHECK(quoted.code == 0);
}

TEST_CASE("compact KEY and tail KEY take the key as a positional, not beside another --session", "[cli]") {
  temp_dir dir;
  REQUIRE(run_sessionrt({"send", "--state-dir", dir.path(), "agent:main:ops", "status please"}).code == 0);
  auto c = run_sessionrt({"compact", "agent:main:ops", "--state-dir", dir.path()});
  INFO(c.err);
  CHECK(c.code == 0);
  CHECK_THAT(c.out, Catch::Contains("agent:main:ops"));
  auto both = run_sessionrt({"tail", "agent:main:ops", "--session", "main", "--state-dir", dir.path()});
  CHECK(both.code == 2);
  CHECK(both.err == "sessionrt: two session keys: 'agent:main:ops' and --session 'main'; give one: `sessionrt tail KEY` "
                    "or `sessionrt tail --session KEY`\n");
  auto same = run_sessionrt({"tail", "agent:main:ops", "--session", "agent:main:ops", "--state-dir", dir.path()});
  CHECK(same.code == 0);
}

TEST_CASE("tail of an unknown session names it and exits 2", "[cli]") {
  temp_dir dir;
  auto r = run_sessionrt({"tail", "agent:main:nobody", "--state-dir", dir.path()});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "sessionrt: no session 'agent:main:nobody' in " + dir.path() + ": `sessionrt sessions` lists the keys\n");
  auto json = run_sessionrt({"tail", "--session", "agent:main:nobody", "--state-dir", dir.path(), "--json"});
  CHECK(json.code == 2);
  CHECK(json.out.empty());
}

TEST_CASE("send without a gateway names the in-process runtime that refused, not a gateway", "[cli]") {
  temp_dir dir;
  auto r = run_sessionrt({"send", "--state-dir", dir.path(), "--session", "agent:ghost:main", "hi"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, !Catch::Contains("gateway refused"));
  CHECK(r.err == "sessionrt: the runtime in-process on " + dir.path() +
                     " (no gateway is running there) refused chat.send: invalid sessionKey agent:ghost:main: no agent "
                     "ghost is configured\n");
  auto c = run_sessionrt({"compact", "agent:main:nobody", "--state-dir", dir.path()});
  CHECK(c.code == 2);
  CHECK(c.err == "sessionrt: the runtime in-process on " + dir.path() +
                     " (no gateway is running there) refused sessions.compact: session not found: agent:main:nobody\n");
}

}  // namespace sessionrt::testing
