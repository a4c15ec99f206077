// `sessionrt simulate SCENARIO.json ...`: registered by the executable's main.
#pragma once
#include "runtime/cli/cli.hpp"

namespace sessionrt::sim {
void add_simulate_command(CLI::App& app, runtime::cli_state& st);
}
