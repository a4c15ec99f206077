// `sessionrt config show|check [--config FILE]`: the effective settings (the file over the
// defaults, then the environment), and the loader's errors and warnings. `sessionrt config
// keys`: every key with its type, default and meaning (docs/config.md is its output).
#include <fmt/format.h>

#include <memory>
#include <ostream>

#include "app/cli/command_line.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "runtime/config.hpp"

namespace sessionrt::runtime {
namespace {

void show_command(const offline_options& o, cli_state& st) {
  auto ctx = open_offline(st.io, o, false);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  *st.io.out << json::to_pretty(settings_to_json(ctx->settings)) << "\n";
  st.exit_code = 0;
}

void check_command(const offline_options& o, bool as_json, cli_state& st) {
  auto ctx = open_offline(st.io, o, false);
  if (as_json) {
    boost::json::array warnings;
    if (ctx.ok())
      for (const auto& w : ctx->config_warnings) warnings.emplace_back(w);
    boost::json::object out{{"path", o.config_file.empty() ? boost::json::value(nullptr) : boost::json::value(o.config_file)},
                            {"ok", ctx.ok()},
                            {"error", ctx.ok() ? boost::json::value(nullptr) : boost::json::value(ctx.error().message())},
                            {"warnings", std::move(warnings)}};
    *st.io.out << json::to_pretty(out) << "\n";
    st.exit_code = !ctx.ok() ? 2 : ctx->config_warnings.empty() ? 0 : 1;
    return;
  }
  if (!ctx.ok()) return fail(st, ctx.error());
  if (o.config_file.empty())
    *st.io.out << "no config file given (--config FILE): the defaults apply\n";
  else
    *st.io.out << fmt::format("{}: valid\n", o.config_file);
  for (const auto& w : ctx->config_warnings) *st.io.out << "warning: " << w << "\n";
  if (!ctx->config_warnings.empty()) *st.io.out << fmt::format("{} warning(s)\n", ctx->config_warnings.size());
  st.exit_code = ctx->config_warnings.empty() ? 0 : 1;
}

}  // namespace

void add_config_commands(CLI::App& app, cli_state& st) {
  auto* c = app.add_subcommand("config", "Show, check or list the keys of the runtime's config file");
  c->require_subcommand(1);
  auto so = std::make_shared<offline_options>();
  auto* show = c->add_subcommand("show", "Print the effective settings as JSON: the file over the defaults, then the "
                                         "environment (SESSIONRT_STATE_DIR, write-lock variables)");
  add_offline_options(show, *so, false);
  show->callback([so, &st] { show_command(*so, st); });
  auto co = std::make_shared<offline_options>();
  auto json = std::make_shared<bool>(false);
  auto* check = c->add_subcommand("check", "Load the config file and report its error (exit 2) or warnings (exit 1)");
  add_offline_options(check, *co, false);
  check->add_flag("--json", *json, "Print {path, ok, error, warnings} as JSON");
  check->callback([co, json, &st] { check_command(*co, *json, st); });
  auto* keys = c->add_subcommand("keys", "Print every config key with its type, default and meaning: the markdown of "
                                         "docs/config.md (no --config)");
  keys->callback([&st] {
    *st.io.out << config_keys_markdown();
    st.exit_code = 0;
  });
}

}  // namespace sessionrt::runtime
