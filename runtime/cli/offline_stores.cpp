#include "runtime/cli/offline_stores.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"
#include "runtime/config.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::runtime {

void add_offline_options(CLI::App* cmd, offline_options& o, bool select_stores) {
  cmd->add_option("--config", o.config_file,
                  "The runtime's config file (JSON5); its settings apply (default $SESSIONRT_CONFIG, else "
                  "$OPENCLAW_CONFIG_PATH, else none)");
  cmd->add_flag("--openclaw", o.openclaw,
                "Use what OpenClaw itself would: its state dir ($OPENCLAW_STATE_DIR, ~/.openclaw) and its config "
                "($OPENCLAW_CONFIG_PATH, <state>/openclaw.json)");
  if (!select_stores) return;
  auto* store = cmd->add_option("--store", o.store, "One sessions.json file, instead of the state dir's agents");
  cmd->add_option("--state-dir", o.state_dir,
                  "State dir (default: the config's stateDir, else $SESSIONRT_STATE_DIR, else $OPENCLAW_STATE_DIR, else "
                  "~/.sessionrt)")
      ->excludes(store);
  auto* agent = cmd->add_option("--agent", o.agent, "One agent of the state dir (default: the default agent)")
                    ->excludes(store);
  cmd->add_flag("--all-agents", o.all_agents, "Every agent of the state dir")->excludes(agent)->excludes(store);
}

namespace {

std::string agent_of_store_path(const std::string& path) {
  // <state>/agents/<agent>/sessions/sessions.json
  std::string dir = storage::path_dirname(path);
  if (storage::path_basename(dir) != "sessions") return std::string(actors::default_agent_id);
  std::string agent_dir = storage::path_dirname(dir);
  if (storage::path_basename(storage::path_dirname(agent_dir)) != "agents") return std::string(actors::default_agent_id);
  return storage::path_basename(agent_dir);
}

}  // namespace

result<offline_context> open_offline(const cli_io& io, const offline_options& o, bool resolve_stores) {
  offline_context ctx;
  // The rule every command follows (config.hpp load_command_config): --config, $SESSIONRT_CONFIG,
  // $OPENCLAW_CONFIG_PATH, or with --openclaw what OpenClaw itself would use.
  auto loaded = load_command_config(*io.files, o.config_file, io.env, o.openclaw);
  if (!loaded.ok()) return loaded.error();
  ctx.settings = std::move(loaded->settings);
  ctx.config_warnings = std::move(loaded->warnings);
  ctx.config_path = loaded->path;
  if (!resolve_stores) return ctx;
  if (!o.store.empty()) {
    ctx.stores.push_back({agent_of_store_path(o.store), o.store, storage::path_dirname(o.store)});
    return ctx;
  }
  std::string state = o.state_dir;
  if (state.empty()) state = ctx.settings.state_dir;
  if (state.empty()) {
    auto resolved = storage::resolve_state_dir(std::nullopt, io.env ? io.env("HOME") : std::nullopt);
    if (!resolved.ok()) return resolved.error().with_context("finding the state dir (pass --state-dir or --store)");
    state = *resolved;
  }
  ctx.state_dir = state;
  std::vector<std::string> agents;
  if (!o.agent.empty()) {
    agents.push_back(actors::normalize_agent_id(o.agent));
  } else if (o.all_agents) {
    ctx.aggregate = true;
    for (const auto& a : ctx.settings.routing.agents) agents.push_back(actors::normalize_agent_id(a.id));
    auto names = io.files->list_dir(storage::path_join(state, "agents"));
    if (names.ok()) {
      for (const auto& name : *names) {
        if (!storage::check_agent_id(name).ok()) continue;
        auto path = storage::store_path(state, name);
        if (path.ok() && io.files->stat(*path).ok()) agents.push_back(name);
      }
    } else if (names.error().code() != errc::not_found) {
      return names.error().with_context("listing the agents of the state dir");
    }
    std::sort(agents.begin(), agents.end());
    agents.erase(std::unique(agents.begin(), agents.end()), agents.end());
    if (agents.empty()) agents.push_back(actors::default_agent_of(ctx.settings.routing));
  } else {
    agents.push_back(actors::default_agent_of(ctx.settings.routing));
  }
  for (const auto& agent : agents) {
    auto path = storage::store_path(state, agent);
    if (!path.ok()) return path.error().with_context("--agent");
    auto dir = storage::agent_sessions_dir(state, agent);
    if (!dir.ok()) return dir.error();
    ctx.stores.push_back({agent, *path, *dir});
  }
  return ctx;
}

