// `sessionrt import openclaw` and `sessionrt export openclaw`: moving sessions between an OpenClaw
// 2026.8+ state dir (per-agent SQLite, runtime/openclaw/) and a sessionrt state dir. Exit codes:
// 0 everything moved, 1 the command ran but some session or agent failed (each named on
// stderr), 2 nothing could be done (bad options, no source).
#include <fmt/format.h>

#include <functional>
#include <memory>

#include "app/cli/command_line.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "runtime/openclaw/openclaw_export.hpp"
#include "runtime/openclaw/openclaw_import.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::runtime {
namespace {

// The sessions an import or export could not carry over, for --json (both reports' errors
// have agent, key, session_id and error).
template <class Error>
boost::json::array session_errors_json(const std::vector<Error>& errors) {
  boost::json::array out;
  for (const auto& e : errors)
    out.push_back(boost::json::object{{"agent", e.agent}, {"key", e.key}, {"sessionId", e.session_id},
                                      {"code", errc_name(e.error.code())}, {"error", e.error.message()}});
  return out;
}

namespace bj = boost::json;

// The failures of an import or export on stderr, a line per session and per agent ("verb" is
// "import" or "export"), whatever the output format.
template <class Report>
void print_failures(cli_state& st, const char* verb, const Report& rep) {
  for (const auto& e : rep.errors)
    *st.io.err << fmt::format("sessionrt: {}: agent {} session {} ({}): {}\n", verb, e.agent, e.key, e.session_id,
                              e.error.message());
  for (const auto& a : rep.agents)
    if (!a.error.ok()) *st.io.err << fmt::format("sessionrt: {}: agent {}: {}\n", verb, a.agent_id, a.error.message());
}


std::string rate_text(std::uint64_t n, std::int64_t ms, const char* unit) {
  const double s = std::max<std::int64_t>(ms, 1) / 1000.0;
  return fmt::format("{:.0f} {}/s", n / s, unit);
}

// The state dir a command names, else the one rule (storage::default_state_dir).
result<std::string> state_dir_of(const std::string& given, const cli_state& st) {
  if (!given.empty()) return given;
  return storage::default_state_dir(st.io.env);
}

// A progress line per agent ("importing main: sessions 40/120"), on a terminal only; the line of
// the previous agent ends when the next begins.
class agent_progress {
 public:
  agent_progress(const cli_io& io, std::string verb) : io_(io), verb_(std::move(verb)) {}
  void operator()(const std::string& agent, std::size_t done, std::size_t total) {
    if (!io_.progress) return;
    if (!meter_ || agent_ != agent) {
      meter_.reset();
      meter_ = std::make_unique<progress_meter>(io_, verb_ + " " + agent + ": sessions");
      agent_ = agent;
    }
    meter_->update(done, total);
  }
  void finish() { meter_.reset(); }

