#include "runtime/cli/cli.hpp"

#include <iostream>

namespace sessionrt::runtime {

int run_cli(int argc, char** argv) {
  CLI::App app{"sessionrt: chat sessions on disk, in the OpenClaw / pi file format.\n"
               "Files: <state>/agents/<agentId>/sessions/sessions.json and <sessionId>.jsonl"};
  app.set_help_all_flag("--help-all", "Show help for every command");
  app.require_subcommand(1);
  cli_state st;
  add_transcript_commands(app, st);
  add_store_commands(app, st);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return st.exit_code;
}

}  // namespace sessionrt::runtime
