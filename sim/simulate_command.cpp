#include "sim/simulate_command.hpp"

namespace sessionrt::sim {
void add_simulate_command(CLI::App&, runtime::cli_state&) {}
}  // namespace sessionrt::sim
