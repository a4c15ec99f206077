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

}  // namespace sessionrt::runtime
