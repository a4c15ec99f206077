#include "sim/simulate_command.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>

#include "messages/json_writer.hpp"
#include "sim/report_html.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_run.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::sim {

namespace {

struct simulate_options {
  std::string scenario_path, report_path, json_path, state_dir;
  std::optional<std::uint64_t> seed;
  bool quiet = false;
  bool on_disk = false;
  bool force = false;
};

constexpr std::size_t kMaxScenarioBytes = 8u << 20;

result<std::string> read_file(storage::fs& files, const std::string& path) {
  auto fd = files.open(path, O_RDONLY, 0);
  if (!fd) return fd.error();
  auto info = files.fstat(*fd);
  if (info && info->size > kMaxScenarioBytes) {
    (void)files.close(*fd);
    return status(errc::limit_exceeded, fmt::format("{}: a scenario file is at most {} bytes", path, kMaxScenarioBytes));
  }
  auto text = storage::pread_all(files, *fd, kMaxScenarioBytes, 0);
  (void)files.close(*fd);
  return text;
}

// What makes `dir` a real state dir a simulation must not write into: each agent's
// sessions.json that has rows (or does not parse), and transcripts (*.jsonl) beside it. Empty
// when there is none (a missing dir, or one with empty stores only).
std::vector<std::string> existing_sessions(storage::fs& files, const std::string& dir) {
  std::vector<std::string> found;
  auto agents = files.list_dir(dir + "/agents");
  if (!agents) return found;
  std::sort(agents->begin(), agents->end());
  for (const auto& agent : *agents) {
    const std::string sessions = dir + "/agents/" + agent + "/sessions";
    auto names = files.list_dir(sessions);
    if (!names) continue;
    std::size_t transcripts = 0;
    for (const auto& n : *names)
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".jsonl") == 0) ++transcripts;
    const std::string store = sessions + "/sessions.json";
    if (files.stat(store).ok()) {
      auto text = storage::read_file(files, store, std::size_t(1) << 30);
      auto parsed = text ? storage::load_from_text(*text) : result<storage::parsed_store>(text.error());
      if (!parsed)
        found.push_back(fmt::format("{} (does not parse: {})", store, parsed.error().message()));
      else if (parsed->store.size() > 0)
        found.push_back(fmt::format("{} ({} session row(s))", store, parsed->store.size()));
    }
    if (transcripts > 0) found.push_back(fmt::format("{} ({} transcript(s))", sessions, transcripts));
  }
  return found;
}

bool write_out(const std::string& path, const std::string& text, std::ostream& err) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    err << "sessionrt simulate: cannot write " << path << "\n";
    return false;
  }
  return true;
}

