// The `sessionrt` command line: one CLI11 app whose subcommands are registered by the files
// beside this one (one file per command group). Commands print results on stdout, progress
// and errors on stderr, and return the process exit code: 0 ok, 1 the command ran and found
// problems, 2 bad usage or an error that stopped it.
// The offline commands (sessions, status, security, config) take their files, clock, process
// probe, environment and streams from cli_io, so tests run them in-process on a temp dir with
// a manual clock; run_cli(argc, argv) uses the real ones. Progress (a count and a rate) goes to
// err only when cli_io::progress is set (by default: stderr is a terminal).
#pragma once
#include <CLI/CLI.hpp>
#include <boost/json/value.hpp>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// A command group registered from outside this library (the gateway, the simulator).
using command_adder = void (*)(CLI::App& app, cli_state& st);

// Every command on `app`: the runtime's, then `extra`'s; --version, --help-all. run_cli uses it;
// tests walk the commands it adds.
void add_all_commands(CLI::App& app, cli_state& st, const std::vector<command_adder>& extra = {});

// Parses argv and runs the command. A word or option no command takes is named with the
// closest command or option of the command it was given to ("unknown command 'sesions'; did
// you mean 'sessions'?"), exit 2.
int run_cli(int argc, char** argv);
int run_cli(int argc, char** argv, const cli_io& io, const std::vector<command_adder>& extra = {});

// For suggestions: the candidate closest to `word` by config_values.hpp's closest_key (a few
// edits, a swap of neighbours counting one, or 4+ characters that begin the other).
std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& candidates);

// Every command takes --config FILE (the runtime's config file), except those whose
// description says "(no --config)": they read no settings.
inline constexpr const char* reads_no_settings = "Reads no settings (no --config)";

void add_transcript_commands(CLI::App& app, cli_state& st);
void add_store_commands(CLI::App& app, cli_state& st);
void add_sessions_commands(CLI::App& app, cli_state& st);  // sessions, sessions cleanup
void add_status_command(CLI::App& app, cli_state& st);
void add_security_commands(CLI::App& app, cli_state& st);  // security audit
void add_config_commands(CLI::App& app, cli_state& st);    // config show|check
void add_models_commands(CLI::App& app, cli_state& st);    // models list|status [--probe]
void add_openclaw_commands(CLI::App& app, cli_state& st);  // import openclaw, export openclaw

}  // namespace sessionrt::runtime
