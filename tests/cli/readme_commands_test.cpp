// The README's command lines tell the truth: every `build/sessionrt ...` line names commands
// that exist, options they take (one of the alternatives, for `list|status [--probe]`), and a
// positional (KEY, FILE, TEXT...) only where the command takes one.
#include <catch2/catch.hpp>

#include <cctype>
#include <set>

#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {
namespace {

const CLI::App* subcommand_of(const CLI::App& app, const std::string& name) {
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    if (s->get_name() == name) return s;
  return nullptr;
}

bool takes_positional(const CLI::App& app) {
  return !app.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

// One README line after "build/sessionrt ", its comment removed; the problems found.
std::vector<std::string> check_line(const CLI::App& top, const std::string& line) {
  std::vector<std::string> problems;
  std::string text = line.substr(0, line.find("  #"));
  for (char& c : text)
    if (c == '[' || c == ']' || c == '|') c = ' ';
  std::vector<std::string> tokens;
  std::istringstream in(text);
  for (std::string t; in >> t;) tokens.push_back(t);
  std::vector<const CLI::App*> cur = {&top};
  bool after_command = true;                // the previous word chose the commands in `cur`
  const CLI::Option* last_option = nullptr;  // an option that takes a value, just seen
  for (const auto& t : tokens) {
    // `show check` (from show|check): alternatives of the same command; `... | tail`: a new one.
    // A subcommand of the current command, else (right after a command) an alternative beside
    // it, else a command of its own.
    std::vector<const CLI::App*> next;
    bool alternative = false;
    for (const CLI::App* a : cur)
      if (const CLI::App* s = subcommand_of(*a, t)) next.push_back(s);
    if (next.empty() && after_command && cur.front()->get_parent())
      if (const CLI::App* s = subcommand_of(*cur.front()->get_parent(), t)) {
        next.push_back(s);
        alternative = true;
      }
    if (next.empty())
      if (const CLI::App* s = subcommand_of(top, t)) next.push_back(s);
    if (!next.empty()) {
      if (alternative)
        cur.insert(cur.end(), next.begin(), next.end());
      else
        cur = next;
      after_command = true;
      last_option = nullptr;
      continue;
    }
    after_command = false;
    if (t[0] == '-') {  // an option of the command (of one of its alternatives: `list|status [--probe]`)
      last_option = nullptr;
      bool found = false;
      for (const CLI::App* a : cur)
        if (const CLI::Option* o = a->get_option_no_throw(t)) {
          found = true;
          if (o->get_items_expected_max() > 0) last_option = o;
        }
      if (!found) problems.push_back("`" + t + "` is not an option of `sessionrt " + cur.front()->get_name() + "`");
      continue;
    }
    const bool placeholder = std::isupper(static_cast<unsigned char>(t[0])) != 0;
    if (placeholder && !last_option)
      for (const CLI::App* a : cur)
        if (!takes_positional(*a))
          problems.push_back("`sessionrt " + a->get_name() + "` takes no positional argument, the README gives it " + t);
    last_option = nullptr;
  }
  return problems;
}

}  // namespace

TEST_CASE("the README's sessionrt command lines name real commands, options and positionals", "[cli]") {
  CLI::App app;
  runtime::cli_state st;
  std::ostringstream out, err;
  st.io = test_cli_io(out, err);
  runtime::add_all_commands(app, st, sessionrt_command_groups());

  std::size_t checked = 0;
  for (const auto& line : split_lines(read_text(std::string(SESSIONRT_SOURCE_DIR) + "/README.md"))) {
    const std::string prefix = "build/sessionrt ";
    if (line.rfind(prefix, 0) != 0) continue;
    INFO(line);
    CHECK(check_line(app, line.substr(prefix.size())) == std::vector<std::string>{});
    ++checked;
  }
  CHECK(checked >= 15);

  // The check itself: the README's old line is caught.
  CHECK(check_line(app, "compact KEY | tail KEY --lines 3") ==
        std::vector<std::string>{"`--lines` is not an option of `sessionrt tail`"});
  CHECK(check_line(app, "sessions cleanup KEY").size() == 1);
  CHECK(check_line(app, "config show|check [--config FILE]").empty());
}

}  // namespace sessionrt::testing
