// `sessionrt store check|rewrite PATH` (filled in with the sessions.json store).
#include "runtime/cli/cli.hpp"

namespace sessionrt::runtime {
void add_store_commands(CLI::App&, cli_state&) {}
}  // namespace sessionrt::runtime
