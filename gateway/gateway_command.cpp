#include "gateway/gateway_command.hpp"

namespace sessionrt::gateway {
void add_gateway_command(CLI::App&, runtime::cli_state&) {}
}  // namespace sessionrt::gateway
