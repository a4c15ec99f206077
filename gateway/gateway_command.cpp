#include "gateway/gateway_command.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <ostream>

#include "gateway/gateway_server.hpp"
#include "gateway/gateway_service.hpp"
#include "runtime/config.hpp"
#include "runtime/logging.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::gateway {

namespace {

// Every option of `gateway`, `gateway run` and the verbs, bound to one place: an option given
// before the verb (`gateway --state-dir X status`) and after it count alike.
struct args {
  std::string state_dir, config, bind = "127.0.0.1", token, log_level, log_file, log_format;
  int port = 18789;
  bool json = false, openclaw = false;
  double timeout_s = -1;  // -1: the verb's default
  bool user = false, system = false, print = false, force = false;
  std::string output, run_as;
  std::string control_ui;  // --control-ui DIR
  // The options that were given (each may be registered on several commands).
  std::vector<CLI::Option*> bind_opts, port_opts, level_opts, file_opts, format_opts;
};

bool given(const std::vector<CLI::Option*>& opts) {
  for (auto* o : opts)
    if (o->count()) return true;
  return false;
}

void add_place_options(CLI::App* cmd, args& a) {
  cmd->add_option("--state-dir", a.state_dir,
                  "state directory (default: the config's stateDir, $SESSIONRT_STATE_DIR, $OPENCLAW_STATE_DIR, ~/.sessionrt)");
  cmd->add_option("--config", a.config,
                  "the runtime's config file, JSON5 (default $SESSIONRT_CONFIG, else $OPENCLAW_CONFIG_PATH)");
  cmd->add_flag("--openclaw", a.openclaw,
                "use what OpenClaw itself would: its state dir ($OPENCLAW_STATE_DIR, ~/.openclaw) and its config "
                "($OPENCLAW_CONFIG_PATH, <state>/openclaw.json)");
}

void add_run_options(CLI::App* cmd, args& a, bool with_token) {
  add_place_options(cmd, a);
  a.bind_opts.push_back(cmd->add_option(
      "--bind", a.bind, "address to listen on (default gateway.bind, 127.0.0.1); beyond loopback clients want wss:// (a TLS proxy)"));
  a.port_opts.push_back(
      cmd->add_option("--port", a.port, "port (default gateway.port, 18789; 0: any free port)")->check(CLI::Range(0, 65535)));
  if (with_token)
    cmd->add_option("--token", a.token,
                    "auth token (else $SESSIONRT_GATEWAY_TOKEN, the config's gateway.auth.token, <state>/gateway.token)");
  if (with_token)
    cmd->add_option("--control-ui", a.control_ui,
                    "serve OpenClaw's web Control UI from DIR (default gateway.controlUi.root, else an installed openclaw's dist/control-ui)");
  a.level_opts.push_back(cmd->add_option("--log-level", a.log_level,
                                         "trace | debug | info | warn | error | off (default logging.level, info)"));
  a.file_opts.push_back(cmd->add_option(
      "--log-file", a.log_file, "also log to this file, rotated by size (default logging.file: none)"));
  a.format_opts.push_back(
      cmd->add_option("--log-format", a.log_format, "text | json: one JSON object per line (default logging.format, text)"));
}

void fail(runtime::cli_state& st, const std::string& what) {
  *st.io.err << "sessionrt gateway: " << what << "\n";
  st.exit_code = 2;
}

// The settings, by the rule every command follows (runtime::load_command_config): --config,
// $SESSIONRT_CONFIG, $OPENCLAW_CONFIG_PATH, or with --openclaw what OpenClaw itself would use.
result<actors::runtime_settings> load_settings(runtime::cli_state& st, const args& a) {
  auto loaded = runtime::load_command_config(*st.io.files, a.config, st.io.env, a.openclaw);
  if (!loaded.ok()) return loaded.error();
  for (const auto& w : loaded->warnings) *st.io.err << "warning: " << w << "\n";
  return std::move(loaded->settings);
}

// --state-dir, else the config's stateDir, else $SESSIONRT_STATE_DIR / $OPENCLAW_STATE_DIR, else
// ~/.sessionrt (storage::default_state_dir): where
// `sessionrt gateway` with the same options keeps its state.
result<std::string> state_dir_of(runtime::cli_state& st, const args& a) {
  auto settings = load_settings(st, a);
  if (!settings.ok()) return settings.error();
  if (!a.state_dir.empty()) return a.state_dir;
  if (!settings->state_dir.empty()) return settings->state_dir;
  auto dir = storage::default_state_dir(st.io.env ? st.io.env : runtime::process_environment());
  if (!dir.ok()) return dir.error().with_context("finding the state dir (pass --state-dir)");
  return *dir;
}

std::chrono::milliseconds timeout_of(const args& a, double default_s) {
  const double s = a.timeout_s >= 0 ? a.timeout_s : default_s;
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000));
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

