#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <map>

#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using sessionrt::testing::temp_dir;

namespace {
const std::string kId = "3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44";

void mkdirs(const std::string& path) {
  std::string partial;
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      partial = path.substr(0, i);
      ::mkdir(partial.c_str(), 0700);
    }
  }
}
}  // namespace

TEST_CASE("state dir is SESSIONRT_STATE_DIR when set and HOME/.sessionrt otherwise") {
  CHECK(*resolve_state_dir("/var/lib/srt/", "/home/u") == "/var/lib/srt");
  CHECK(*resolve_state_dir("~/state", "/home/u") == "/home/u/state");
  CHECK(*resolve_state_dir("~", "/home/u/") == "/home/u");
  CHECK(*resolve_state_dir(std::nullopt, "/home/u") == "/home/u/.sessionrt");
  CHECK(*resolve_state_dir("", "/home/u/") == "/home/u/.sessionrt");
  auto no_home = resolve_state_dir(std::nullopt, std::nullopt);
  REQUIRE_FALSE(no_home.ok());
  CHECK(no_home.error().code() == errc::invalid_argument);
  CHECK(no_home.error().message().find("$SESSIONRT_STATE_DIR") != std::string::npos);
  CHECK_FALSE(resolve_state_dir("relative/dir", "/home/u").ok());
  CHECK_FALSE(resolve_state_dir("~/x", "").ok());
  CHECK_FALSE(resolve_state_dir(std::nullopt, "relative-home").ok());
}

