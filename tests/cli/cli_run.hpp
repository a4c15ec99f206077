// Runs the whole `sessionrt` command line in-process, with every command group the executable
// registers (app/main.cpp: the application's own, then app/command_groups.hpp: the gateway's, the
// remote commands, simulate, cluster), on the real files under a test's temp dir; stdout and
// stderr captured. The environment is empty (no $HOME, no $SESSIONRT_STATE_DIR): tests name
// their state dir.
#pragma once
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/command_line.hpp"
#include "app/command_groups.hpp"
#include "storage/process_probe.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::testing {

// The groups app/main.cpp passes to run_cli, the one list both use.
inline const std::vector<runtime::command_adder>& sessionrt_command_groups() { return app::command_groups(); }

inline runtime::cli_io test_cli_io(std::ostream& out, std::ostream& err) {
  runtime::cli_io io;
  io.files = &storage::posix_fs();
  io.time = &storage::real_clock();
  io.probe = &storage::real_process_probe();
  io.env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  io.out = &out;
  io.err = &err;
  return io;
}

struct sessionrt_run {
  int code = 0;
  std::string out;
  std::string err;
};

inline sessionrt_run run_sessionrt(std::vector<std::string> args) {
  std::ostringstream out, err;
  args.insert(args.begin(), "sessionrt");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int code = runtime::run_cli(static_cast<int>(argv.size()), argv.data(), test_cli_io(out, err), sessionrt_command_groups());
  return {code, out.str(), err.str()};
}

}  // namespace sessionrt::testing
