// Keys in plain normal form are read in place (agent_id_of_plain_key, normalize_session_key's
// and is_thread_key's early answers): they must agree with the full rules on every key,
// plain or not (random keys over an alphabet with the characters that matter).
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "actors/router/session_key.hpp"
#include "messages/js_text.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
std::string agent_by_parse(const std::string& key) {
  auto parsed = parse_agent_session_key(key);
  return parsed ? parsed->agent_id : std::string(default_agent_id);
}
}  // namespace

TEST_CASE("plain keys: the agent read in place is the parsed one, and normalizing keeps them") {
  for (const std::string key :
       {"agent:main:bench:direct:42", "agent:ops:telegram:group:-100:thread:7", "agent::main::x", ":agent:main:x:",
        "agent:main", "agent:main:", "main", "agent:a-b_c:x", "agentx:main:x", "x:agent:main:y", "agent:main:x:y:z"}) {
    INFO(key);
    const auto plain = agent_id_of_plain_key(key);
    REQUIRE(plain);
    CHECK(std::string(*plain) == agent_by_parse(key));
    CHECK(normalize_session_key(key) == key);
  }
  // Not plain: the full rules answer.
  for (const std::string key : {"Agent:Main:X", " agent:main:x", "agent:main:x ", "agent: main :x", "agent:mäin:x",
                                "agent:main:signal:group:AbC", "agent:main:matrix:channel:!Room", "agent:main:x\t"}) {
    INFO(key);
    CHECK_FALSE(agent_id_of_plain_key(key));
  }
  CHECK(normalize_session_key(" Agent:Main:X ") == "agent:main:x");
  CHECK(agent_by_parse("agent: Ops :x") == "ops");
}

TEST_CASE("plain keys: random keys agree with the full rules") {
  std::mt19937 rng(34);
  const std::string alphabet = "agentmaixhrd::::--_AGT \t0123456789!/.";
  for (int n = 0; n < 20000; ++n) {
    std::string key = n % 2 ? "agent:" : "";
    const std::size_t len = rng() % 24;
    for (std::size_t i = 0; i < len; ++i) key += alphabet[rng() % alphabet.size()];
    if (n % 97 == 0) key += ":thread:";
    if (n % 89 == 0) key += "signal:g";
    INFO(key);
    if (const auto plain = agent_id_of_plain_key(key)) {
      REQUIRE(std::string(*plain) == agent_by_parse(key));
      REQUIRE(normalize_session_key(key) == key);
      REQUIRE(normalize_session_key(key) == js_lowercase(js_trim(key)));  // the rule for keys without spans
    }
    // The early "no :thread: marker" answer agrees with the split.
    REQUIRE(is_thread_key(key) == !split_thread_suffix(key).thread_id.empty());
  }
}