void run_gateway(args& a, runtime::cli_state& st, const gateway_extension& ext) {
  std::ostream& err = *st.io.err;
  gateway_options o;
  auto settings = load_settings(st, a);
  if (!settings.ok()) return fail(st, settings.error().message());
  o.runtime.settings = std::move(*settings);
  if (!a.state_dir.empty()) o.runtime.settings.state_dir = a.state_dir;
  if (o.runtime.settings.state_dir.empty()) {
    // The one rule (storage::default_state_dir), which `gateway status|stop` follow too.
    auto dir = storage::default_state_dir(st.io.env ? st.io.env : runtime::process_environment());
    if (!dir.ok()) return fail(st, dir.error().message());
    o.runtime.settings.state_dir = *dir;
  }

  // Logging first, so that everything from here on goes where the operator asked.
  actors::logging_settings log = o.runtime.settings.logging;
  if (given(a.level_opts)) log.level = a.log_level;
  if (given(a.file_opts)) log.file = a.log_file;
  if (given(a.format_opts)) log.format = a.log_format;
  if (auto configured = runtime::configure_logging(log); !configured.ok())
    return fail(st, configured.message() + " (--log-level, --log-format, --log-file or the config's logging.*)");

  const auto& gw = o.runtime.settings.gateway;
  o.bind = given(a.bind_opts) ? a.bind : gw.bind;
  const bool loopback = o.bind.rfind("127.", 0) == 0 || o.bind == "::1" || o.bind == "localhost";
  if (!loopback && !given(a.bind_opts))
    return fail(st, "gateway.bind " + o.bind + " is beyond loopback; pass --bind " + o.bind +
                        " to listen there (clients will want wss://)");
  o.port = given(a.port_opts) ? a.port : static_cast<int>(gw.port);
  o.token = a.token;
  o.control_ui_root = a.control_ui;
  o.find_installed_control_ui = true;
  o.config_token = gw.auth_token;
  o.max_connections = gw.max_connections;
  o.max_buffered_bytes = gw.max_buffered_bytes;
  o.max_payload = gw.max_payload;
  o.install_signal_handlers = true;
  // One log line per turn failure, repair, compaction, maintenance action and model fallback.
  o.runtime.subscriptions.push_back({runtime::log_event_filter(), runtime::log_event});
  if (ext.configure)
    if (status configured = ext.configure(o.runtime); !configured.ok()) return fail(st, configured.message());
  auto server = gateway_server::start(std::move(o));
  if (!server.ok()) {
    // stderr gets it below; the log file too, where an operator of a service looks.
    if (!log.file.empty()) spdlog::error("gateway: could not start: {}", server.error().message());
    return fail(st, server.error().message());
  }
  *st.io.out << "sessionrt gateway listening on " << (*server)->url() << " (state " << (*server)->rt().state_dir()
             << ")" << std::endl;
  std::function<status()> stop_beside;
  if (ext.start) {
    auto started = ext.start(**server);
    if (!started.ok()) {
      spdlog::error("gateway: could not start: {}", started.error().message());
      (void)(*server)->stop();
      return fail(st, started.error().message());
    }
    stop_beside = std::move(*started);
  }
  if (!notify_systemd("READY=1\nSTATUS=listening on " + (*server)->url() + "\nMAINPID=" + std::to_string(::getpid())))
    spdlog::warn("gateway: could not tell systemd it is ready ($NOTIFY_SOCKET)");
  (*server)->wait();
  (void)notify_systemd("STOPPING=1");
  spdlog::info("gateway: stopping");
  status beside = stop_beside ? stop_beside() : status();
  if (!beside.ok()) {
    spdlog::error("gateway: stop: {}", beside.message());
    err << "sessionrt gateway: stop: " << beside.message() << "\n";
  }
  auto stopped = (*server)->stop();
  if (!stopped.ok()) {
    spdlog::error("gateway: stop: {}", stopped.message());
    err << "sessionrt gateway: stop: " << stopped.message() << "\n";
    st.exit_code = 1;
    return;
  }
  spdlog::info("gateway: stopped");
  st.exit_code = beside.ok() ? 0 : 1;
}

}  // namespace

void add_gateway_command(CLI::App& app, runtime::cli_state& st) { add_gateway_command(app, st, {}); }

