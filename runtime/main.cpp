#include "runtime/cli/cli.hpp"

int main(int argc, char** argv) { return sessionrt::runtime::run_cli(argc, argv); }
