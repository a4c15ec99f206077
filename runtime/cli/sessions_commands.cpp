// `sessionrt sessions [--json] [--active N] [--limit N|all]` [R§11.1] and
// `sessionrt sessions cleanup [--dry-run|--enforce] [--fix-missing] [--fix-dm-scope]
// [--active-key KEY] [--json]` [R§5.5], offline on the files of a state dir or one store.
// The listing and --dry-run never write. Cleanup applies its plan only under --enforce or
// session.maintenance.mode "enforce", holding the store's write lock, so it refuses while a
// runtime owns the store.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>

#include "actors/maintenance/maintenance_pass.hpp"
#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "actors/router/session_key.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/cli.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "runtime/cli/sessions_view.hpp"

namespace sessionrt::runtime {
namespace {

namespace bj = boost::json;

// ---- sessions (the listing) ----------------------------------------------------------------------

struct list_options {
  offline_options where;
  bool json = false;
  std::string active;  // minutes
  std::string limit = "100";
  std::string token;  // for a live gateway
};

// The rows of a live gateway's sessions.list, when one serves the state dir (and no --store or
// --all-agents names files): the same listing is then made from the runtime's own rows.
std::optional<result<std::vector<session_entry>>> rows_from_gateway(const list_options& o, const offline_context& ctx,
                                                                   cli_state& st) {
  if (!st.gateway || !o.where.store.empty() || o.where.all_agents) return std::nullopt;
  bj::object params{{"limit", std::int64_t{1} << 40}};
  if (!o.where.agent.empty()) params["agentId"] = o.where.agent;
  auto answer = st.gateway(st.io, ctx.state_dir, o.token, "sessions.list", params);
  if (!answer) return std::nullopt;
  if (!answer->ok()) return answer->error();
  const bj::array* sessions = answer->value().is_object() ? json::get_array(answer->value().as_object(), "sessions") : nullptr;
  if (!sessions) return status(errc::corrupt, "the gateway's sessions.list answer has no \"sessions\" array");
  std::vector<session_entry> out;
  for (const auto& row : *sessions)
    if (row.is_object()) out.emplace_back(row.as_object());
  return out;
}

void list_command(const list_options& o, cli_state& st) {
  std::optional<std::int64_t> active_minutes;
  if (!o.active.empty()) {
    active_minutes = parse_count(o.active);
    if (!active_minutes) {
      fail(st, status(errc::invalid_argument,
                      fmt::format("--active expects a whole number of minutes, got \"{}\"", o.active)));
      return;
    }
  }
  std::optional<std::int64_t> limit;
  if (o.limit != "all") {
    limit = parse_count(o.limit);
    if (!limit || *limit < 1) {
      fail(st, status(errc::invalid_argument,
                      fmt::format("--limit expects a whole number of rows (at least 1) or \"all\", got \"{}\"", o.limit)));
      return;
    }
  }
  auto ctx = open_offline(st.io, o.where);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  const std::int64_t now = st.io.time->now_ms();
  std::vector<listed_row> rows;
  std::vector<storage::parsed_store> loaded;
  loaded.reserve(ctx->stores.size());
  auto live = rows_from_gateway(o, *ctx, st);
  if (live && !live->ok()) return fail(st, live->error());
  if (live)
    for (const auto& e : live->value())
      rows.push_back({std::string(json::get_string(e.json(), "agentId").value_or(ctx->stores.front().agent_id)),
                      std::string(json::get_string(e.json(), "key").value_or("")), &e});
  for (const auto& store : ctx->stores) {
    if (live) break;
    auto parsed = read_store_readonly(st.io, store);
    if (!parsed.ok()) {
      if (ctx->aggregate && parsed.error().code() == errc::not_found) continue;
      return fail(st, parsed.error());
    }
    loaded.push_back(std::move(*parsed));
    for (auto r : loaded.back().store) rows.push_back({store.agent_id, std::string(r.key), &r.entry});
  }
  const std::size_t total = rows.size();
  if (active_minutes) {
    const std::int64_t window = *active_minutes * 60000;
    std::erase_if(rows, [&](const listed_row& r) {
      auto at = r.entry->updated_at();
      return !at || now - *at > window;
    });
  }
  std::stable_sort(rows.begin(), rows.end(), [](const listed_row& a, const listed_row& b) {
    return a.entry->updated_at().value_or(INT64_MIN) > b.entry->updated_at().value_or(INT64_MIN);
  });
  const std::size_t matching = rows.size();
  if (limit && rows.size() > static_cast<std::size_t>(*limit)) rows.resize(static_cast<std::size_t>(*limit));
  if (o.json) {
    bj::object out;
    out["path"] = ctx->aggregate ? bj::value(nullptr) : bj::value(ctx->stores.front().path);
    if (ctx->aggregate) {
      bj::array stores;
      for (const auto& s : ctx->stores) stores.push_back(bj::object{{"agentId", s.agent_id}, {"path", s.path}});
      out["stores"] = std::move(stores);
      out["allAgents"] = true;
    }
    out["count"] = rows.size();
    out["totalCount"] = total;
    out["limitApplied"] = limit ? bj::value(*limit) : bj::value(nullptr);
    out["hasMore"] = matching > rows.size();
    out["activeMinutes"] = active_minutes ? bj::value(*active_minutes) : bj::value(nullptr);
    bj::array sessions;
    for (const auto& r : rows) sessions.push_back(session_json(r, ctx->settings, now));
    out["sessions"] = std::move(sessions);
    *st.io.out << json::to_pretty(out) << "\n";
  } else {
    if (ctx->aggregate) {
      *st.io.out << "Session stores:\n";
      for (const auto& s : ctx->stores) *st.io.out << fmt::format("  {}: {}\n", s.agent_id, s.path);
    } else {
      *st.io.out << fmt::format("Session store: {}\n", ctx->stores.front().path);
    }
    *st.io.out << fmt::format("Sessions listed: {} of {}{}{}\n", rows.size(), total,
                              active_minutes ? fmt::format(" (active in the last {} min)", *active_minutes) : "",
                              matching > rows.size() ? fmt::format(" (limit {}; --limit all shows every row)", *limit) : "");
    if (!rows.empty()) {
      const std::size_t key_width = key_column_width(rows);
      *st.io.out << table_header(ctx->aggregate, key_width) << "\n";
      for (const auto& r : rows) *st.io.out << table_line(r, ctx->settings, now, ctx->aggregate, key_width) << "\n";
    }
  }
  st.exit_code = 0;
}

// ---- sessions cleanup ----------------------------------------------------------------------------

struct cleanup_options {
  offline_options where;
  bool dry_run = false;
  bool enforce = false;
  bool fix_missing = false;
  bool fix_dm_scope = false;
  std::string active_key;
  bool json = false;
};

struct store_cleanup {
  offline_store store;
  actors::maintenance_plan plan;
  std::vector<actors::maintenance_row> rows;
  std::optional<actors::apply_report> applied;
  std::size_t current_entries = 0;
  std::vector<std::string> notes;
};

bj::object summary_json(const store_cleanup& c, bool dry_run) {
  const auto& p = c.plan;
  bj::object o;
  o["agentId"] = c.store.agent_id;
  o["storePath"] = c.store.path;
  o["mode"] = actors::maintenance_mode_name(p.mode);
  o["dryRun"] = dry_run;
  o["beforeCount"] = p.before_count;
  o["afterCount"] = c.applied ? c.current_entries : p.after_count;
  o["repaired"] = 0;
  o["missing"] = p.missing;
  o["dmScopeRetired"] = p.dm_scope_retired;
  o["modelRunPruned"] = p.model_run_pruned;
  o["pruned"] = p.pruned;
  o["capped"] = p.capped;
  o["unreferencedArtifacts"] = bj::object{{"scannedFiles", p.unreferenced.scanned_files},
                                          {"removedFiles", p.unreferenced.removed_files},
                                          {"freedBytes", p.unreferenced.freed_bytes},
                                          {"olderThanMs", p.unreferenced.older_than_ms}};
  if (p.disk_budget) {
    const auto& b = *p.disk_budget;
    o["diskBudget"] = bj::object{{"totalBytesBefore", b.total_bytes_before}, {"totalBytesAfter", b.total_bytes_after},
                                 {"removedFiles", b.removed_files},          {"removedEntries", b.removed_entries},
                                 {"freedBytes", b.freed_bytes},              {"maxBytes", b.max_bytes},
                                 {"highWaterBytes", b.high_water_bytes},     {"overBudget", b.over_budget},
                                 {"met", b.met}};
  } else {
    o["diskBudget"] = nullptr;
  }
  o["wouldMutate"] = p.would_mutate();
  bj::array actions;
  for (const auto& a : (c.applied ? c.applied->applied : p.actions)) actions.push_back(actors::action_json(a, "action"));
  o[c.applied ? "appliedActions" : "actions"] = std::move(actions);
  if (c.applied) {
    o["appliedCount"] = c.applied->applied.size();
    bj::array skipped;
    for (const auto& s : c.applied->skipped) skipped.emplace_back(s);
    o["skipped"] = std::move(skipped);
  }
  bj::array warnings;
  for (const auto& w : p.warnings) warnings.emplace_back(w);
  for (const auto& n : c.notes) warnings.emplace_back(n);
  o["warnings"] = std::move(warnings);
  return o;
}

void print_plan_text(std::ostream& out, const store_cleanup& c, std::int64_t now) {
  const auto& p = c.plan;
  const std::size_t removed = p.before_count - p.after_count;
  out << fmt::format("Session store: {}\n", c.store.path);
  out << fmt::format("Maintenance mode: {}\n", actors::maintenance_mode_name(p.mode));
  out << fmt::format("Entries: {} -> {} (remove {})\n", p.before_count, p.after_count, removed);
  out << "Would repair sessionFile metadata: 0\n";
  out << fmt::format("Would prune missing transcripts: {}\n", p.missing);
  out << fmt::format("Would retire stale direct DM sessions: {}\n", p.dm_scope_retired);
  out << fmt::format("Would prune stale model-run probes: {}\n", p.model_run_pruned);
  out << fmt::format("Would prune stale: {}\n", p.pruned);
  out << fmt::format("Would cap overflow: {}\n", p.capped);
  if (p.forced) out << fmt::format("Would prune unreferenced artifacts: {}\n", p.unreferenced.removed_files);
  if (p.disk_budget)
    out << fmt::format("Would enforce disk budget: {} -> {} bytes (files {}, entries {})\n",
                       p.disk_budget->total_bytes_before, p.disk_budget->total_bytes_after,
                       p.disk_budget->removed_files, p.disk_budget->removed_entries);
  for (const auto& w : p.warnings) out << "Warning: " << w << "\n";
  for (const auto& n : c.notes) out << "Note: " << n << "\n";

  out << "\nPlanned session actions:\n";
  std::size_t key_width = 26;  // keys whole, as --active-key takes them
  for (const auto& r : c.rows) key_width = std::max(key_width, r.key().size());
  out << pad("Action", 19) << pad("Key", key_width) << pad("Age", 9) << pad("Model", 14) << "Flags\n";
  std::map<std::string_view, const actors::plan_action*> removal;
  for (const auto& a : p.actions)
    if (a.kind == actors::action_kind::remove_row) removal.emplace(a.key, &a);
  std::vector<const actors::maintenance_row*> order;
  for (const auto& r : c.rows) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return a->updated_at.value_or(INT64_MIN) > b->updated_at.value_or(INT64_MIN);
  });
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_label;  // kept, pruned
  std::size_t kept = 0, pruned = 0;
  for (const auto* r : order) {
    auto it = removal.find(r->key());
    const char* label = it == removal.end() ? "keep" : actors::row_action_label(it->second->step);
    std::string age = r->updated_at ? age_text(now - *r->updated_at) : "-";
    std::string flags = r->session_id().empty() ? "" : "id:" + std::string(r->session_id());
    if (r->is_protected) flags += " protected";
    out << pad(label, 19) << pad(r->key(), key_width) << pad(age, 9)
        << pad(r->model().empty() ? "-" : r->model(), 14)
        << flags << "\n";
    auto& counts = by_label[r->label().empty() ? "(unlabeled)" : std::string(r->label())];
    if (it == removal.end()) {
      ++counts.first;
      ++kept;
    } else {
      ++counts.second;
      ++pruned;
    }
  }
  bool any_file = false;
  for (const auto& a : p.actions) {
    if (a.kind == actors::action_kind::remove_row) continue;
    if (!any_file) {
      out << "\nPlanned file actions:\n" << pad("Action", 19) << pad("Step", 18) << "File\n";
      any_file = true;
    }
    out << pad(actors::action_kind_name(a.kind), 19) << pad(actors::maintenance_step_name(a.step), 18) << a.file
        << (a.target.empty() ? "" : " -> " + a.target) << "\n";
  }
  out << "\nSummary by Label:\n";
  for (const auto& [label, counts] : by_label)
    out << fmt::format("{}  {} kept, {} pruned\n", label, counts.first, counts.second);
  out << fmt::format("Total: {} kept, {} pruned\n", kept, pruned);
}