void add_gateway_command(CLI::App& app, runtime::cli_state& st, gateway_extension ext) {
  auto a = std::make_shared<args>();
  auto* cmd = app.add_subcommand(
      "gateway",
      "Run sessionrt as a gateway speaking OpenClaw's protocol (v4) on one port; `gateway status|stop|install` look "
      "after a running one");
  cmd->require_subcommand(0, 1);
  add_run_options(cmd, *a, true);
  if (ext.add_options) ext.add_options(cmd);

  auto* run = cmd->add_subcommand("run", "Run the gateway in the foreground (what `sessionrt gateway` alone does)");
  add_run_options(run, *a, true);
  if (ext.add_options) ext.add_options(run);

  auto* status_cmd = cmd->add_subcommand(
      "status", "Whether this state dir's gateway runs and answers /healthz: pid, url, uptime (exit 0 healthy, 1 not)");
  add_place_options(status_cmd, *a);
  status_cmd->add_flag("--json", a->json, "Print JSON");
  status_cmd->add_option("--timeout", a->timeout_s, "seconds to wait for /healthz (default 5)")->check(CLI::NonNegativeNumber);

  auto* stop_cmd = cmd->add_subcommand(
      "stop", "Send SIGTERM to this state dir's gateway and wait until it exits (exit 0 stopped or not running)");
  add_place_options(stop_cmd, *a);
  stop_cmd->add_flag("--json", a->json, "Print JSON");
  stop_cmd->add_option("--timeout", a->timeout_s, "seconds to wait for it to exit (default 60)")->check(CLI::NonNegativeNumber);

  auto* install = cmd->add_subcommand(
      "install",
      "Write a systemd unit that runs `sessionrt gateway run` with these options (--user: "
      "~/.config/systemd/user/sessionrt-gateway.service, the default; --system: /etc/systemd/system/)");
  add_run_options(install, *a, false);
  auto* user_flag = install->add_flag("--user", a->user, "a user service (the default)");
  install->add_flag("--system", a->system, "a system service (User= the invoking user, see --run-as)")->excludes(user_flag);
  auto* output = install->add_option("--output", a->output, "write the unit to this file instead");
  install->add_flag("--print", a->print, "print the unit instead of writing it")->excludes(output);
  install->add_flag("--force", a->force, "replace an existing unit file");
  install->add_option("--run-as", a->run_as, "User= of a --system unit (default $SUDO_USER, else you)");

  status_cmd->callback([a, &st] {
    auto dir = state_dir_of(st, *a);
    if (!dir.ok()) return fail(st, dir.error().message());
    st.exit_code = gateway_status_verb(st.io, *dir, a->json, timeout_of(*a, 5));
  });
  stop_cmd->callback([a, &st] {
    auto dir = state_dir_of(st, *a);
    if (!dir.ok()) return fail(st, dir.error().message());
    st.exit_code = gateway_stop_verb(st.io, *dir, a->json, timeout_of(*a, 60));
  });
  install->callback([a, &st] {
    auto dir = state_dir_of(st, *a);
    if (!dir.ok()) return fail(st, dir.error().message());
    install_request rq;
    rq.system = a->system;
    rq.output = a->output;
    rq.print = a->print;
    rq.force = a->force;
    rq.run_as = a->run_as;
    rq.state_dir = *dir;
    // Paths made absolute: the service does not start in this directory.
    if (!a->config.empty()) rq.run_args.insert(rq.run_args.end(), {"--config", absolute(a->config)});
    if (a->openclaw) rq.run_args.push_back("--openclaw");
    if (given(a->bind_opts)) rq.run_args.insert(rq.run_args.end(), {"--bind", a->bind});
    if (given(a->port_opts)) rq.run_args.insert(rq.run_args.end(), {"--port", std::to_string(a->port)});
    if (given(a->level_opts)) {
      if (!runtime::parse_log_level(a->log_level))
        return fail(st, "--log-level \"" + a->log_level + "\" is not one of " + std::string(runtime::log_level_names));
      rq.run_args.insert(rq.run_args.end(), {"--log-level", a->log_level});
    }
    if (given(a->file_opts)) rq.run_args.insert(rq.run_args.end(), {"--log-file", absolute(a->log_file)});
    if (given(a->format_opts)) {
      if (!runtime::parse_log_format(a->log_format))
        return fail(st, "--log-format \"" + a->log_format + "\" is not one of " + std::string(runtime::log_format_names));
      rq.run_args.insert(rq.run_args.end(), {"--log-format", a->log_format});
    }
    st.exit_code = gateway_install_verb(st.io, rq);
  });
  // `sessionrt gateway` and `sessionrt gateway run`; the verbs ran in their own callbacks.
  cmd->callback([a, &st, status_cmd, stop_cmd, install, ext] {
    if (status_cmd->parsed() || stop_cmd->parsed() || install->parsed()) return;
    run_gateway(*a, st, ext);
  });
}

}  // namespace sessionrt::gateway