void simulate(const simulate_options& o, runtime::cli_state& st) {
  auto& out = *st.io.out;
  auto& err = *st.io.err;
  auto text = read_file(*st.io.files, o.scenario_path);
  if (!text) {
    err << "sessionrt simulate: " << text.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  auto sc = parse_scenario(*text);
  if (!sc) {
    err << "sessionrt simulate: " << o.scenario_path << ": " << sc.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  for (const auto& w : sc->config_warnings) err << "sessionrt simulate: warning: config: " << w << "\n";
  if (!o.state_dir.empty() && !o.force) {
    auto found = existing_sessions(*st.io.files, o.state_dir);
    if (!found.empty()) {
      err << "sessionrt simulate: --state-dir " << o.state_dir
          << " already holds sessions; a simulation would write its simulated users' sessions into these stores "
             "beside them:\n";
      for (const auto& f : found) err << "  " << f << "\n";
      err << "Nothing was written. Give an empty or new dir, or --force to run in it anyway (the simulated sessions "
             "are added to its stores; the existing rows and transcripts stay).\n";
      st.exit_code = 2;
      return;
    }
  }
  run_options ro;
  ro.seed = o.seed;
  ro.state_dir = o.state_dir;
  ro.on_disk = o.on_disk;
  if (!o.quiet) ro.progress = [&err](const std::string& line) { err << "\r" << line << "   " << std::flush; };
  auto run = run_scenario(*sc, ro);
  if (!o.quiet) err << "\n";
  if (!run) {
    err << "sessionrt simulate: " << run.error().message() << "\n";
    st.exit_code = 2;
    return;
  }
  const std::string json_text = json::to_pretty(boost::json::value(run->report)) + "\n";
  bool wrote = true;
  if (!o.json_path.empty()) wrote &= write_out(o.json_path, json_text, err);
  if (!o.report_path.empty()) wrote &= write_out(o.report_path, render_report_html(run->report), err);
  const auto& s = run->report.at("summary").as_object();
  const auto& r = s.at("resets").as_object();
  out << fmt::format("scenario {} (seed {}): {} turns, {} sessions, {} model calls\n", sc->name,
                     boost::json::serialize(run->report.at("seed")), boost::json::serialize(s.at("turns")),
                     boost::json::serialize(s.at("sessions")), boost::json::serialize(s.at("modelCalls")));
  out << fmt::format("resets: daily {}, idle {}, new {}, reset {}; compactions {}, memory flushes {}, suppressed {}, "
                     "maintenance actions {}; faults {}, crashes {}\n",
                     boost::json::serialize(r.at("daily")), boost::json::serialize(r.at("idle")),
                     boost::json::serialize(r.at("new")), boost::json::serialize(r.at("reset")),
                     boost::json::serialize(s.at("compactions")), boost::json::serialize(s.at("memoryFlushes")),
                     boost::json::serialize(s.at("suppressedReplies")), boost::json::serialize(s.at("maintenanceActions")),
                     boost::json::serialize(s.at("faults")), boost::json::serialize(s.at("crashes")));
  const auto& ex = s.at("expectations").as_object();
  out << fmt::format("expectations: {} passed, {} failed\n", boost::json::serialize(ex.at("passed")),
                     boost::json::serialize(ex.at("failed")));
  for (const auto& f : run->failures) out << "FAILED " << f << "\n";
  if (!o.report_path.empty()) out << "report: " << o.report_path << "\n";
  if (!o.json_path.empty()) out << "json: " << o.json_path << "\n";
  if (!o.state_dir.empty()) out << "state: " << o.state_dir << "\n";
  st.exit_code = run->failed > 0 || !wrote ? 1 : 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, runtime::cli_state& st) {
  auto o = std::make_shared<simulate_options>();
  auto* s = app.add_subcommand("simulate",
                               std::string("Run a scenario file on a virtual clock: scripted steps and/or a generated "
                                           "workload, faults and crashes, expectations; exit 1 when an expectation "
                                           "fails. Its settings are the scenario's \"config\" object: it reads no config file "
                                           "(no --config)"));
  s->add_option("scenario", o->scenario_path, "The scenario file (JSON; see examples/scenarios/)")->required();
  s->add_option("--report", o->report_path, "Write the HTML report here");
  s->add_option("--json", o->json_path, "Write the report JSON here (byte-identical for one scenario and seed)");
  s->add_option("--seed", o->seed, "Seed of the model's latencies and failures, the workload and the power losses "
                                    "(default: the scenario's seed)");
  auto* state_dir = s->add_option("--state-dir", o->state_dir,
                                  "Write the runtime's files in this dir and keep them (default: they live in memory for "
                                  "the run). A dir that already holds sessions (rows in a sessions.json, transcripts) is "
                                  "refused unless --force");
  s->add_flag("--force", o->force,
              "With --state-dir: run even when the dir already holds sessions; the simulated sessions are written "
              "into its stores beside the existing ones")
      ->needs(state_dir);
  s->add_flag("--on-disk", o->on_disk,
              "Write the runtime's files in a temp dir on disk, removed afterwards (the same report; slower)")
      ->excludes(state_dir);
  s->add_flag("--quiet", o->quiet, "No progress line on stderr");
  s->callback([o, &st] { simulate(*o, st); });
}

}  // namespace sessionrt::sim
