// gateway_service: `sessionrt gateway status | stop | install`, the verbs that look after a
// gateway running as a service (as OpenClaw's `openclaw gateway status|stop|install`), and the
// pieces they are made of.
// - The record: a running gateway writes <state>/gateway.json {pid, port, bind, startedAt}
//   (gateway_server.hpp) and removes it when it stops. read_gateway_record() reads it.
// - probe_healthz(): GET /healthz on the recorded port, over a plain TCP socket with a deadline.
// - status: the record, whether its pid is alive, and the health answer. Exit 0 when the
//   gateway runs and answers {"ok": true}; 1 when it is not running (no record, or a stale one
//   whose pid is gone) or does not answer healthy, saying which; --json prints one object.
// - stop: SIGTERM to the recorded pid (only when the pid looks like this state dir's gateway:
//   its port answers /healthz or its command line is a sessionrt gateway's), then waits until
//   the process is gone (a pidfd, bounded by --timeout) and reports how long it took. Exit 0
//   when it stopped or nothing was running; 1 when it is still running at the deadline or the
//   pid is not the gateway's.
// - install: a systemd unit (Type=notify, Restart=on-failure, KillSignal=SIGTERM) whose
//   ExecStart is this executable's absolute path with `gateway run` and the chosen
//   --state-dir (always, resolved to an absolute path), --config, --bind, --port and --log-*;
//   --user (default) writes ~/.config/systemd/user/sessionrt-gateway.service, --system
//   /etc/systemd/system/sessionrt-gateway.service (with User=), --output FILE elsewhere,
//   --print to stdout. An existing file is replaced only with --force.
// - notify_systemd(): sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET (what a
//   Type=notify service sends once it listens: READY=1, and STOPPING=1 when it stops).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "messages/status.hpp"
#include "runtime/cli/cli.hpp"

namespace sessionrt::gateway {

struct gateway_record {
  std::int64_t pid = 0;
  int port = 0;
  std::string bind = "127.0.0.1";
  std::int64_t started_at_ms = 0;  // 0 when the record has none
  std::string url() const;         // ws://bind:port ([v6])
  std::string probe_host() const;  // where to connect: bind, or loopback for a wildcard bind
};

// nullopt when the file does not exist; an error when it cannot be read or is not a record.
result<std::optional<gateway_record>> read_gateway_record(storage::fs& files, const std::string& state_dir);

struct health_answer {
  bool answered = false;        // an HTTP answer came
  int http_status = 0;
  boost::json::object body;     // the JSON body (/healthz: ok, uptimeMs, connections, port, protocol)
  std::string error;            // why nothing (usable) came
  bool healthy() const;         // 200 and {"ok": true}
};
health_answer probe_healthz(const std::string& host, int port, std::chrono::milliseconds timeout);

// Waits until `pid` is gone (exited: a zombie counts as gone), at most `timeout`. True when it is.
bool wait_for_exit(std::int64_t pid, std::chrono::milliseconds timeout, const storage::process_probe& probe);

// sd_notify(3): sends `state` ("READY=1", "STOPPING=1", ...) to $NOTIFY_SOCKET when it is set.
// False when it is set and the message could not be sent; true otherwise.
bool notify_systemd(const std::string& state);

struct unit_options {
  std::string exe;         // absolute path of the sessionrt executable
  std::vector<std::string> args;  // after the executable: gateway run --state-dir ...
  std::string state_dir;   // absolute; for EnvironmentFile=-<state>/gateway.env
  bool system = false;     // a system unit: User=, network-online.target, multi-user.target
  std::string user;        // User= of a system unit ("" = none: root)
};
std::string systemd_unit_text(const unit_options& options);
// One word of ExecStart as systemd.service(5) parses it: quoted when it has to be, with `%` and
// `$` doubled so that neither specifiers nor variables are expanded.
std::string systemd_quote(const std::string& word);

// The verbs, on resolved arguments (gateway_command.cpp parses them); each returns the exit
// code and writes what it says on io.out (results) and io.err (errors).
int gateway_status_verb(const runtime::cli_io& io, const std::string& state_dir, bool json,
                        std::chrono::milliseconds timeout);
int gateway_stop_verb(const runtime::cli_io& io, const std::string& state_dir, bool json,
                      std::chrono::milliseconds timeout);
struct install_request {
  bool system = false;
  std::string output;   // "" = the default path of --user / --system
  bool print = false;   // print the unit instead of writing it
  bool force = false;   // replace an existing file
  std::string run_as;   // User= of a system unit ("" = $SUDO_USER, else the current user)
  std::string exe;      // "" = this executable (/proc/self/exe)
  std::vector<std::string> run_args;  // --config, --bind, ... for ExecStart (after --state-dir)
  std::string state_dir;              // as resolved; made absolute
};
int gateway_install_verb(const runtime::cli_io& io, const install_request& request);

}  // namespace sessionrt::gateway