void cleanup_command(const cleanup_options& o, cli_state& st) {
  if (!o.active_key.empty() && !actors::is_plausible_session_key(o.active_key))
    return fail(st, status(errc::invalid_argument, fmt::format("--active-key \"{}\" is not a session key", o.active_key)));
  auto ctx = open_offline(st.io, o.where);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  actors::maintenance_settings settings = ctx->settings.maintenance;
  if (o.enforce) settings.mode = actors::maintenance_mode::enforce;
  const bool apply = !o.dry_run && settings.mode == actors::maintenance_mode::enforce;
  const bool dm_main = ctx->settings.routing.session.direct_message_scope == actors::dm_scope::main;
  std::vector<store_cleanup> results;
  std::vector<storage::write_lock> locks;
  for (const auto& store : ctx->stores) {
    store_cleanup c;
    c.store = store;
    // An applying cleanup owns the store for its whole run: a runtime holding it is refused.
    if (apply) {
      auto owner = store_owner(st.io, store.path);
      if (!owner.ok()) return fail(st, owner.error());
      if (*owner)
        return fail(st, status(errc::locked,
                               fmt::format("{} is owned by a running runtime (pid {}); cleanup --enforce changes "
                                           "nothing while it runs: stop it first, or use --dry-run to see the plan",
                                           store.path, (*owner)->pid ? std::to_string(*(*owner)->pid) : "unknown")));
    }
    auto parsed = read_store_readonly(st.io, store);
    if (!parsed.ok()) {
      if (ctx->aggregate && parsed.error().code() == errc::not_found) continue;
      return fail(st, parsed.error());
    }
    progress_meter scan_meter(st.io, "scanning files");
    auto listing = actors::scan_sessions_dir(*st.io.files, store.sessions_dir,
                                             [&](std::size_t d, std::size_t t) { scan_meter.update(d, t); });
    scan_meter.finish();
    if (!listing.ok()) return fail(st, listing.error().with_context(store.sessions_dir));
    c.rows = actors::maintenance_rows(parsed->store, store.sessions_dir);
    auto empty = o.fix_missing
                     ? actors::find_empty_transcripts(*st.io.files, store.sessions_dir, c.rows, *listing)
                     : result<std::unordered_set<std::string>>(std::unordered_set<std::string>{});
    if (!empty.ok()) return fail(st, empty.error());
    actors::planner_input in;
    in.rows = &c.rows;
    in.files = &*listing;
    in.settings = settings;
    in.now_ms = st.io.time->now_ms();
    in.active_key = o.active_key;
    in.forced = true;
    in.fix_missing = o.fix_missing;
    in.empty_transcripts = &*empty;
    in.fix_dm_scope = o.fix_dm_scope && dm_main;
    if (o.fix_dm_scope && !dm_main)
      c.notes.push_back(fmt::format("--fix-dm-scope retires nothing: session.dmScope is \"{}\", not \"main\"",
                                    actors::to_string(ctx->settings.routing.session.direct_message_scope)));
    c.plan = actors::plan_maintenance(in);
    if (apply && c.plan.would_mutate()) {
      // The lock is taken once the plan is made (an error before changes no byte, not even the
      // dir's); the applier re-checks every row and file the plan names against what it finds.
      storage::write_lock_options lo = ctx->settings.session.write_lock;
      lo.reentrant = false;
      auto taken = storage::try_acquire_write_lock(*st.io.files, *st.io.time, *st.io.probe, store.path, lo);
      if (!taken.ok())
        return fail(st, taken.error().with_context(fmt::format("{} is in use; cleanup --enforce changed nothing", store.path)));
      if (auto* busy = std::get_if<storage::lock_busy>(&*taken))
        return fail(st, status(errc::locked, fmt::format("{} is owned by another process ({}); cleanup --enforce changed "
                                                         "nothing: stop it first",
                                                         store.path, busy->holder.owner())));
      locks.push_back(std::move(std::get<storage::write_lock>(*taken)));
      storage::session_store_file file(*st.io.files, *st.io.time, store.path);
      auto loaded = file.load();
      if (!loaded.ok()) return fail(st, loaded.error());
      progress_meter apply_meter(st.io, "applying actions");
      auto rep = actors::apply_plan(*st.io.files, file, store.sessions_dir, c.plan, 50000,
                                    [&](std::size_t d, std::size_t t) { apply_meter.update(d, t); });
      apply_meter.finish();
      if (!rep.error.ok())
        return fail(st, rep.error.with_context(fmt::format("cleanup of {} stopped after {} of {} actions", store.path,
                                                           rep.applied.size(), c.plan.actions.size())));
      c.current_entries = file.store().size();
      c.applied = std::move(rep);
    } else if (apply) {
      c.current_entries = c.plan.before_count;
      c.applied = actors::apply_report{};
    }
    results.push_back(std::move(c));
  }
  const std::int64_t now = st.io.time->now_ms();
  const bool dry = !apply;
  if (o.json) {
    if (ctx->aggregate) {
      bj::array stores;
      for (const auto& c : results) stores.push_back(summary_json(c, dry));
      *st.io.out << json::to_pretty(bj::object{{"allAgents", true},
                                               {"mode", actors::maintenance_mode_name(settings.mode)},
                                               {"dryRun", dry},
                                               {"stores", std::move(stores)}})
                 << "\n";
    } else if (!results.empty()) {
      *st.io.out << json::to_pretty(summary_json(results.front(), dry)) << "\n";
    }
  } else {
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& c = results[i];
      if (i) *st.io.out << "\n";
      if (!c.applied) {
        print_plan_text(*st.io.out, c, now);
        if (!o.dry_run)
          *st.io.out << "\nMaintenance mode is warn: nothing was changed. Run `sessionrt sessions cleanup --enforce` "
                        "to apply this plan.\n";
      } else {
        *st.io.out << fmt::format("Session store: {}\n", c.store.path);
        *st.io.out << fmt::format("Applied maintenance. Current entries: {}\n", c.current_entries);
        *st.io.out << fmt::format("Pruned unreferenced artifacts: {}\n", c.plan.unreferenced.removed_files);
        if (c.plan.disk_budget)
          *st.io.out << fmt::format("Disk budget: {} -> {} bytes (high water {}){}\n",
                                    c.plan.disk_budget->total_bytes_before, c.plan.disk_budget->total_bytes_after,
                                    c.plan.disk_budget->high_water_bytes,
                                    c.plan.disk_budget->met ? "" : ": still above high water");
        for (const auto& w : c.plan.warnings) *st.io.out << "Warning: " << w << "\n";
        for (const auto& s : c.applied->skipped) *st.io.out << "Skipped: " << s << "\n";
      }
    }
  }
  bool unmet = std::any_of(results.begin(), results.end(),
                           [](const store_cleanup& c) { return c.plan.disk_budget && !c.plan.disk_budget->met; });
  st.exit_code = unmet ? 1 : 0;
}

}  // namespace

