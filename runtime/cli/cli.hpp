// The command-group framework of the `sessionrt` command line: what a library registers its
// commands with (command_adder), the state its commands share (cli_state) and the I/O they use
// (cli_io). The executable and its own command groups are above every library, in app/
// (app/cli/command_line.hpp: run_cli, the typo suggestions); the gateway, the simulator and the
// cluster register their groups through this header without reaching up to app/.
// Commands print results on stdout, progress and errors on stderr, and set the process exit
// code: 0 ok, 1 the command ran and found problems, 2 bad usage or an error that stopped it.
// The offline commands (sessions, status, security, config) take their files, clock, process
// probe, environment and streams from cli_io, so tests run them in-process on a temp dir with
// a manual clock; process_cli_io() gives the real ones. Progress (a count and a rate) goes to
// err only when cli_io::progress is set (by default: stderr is a terminal).
#pragma once
#include <CLI/CLI.hpp>
#include <boost/json/value.hpp>
#include <iosfwd>
#include <optional>
#include <string>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/process_probe.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::runtime {

struct cli_io {
  storage::fs* files = nullptr;
  clock* time = nullptr;
  storage::process_probe* probe = nullptr;
  storage::env_lookup env;  // SESSIONRT_STATE_DIR, HOME, ...
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  bool progress = false;
};
// The process's own: posix_fs, real clock and probe, the environment, std::cout / std::cerr,
// progress when stderr is a terminal.
cli_io process_cli_io();

// Calls `method` on the live gateway serving `state_dir`, if one is (its <state>/gateway.json
// names a live pid and the port answers): nullopt when none is (the command then works on the
// files), else the payload or the gateway's error. `token` "" = $SESSIONRT_GATEWAY_TOKEN, else
// <state>/gateway.token. Registered by gateway/remote_commands.cpp through the executable (this
// library cannot link the gateway); null = always offline.
using gateway_caller = std::optional<result<boost::json::value>> (*)(const cli_io& io, const std::string& state_dir,
                                                                      const std::string& token, const std::string& method,
                                                                      const boost::json::value& params);

// Shared by the command groups: where each command's exit code goes, and the I/O it uses.
struct cli_state {
  int exit_code = 0;
  cli_io io;
  gateway_caller gateway = nullptr;
};

// A command group registered from outside the application's own (the gateway, the simulator,
// the cluster): adds its subcommands to `app`, which run_cli then parses.
using command_adder = void (*)(CLI::App& app, cli_state& st);

// Every command takes --config FILE (the runtime's config file), except those whose
// description says "(no --config)": they read no settings.
inline constexpr const char* reads_no_settings = "Reads no settings (no --config)";

}  // namespace sessionrt::runtime
