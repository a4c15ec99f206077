// `sessionrt models list|status [--json] [--probe]` run in-process on a config file in a temp
// dir, with an environment of the test's own: the catalog with windows, default / fallback
// tags and aliases; where each key comes from (its "${VAR}", never its value); a probe of each
// of the default and its fallbacks against tests/providers/fake_provider.mjs over real HTTP
// (latency and usage, or FAILED and exit 1); a "${VAR}" that is not set fails naming it.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <sstream>

#include "tests/runtime/cli_test_support.hpp"
#include "tests/runtime/fake_provider_process.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {
namespace {

namespace bj = boost::json;

// The CLI in-process (as run_cli_with), with `env` as the process environment.
cli_run run_models(std::vector<std::string> args, std::map<std::string, std::string> env) {
  manual_clock clock(fixture_now);
  std::ostringstream out, err;
  runtime::cli_io io;
  io.files = &storage::posix_fs();
  io.time = &clock;
  io.probe = &storage::real_process_probe();
  io.env = [env = std::move(env)](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  io.out = &out;
  io.err = &err;
  args.insert(args.begin(), "sessionrt");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const int code = runtime::run_cli(static_cast<int>(argv.size()), argv.data(), io);
  return {code, out.str(), err.str()};
}

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The line of `text` that starts with `prefix` ("" when none does).
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& l : split_lines(text))
    if (l.rfind(prefix, 0) == 0) return l;
  return "";
}

const char* const kFakeKey = "sk-fake-secret-0123456789";
const char* const kOtherKey = "sk-other-secret-9876543210";

// Two providers: fake (openai-completions: echo, tools-3, bad-key-always) and other
// (anthropic-messages: big, whose contextTokens caps its window); default fake/echo (alias
// "quick"), fallback other/big (alias "large").
std::string catalog_config(const std::string& fake_base = "http://127.0.0.1:1/v1",
                           const std::string& other_base = "http://127.0.0.1:1") {
  return R"({
  "models": {
    "providers": {
      "fake": {
        "baseUrl": ")" + fake_base + R"(", "apiKey": "${FAKE_KEY}", "api": "openai-completions",
        "models": [{"id": "echo", "contextWindow": 32000, "maxTokens": 1024},
                   {"id": "tools-3", "contextWindow": 64000, "maxTokens": 2048, "input": ["text", "image"]},
                   {"id": "bad-key-always"}]
      },
      "other": {
        "baseUrl": ")" + other_base + R"(", "apiKey": "${OTHER_KEY}", "api": "anthropic-messages",
        "models": [{"id": "big", "contextWindow": 200000, "contextTokens": 100000, "maxTokens": 8192}]
      }
    }
  },
  "agents": {"defaults": {
    "model": {"primary": "fake/echo", "fallbacks": ["other/big"]},
    "models": {"fake/echo": {"alias": "quick"}, "other/big": {"alias": "large"}}
  }}
})";
}

std::map<std::string, std::string> keys_env() { return {{"FAKE_KEY", kFakeKey}, {"OTHER_KEY", kOtherKey}}; }

void check_no_key(const cli_run& r) {
  for (const char* key : {kFakeKey, kOtherKey, "test-key", "sk-wrong-key-5555"}) {
    INFO("key " << key);
    CHECK(r.out.find(key) == std::string::npos);
    CHECK(r.err.find(key) == std::string::npos);
  }
}

std::int64_t stat_of(const bj::value& stats, const char* name) {
  const auto* o = stats.if_object();
  if (!o || !o->contains(name) || !o->at(name).is_number()) return -1;
  return o->at(name).to_number<std::int64_t>();
}

}  // namespace

TEST_CASE("cli models list: every configured model with its window, the default and fallback tags, aliases",
          "[cli][models]") {
  temp_dir dir;
  write_text(dir.file("config.json"), catalog_config());
  auto r = run_models({"models", "list", "--config", dir.file("config.json")}, keys_env());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 6);  // the heading, 4 models, the count
  using words = std::vector<std::string>;
  CHECK(words_of(lines[0]) == words{"Model", "API", "Window", "MaxTok", "Input", "Tags", "/", "aliases"});
  CHECK(words_of(lines[1]) ==
        words{"fake/echo", "openai-completions", "32000", "1024", "text", "default", "alias:quick"});
  CHECK(words_of(lines[2]) == words{"fake/tools-3", "openai-completions", "64000", "2048", "text+image"});
  // No contextWindow: the default window (200000); no maxTokens: 0.
  CHECK(words_of(lines[3]) == words{"fake/bad-key-always", "openai-completions", "200000", "0", "text"});
  // contextTokens caps the window.
  CHECK(words_of(lines[4]) ==
        words{"other/big", "anthropic-messages", "100000", "8192", "text", "fallback#1", "alias:large"});
  CHECK(lines[5] == "4 model(s)");
  // The columns line up: each row's API starts where the heading's does.
  const auto api_col = lines[0].find("API");
  for (std::size_t i = 1; i <= 4; ++i) CHECK(lines[i].find(i == 4 ? "anthropic" : "openai") == api_col);
  check_no_key(r);
}