result<storage::parsed_store> read_store_readonly(const cli_io& io, const offline_store& store) {
  auto info = io.files->stat(store.path);
  if (!info.ok()) {
    if (info.error().code() == errc::not_found)
      return status(errc::not_found,
                    fmt::format("no session store at {}: the file does not exist (choose another with --store, "
                                "--state-dir or --agent; a runtime creates it on start)",
                                store.path));
    return info.error();
  }
  storage::store_file_options limits;
  auto text = storage::read_file(*io.files, store.path, limits.max_bytes);
  if (!text.ok()) return text.error().with_context("reading the session store");
  auto parsed = storage::load_from_text(*text, json::parse_limits{limits.max_bytes, limits.max_depth});
  if (!parsed.ok())
    return parsed.error().with_context(
        fmt::format("{} (nothing was changed; `sessionrt store check {}` says more, `sessionrt store rewrite` "
                    "sets an unreadable file aside and rebuilds it)",
                    store.path, store.path));
  return parsed;
}

result<std::optional<storage::lock_inspection>> store_owner(const cli_io& io, const std::string& store_path) {
  auto lock_path = storage::write_lock_path(*io.files, store_path);
  if (!lock_path.ok()) {
    if (lock_path.error().code() == errc::not_found) return std::optional<storage::lock_inspection>{};
    return lock_path.error();
  }
  auto seen = storage::inspect_lock(*io.files, *io.time, *io.probe, *lock_path);
  if (!seen.ok()) {
    if (seen.error().code() == errc::not_found) return std::optional<storage::lock_inspection>{};
    return seen.error();
  }
  if (seen->stale() && !seen->held_by_this_process) return std::optional<storage::lock_inspection>{};
  return std::optional<storage::lock_inspection>{std::move(*seen)};
}

void fail(cli_state& st, const status& error) {
  *st.io.err << "sessionrt: " << error.message() << "\n";
  st.exit_code = 2;
}

void print_config_warnings(cli_state& st, const offline_context& ctx) {
  for (const auto& w : ctx.config_warnings) *st.io.err << "sessionrt: warning: " << w << "\n";
}

progress_meter::progress_meter(const cli_io& io, std::string what) : io_(io), what_(std::move(what)) {
  started_ms_ = last_ms_ = io_.time->now_ms();
}

progress_meter::~progress_meter() { finish(); }

void progress_meter::update(std::size_t done, std::size_t total) {
  if (!io_.progress) return;
  const std::int64_t now = io_.time->now_ms();
  if (shown_ && now - last_ms_ < 200 && done < total) return;
  last_ms_ = now;
  const double secs = std::max<std::int64_t>(1, now - started_ms_) / 1000.0;
  *io_.err << fmt::format("\r{} {}/{} ({:.0f}/s)   ", what_, done, total, done / secs) << std::flush;
  shown_ = true;
}

void progress_meter::finish() {
  if (!shown_) return;
  *io_.err << "\n" << std::flush;
  shown_ = false;
}

std::string age_text(std::int64_t age_ms) {
  if (age_ms < 60000) return "just now";
  if (age_ms < 3600000) return fmt::format("{}m ago", age_ms / 60000);
  if (age_ms < 86400000) return fmt::format("{}h ago", age_ms / 3600000);
  return fmt::format("{}d ago", age_ms / 86400000);
}

std::string bytes_text(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const char* units[] = {"KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string fit_key(std::string_view key, std::size_t width) {
  if (key.size() <= width) return std::string(key);
  return std::string(key.substr(0, 16)) + "..." + std::string(key.substr(key.size() - 6));
}

std::string pad(std::string_view text, std::size_t width) {
  std::string out(text);
  if (out.size() < width) out.append(width - out.size(), ' ');
  out.push_back(' ');
  return out;
}

}  // namespace sessionrt::runtime
