// Runs the `sessionrt` command line in-process for the CLI tests: argv in, exit code and the
// text of stdout / stderr out, on the files of a test, with a manual clock at fixture_now.
#pragma once
#include <boost/json.hpp>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/command_line.hpp"
#include "messages/json_reader.hpp"
#include "tests/actors/maintenance/maintenance_fixture.hpp"

namespace sessionrt::testing {

struct cli_run {
  int code = 0;
  std::string out;
  std::string err;
  boost::json::object json() const {
    auto v = sessionrt::json::parse(out);
    if (!v.ok() || !v->is_object()) throw std::runtime_error("stdout is not a JSON object: " + out);
    return v->as_object();
  }
};

inline cli_run run_cli_with(storage::fs& files, std::vector<std::string> args, std::int64_t now = fixture_now) {
  manual_clock clock(now);
  std::ostringstream out, err;
  runtime::cli_io io;
  io.files = &files;
  io.time = &clock;
  io.probe = &storage::real_process_probe();
  io.env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  io.out = &out;
  io.err = &err;
  args.insert(args.begin(), "sessionrt");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int code = runtime::run_cli(static_cast<int>(argv.size()), argv.data(), io);
  return {code, out.str(), err.str()};
}

inline cli_run run_cli_args(std::vector<std::string> args, std::int64_t now = fixture_now) {
  return run_cli_with(storage::posix_fs(), std::move(args), now);
}

}  // namespace sessionrt::testing
