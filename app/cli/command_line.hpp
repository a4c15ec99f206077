// The `sessionrt` command line: one CLI11 app holding the application's own command groups (one
// file per group beside this one), then the groups of the libraries above the runtime that the
// executable passes in (app/command_groups.hpp). The framework those groups share, cli_io,
// cli_state and command_adder, is below in runtime/cli/cli.hpp, so that the gateway, the
// simulator and the cluster never include from app/.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/cli/cli.hpp"

namespace sessionrt::runtime {

// Every command on `app`: the application's, then `extra`'s; --version, --help-all. run_cli
// uses it; tests walk the commands it adds.
void add_all_commands(CLI::App& app, cli_state& st, const std::vector<command_adder>& extra = {});

// Parses argv and runs the command. A word or option no command takes is named with the
// closest command or option of the command it was given to ("unknown command 'sesions'; did
// you mean 'sessions'?"), exit 2. run_cli(argc, argv) uses process_cli_io() and no extra group.
int run_cli(int argc, char** argv);
int run_cli(int argc, char** argv, const cli_io& io, const std::vector<command_adder>& extra = {});

// For suggestions: the candidate closest to `word` by config_values.hpp's closest_key (a few
// edits, a swap of neighbours counting one, or 4+ characters that begin the other).
std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& candidates);

void add_transcript_commands(CLI::App& app, cli_state& st);
void add_store_commands(CLI::App& app, cli_state& st);
void add_sessions_commands(CLI::App& app, cli_state& st);  // sessions, sessions cleanup
void add_status_command(CLI::App& app, cli_state& st);
void add_security_commands(CLI::App& app, cli_state& st);  // security audit
void add_config_commands(CLI::App& app, cli_state& st);    // config show|check
void add_models_commands(CLI::App& app, cli_state& st);    // models list|status [--probe]
void add_openclaw_commands(CLI::App& app, cli_state& st);  // import openclaw, export openclaw

}  // namespace sessionrt::runtime
