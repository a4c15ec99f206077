#include "runtime/cli/cli.hpp"

#include <unistd.h>

#include <iostream>

#include "runtime/config.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::runtime {

cli_io process_cli_io() {
  cli_io io;
  io.files = &storage::posix_fs();
  io.time = &storage::real_clock();
  io.probe = &storage::real_process_probe();
  io.env = process_environment();
  io.out = &std::cout;
  io.err = &std::cerr;
  io.progress = ::isatty(STDERR_FILENO) == 1;
  return io;
}

int run_cli(int argc, char** argv) { return run_cli(argc, argv, process_cli_io()); }

int run_cli(int argc, char** argv, const cli_io& io, const std::vector<command_adder>& extra) {
  CLI::App app{"sessionrt: chat sessions on disk, in the OpenClaw / pi file format.\n"
               "Files: <state>/agents/<agentId>/sessions/sessions.json and <sessionId>.jsonl"};
  app.set_help_all_flag("--help-all", "Show help for every command");
  app.require_subcommand(1);
  cli_state st;
  st.io = io;
  add_transcript_commands(app, st);
  add_store_commands(app, st);
  add_sessions_commands(app, st);
  add_status_command(app, st);
  add_security_commands(app, st);
  add_config_commands(app, st);
  add_models_commands(app, st);
  for (auto add : extra) add(app, st);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e, *io.out, *io.err);
    return rc == 0 ? 0 : 2;
  }
  return st.exit_code;
}

}  // namespace sessionrt::runtime