TEST_CASE("the environment names the state dir: SESSIONRT_STATE_DIR, else OpenClaw's OPENCLAW_STATE_DIR, else HOME/.sessionrt") {
  auto env_of = [](std::map<std::string, std::string> vars) {
    return [vars](std::string_view name) -> std::optional<std::string> {
      auto it = vars.find(std::string(name));
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  };
  CHECK(*default_state_dir(env_of({{"HOME", "/home/u"}})) == "/home/u/.sessionrt");
  CHECK(*default_state_dir(env_of({{"HOME", "/home/u"}, {"OPENCLAW_STATE_DIR", "~/.openclaw/"}})) == "/home/u/.openclaw");
  CHECK(*default_state_dir(env_of({{"HOME", "/home/u"}, {"OPENCLAW_STATE_DIR", "/oc"}, {"SESSIONRT_STATE_DIR", "/srt"}})) ==
        "/srt");
  CHECK(*default_state_dir(env_of({{"HOME", "/home/u"}, {"OPENCLAW_STATE_DIR", "/oc"}, {"SESSIONRT_STATE_DIR", ""}})) ==
        "/oc");
  CHECK_FALSE(state_dir_from_env(env_of({{"HOME", "/home/u"}}))->has_value());
  auto bad = state_dir_from_env(env_of({{"OPENCLAW_STATE_DIR", "relative"}}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "$OPENCLAW_STATE_DIR must be an absolute path or start with '~/': got 'relative'");
}

TEST_CASE("layout is state/agents/agentId/sessions with sessions.json and sessionId.jsonl and unsafe ids are refused") {
  CHECK(*agent_sessions_dir("/st", "main") == "/st/agents/main/sessions");
  CHECK(*store_path("/st", "main") == "/st/agents/main/sessions/sessions.json");
  CHECK(*transcript_path("/st/agents/main/sessions", kId) == "/st/agents/main/sessions/" + kId + ".jsonl");
  for (const char* bad : {"", ".", "..", "a/b", "/abs", "x..y", "a\\b"}) {
    INFO(bad);
    auto r = agent_sessions_dir("/st", bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == errc::unsafe_path);
    CHECK_FALSE(store_path("/st", bad).ok());
  }
  for (const std::string& bad : std::vector<std::string>{"", "../x", "a/b", "..", ".hidden", "x\ny", std::string(129, 'a')}) {
    INFO(bad);
    auto r = transcript_path("/s", bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == errc::unsafe_path);
    CHECK(r.error().message().find("'" + bad + "'") != std::string::npos);
  }
}

TEST_CASE("encodeURIComponent with JavaScript's exact output") {
  // node: encodeURIComponent(x)
  CHECK(*encode_uri_component("abcXYZ019") == "abcXYZ019");
  CHECK(*encode_uri_component("-_.!~*'()") == "-_.!~*'()");
  CHECK(*encode_uri_component("a b") == "a%20b");
  CHECK(*encode_uri_component("/?#&=+:;,$@[]") == "%2F%3F%23%26%3D%2B%3A%3B%2C%24%40%5B%5D");
  CHECK(*encode_uri_component("%") == "%25");
  CHECK(*encode_uri_component("\xC3\xA9") == "%C3%A9");                // é
  CHECK(*encode_uri_component("\xF0\x9F\x98\x80") == "%F0%9F%98%80");  // 😀
  CHECK(*encode_uri_component(std::string("a\0b", 3)) == "a%00b");
  for (std::string bad : {"\xFF", "\xC3", "\xED\xA0\x80" /* lone surrogate */, "\xC0\xAF" /* overlong */,
                          "\xF4\x90\x80\x80" /* > U+10FFFF */}) {
    auto r = encode_uri_component(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == errc::invalid_argument);
  }
}

TEST_CASE("topic and successor transcript paths") {
  auto topic = topic_transcript_path("/s", kId, "-100/5");
  REQUIRE(topic.ok());
  CHECK(*topic == "/s/" + kId + "-topic--100%2F5.jsonl");
  auto c = classify(kId + "-topic--100%2F5.jsonl");
  CHECK(c.kind == artifact_kind::topic_transcript);
  CHECK(c.session_id == kId);
  CHECK(c.detail == "-100%2F5");
  CHECK(*topic_transcript_path("/s", "abc", "42") == "/s/abc-topic-42.jsonl");
  CHECK(topic_transcript_path("/s", "abc", "").error().code() == errc::invalid_argument);
  CHECK(topic_transcript_path("/s", "../abc", "1").error().code() == errc::unsafe_path);
  CHECK(topic_transcript_path("/s", "abc", "\xFF").error().code() == errc::invalid_argument);
  auto long_topic = topic_transcript_path("/s", kId, std::string(100, '/'));
  REQUIRE_FALSE(long_topic.ok());
  CHECK(long_topic.error().code() == errc::limit_exceeded);
  CHECK(long_topic.error().message().find("255") != std::string::npos);

  auto succ = successor_transcript_path("/s", kId, 1796002280053);
  REQUIRE(succ.ok());
  CHECK(*succ == "/s/2026-11-30T01-31-20-053Z_" + kId + ".jsonl");
  auto s = classify(path_basename(*succ));
  CHECK(s.kind == artifact_kind::successor_transcript);
  CHECK(s.timestamp_ms == 1796002280053);
  CHECK(successor_transcript_path("/s", "a/b", 0).error().code() == errc::unsafe_path);
}

TEST_CASE("confine_session_file keeps stored sessionFile values inside the sessions dirs") {
  temp_dir tmp;
  auto root_r = posix_fs().realpath(tmp.path());
  REQUIRE(root_r.ok());
  const std::string root = *root_r;
  const std::string sessions = root + "/state/agents/main/sessions";
  const std::string sibling = root + "/state/agents/other/sessions";
  const std::string outside = root + "/outside";
  mkdirs(sessions);
  mkdirs(sibling);
  mkdirs(outside);
  mkdirs(root + "/state2/agents/other/sessions");
  const std::string name = kId + ".jsonl";

  auto accepted = [&](const std::string& stored, const std::string& expected) {
    INFO(stored);
    auto r = confine_session_file(posix_fs(), sessions, stored);
    REQUIRE(r.ok());
    CHECK(*r == expected);
  };
  auto refused = [&](const std::string& stored) {
    INFO(stored);
    auto r = confine_session_file(posix_fs(), sessions, stored);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == errc::unsafe_path);
    CHECK(r.error().message().find("'" + stored + "'") != std::string::npos);
  };

  accepted(sessions + "/" + name, sessions + "/" + name);
  accepted(name, sessions + "/" + name);
  accepted("./" + name, sessions + "/" + name);
  accepted(sibling + "/" + name, sibling + "/" + name);
  accepted(sessions + "/" + kId + "-topic-42.jsonl", sessions + "/" + kId + "-topic-42.jsonl");
  accepted(sessions + "/2026-11-30T01-31-20-053Z_" + name, sessions + "/2026-11-30T01-31-20-053Z_" + name);
  // through a symlink that stays inside
  REQUIRE(::symlink(sessions.c_str(), (root + "/alias").c_str()) == 0);
  accepted(root + "/alias/" + name, sessions + "/" + name);

  refused("");
  refused("../" + name);
  refused("../../other/sessions/" + name);
  refused(sessions + "/../sessions/" + name);
  refused(outside + "/" + name);
  refused(root + "/state2/agents/other/sessions/" + name);  // a sessions dir of another state
  refused(root + "/state/agents/" + name);
  refused(sessions + "/sessions.json");
  refused("sessions.json");
  refused(name + ".lock");
  refused(name + ".reset.2026-11-30T01-31-20.053Z");
  refused(sessions + "/");
  refused(std::string("a\0b.jsonl", 9));

  // a directory symlink pointing outside
  REQUIRE(::symlink(outside.c_str(), (sessions + "/link").c_str()) == 0);
  refused(sessions + "/link/" + name);
  refused("link/" + name);
  // the file itself a symlink to outside
  testing::write_text(outside + "/target.jsonl", "");
  REQUIRE(::symlink((outside + "/target.jsonl").c_str(), (sessions + "/evil.jsonl").c_str()) == 0);
  refused(sessions + "/evil.jsonl");
  // a directory where the transcript should be
  mkdirs(sessions + "/dir.jsonl");
  refused("dir.jsonl");

  auto missing_dir = confine_session_file(posix_fs(), sessions, sessions + "/nope/" + name);
  REQUIRE_FALSE(missing_dir.ok());
  CHECK(missing_dir.error().code() == errc::not_found);
}
