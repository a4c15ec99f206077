// `sessionrt gateway status | stop | install` (gateway/gateway_service.hpp): status and stop on
// a state dir without a gateway, and against a real `sessionrt gateway` child process started
// on port 0 (waited for by its "listening on" line and its sd_notify READY=1); install's unit
// file, checked by content and by `systemd-analyze verify`.
#include "gateway/gateway_service.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "app/cli/command_line.hpp"
#include "gateway/gateway_command.hpp"
#include "messages/json_access.hpp"
#include "storage/process_probe.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace bj = boost::json;

extern char** environ;

namespace {

const std::string kSessionrt = std::string(SESSIONRT_BINARY_DIR) + "/sessionrt";

struct cli_result {
  int code = -1;
  std::string out, err;
};

// `sessionrt <args>` in this process, with the gateway commands.
cli_result run_in_process(std::vector<std::string> args, storage::process_probe* probe = nullptr) {
  std::ostringstream out, err;
  auto io = runtime::process_cli_io();
  io.out = &out;
  io.err = &err;
  io.progress = false;
  if (probe) io.probe = probe;
  args.insert(args.begin(), "sessionrt");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cli_result r;
  r.code = runtime::run_cli(static_cast<int>(argv.size()), argv.data(), io, {gateway::add_gateway_command});
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A child process of `exe args` with `extra_env` added; its stdout on a pipe (out), its stderr
// into `err_path`.
struct child {
  pid_t pid = -1;
  FILE* out = nullptr;
  ~child() {
    if (out) std::fclose(out);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      int st = 0;
      ::waitpid(pid, &st, 0);
    }
  }
  int wait() {
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  // The next line of stdout ("" at EOF); blocks.
  std::string line() {
    std::string l;
    int c;
    while ((c = std::fgetc(out)) != EOF && c != '\n') l += static_cast<char>(c);
    return l;
  }
};

void start_child(child& ch, const std::string& exe, const std::vector<std::string>& args, const std::string& err_path,
                 const std::vector<std::string>& extra_env = {}) {
  REQUIRE(std::filesystem::exists(exe));  // the sessionrt target is built with the tests
  std::vector<std::string> argv_s{exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
  env_s.insert(env_s.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 1);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err >= 0) ::dup2(err, 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execve(exe.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ch.pid = pid;
  ch.out = ::fdopen(fds[0], "r");
}

// Runs `exe args` to its end: exit code, stdout and stderr.
cli_result run_to_end(const std::string& exe, const std::vector<std::string>& args, const std::string& scratch) {
  child ch;
  start_child(ch, exe, args, scratch + "/stderr.txt");
  cli_result r;
  std::string l;
  int c;
  while ((c = std::fgetc(ch.out)) != EOF) r.out += static_cast<char>(c);
  r.code = ch.wait();
  r.err = testing::read_text(scratch + "/stderr.txt");
  return r;
}

// A datagram socket standing in for systemd's $NOTIFY_SOCKET.
struct notify_socket {
  int fd = -1;
  std::string path;
  explicit notify_socket(std::string p) : path(std::move(p)) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof a.sun_path);
    std::memcpy(a.sun_path, path.data(), path.size());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~notify_socket() { ::close(fd); }
  // The next message, waiting at most `ms`.
  std::string receive(int ms) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return {};
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("gateway service: status and stop on a state dir without a gateway say it is not running", "[gateway][service]") {
  testing::temp_dir dir;
  auto st = run_in_process({"gateway", "status", "--state-dir", dir.path()});
  CHECK(st.code == 1);
  CHECK(has(st.out, "sessionrt gateway: not running (state " + dir.path() + ")"));
  CHECK(has(st.out, dir.path() + "/gateway.json does not exist"));
  auto js = run_in_process({"gateway", "status", "--state-dir", dir.path(), "--json"});
  CHECK(js.code == 1);
  auto v = bj::parse(js.out).as_object();
  CHECK(json::get_bool(v, "running") == false);
  CHECK(json::get_bool(v, "healthy") == false);
  CHECK(has(std::string(json::get_string(v, "reason").value_or("")), "does not exist"));
  auto stop = run_in_process({"gateway", "stop", "--state-dir", dir.path()});
  CHECK(stop.code == 0);
  CHECK(has(stop.out, "not running"));
  CHECK(has(stop.out, "nothing to stop"));
}

TEST_CASE("gateway service: a record whose pid is gone is a stale record, not a running gateway", "[gateway][service]") {
  testing::temp_dir dir;
  testing::write_text(dir.file("gateway.json"), R"({"pid": 31337, "port": 18789, "bind": "127.0.0.1", "startedAt": 1})");
  storage::fake_process_probe probe;  // pid 31337 does not exist there
  auto st = run_in_process({"gateway", "status", "--state-dir", dir.path()}, &probe);
  CHECK(st.code == 1);
  CHECK(has(st.out, "not running"));
  CHECK(has(st.out, "names pid 31337, which is not running (a stale record"));
  auto stop = run_in_process({"gateway", "stop", "--state-dir", dir.path()}, &probe);
  CHECK(stop.code == 0);
  CHECK(has(stop.out, "nothing to stop"));
  testing::write_text(dir.file("gateway.json"), "{not json");
  auto bad = run_in_process({"gateway", "status", "--state-dir", dir.path()}, &probe);
  CHECK(bad.code == 1);
  CHECK(has(bad.out, "gateway.json is not a JSON object"));
}

TEST_CASE("gateway service: status and stop against a running sessionrt gateway child process", "[gateway][service]") {
  testing::temp_dir dir;
  const std::string state = dir.file("state");
  notify_socket notify(dir.file("notify.sock"));
  child gw;
  start_child(gw, kSessionrt,
              {"gateway", "--state-dir", state, "--port", "0", "--log-file", dir.file("logs/gateway.log"),
               "--log-format", "json"},
              dir.file("gateway.stderr"), {"NOTIFY_SOCKET=" + notify.path});
  const std::string first = gw.line();  // "sessionrt gateway listening on ws://127.0.0.1:N (state ...)"
  INFO(first << testing::read_text(dir.file("gateway.stderr")));
  REQUIRE(has(first, "sessionrt gateway listening on ws://127.0.0.1:"));
  const std::string url = first.substr(first.find("ws://"), first.find(" (state") - first.find("ws://"));
  // Type=notify: systemd hears READY=1 once the port is bound.
  const std::string ready = notify.receive(30000);
  CHECK(has(ready, "READY=1"));
  CHECK(has(ready, "STATUS=listening on " + url));
  CHECK(has(ready, "MAINPID=" + std::to_string(gw.pid)));

  auto st = run_in_process({"gateway", "status", "--state-dir", state});
  INFO(st.out << st.err);
  CHECK(st.code == 0);
  CHECK(has(st.out, "sessionrt gateway: running (pid " + std::to_string(gw.pid) + ")"));
  CHECK(has(st.out, "url:     " + url));
  CHECK(has(st.out, "health:  ok (GET /healthz"));
  CHECK(has(st.out, "(up "));
  auto js = run_in_process({"gateway", "status", "--state-dir", state, "--json"});
  CHECK(js.code == 0);
  auto v = bj::parse(js.out).as_object();
  CHECK(json::get_bool(v, "running") == true);
  CHECK(json::get_bool(v, "healthy") == true);
  CHECK(json::get_int(v, "pid") == gw.pid);
  CHECK(json::get_string(v, "url") == url);
  CHECK(json::get_int(v, "uptimeMs").value_or(-1) >= 0);
  REQUIRE(v.contains("health"));
  CHECK(json::get_bool(v.at("health").as_object(), "ok") == true);
  // The verb's options also work before it.
  CHECK(run_in_process({"gateway", "--state-dir", state, "status"}).code == 0);

  auto stop = run_in_process({"gateway", "stop", "--state-dir", state, "--timeout", "60"});
  INFO(stop.out << stop.err);
  CHECK(stop.code == 0);
  CHECK(has(stop.out, "sessionrt gateway: stopped (pid " + std::to_string(gw.pid) + ", "));
  CHECK(gw.wait() == 0);  // SIGTERM is a clean stop
  CHECK_FALSE(testing::exists(state + "/gateway.json"));
  CHECK(notify.receive(5000) == "STOPPING=1");

  auto after = run_in_process({"gateway", "status", "--state-dir", state});
  CHECK(after.code == 1);
  CHECK(has(after.out, "not running"));

  // The log file: JSON lines, the start and the stop.
  const auto lines = testing::split_lines(testing::read_text(dir.file("logs/gateway.log")));
  bool listening = false, stopped = false;
  for (const auto& l : lines) {
    INFO(l);
    boost::system::error_code ec;
    auto o = bj::parse(l, ec);
    REQUIRE_FALSE(ec);
    const std::string msg(json::get_string(o.as_object(), "msg").value_or(""));
    listening = listening || has(msg, "listening on " + url);
    stopped = stopped || msg == "stopped";
  }
  CHECK(listening);
  CHECK(stopped);
}

TEST_CASE("gateway service: a bad --log-level or an unwritable --log-file stops the gateway before it starts", "[gateway][service]") {
  testing::temp_dir dir;
  auto bad = run_in_process({"gateway", "--state-dir", dir.path(), "--port", "0", "--log-level", "loud"});
  CHECK(bad.code == 2);
  CHECK(has(bad.err, "log level \"loud\" is not one of trace, debug, info, warn, error, off"));
  testing::write_text(dir.file("plain"), "");
  auto file = run_in_process({"gateway", "--state-dir", dir.path(), "--port", "0", "--log-file", dir.file("plain") + "/x.log"});
  CHECK(file.code == 2);
  CHECK(has(file.err, dir.file("plain")));
  CHECK_FALSE(testing::exists(dir.file("gateway.json")));
}

TEST_CASE("gateway service: ExecStart words are quoted as systemd parses them", "[gateway][service]") {
  CHECK(gateway::systemd_quote("/usr/bin/sessionrt") == "/usr/bin/sessionrt");
  CHECK(gateway::systemd_quote("/srv/my state") == "\"/srv/my state\"");
  CHECK(gateway::systemd_quote("100%") == "100%%");
  CHECK(gateway::systemd_quote("$HOME/x") == "$$HOME/x");
  CHECK(gateway::systemd_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(gateway::systemd_quote("") == "\"\"");
}

TEST_CASE("gateway service: install writes a systemd unit that runs this binary with the chosen options", "[gateway][service]") {
  testing::temp_dir dir;
  const std::string unit = dir.file("units/sessionrt-gateway.service");
  testing::write_text(dir.file("config.json"), "{}");
  auto r = run_to_end(kSessionrt,
                      {"gateway", "install", "--output", unit, "--state-dir", dir.file("my state"), "--config",
                       dir.file("config.json"), "--port", "18790", "--log-level", "debug"},
                      dir.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "wrote " + unit));
  const std::string text = testing::read_text(unit);
  INFO(text);
  const std::string exe = std::filesystem::canonical(kSessionrt).string();
  CHECK(has(text, "\nExecStart=" + exe + " gateway run --state-dir \"" + dir.file("my state") + "\" --config " +
                      dir.file("config.json") + " --port 18790 --log-level debug\n"));
  for (const char* line : {"[Unit]\n", "[Service]\n", "Type=notify\n", "Restart=on-failure\n", "KillSignal=SIGTERM\n",
                           "TimeoutStopSec=", "SyslogIdentifier=sessionrt-gateway\n", "[Install]\n",
                           "WantedBy=default.target\n"})
    CHECK(has(text, line));
  CHECK(has(text, "EnvironmentFile=-" + dir.file("my state") + "/gateway.env\n"));
  CHECK_FALSE(has(text, "User="));
  CHECK_FALSE(has(text, "--token"));

  // --print writes nothing and prints the same unit; an existing file wants --force.
  auto printed = run_to_end(kSessionrt,
                            {"gateway", "install", "--print", "--state-dir", dir.file("my state"), "--config",
                             dir.file("config.json"), "--port", "18790", "--log-level", "debug"},
                            dir.path());
  CHECK(printed.code == 0);
  CHECK(printed.out == text);
  auto again = run_to_end(kSessionrt, {"gateway", "install", "--output", unit, "--state-dir", dir.path()}, dir.path());
  CHECK(again.code == 2);
  CHECK(has(again.err, "exists; pass --force"));
  auto forced = run_to_end(kSessionrt, {"gateway", "install", "--output", unit, "--state-dir", dir.path(), "--force"},
                           dir.path());
  CHECK(forced.code == 0);
  CHECK(has(testing::read_text(unit), "ExecStart=" + exe + " gateway run --state-dir " + dir.path() + "\n"));

  // A system unit runs as a named user after the network.
  const std::string sys_unit = dir.file("system/sessionrt-gateway.service");
  auto sys = run_to_end(kSessionrt,
                        {"gateway", "install", "--system", "--run-as", "nobody", "--output", sys_unit, "--state-dir",
                         dir.path()},
                        dir.path());
  CHECK(sys.code == 0);
  const std::string sys_text = testing::read_text(sys_unit);
  CHECK(has(sys_text, "\nUser=nobody\n"));
  CHECK(has(sys_text, "\nWantedBy=multi-user.target\n"));
  CHECK(has(sys_text, "\nAfter=network-online.target\n"));

  // --user writes under $XDG_CONFIG_HOME (else ~/.config).
  auto user = run_in_process({"gateway", "install", "--state-dir", dir.path(), "--print"});
  CHECK(user.code == 0);
  CHECK(has(user.out, "WantedBy=default.target"));
}

TEST_CASE("gateway service: the installed unit passes systemd-analyze verify", "[gateway][service]") {
  // scripts/setup.sh installs the systemd package, which has it: its absence is a set-up error.
  if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0)
    FAIL("systemd-analyze not found: run scripts/setup.sh (it installs the systemd package)");
  testing::temp_dir dir;
  for (const char* scope : {"--user", "--system"}) {
    INFO(scope);
    const std::string unit = dir.file(std::string(scope + 2) + "/sessionrt-gateway.service");
    std::vector<std::string> args{"gateway", "install", scope, "--output", unit, "--state-dir", dir.file("state 100%"),
                                  "--port", "18790", "--log-file", dir.file("log/gw.log"), "--log-format", "json"};
    if (std::string(scope) == "--system") args.insert(args.end(), {"--run-as", "sessionrt"});
    auto r = run_to_end(kSessionrt, args, dir.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    // Verified as a system unit: `--user verify` needs a user manager, which a CI container lacks.
    const std::string cmd = "systemd-analyze verify '" + unit + "' > '" + dir.file("verify.txt") + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    const std::string said = testing::read_text(dir.file("verify.txt"));
    INFO(testing::read_text(unit) << "\nsystemd-analyze said:\n" << said);
    CHECK(rc == 0);
    CHECK(said.empty());  // it warns about a bad line without failing: nothing may be said
  }
}