TEST_CASE("cli models list --json parses: refs, windows, tags and aliases", "[cli][models]") {
  temp_dir dir;
  write_text(dir.file("config.json"), catalog_config());
  auto r = run_models({"models", "list", "--json", "--config", dir.file("config.json")}, keys_env());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto o = r.json();
  const auto& models = o.at("models").as_array();
  REQUIRE(models.size() == 4);
  std::map<std::string, bj::object> by_ref;
  for (const auto& m : models) by_ref[std::string(m.as_object().at("ref").as_string())] = m.as_object();
  REQUIRE(by_ref.count("fake/echo"));
  REQUIRE(by_ref.count("other/big"));
  const auto& echo = by_ref["fake/echo"];
  CHECK(echo.at("api") == "openai-completions");
  CHECK(echo.at("contextWindow").to_number<std::int64_t>() == 32000);
  CHECK(echo.at("maxTokens").to_number<std::int64_t>() == 1024);
  CHECK(echo.at("tags") == "default");
  CHECK(echo.at("aliases") == bj::array{"quick"});
  CHECK(echo.at("name") == "echo");
  const auto& big = by_ref["other/big"];
  CHECK(big.at("api") == "anthropic-messages");
  CHECK(big.at("contextWindow").to_number<std::int64_t>() == 100000);
  CHECK(big.at("tags") == "fallback#1");
  CHECK(big.at("aliases") == bj::array{"large"});
  CHECK(by_ref["fake/tools-3"].at("input") == (bj::array{"text", "image"}));
  CHECK(by_ref["fake/tools-3"].at("tags") == "");
  check_no_key(r);
}

TEST_CASE("cli models status: names where each key comes from, never its value", "[cli][models]") {
  temp_dir dir;
  write_text(dir.file("config.json"), catalog_config("http://127.0.0.1:1/v1", "http://127.0.0.1:2"));
  auto r = run_models({"models", "status", "--config", dir.file("config.json")}, keys_env());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 2);  // the default, then its fallback
  CHECK(lines[0] ==
        "fake/echo: openai-completions at http://127.0.0.1:1/v1, key from ${FAKE_KEY}, window 32000 tokens");
  CHECK(lines[1] == "other/big: anthropic-messages at http://127.0.0.1:2, key from ${OTHER_KEY}, window 100000 tokens");
  check_no_key(r);

  auto j = run_models({"models", "status", "--json", "--config", dir.file("config.json")}, keys_env());
  INFO(j.out << j.err);
  REQUIRE(j.code == 0);
  const auto o = j.json();
  CHECK(o.at("default") == "fake/echo");
  REQUIRE(o.at("models").as_array().size() == 2);
  CHECK(o.at("models").as_array()[0] == bj::value(lines[0]));
  CHECK_FALSE(o.contains("probes"));  // no --probe: nothing was sent
  check_no_key(j);
}

