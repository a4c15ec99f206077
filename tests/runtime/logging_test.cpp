// runtime/logging.hpp: levels, the file and its rotation, the console styles (journald's
// "<N>" prefixes), JSON lines, the logging.* config keys, one line per lifecycle event that an
// operator wants to see, and no message text or API key at info level in a real turn's log.
#include "runtime/logging.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <future>
#include <sstream>

#include "actors/maintenance/maintenance_pass.hpp"
#include "messages/json_access.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "runtime/config.hpp"
#include "runtime/model_setup.hpp"
#include "runtime/runtime.hpp"
#include "tests/runtime/fake_provider_process.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace bj = boost::json;

namespace {

// Puts spdlog's default logger back when the test ends.
struct logger_guard {
  std::shared_ptr<spdlog::logger> saved = spdlog::default_logger();
  ~logger_guard() { spdlog::set_default_logger(saved); }
};

storage::env_lookup env_of(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

actors::logging_settings at_level(std::string level, std::string format = "text") {
  actors::logging_settings s;
  s.level = std::move(level);
  s.format = std::move(format);
  return s;
}

}  // namespace

TEST_CASE("logging: level and format names, with OpenClaw's aliases", "[logging]") {
  for (const char* l : {"trace", "debug", "info", "warn", "error", "off"}) CHECK(runtime::parse_log_level(l) == l);
  CHECK(runtime::parse_log_level("WARNING") == "warn");
  CHECK(runtime::parse_log_level("Info") == "info");
  CHECK(runtime::parse_log_level("silent") == "off");
  CHECK(runtime::parse_log_level("fatal") == "fatal");
  CHECK_FALSE(runtime::parse_log_level("loud"));
  CHECK_FALSE(runtime::parse_log_level(""));
  CHECK(runtime::parse_log_format("JSON") == "json");
  CHECK(runtime::parse_log_format("text") == "text");
  CHECK_FALSE(runtime::parse_log_format("xml"));
}

TEST_CASE("logging: a bad level, format or file is an error naming it and keeps the logger", "[logging]") {
  logger_guard guard;
  testing::temp_dir dir;
  auto before = spdlog::default_logger();
  auto bad = runtime::configure_logging(at_level("loud"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.code() == errc::invalid_argument);
  CHECK(bad.message().find("\"loud\"") != std::string::npos);
  CHECK(bad.message().find("trace, debug, info, warn, error, off") != std::string::npos);
  auto fmt_bad = runtime::configure_logging(at_level("info", "xml"));
  REQUIRE_FALSE(fmt_bad.ok());
  CHECK(fmt_bad.message().find("\"xml\"") != std::string::npos);
  // A file under a regular file cannot be made; a directory is no log file.
  testing::write_text(dir.file("plain"), "x");
  auto s = at_level("info");
  s.file = dir.file("plain") + "/gateway.log";
  auto unwritable = runtime::configure_logging(s);
  REQUIRE_FALSE(unwritable.ok());
  CHECK(unwritable.code() == errc::io_error);
  CHECK(unwritable.message().find(dir.file("plain")) != std::string::npos);
  s.file = dir.path();
  auto is_dir = runtime::configure_logging(s);
  REQUIRE_FALSE(is_dir.ok());
  CHECK(is_dir.message().find("is a directory") != std::string::npos);
  if (::geteuid() != 0) {  // root writes anywhere
    testing::write_text(dir.file("readonly.log"), "");
    ::chmod(dir.file("readonly.log").c_str(), 0444);
    s.file = dir.file("readonly.log");
    auto ro = runtime::configure_logging(s);
    REQUIRE_FALSE(ro.ok());
    CHECK(ro.message().find("readonly.log") != std::string::npos);
  }
  CHECK(spdlog::default_logger() == before);
}

TEST_CASE("logging: levels filter, the file gets every line at once, and a missing directory is made", "[logging]") {
  logger_guard guard;
  testing::temp_dir dir;
  std::ostringstream console;
  auto s = at_level("warn");
  s.file = dir.file("logs/sub/gateway.log");
  runtime::logging_target t;
  t.console = &console;
  REQUIRE(runtime::configure_logging(s, t).ok());
  spdlog::info("gateway: quiet");
  spdlog::warn("gateway: loud");
  spdlog::error("gateway: louder");
  const std::string file = testing::read_text(dir.file("logs/sub/gateway.log"));  // flushed per line
  CHECK(file == console.str());
  const auto lines = testing::split_lines(file);
  REQUIRE(lines.size() == 2);
  // "2025-06-01T12:00:00.123Z warn  gateway: loud"
  CHECK(lines[0].size() > 25);
  CHECK(lines[0][4] == '-');
  CHECK(lines[0][10] == 'T');
  CHECK(lines[0][23] == 'Z');
  CHECK(lines[0].substr(24) == " warn  gateway: loud");
  CHECK(lines[1].substr(24) == " error gateway: louder");

  REQUIRE(runtime::configure_logging(at_level("off"), t).ok());
  spdlog::error("gateway: not shown");
  CHECK(console.str().find("not shown") == std::string::npos);
}

TEST_CASE("logging: the file is rotated by size, keeping maxFiles old ones", "[logging]") {
  logger_guard guard;
  testing::temp_dir dir;
  std::ostringstream console;
  auto s = at_level("info");
  s.file = dir.file("gateway.log");
  s.max_file_bytes = 2048;
  s.max_files = 2;
  runtime::logging_target t;
  t.console = &console;
  REQUIRE(runtime::configure_logging(s, t).ok());
  const std::string filler(100, 'x');
  for (int i = 0; i < 200; ++i) spdlog::info("test: line {} {}", i, filler);
  REQUIRE(runtime::configure_logging(at_level("info"), t).ok());  // closes the file
  CHECK(testing::list_names(dir.path()) == std::vector<std::string>{"gateway.1.log", "gateway.2.log", "gateway.log"});
  for (const char* name : {"gateway.log", "gateway.1.log", "gateway.2.log"})
    CHECK(std::filesystem::file_size(dir.file(name)) <= 2048);
  CHECK(testing::read_text(dir.file("gateway.log")).find("test: line 199 ") != std::string::npos);
}

TEST_CASE("logging: JSON lines are one valid object each, with the component and every string escaped", "[logging]") {
  logger_guard guard;
  std::ostringstream console;
  runtime::logging_target t;
  t.console = &console;
  REQUIRE(runtime::configure_logging(at_level("debug", "json"), t).ok());
  spdlog::info("gateway: listening on ws://127.0.0.1:{} (state {})", 18789, "/srv/a \"b\"");
  spdlog::warn("odd text \x01 tab\t newline\n backslash\\ bad utf8 \xff\xfe end");
  spdlog::debug("model: héllo 👋");
  const auto lines = testing::split_lines(console.str());
  REQUIRE(lines.size() == 3);
  std::vector<bj::object> objs;
  for (const auto& l : lines) {
    INFO(l);
    boost::system::error_code ec;
    auto v = bj::parse(l, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(v.is_object());
    objs.push_back(v.as_object());
  }
  CHECK(json::get_string(objs[0], "level") == "info");
  CHECK(json::get_string(objs[0], "logger") == "sessionrt");
  CHECK(json::get_string(objs[0], "component") == "gateway");
  CHECK(json::get_string(objs[0], "msg") == "listening on ws://127.0.0.1:18789 (state /srv/a \"b\")");
  const std::string ts(json::get_string(objs[0], "ts").value_or(""));
  CHECK(ts.size() == 24);
  CHECK(ts.back() == 'Z');
  CHECK(json::get_string(objs[1], "level") == "warn");
  CHECK(json::get_string(objs[1], "component") == "sessionrt");  // no "word: " prefix
  CHECK(json::get_string(objs[1], "msg") == "odd text \x01 tab\t newline\n backslash\\ bad utf8 \xEF\xBF\xBD\xEF\xBF\xBD end");
  CHECK(lines[1].find("\\u0001") != std::string::npos);
  CHECK(json::get_string(objs[2], "msg") == "héllo 👋");
  // The exposed formatter writes the same shape.
  CHECK(runtime::format_json_log_line("error", 0, "x", "turn: failed") ==
        R"({"ts":"1970-01-01T00:00:00.000Z","level":"error","logger":"x","component":"turn","msg":"failed"})");
}

TEST_CASE("logging: under journald lines carry the syslog priority and no timestamp", "[logging]") {
  logger_guard guard;
  std::ostringstream console;
  runtime::logging_target t;
  t.console = &console;
  t.style = runtime::console_style::journal;
  REQUIRE(runtime::configure_logging(at_level("debug"), t).ok());
  spdlog::debug("a: d");
  spdlog::info("a: i");
  spdlog::warn("a: w");
  spdlog::error("a: e");
  spdlog::critical("a: c");
  CHECK(testing::split_lines(console.str()) ==
        std::vector<std::string>{"<7>debug a: d", "<6>info  a: i", "<4>warn  a: w", "<3>error a: e", "<2>fatal a: c"});
  // JSON under journald: the prefix, then the object (journald strips the prefix).
  std::ostringstream json_console;
  t.console = &json_console;
  REQUIRE(runtime::configure_logging(at_level("info", "json"), t).ok());
  spdlog::warn("gateway: w");
  CHECK(json_console.str().rfind("<4>{\"ts\":", 0) == 0);
}

TEST_CASE("logging: $JOURNAL_STREAM selects the journal style only when it names the descriptor", "[logging]") {
  testing::temp_dir dir;
  testing::write_text(dir.file("out"), "");
  int fd = ::open(dir.file("out").c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  const std::string id = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  CHECK(runtime::detect_console_style(fd, env_of({{"JOURNAL_STREAM", id}})) == runtime::console_style::journal);
  CHECK(runtime::detect_console_style(fd, env_of({{"JOURNAL_STREAM", "1:2"}})) == runtime::console_style::plain);
  CHECK(runtime::detect_console_style(fd, env_of({})) == runtime::console_style::plain);  // a file is no terminal
  ::close(fd);
}

TEST_CASE("logging: the logging keys of the config file", "[logging][config]") {
  auto loaded = runtime::load_config_text(
      R"({"logging": {"level": "DEBUG", "file": "/var/log/srt.log", "format": "json", "maxFileBytes": "1mb", "maxFiles": 3}})",
      env_of({}));
  REQUIRE(loaded.ok());
  const auto& l = loaded->settings.logging;
  CHECK(l.level == "debug");
  CHECK(l.file == "/var/log/srt.log");
  CHECK(l.format == "json");
  CHECK(l.max_file_bytes == 1u << 20);
  CHECK(l.max_files == 3);
  auto shown = runtime::settings_to_json(loaded->settings);
  CHECK(bj::serialize(shown.at("logging")) ==
        R"({"level":"debug","file":"/var/log/srt.log","format":"json","maxFileBytes":1048576,"maxFiles":3})");
  auto defaults = runtime::load_config_text("{}", env_of({}));
  REQUIRE(defaults.ok());
  CHECK(defaults->settings.logging.level == "info");
  CHECK(defaults->settings.logging.format == "text");
  CHECK(defaults->settings.logging.file.empty());

  auto bad = runtime::load_config_text(R"({"logging": {"level": "loud"}})", env_of({}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().find("config key logging.level") != std::string::npos);
  CHECK(bad.error().message().find("\"loud\"") != std::string::npos);
  auto small = runtime::load_config_text(R"({"logging": {"maxFileBytes": 10}})", env_of({}));
  REQUIRE_FALSE(small.ok());
  CHECK(small.error().message().find("logging.maxFileBytes") != std::string::npos);
  auto typo = runtime::load_config_text(R"({"logging": {"levl": "info"}})", env_of({}));
  REQUIRE(typo.ok());
  REQUIRE(typo->warnings.size() == 1);
  CHECK(typo->warnings[0].find("did you mean logging.level?") != std::string::npos);
}

TEST_CASE("logging: one line per turn failure, repair, compaction, maintenance action and model fallback", "[logging]") {
  logger_guard guard;
  std::ostringstream console;
  runtime::logging_target t;
  t.console = &console;
  t.style = runtime::console_style::journal;  // no timestamps to strip
  REQUIRE(runtime::configure_logging(at_level("info"), t).ok());
  const payloads::event_subject who{"agent:main:telegram:direct:42", "main", "sess-1"};
  const auto filter = runtime::log_event_filter();
  auto log = [&](const lifecycle_event& e) {
    REQUIRE(filter.matches(e));
    runtime::log_event(e);
  };
  log(payloads::make_event(who, 1, payloads::turn_failed{"anthropic/claude: HTTP 529 overloaded"}));
  log(payloads::make_event(who, 1, payloads::transcript_repaired{"/s/sess-1.jsonl", "session file repaired: dropped 1 malformed line(s)", 1, 17}));
  payloads::compaction_completed cc;
  cc.reason = "threshold";
  cc.tokens_before = 180000;
  cc.tokens_after = 21000;
  cc.compaction_count = 2;
  log(payloads::make_event(who, 1, cc));
  log(payloads::make_event(who, 1, payloads::compaction_failed{"overflow", "the summary call failed: timeout", false}));
  log(payloads::make_event(who, 1, payloads::model_fallback{"anthropic/claude", "openai/gpt-4o", "HTTP 401"}));
  payloads::turn_completed done;
  done.total_tokens = 12;
  log(payloads::make_event(who, 1, done));  // debug: not shown at info
  // A maintenance pass that applied one row removal.
  actors::maintenance_job job;
  job.agent_id = "main";
  actors::plan_action a;
  a.kind = actors::action_kind::remove_row;
  a.key = "agent:main:old";
  job.plan.actions.push_back(a);
  job.rows_removed = 1;
  log(actors::maintenance_report_event({job}, actors::maintenance_mode::enforce, "scheduled", 1));
  log(actors::maintenance_report_event({}, actors::maintenance_mode::enforce, "scheduled", 1));  // nothing: no line
  const auto lines = testing::split_lines(console.str());
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == "<4>warn  turn: failed in session agent:main:telegram:direct:42 (sess-1): anthropic/claude: HTTP 529 overloaded");
  CHECK(lines[1] == "<4>warn  transcript: repaired /s/sess-1.jsonl of session agent:main:telegram:direct:42 (sess-1): session file repaired: dropped 1 malformed line(s)");
  CHECK(lines[2] == "<6>info  compaction: session agent:main:telegram:direct:42 (sess-1) compacted (threshold, by built-in): 180000 -> 21000 tokens, compaction #2");
  CHECK(lines[3] == "<4>warn  compaction: session agent:main:telegram:direct:42 (sess-1) failed (overflow): the summary call failed: timeout");
  CHECK(lines[4] == "<4>warn  model: session agent:main:telegram:direct:42 (sess-1): anthropic/claude failed, falling back to openai/gpt-4o: HTTP 401");
  CHECK(lines[5].rfind("<6>info  maintenance: agent main: ", 0) == 0);
  CHECK(lines[5].find("agent:main:old") != std::string::npos);
  CHECK(lines[6].rfind("<6>info  maintenance: enforce pass (scheduled): 1 action(s): 1 row(s) removed", 0) == 0);
}

TEST_CASE("logging: a real turn's log at info holds neither the message text nor the API key", "[logging][providers]") {
  logger_guard guard;
  const std::string key = "sk-live-KEY-9f8e7d6c5b4a-DO-NOT-LOG";
  const std::string text = "purple-walrus-marmalade-31337 is my secret plan";
  testing::fake_provider_process fake({"--key", key});
  testing::temp_dir state, logs;
  auto ls = at_level("info");
  ls.file = logs.file("gateway.log");
  std::ostringstream console;
  runtime::logging_target t;
  t.console = &console;
  REQUIRE(runtime::configure_logging(ls, t).ok());

  auto provider = [&](const std::string& id, const std::string& api, std::vector<std::string> models) {
    actors::provider_config p;
    p.id = id;
    p.api = api;
    p.base_url = fake.base_url(api);
    p.api_key = key;
    p.api_key_source = "literal";
    p.timeout_seconds = 20;
    for (auto& m : models) {
      actors::provider_model pm;
      pm.id = m;
      pm.context_window = 200000;
      pm.max_tokens = 1024;
      p.models.push_back(pm);
    }
    return p;
  };
  actors::runtime_settings s;
  s.state_dir = state.path();
  s.session.reset.timezone = "UTC";
  auto dead = provider("dead", "openai-completions", {"echo"});
  dead.base_url = "http://127.0.0.1:1/v1";  // nothing listens: the turn falls back
  s.models.providers = {dead, provider("good", "anthropic-messages", {"echo", "overloaded-stream"})};
  s.models.defaults = {"dead/echo", {"good/echo"}};
  s.models.retry_max_attempts = 1;
  s.compaction_model = "good/echo";
  s.maintenance.mode = actors::maintenance_mode::enforce;
  s.maintenance.max_entries = 1;  // two sessions: one row goes
  auto setup = runtime::runner_for_config(s, nullptr);
  REQUIRE(setup.ok());
  REQUIRE(setup->runner);
  runtime::runtime_options o;
  o.settings = s;
  o.async_runner = setup->runner;
  o.threads = 2;
  o.subscriptions.push_back({runtime::log_event_filter(), runtime::log_event});
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  auto send = [&](const std::string& peer, const std::string& words) {
    chat_event ev;
    ev.channel = "telegram";
    ev.peer_kind = peer == "42" ? "direct" : "group";  // a group: a session of its own
    if (peer == "ui") {  // a Control UI session: the one the cap may archive (OpenClaw 2026.9
      ev.channel = "webchat";  // protects the main key, groups and external deliveries)
      ev.peer_kind = "direct";
      ev.session_key = "agent:main:explicit:ui";
    }
    ev.peer_id = peer;
    ev.text = words;
    auto f = (*rt)->send(ev);
    REQUIRE(f.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    return f.get();
  };
  auto first = send("42", text);  // dead/echo fails: good/echo answers "Echo: <text>"
  REQUIRE(first.st.ok());
  REQUIRE(first.reply);
  CHECK(first.reply->find("purple-walrus") != std::string::npos);
  auto compacted = send("42", "/compact");  // the summary holds the text
  CHECK(compacted.st.ok());
  REQUIRE((*rt)->patch_session(first.session_key, {.model = std::string("good/overloaded-stream")}).ok());
  auto failed = send("42", text + " again");
  CHECK_FALSE(failed.st.ok());
  auto other = send("ui", "hello from another peer");
  INFO(other.st.message());
  REQUIRE(other.st.ok());
  auto pass = (*rt)->maintain();
  REQUIRE(pass.ok());
  REQUIRE((*rt)->stop().ok());
  rt->reset();

  const std::string log = testing::read_text(logs.file("gateway.log"));
  INFO(log);
  CHECK(log == console.str());
  CHECK(log.find("model: session " + first.session_key) != std::string::npos);  // the fallback
  CHECK(log.find("falling back to good/echo") != std::string::npos);
  CHECK(log.find("turn: failed in session " + first.session_key) != std::string::npos);
  CHECK(log.find("compaction: session " + first.session_key) != std::string::npos);
  CHECK(log.find("maintenance: enforce pass") != std::string::npos);
  // Neither the secret nor the words the user wrote, nor the model's echo of them.
  CHECK(log.find(key) == std::string::npos);
  CHECK(log.find("9f8e7d6c5b4a") == std::string::npos);
  CHECK(log.find("purple-walrus") == std::string::npos);
  CHECK(log.find("secret plan") == std::string::npos);
  CHECK(log.find("hello from another peer") == std::string::npos);
}