void add_sessions_commands(CLI::App& app, cli_state& st) {
  auto lo = std::make_shared<list_options>();
  auto* s = app.add_subcommand(
      "sessions",
      "List the rows of sessions.json, newest first (offline, read-only). `sessions cleanup` runs store maintenance");
  add_offline_options(s, lo->where);
  s->add_flag("--json", lo->json, "Print JSON ({path, count, totalCount, limitApplied, hasMore, sessions: [...]})");
  s->add_option("--active", lo->active, "Only rows updated in the last N minutes");
  s->add_option("--limit", lo->limit, "At most N rows, or \"all\" (default 100)");
  s->add_option("--token", lo->token,
                "The token of the running gateway (else $SESSIONRT_GATEWAY_TOKEN, <state>/gateway.token); with a live "
                "gateway in <state>/gateway.json the rows come from it, --store reads the file instead");
  s->callback([lo, s, &st] {
    if (s->get_subcommands().empty()) list_command(*lo, st);
  });

  auto co = std::make_shared<cleanup_options>();
  auto* c = s->add_subcommand(
      "cleanup",
      "Store maintenance [session.maintenance]: prune stale rows, cap the count, archive unreferenced transcripts as "
      ".deleted.<ts>, remove expired archives, keep the disk budget. Protected group/channel/thread/topic rows and "
      "the active key are never removed. Applies only with --enforce or mode \"enforce\" (refused while a runtime "
      "owns the store); otherwise prints the plan and changes nothing. Exit 1 when the disk budget cannot be met");
  add_offline_options(c, co->where);
  auto* dry = c->add_flag("--dry-run", co->dry_run, "Print the plan; change nothing");
  c->add_flag("--enforce", co->enforce, "Apply the plan even when session.maintenance.mode is \"warn\"")->excludes(dry);
  c->add_flag("--fix-missing", co->fix_missing,
              "Also remove rows whose transcript is missing or has no message (a file of at most 4096 bytes)");
  c->add_flag("--fix-dm-scope", co->fix_dm_scope,
              "While session.dmScope is \"main\": retire the per-peer direct rows (direct:<id>, <ch>:direct:<id>, "
              "<ch>:<acct>:direct:<id>) left from another dmScope; their transcripts are archived as .deleted");
  c->add_option("--active-key", co->active_key, "A session key that is never removed (the one in use)");
  c->add_flag("--json", co->json, "Print the summary as JSON");
  c->callback([co, &st] { cleanup_command(*co, st); });
}

}  // namespace sessionrt::runtime
