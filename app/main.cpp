#include "app/cli/command_line.hpp"
#include "app/command_groups.hpp"

int main(int argc, char** argv) {
  using namespace sessionrt;
  return runtime::run_cli(argc, argv, runtime::process_cli_io(), app::command_groups());
}
