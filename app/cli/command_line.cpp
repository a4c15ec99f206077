#include "app/cli/command_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "runtime/cli/version.hpp"
#include "runtime/config_values.hpp"

namespace sessionrt::runtime {

int run_cli(int argc, char** argv) { return run_cli(argc, argv, process_cli_io()); }

std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string_view> names(candidates.begin(), candidates.end());
  auto best = closest_key(word, names);  // the config's typo rule, one rule for every suggestion
  return best ? std::optional<std::string>(*best) : std::nullopt;
}

namespace {

// "sessionrt sessions cleanup" for the subcommand `app` (its parents' names first).
std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a && a->get_parent(); a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

// The message for a word or an option CLI11 did not expect, with the closest command or
// option of the command it was given to; nullopt when the error is not about such a token.
std::optional<std::string> unknown_token_message(const CLI::App& app) {
  const CLI::App* cur = &app;
  for (;;) {
    auto parsed = cur->get_subcommands();
    if (parsed.empty()) break;
    cur = parsed.back();
  }
  // The first token nobody took, from the deepest command given back up to the top.
  std::string token;
  for (const CLI::App* a = cur; a && token.empty(); a = a->get_parent()) {
    auto rest = a->remaining(false);
    if (!rest.empty()) token = rest.front();
  }
  if (token.empty()) return std::nullopt;
  const std::string where = command_path(cur);
  const std::string full = where.empty() ? "sessionrt" : "sessionrt " + where;
  if (token.size() > 1 && token[0] == '-') {
    std::string name = token.substr(0, token.find('='));
    std::vector<std::string> names;
    for (const CLI::Option* o : cur->get_options()) {
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
      for (const auto& s : o->get_snames()) names.push_back("-" + s);
    }
    auto best = closest_word(name, names);
    if (best)
      return fmt::format("unknown option '{}' for `{}`; did you mean '{}'? (`{} --help` lists its options)", name, full,
                         *best, full);
    return fmt::format("unknown option '{}' for `{}` (`{} --help` lists its options)", name, full, full);
  }
  std::vector<std::string> commands;
  for (const CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; }))
    if (!s->get_name().empty()) commands.push_back(s->get_name());
  if (commands.empty())
    return fmt::format("unexpected argument '{}' for `{}` (`{} --help` says what it takes)", token, full, full);
  const std::string prefix = where.empty() ? "" : where + " ";
  auto best = closest_word(token, commands);
  if (best) return fmt::format("unknown command '{}{}'; did you mean '{}{}'?", prefix, token, prefix, *best);
  std::string list;
  for (const auto& c : commands) list += (list.empty() ? "" : ", ") + c;
  return fmt::format("unknown command '{}{}'; the commands of `{}` are: {}", prefix, token, full, list);
}

}  // namespace

void add_all_commands(CLI::App& app, cli_state& st, const std::vector<command_adder>& extra) {
  app.set_help_all_flag("--help-all", "Show help for every command");
  app.set_version_flag("--version", std::string("sessionrt ") + version_string(), "Print the version and exit");
  app.require_subcommand(1);
  add_transcript_commands(app, st);
  add_store_commands(app, st);
  add_sessions_commands(app, st);
  add_status_command(app, st);
  add_security_commands(app, st);
  add_config_commands(app, st);
  add_models_commands(app, st);
  add_openclaw_commands(app, st);
  for (auto add : extra) add(app, st);
}

int run_cli(int argc, char** argv, const cli_io& io, const std::vector<command_adder>& extra) {
  CLI::App app{"sessionrt: chat sessions on disk, in the OpenClaw / pi file format.\n"
               "Files: <state>/agents/<agentId>/sessions/sessions.json and <sessionId>.jsonl"};
  cli_state st;
  st.io = io;
  add_all_commands(app, st, extra);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      if (auto message = unknown_token_message(app)) {
        *io.err << "sessionrt: " << *message << "\n";
        return 2;
      }
    }
    int rc = app.exit(e, *io.out, *io.err);
    return rc == 0 ? 0 : 2;
  }
  return st.exit_code;
}

}  // namespace sessionrt::runtime
