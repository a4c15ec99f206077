// offline_stores: what the offline commands (sessions, status, security audit) share: the
// --config / --store / --state-dir / --agent / --all-agents options, which stores they name,
// reading a store without changing it, who owns a store (its write lock, taken by a running
// runtime), and progress on a terminal.
// - stores: --store PATH is that one file (agent id from its path, else "main"); otherwise the
//   state dir is --state-dir, else the config's stateDir (which SESSIONRT_STATE_DIR fills),
//   else ~/.sessionrt; --agent ID is that agent, --all-agents every configured agent plus
//   every <state>/agents/<id> dir with a sessions.json, and the default agent otherwise.
// - read_store_readonly: a missing file is errc::not_found naming the path and the options
//   that choose it; a file that does not parse is the loader's error, plus how to repair it.
//   Nothing is written, ever (no quarantine, no migration).
// - store_owner: the live holder of the store's write lock, or nullopt (no lock, or a stale
//   one a new owner would remove).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/runtime_settings.hpp"
#include "runtime/cli/cli.hpp"
#include "storage/session_store_file.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::runtime {

struct offline_options {
  std::string config_file;
  std::string store;
  std::string state_dir;
  std::string agent;
  bool all_agents = false;
  bool openclaw = false;  // --openclaw: OpenClaw's own state dir and config
};
// --config always; the store selection options when `select_stores`.
void add_offline_options(CLI::App* cmd, offline_options& options, bool select_stores = true);

struct offline_store {
  std::string agent_id;
  std::string path;          // sessions.json
  std::string sessions_dir;  // its directory
};

struct offline_context {
  actors::runtime_settings settings;
  std::vector<std::string> config_warnings;
  std::string config_path;  // "" = defaults
  std::vector<offline_store> stores;
  bool aggregate = false;  // --all-agents
  std::string state_dir;   // the state dir the stores are in ("" with --store)
};

// Loads the config (--config) and, when `resolve_stores`, resolves the stores; never touches a
// store file.
result<offline_context> open_offline(const cli_io& io, const offline_options& options, bool resolve_stores = true);

result<storage::parsed_store> read_store_readonly(const cli_io& io, const offline_store& store);

result<std::optional<storage::lock_inspection>> store_owner(const cli_io& io, const std::string& store_path);

// "sessionrt: <message>" on err, exit code 2.
void fail(cli_state& st, const status& error);
// "sessionrt: warning: <w>" on err for each config warning.
void print_config_warnings(cli_state& st, const offline_context& ctx);

// A count and a rate on err ("\r<what> 40000/200000 (51234/s)"), at most every 200 ms, when
// io.progress; finish() ends the line.
class progress_meter {
 public:
  progress_meter(const cli_io& io, std::string what);
  ~progress_meter();
  void update(std::size_t done, std::size_t total);
  void finish();

 private:
  const cli_io& io_;
  std::string what_;
  std::int64_t started_ms_ = 0;
  std::int64_t last_ms_ = 0;
  bool shown_ = false;
};

// Human text shared by the tables.
std::string age_text(std::int64_t age_ms);     // "just now", "5m ago", "3h ago", "31d ago"
std::string bytes_text(std::uint64_t bytes);   // "812 B", "12.3 KB", "4.0 GB" (1024-based)
std::string fit_key(std::string_view key, std::size_t width = 26);  // key[0:16] + "..." + key[-6:]
std::string pad(std::string_view text, std::size_t width);          // text, then spaces to width (and one more)

}  // namespace sessionrt::runtime