 private:
  const cli_io& io_;
  std::string verb_, agent_;
  std::unique_ptr<progress_meter> meter_;
};

struct import_opts {
  std::string from, state_dir, agent;
  bool json = false, no_fsync = false;
};

void import_command(const import_opts& o, cli_state& st) {
  auto resolved = state_dir_of(o.state_dir, st);
  if (!resolved.ok()) return fail(st, resolved.error());
  const std::string state_dir = *resolved;
  if (storage::path_join(state_dir, "") == storage::path_join(o.from, ""))
    return fail(st, status(errc::invalid_argument,
                           "import openclaw: the state dir to write is the OpenClaw dir read (" + o.from +
                               "): pass --state-dir (with $OPENCLAW_STATE_DIR set, the default state dir is OpenClaw's)"));
  openclaw::import_options io;
  io.from_dir = o.from;
  io.state_dir = state_dir;
  io.agent = o.agent;
  io.durable = !o.no_fsync;
  agent_progress progress(st.io, "importing");
  io.progress = std::ref(progress);
  auto rep = openclaw::import_openclaw(*st.io.files, *st.io.time, *st.io.probe, io);
  progress.finish();
  if (!rep.ok()) return fail(st, rep.error());
  print_failures(st, "import", *rep);
  if (o.json) {
    bj::array agents;
    for (const auto& a : rep->agents)
      agents.push_back(bj::object{{"agent", a.agent_id},
                                  {"database", a.db_path},
                                  {"store", a.store_path},
                                  {"sessions", a.sessions},
                                  {"imported", a.imported},
                                  {"updated", a.updated},
                                  {"skipped", a.skipped},
                                  {"failed", a.failed},
                                  {"entries", a.entries},
                                  {"bytes", a.bytes},
                                  {"bytesRead", a.bytes_read},
                                  {"elapsedMs", a.elapsed_ms},
                                  {"error", a.error.ok() ? bj::value(nullptr) : bj::value(a.error.message())}});
    bj::array errors = session_errors_json(rep->errors);
    *st.io.out << json::to_pretty(bj::object{{"from", o.from}, {"stateDir", state_dir}, {"agents", std::move(agents)},
                                             {"errors", std::move(errors)}, {"ok", rep->ok()}})
               << "\n";
  } else {
    for (const auto& a : rep->agents) {
      if (!a.error.ok()) {
        *st.io.out << fmt::format("agent {}: failed ({})\n", a.agent_id, errc_name(a.error.code()));
        continue;
      }
      *st.io.out << fmt::format(
          "agent {}: {} sessions: {} imported, {} updated, {} already imported, {} failed; {} entries, {}\n"
          "  {} -> {}\n  {} ms ({}, {})\n",
          a.agent_id, a.sessions, a.imported, a.updated, a.skipped, a.failed, a.entries, bytes_text(a.bytes),
          a.db_path, a.store_path, a.elapsed_ms, rate_text(a.entries, a.elapsed_ms, "entries"),
          fmt::format("{:.1f} MB/s", a.bytes_read / 1e6 / (std::max<std::int64_t>(a.elapsed_ms, 1) / 1000.0)));
    }
  }
  st.exit_code = rep->ok() ? 0 : 1;
}

struct export_opts {
  std::string state_dir, to, agent;
  bool json = false;
};

void export_command(const export_opts& o, cli_state& st) {
  auto resolved = state_dir_of(o.state_dir, st);
  if (!resolved.ok()) return fail(st, resolved.error());
  const std::string state_dir = *resolved;
  openclaw::export_options eo;
  eo.state_dir = state_dir;
  eo.to_dir = o.to;
  eo.agent = o.agent;
  agent_progress progress(st.io, "exporting");
  eo.progress = std::ref(progress);
  auto rep = openclaw::export_openclaw(*st.io.files, *st.io.time, eo);
  progress.finish();
  if (!rep.ok()) return fail(st, rep.error());
  print_failures(st, "export", *rep);
  if (o.json) {
    bj::array agents;
    for (const auto& a : rep->agents)
      agents.push_back(bj::object{{"agent", a.agent_id},
                                  {"store", a.store_path},
                                  {"database", a.db_path},
                                  {"sessions", a.sessions},
                                  {"failed", a.failed},
                                  {"entries", a.entries},
                                  {"bytes", a.bytes},
                                  {"skippedLines", a.skipped_lines},
                                  {"error", a.error.ok() ? bj::value(nullptr) : bj::value(a.error.message())}});
    bj::array errors = session_errors_json(rep->errors);
    *st.io.out << json::to_pretty(bj::object{{"stateDir", state_dir}, {"to", o.to}, {"agents", std::move(agents)},
                                             {"errors", std::move(errors)}, {"ok", rep->ok()}})
               << "\n";
  } else {
    for (const auto& a : rep->agents) {
      if (!a.error.ok()) {
        *st.io.out << fmt::format("agent {}: failed ({})\n", a.agent_id, errc_name(a.error.code()));
        continue;
      }
      *st.io.out << fmt::format("agent {}: {} sessions exported, {} failed; {} entries, {}{}\n  {} -> {}\n", a.agent_id,
                                a.sessions, a.failed, a.entries, bytes_text(a.bytes),
                                a.skipped_lines ? fmt::format(" ({} unreadable lines left out)", a.skipped_lines) : "",
                                a.store_path, a.db_path);
    }
  }
  st.exit_code = rep->ok() ? 0 : 1;
}

}  // namespace

void add_openclaw_commands(CLI::App& app, cli_state& st) {
  auto* imp = app.add_subcommand("import", std::string("Bring sessions from another program into a sessionrt state dir. ") +
                                               reads_no_settings);
  imp->require_subcommand(1);
  auto io = std::make_shared<import_opts>();
  auto* ioc = imp->add_subcommand(
      "openclaw",
      "Import an OpenClaw 2026.8+ state dir (agents/<id>/agent/openclaw-agent.sqlite, read-only) into sessions.json + "
      "<sessionId>.jsonl files. Resumable: a second run finishes an interrupted one and duplicates nothing. Exit 1 when "
      "a session or agent failed (each is named; the others are imported)");
  ioc->add_option("--from", io->from, "The OpenClaw state dir (OPENCLAW_STATE_DIR, ~/.openclaw)")->required();
  ioc->add_option("--state-dir", io->state_dir, "The sessionrt state dir to write (default $SESSIONRT_STATE_DIR or ~/.sessionrt)");
  ioc->add_option("--agent", io->agent, "Only this agent");
  ioc->add_flag("--json", io->json, "Print the report as JSON");
  ioc->add_flag("--no-fsync", io->no_fsync, "Do not fsync the files written (faster; not crash-safe)");
  ioc->callback([io, &st] { import_command(*io, st); });

  auto* exp = app.add_subcommand("export", std::string("Write sessions in another program's format. ") + reads_no_settings);
  exp->require_subcommand(1);
  auto eo = std::make_shared<export_opts>();
  auto* eoc = exp->add_subcommand(
      "openclaw",
      "Export a sessionrt state dir as OpenClaw 2026.9 agent databases (<to>/agents/<id>/agent/openclaw-agent.sqlite), "
      "which `openclaw sessions` lists; an existing database is never replaced");
  eoc->add_option("--state-dir", eo->state_dir, "The sessionrt state dir to read (default $SESSIONRT_STATE_DIR or ~/.sessionrt)");
  eoc->add_option("--to", eo->to, "The OpenClaw state dir to write (OPENCLAW_STATE_DIR)")->required();
  eoc->add_option("--agent", eo->agent, "Only this agent");
  eoc->add_flag("--json", eo->json, "Print the report as JSON");
  eoc->callback([eo, &st] { export_command(*eo, st); });
}

}  // namespace sessionrt::runtime