TEST_CASE("cli models status --probe: a tiny request to the default and each fallback, latency and usage, and a bad "
          "key fails it with exit 1",
          "[cli][models]") {
  fake_provider_process fake;
  temp_dir dir;
  const std::string url = fake.base_url("openai-completions");
  // The default answers; one fallback's key is wrong, the other's model always answers 401.
  write_text(dir.file("ok.json"), R"({
  "models": {"providers": {
    "fake": {"baseUrl": ")" + url + R"(", "apiKey": "${FAKE_KEY}", "api": "openai-completions",
             "models": [{"id": "echo", "contextWindow": 32000, "maxTokens": 1024}]}
  }},
  "agents": {"defaults": {"model": {"primary": "fake/echo"}}}
})");
  write_text(dir.file("bad.json"), R"({
  "models": {"providers": {
    "fake": {"baseUrl": ")" + url + R"(", "apiKey": "${FAKE_KEY}", "api": "openai-completions",
             "models": [{"id": "echo", "contextWindow": 32000, "maxTokens": 1024}, {"id": "bad-key-always"}]},
    "wrong": {"baseUrl": ")" + url + R"(", "apiKey": "${WRONG_KEY}", "api": "openai-completions",
              "models": [{"id": "echo"}]}
  }},
  "agents": {"defaults": {"model": {"primary": "fake/echo", "fallbacks": ["fake/bad-key-always", "wrong/echo"]}}}
})");
  const std::map<std::string, std::string> env{{"FAKE_KEY", "test-key"}, {"WRONG_KEY", "sk-wrong-key-5555"}};

  SECTION("the default answers: ok, latency and usage, exit 0") {
    auto r = run_models({"models", "status", "--probe", "--config", dir.file("ok.json")}, env);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    const std::string probe = line_starting(r.out, "probe fake/echo:");
    std::smatch m;
    REQUIRE(std::regex_search(probe, m,
                              std::regex(R"(^probe fake/echo: ok in (\d+) ms, usage input (\d+) output (\d+))")));
    CHECK(std::stoll(m[1]) < 60000);
    CHECK(std::stoll(m[2]) > 0);
    CHECK(std::stoll(m[3]) > 0);
    CHECK(line_starting(r.out, "fake/echo: openai-completions at " + url + ", key from ${FAKE_KEY}") != "");
    check_no_key(r);

    auto j = run_models({"models", "status", "--probe", "--json", "--config", dir.file("ok.json")}, env);
    INFO(j.out << j.err);
    CHECK(j.code == 0);
    const auto probes = j.json().at("probes").as_array();
    REQUIRE(probes.size() == 1);
    const auto& p0 = probes[0].as_object();
    CHECK(p0.at("ref") == "fake/echo");
    CHECK(p0.at("ok") == true);
    CHECK(p0.at("usage").as_object().at("input").to_number<std::int64_t>() > 0);

    const auto stats = fake.get("/__stats");
    CHECK(stat_of(stats, "requests") == 2);
    CHECK(stat_of(stats, "unauthorized") == 0);
    CHECK(stats.as_object().at("rejected").as_object().empty());  // the probe broke no API rule
  }

  SECTION("a model that answers 401 and a wrong key: FAILED, exit 1, the key never shown") {
    auto r = run_models({"models", "status", "--probe", "--config", dir.file("bad.json")}, env);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(std::regex_search(line_starting(r.out, "probe fake/echo:"),
                            std::regex(R"(^probe fake/echo: ok in \d+ ms, usage input [1-9]\d* output [1-9]\d*)")));
    const std::string bad_model = line_starting(r.out, "probe fake/bad-key-always:");
    CHECK(std::regex_search(bad_model, std::regex(R"(^probe fake/bad-key-always: FAILED in \d+ ms: .+)")));
    CHECK(bad_model.find("401") != std::string::npos);
    const std::string wrong = line_starting(r.out, "probe wrong/echo:");
    CHECK(std::regex_search(wrong, std::regex(R"(^probe wrong/echo: FAILED in \d+ ms: .+)")));
    CHECK(wrong.find("401") != std::string::npos);
    CHECK(line_starting(r.out, "wrong/echo: openai-completions at " + url + ", key from ${WRONG_KEY}") != "");
    check_no_key(r);
    CHECK(stat_of(fake.get("/__stats"), "unauthorized") == 2);
  }
}

TEST_CASE("cli models: a config whose key variable is not set fails naming the variable and the provider",
          "[cli][models]") {
  // apiKey "${OTHER_KEY}" with OTHER_KEY unset.
  temp_dir dir;
  write_text(dir.file("config.json"), catalog_config());
  for (const char* verb : {"list", "status"}) {
    INFO(verb);
    auto r = run_models({"models", verb, "--config", dir.file("config.json")}, {{"FAKE_KEY", kFakeKey}});
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("OTHER_KEY") != std::string::npos);
    CHECK(r.err.find("models.providers.other") != std::string::npos);
    CHECK(r.err.find("not set") != std::string::npos);
    check_no_key(r);
  }
  // Set but empty: also refused, naming it.
  auto r = run_models({"models", "status", "--config", dir.file("config.json")},
                      {{"FAKE_KEY", kFakeKey}, {"OTHER_KEY", ""}});
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("OTHER_KEY") != std::string::npos);
  CHECK(r.err.find("empty") != std::string::npos);
}

}  // namespace sessionrt::testing
