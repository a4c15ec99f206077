// `sessionrt security audit [--json]`: where the routing config lets one person's context reach
// another (SPEC §2), judged by actors::audit_dm_scope over the config and the rows of the
// stores. Read-only. Exit 1 when a finding is warn or critical.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <ostream>

#include "actors/router/dm_scope_audit.hpp"
#include "app/cli/command_line.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"

namespace sessionrt::runtime {
namespace {

struct audit_options {
  offline_options where;
  bool json = false;
};

void audit_command(audit_options o, cli_state& st) {
  if (o.where.store.empty() && o.where.agent.empty()) o.where.all_agents = true;  // people cross agents
  auto ctx = open_offline(st.io, o.where);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  std::vector<storage::parsed_store> loaded;
  std::vector<const offline_store*> read;
  for (const auto& store : ctx->stores) {
    auto parsed = read_store_readonly(st.io, store);
    if (!parsed.ok()) {
      if (parsed.error().code() == errc::not_found && o.where.store.empty()) continue;
      return fail(st, parsed.error());
    }
    loaded.push_back(std::move(*parsed));
    read.push_back(&store);
  }
  std::vector<actors::stored_session_row> rows;
  for (const auto& p : loaded)
    for (auto r : p.store) rows.push_back({r.key, &r.entry});
  auto findings = actors::audit_dm_scope(ctx->settings.routing, rows);
  std::size_t counts[3] = {0, 0, 0};
  for (const auto& f : findings) ++counts[static_cast<int>(f.severity)];
  if (o.json) {
    boost::json::array list;
    for (const auto& f : findings) {
      boost::json::array keys;
      for (const auto& k : f.evidence_keys) keys.emplace_back(k);
      list.push_back(boost::json::object{{"severity", std::string(actors::to_string(f.severity))},
                                         {"check", f.check},
                                         {"message", f.message},
                                         {"fix", f.fix},
                                         {"evidenceKeys", std::move(keys)}});
    }
    boost::json::array stores;
    for (const auto* s : read) stores.push_back(boost::json::object{{"agentId", s->agent_id}, {"path", s->path}});
    *st.io.out << json::to_pretty(boost::json::object{
                      {"stores", std::move(stores)},
                      {"summary", boost::json::object{{"critical", counts[2]}, {"warn", counts[1]}, {"info", counts[0]}}},
                      {"findings", std::move(list)}})
               << "\n";
  } else {
    *st.io.out << fmt::format("Security audit: {} critical, {} warn, {} info ({} store(s), {} row(s))\n", counts[2],
                              counts[1], counts[0], read.size(), rows.size());
    if (findings.empty())
      *st.io.out << "No evidence of context shared between people (the store keeps only the latest sender per "
                    "row: this is not a proof of isolation).\n";
    std::stable_sort(findings.begin(), findings.end(),
                     [](const auto& a, const auto& b) { return a.severity > b.severity; });
    for (const auto& f : findings) {
      std::string sev(actors::to_string(f.severity));
      std::transform(sev.begin(), sev.end(), sev.begin(), [](unsigned char c) { return std::toupper(c); });
      *st.io.out << fmt::format("\n{} {}\n  {}\n  fix: {}\n", sev, f.check, f.message, f.fix);
      if (!f.evidence_keys.empty()) {
        std::string keys;
        for (const auto& k : f.evidence_keys) keys += (keys.empty() ? "" : ", ") + k;
        *st.io.out << "  evidence: " << keys << "\n";
      }
    }
  }
  st.exit_code = counts[1] + counts[2] > 0 ? 1 : 0;
}

}  // namespace

void add_security_commands(CLI::App& app, cli_state& st) {
  auto* s = app.add_subcommand("security", "Security checks of the config and the stores (offline, read-only)");
  s->require_subcommand(1);
  auto o = std::make_shared<audit_options>();
  auto* a = s->add_subcommand("audit",
                              "Where the routing config (session.dmScope, identityLinks, bindings) lets one person's "
                              "context reach another, with the fix. Reads every agent's store unless --store / "
                              "--agent. Exit 1 on a warn or critical finding");
  add_offline_options(a, o->where);
  a->add_flag("--json", o->json, "Print {stores, summary, findings: [{severity, check, message, fix, evidenceKeys}]}");
  a->callback([o, &st] { audit_command(*o, st); });
}

}  // namespace sessionrt::runtime
