// The `sessionrt` command line: one CLI11 app whose subcommands are registered by the files
// beside this one (one file per command group). Commands print results on stdout, progress
// and errors on stderr, and return the process exit code: 0 ok, 1 the command ran and found
// problems, 2 bad usage or an error that stopped it.
#pragma once
#include <CLI/CLI.hpp>

namespace sessionrt::runtime {

// Shared by the command groups: where each command's exit code goes.
struct cli_state {
  int exit_code = 0;
};

int run_cli(int argc, char** argv);

void add_transcript_commands(CLI::App& app, cli_state& st);
void add_store_commands(CLI::App& app, cli_state& st);

}  // namespace sessionrt::runtime
