// `sessionrt gateway ...`: registered by the executable's main (the runtime's CLI cannot see
// this library, which sits above it).
#pragma once
#include "runtime/cli/cli.hpp"

namespace sessionrt::gateway {
void add_gateway_command(CLI::App& app, runtime::cli_state& st);
}
