// `sessionrt sessions [--json] [--active N] [--limit N|all]` [R§11.1] and
// `sessionrt sessions cleanup [--dry-run|--enforce] [--fix-missing] [--fix-dm-scope]
// [--active-key KEY] [--json]` [R§5.5], offline on the files of a state dir or one store.
// The listing and --dry-run never write. Cleanup applies its plan only under --enforce or
// session.maintenance.mode "enforce", holding the store's write lock, so it refuses while a
// runtime owns the store. With a live gateway serving the state dir (and no --store), an applying
// cleanup is handed to it (sessions.cleanup, as OpenClaw 2026.9's CLI does) instead of refused.
// `sessionrt sessions archive KEY...`: OpenClaw 2026.9's archive in place (the row stays with
// archivedAt and archiveReason "manual", its transcript untouched; sessions.patch {archived:
// true} through the gateway when one runs, else offline under the store's lock);
// `sessionrt sessions delete KEY...`: the rows removed and their transcripts deleted (through
// sessions.delete, or offline); `sessionrt sessions tail [KEY]`: the session's last messages.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>

#include "actors/maintenance/cleanup_run.hpp"
#include "actors/maintenance/manual_archive.hpp"
#include "actors/maintenance/maintenance_pass.hpp"
#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "actors/router/session_key.hpp"
#include "app/cli/command_line.hpp"
#include "app/cli/sessions_view.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "storage/archive_names.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/context_builder.hpp"
#include "storage/session_paths.hpp"
#include "storage/transcript_reader.hpp"
#include "storage/write_lock.hpp"

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
  // Archived rows too: the offline listing (and OpenClaw's `sessions`) shows every row.
  bj::object params{{"limit", std::int64_t{1} << 40}, {"archived", "all"}};
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
  std::string token;  // for a live gateway
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
  actors::cleanup_store_result r;
  r.agent_id = c.store.agent_id;
  r.store_path = c.store.path;
  r.plan = c.plan;
  r.applied = c.applied.has_value();
  if (c.applied) {
    r.applied_actions = c.applied->applied;
    r.skipped = c.applied->skipped;
  }
  r.current_entries = c.current_entries;
  r.notes = c.notes;
  return actors::cleanup_summary_json(r, dry_run);
}

// The cleanup applied by a live gateway (sessions.cleanup): its answer printed as the offline
// cleanup prints its own. nullopt: no gateway serves the state dir.
std::optional<int> cleanup_through_gateway(const cleanup_options& o, const offline_context& ctx, cli_state& st) {
  if (!st.gateway || !o.where.store.empty()) return std::nullopt;
  bj::object params;
  if (!o.where.agent.empty()) params["agent"] = o.where.agent;
  if (o.where.all_agents) params["allAgents"] = true;
  if (o.enforce) params["enforce"] = true;
  if (!o.active_key.empty()) params["activeKey"] = o.active_key;
  if (o.fix_missing) params["fixMissing"] = true;
  if (o.fix_dm_scope) params["fixDmScope"] = true;
  auto answer = st.gateway(st.io, ctx.state_dir, o.token, "sessions.cleanup", params);
  if (!answer) return std::nullopt;
  if (!answer->ok()) {
    fail(st, answer->error().with_context("sessions cleanup through the running gateway"));
    return st.exit_code;
  }
  const bj::object* top = answer->value().if_object();
  if (!top) {
    fail(st, status(errc::corrupt, "the gateway's sessions.cleanup answer is not an object"));
    return st.exit_code;
  }
  std::vector<const bj::object*> stores;
  if (const bj::array* many = json::get_array(*top, "stores")) {
    for (const auto& s : *many)
      if (s.is_object()) stores.push_back(&s.as_object());
  } else {
    stores.push_back(top);
  }
  bool unmet = false;
  for (const auto* s : stores)
    if (const bj::value* b = s->if_contains("diskBudget"); b && b->is_object())
      unmet |= !json::get_bool(b->as_object(), "met").value_or(true);
  if (o.json) {
    *st.io.out << json::to_pretty(*top) << "\n";
  } else {
    for (std::size_t i = 0; i < stores.size(); ++i) {
      const bj::object& s = *stores[i];
      if (i) *st.io.out << "\n";
      *st.io.out << fmt::format("Session store: {} (cleaned by the running gateway)\n",
                                json::get_string(s, "storePath").value_or(""));
      if (!json::get_bool(s, "applied").value_or(false)) {
        *st.io.out << fmt::format("Maintenance mode: {}: nothing was changed ({} -> {} entries planned). Run "
                                  "`sessionrt sessions cleanup --enforce` to apply the plan.\n",
                                  json::get_string(s, "mode").value_or("warn"), json::get_int(s, "beforeCount").value_or(0),
                                  json::get_int(s, "afterCount").value_or(0));
        continue;
      }
      *st.io.out << fmt::format("Applied maintenance. Current entries: {}\n", json::get_int(s, "afterCount").value_or(0));
      *st.io.out << fmt::format("Applied actions: {}\n", json::get_int(s, "appliedCount").value_or(0));
      if (const bj::value* u = s.if_contains("unreferencedArtifacts"); u && u->is_object())
        *st.io.out << fmt::format("Pruned unreferenced artifacts: {}\n",
                                  json::get_int(u->as_object(), "removedFiles").value_or(0));
      for (const auto* list : {json::get_array(s, "warnings"), json::get_array(s, "skipped")})
        if (list)
          for (const auto& w : *list)
            if (w.is_string())
              *st.io.out << (list == json::get_array(s, "warnings") ? "Warning: " : "Skipped: ") << w.as_string() << "\n";
    }
  }
  st.exit_code = unmet ? 1 : 0;
  return st.exit_code;
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
  // OpenClaw 2026.9's lines: inactive = dashboards and stale rows archived in place.
  if (p.dashboards_archived + p.age_archived + p.cap_archived > 0) {
    out << fmt::format("Would archive inactive sessions: {}\n", p.dashboards_archived + p.age_archived);
    out << fmt::format("Would archive cap overflow: {}\n", p.cap_archived);
  }
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
    if (a.kind == actors::action_kind::remove_row || a.kind == actors::action_kind::archive_row) removal[a.key] = &a;
  std::vector<const actors::maintenance_row*> order;
  for (const auto& r : c.rows) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return a->updated_at.value_or(INT64_MIN) > b->updated_at.value_or(INT64_MIN);
  });
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_label;  // kept, pruned
  std::size_t kept = 0, pruned = 0;
  for (const auto* r : order) {
    auto it = removal.find(r->key());
    const char* label = it == removal.end()                                   ? "keep"
                        : it->second->kind == actors::action_kind::archive_row ? actors::row_archive_label(it->second->step)
                                                                               : actors::row_action_label(it->second->step);
    std::string age = r->updated_at ? age_text(now - *r->updated_at) : "-";
    std::string flags = r->session_id().empty() ? "" : "id:" + std::string(r->session_id());
    if (r->is_protected) flags += " protected";
    out << pad(label, 19) << pad(r->key(), key_width) << pad(age, 9)
        << pad(r->model().empty() ? "-" : r->model(), 14)
        << flags << "\n";
    auto& counts = by_label[r->label().empty() ? "(unlabeled)" : std::string(r->label())];
    // An archived row stays (OpenClaw counts archive-* as kept).
    if (it == removal.end() || it->second->kind == actors::action_kind::archive_row) {
      ++counts.first;
      ++kept;
    } else {
      ++counts.second;
      ++pruned;
    }
  }
  bool any_file = false;
  for (const auto& a : p.actions) {
    if (a.kind == actors::action_kind::remove_row || a.kind == actors::action_kind::archive_row) continue;
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
  // A running gateway owns the stores: it applies the cleanup itself [R§5.5].
  if (apply)
    if (cleanup_through_gateway(o, *ctx, st)) return;
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
                               fmt::format("{} is owned by a running runtime (pid {}) that serves no gateway; cleanup "
                                           "--enforce changes nothing while it runs: stop it first, run it as "
                                           "`sessionrt gateway` (cleanup is then handed to it), or use --dry-run",
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

// ---- sessions archive | delete | tail -----------------------------------------------------------

std::string path_basename_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// A key as typed: "agent:<id>:..." as it is, "main" the agent's main key, else scoped to the agent.
std::string scoped_key(const std::string& typed, const std::string& agent) {
  if (typed.rfind("agent:", 0) == 0) return typed;
  return "agent:" + agent + ":" + typed;
}

struct removal_options {
  offline_options where;
  std::vector<std::string> keys;
  bool dry_run = false;
  bool json = false;
  bool yes = false;
  std::string token;
  bool archive = true;  // archive: rows archived in place; delete: rows removed, transcripts deleted
};

struct removal_result {
  std::string key;
  bool found = false;
  std::string session_id;
  std::string transcript;  // its path ("" = none)
  std::string archived_to;  // archive: where it went
  bool transcript_deleted = false;
  bool already_archived = false;  // archive: the row was archived before
  std::string error;
};

void print_removals(const removal_options& o, const std::vector<removal_result>& rs, bool through_gateway,
                    cli_state& st) {
  const char* verb = o.archive ? "archive" : "delete";
  if (o.json) {
    bj::array out;
    for (const auto& r : rs) {
      bj::object j{{"key", r.key}, {"found", r.found}};
      if (!r.session_id.empty()) j["sessionId"] = r.session_id;
      if (!r.transcript.empty()) j["transcript"] = r.transcript;
      if (!r.archived_to.empty()) j["archivedTo"] = r.archived_to;
      if (r.transcript_deleted) j["transcriptDeleted"] = true;
      if (r.already_archived) j["alreadyArchived"] = true;
      if (!r.error.empty()) j["error"] = r.error;
      out.push_back(std::move(j));
    }
    *st.io.out << json::to_pretty(bj::object{{"action", verb},
                                             {"dryRun", o.dry_run},
                                             {"throughGateway", through_gateway},
                                             {"sessions", std::move(out)}})
               << "\n";
    return;
  }
  for (const auto& r : rs) {
    if (!r.found) {
      *st.io.out << fmt::format("{}: no such session\n", r.key);
      continue;
    }
    if (o.archive) {  // OpenClaw's sessions-lifecycle lines
      if (!r.error.empty())
        *st.io.err << fmt::format("archive {}: {}\n", r.key, r.error);
      else if (r.already_archived)
        *st.io.out << fmt::format("Session {} is already archived.\n", r.key);
      else
        *st.io.out << (o.dry_run ? fmt::format("[dry-run] archive session {}\n", r.key) : fmt::format("Archived session {}.\n", r.key));
      continue;
    }
    std::string what = o.dry_run ? fmt::format("would {}", verb) : (o.archive ? "archived" : "deleted");
    std::string file;
    if (!r.archived_to.empty()) file = fmt::format("; transcript -> {}", path_basename_of(r.archived_to));
    else if (r.transcript_deleted) file = fmt::format("; transcript {} deleted", path_basename_of(r.transcript));
    else if (!r.transcript.empty() && o.dry_run) file = fmt::format("; transcript {}", path_basename_of(r.transcript));
    *st.io.out << fmt::format("{} {} (session {}){}{}\n", what, r.key, r.session_id.empty() ? "-" : r.session_id, file,
                              r.error.empty() ? "" : " (" + r.error + ")");
  }
}

// Through the running gateway: sessions.describe for the transcript, then sessions.delete.
std::optional<std::vector<removal_result>> remove_through_gateway(const removal_options& o, const offline_context& ctx,
                                                                  const std::string& agent, cli_state& st,
                                                                  status& failed) {
  if (!st.gateway || !o.where.store.empty()) return std::nullopt;
  std::vector<removal_result> out;
  for (const auto& typed : o.keys) {
    removal_result r;
    r.key = scoped_key(typed, agent);
    auto described = st.gateway(st.io, ctx.state_dir, o.token, "sessions.describe", bj::object{{"key", r.key}});
    if (!described) return std::nullopt;  // no gateway after all
    if (!described->ok()) {
      out.push_back(std::move(r));  // not found
      continue;
    }
    r.found = true;
    if (const bj::object* top = described->value().if_object())
      if (const bj::value* row = top->if_contains("session"); row && row->is_object()) {
        r.session_id = std::string(json::get_string(row->as_object(), "sessionId").value_or(""));
        r.transcript = std::string(json::get_string(row->as_object(), "sessionFile").value_or(""));
      }
    if (r.transcript.empty() && !r.session_id.empty()) {
      auto dir = storage::agent_sessions_dir(ctx.state_dir, agent);
      if (dir.ok()) r.transcript = storage::row_transcript_path(*st.io.files, *dir, r.session_id, std::nullopt);
    }
    bool archived_before = false;
    if (const bj::object* top = described->value().if_object())
      if (const bj::value* row = top->if_contains("session"); row && row->is_object())
        archived_before = json::get_bool(row->as_object(), "archived") == std::optional<bool>(true);
    if (o.archive) {
      r.already_archived = archived_before;
      if (!o.dry_run && !archived_before) {
        auto done = st.gateway(st.io, ctx.state_dir, o.token, "sessions.patch",
                               bj::object{{"key", r.key}, {"archived", true}, {"expectedSessionId", r.session_id}});
        if (!done) {
          failed = status(errc::io_error, "the gateway went away");
          out.push_back(std::move(r));
          return out;
        }
        if (!done->ok()) r.error = done->error().message();
      }
      out.push_back(std::move(r));
      continue;
    }
    if (!o.dry_run) {
      auto done = st.gateway(st.io, ctx.state_dir, o.token, "sessions.delete",
                             bj::object{{"key", r.key}, {"deleteTranscript", o.archive}});
      if (!done || !done->ok()) {
        failed = done ? done->error() : status(errc::io_error, "the gateway went away");
        out.push_back(std::move(r));
        return out;
      }
      if (o.archive) {
        if (const bj::array* a = json::get_array(done->value().as_object(), "archived"); a && !a->empty() && (*a)[0].is_string())
          r.archived_to = std::string((*a)[0].as_string());
      } else if (!r.transcript.empty()) {
        // The row is gone and its session passivated: the file is nobody's now (either form).
        status gone = storage::remove_transcript(*st.io.files, r.transcript);
        r.transcript_deleted = gone.ok();
        if (!gone.ok() && gone.code() != errc::not_found) r.error = gone.message();
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

void removal_command(const removal_options& o, cli_state& st) {
  if (!o.archive && !o.dry_run && !o.yes)
    return fail(st, status(errc::invalid_argument,
                           "sessions delete removes the rows and deletes their transcripts for good: add --yes "
                           "(or see what it would do with --dry-run; `sessions archive` keeps the transcripts)"));
  auto ctx = open_offline(st.io, o.where);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  const offline_store& store = ctx->stores.front();
  status failed;
  if (auto live = remove_through_gateway(o, *ctx, store.agent_id, st, failed)) {
    print_removals(o, *live, true, st);
    if (!failed.ok()) return fail(st, failed);
    st.exit_code =
        std::all_of(live->begin(), live->end(), [](const removal_result& r) { return r.found && r.error.empty(); }) ? 0 : 1;
    return;
  }
  // Offline: under the store's lock, refused while a runtime owns it.
  std::optional<storage::write_lock> lock;
  if (!o.dry_run) {
    auto owner = store_owner(st.io, store.path);
    if (!owner.ok()) return fail(st, owner.error());
    if (*owner)
      return fail(st, status(errc::locked, fmt::format("{} is owned by a running runtime (pid {}) that serves no gateway: "
                                                       "stop it first; nothing was changed",
                                                       store.path,
                                                       (*owner)->pid ? std::to_string(*(*owner)->pid) : "unknown")));
    storage::write_lock_options lo = ctx->settings.session.write_lock;
    lo.reentrant = false;
    auto taken = storage::try_acquire_write_lock(*st.io.files, *st.io.time, *st.io.probe, store.path, lo);
    if (!taken.ok()) return fail(st, taken.error());
    if (auto* busy = std::get_if<storage::lock_busy>(&*taken))
      return fail(st, status(errc::locked, fmt::format("{} is owned by another process ({}); nothing was changed",
                                                       store.path, busy->holder.owner())));
    lock.emplace(std::move(std::get<storage::write_lock>(*taken)));
  }
  storage::session_store_file file(*st.io.files, *st.io.time, store.path);
  auto loaded = file.load();
  if (!loaded.ok()) return fail(st, loaded.error());
  std::vector<removal_result> out;
  for (const auto& typed : o.keys) {
    removal_result r;
    r.key = scoped_key(typed, store.agent_id);
    const session_entry* row = file.store().find(r.key);
    if (!row && file.store().find(typed)) {
      r.key = typed;
      row = file.store().find(typed);
    }
    if (row) {
      r.found = true;
      r.session_id = std::string(row->session_id().value_or(""));
      r.transcript = storage::row_transcript_path(*st.io.files, store.sessions_dir, r.session_id, row->session_file());
      if (!r.transcript.empty() && !storage::transcript_exists(*st.io.files, r.transcript))
        r.transcript.clear();
      if (o.archive) {
        r.already_archived = row->json().contains("archivedAt");
        const bool is_main = r.key == "global" || r.key == actors::build_main_key(store.agent_id, ctx->settings.routing.session.main_key);
        if (!r.already_archived) {
          status ok = actors::check_archive_patch(r.key, row, row->session_id(), true, is_main);
          if (!ok.ok()) {
            r.error = ok.message();
          } else if (!o.dry_run) {
            session_entry archived = *row;
            actors::apply_archive_patch(archived, true, st.io.time->now_ms());
            file.store().upsert(r.key, std::move(archived));
          }
        }
      } else if (!o.dry_run) {
        file.store().erase(r.key);
      }
    }
    out.push_back(std::move(r));
  }
  if (!o.dry_run) {
    // The rows first: a crash between leaves an unreferenced transcript (maintenance takes it),
    // never a row without its transcript.
    if (status saved = file.save(); !saved.ok()) return fail(st, saved);
    for (auto& r : out) {
      if (r.transcript.empty() || o.archive) continue;  // an archived row keeps its transcript
      {
        status gone = storage::remove_transcript(*st.io.files, r.transcript);  // either form
        r.transcript_deleted = gone.ok();
        if (!gone.ok()) r.error = gone.message();
      }
    }
  }
  print_removals(o, out, false, st);
  st.exit_code = std::all_of(out.begin(), out.end(), [](const removal_result& r) { return r.found && r.error.empty(); })
                     ? 0
                     : 1;
}

struct tail_options {
  offline_options where;
  std::string key = "main";
  std::size_t limit = 20;
  bool json = false;
  std::string token;
};

std::string message_text(const bj::object& m) {
  if (auto s = json::get_string(m, "summary")) return std::string(*s);
  const bj::value* c = m.if_contains("content");
  if (!c) return {};
  if (c->is_string()) return std::string(c->as_string());
  std::string out;
  if (const bj::array* parts = c->if_array())
    for (const auto& p : *parts)
      if (p.is_object() && json::get_string(p.as_object(), "type").value_or("") == "text")
        out += std::string(json::get_string(p.as_object(), "text").value_or(""));
  return out;
}

void print_messages(const tail_options& o, const std::string& key, const bj::array& messages, cli_state& st) {
  if (o.json) {
    *st.io.out << json::to_pretty(bj::object{{"sessionKey", key}, {"messages", messages}}) << "\n";
    return;
  }
  for (const auto& m : messages)
    if (m.is_object())
      *st.io.out << fmt::format("{}: {}\n", json::get_string(m.as_object(), "role").value_or("?"),
                                message_text(m.as_object()));
}

void tail_session_command(const tail_options& o, cli_state& st) {
  auto ctx = open_offline(st.io, o.where);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  const offline_store& store = ctx->stores.front();
  const std::string key = scoped_key(o.key, store.agent_id);
  if (st.gateway && o.where.store.empty()) {
    auto answer = st.gateway(st.io, ctx->state_dir, o.token, "chat.history",
                             bj::object{{"sessionKey", key}, {"limit", static_cast<std::int64_t>(o.limit)}});
    if (answer) {
      if (!answer->ok()) return fail(st, answer->error());
      const bj::array* messages = answer->value().is_object() ? json::get_array(answer->value().as_object(), "messages")
                                                              : nullptr;
      print_messages(o, key, messages ? *messages : bj::array{}, st);
      st.exit_code = 0;
      return;
    }
  }
  auto parsed = read_store_readonly(st.io, store);
  if (!parsed.ok()) return fail(st, parsed.error());
  const session_entry* row = parsed->store.find(key);
  if (!row) {
    fail(st, status(errc::not_found, fmt::format("no session '{}' in {}", key, store.path)));
    st.exit_code = 2;
    return;
  }
  const std::string path = storage::row_transcript_path(*st.io.files, store.sessions_dir,
                                                        row->session_id().value_or(""), row->session_file());
  bj::array messages;
  if (!path.empty()) {
    auto reader = storage::transcript_reader::open(*st.io.files, path);
    if (!reader.ok() && reader.error().code() != errc::not_found) return fail(st, reader.error());
    if (reader.ok()) {
      auto built = storage::build_context(**reader);
      if (!built.ok()) return fail(st, built.error());
      const std::size_t n = built->messages.size();
      for (std::size_t i = n > o.limit ? n - o.limit : 0; i < n; ++i) messages.push_back(built->messages[i]);
    }
  }
  print_messages(o, key, messages, st);
  st.exit_code = 0;
}

void add_session_removal_commands(CLI::App* s, cli_state& st) {
  for (bool archive : {true, false}) {
    auto ro = std::make_shared<removal_options>();
    ro->archive = archive;
    auto* c = s->add_subcommand(
        archive ? "archive" : "delete",
        archive ? "Archive sessions in place, as OpenClaw 2026.9 does: the rows stay with archivedAt and archiveReason "
                  "\"manual\", out of sessions.list and maintenance, their transcripts untouched; the next message "
                  "restores one (through the running gateway when one serves the state dir, else offline under the "
                  "store's lock)"
                : "Delete sessions: remove their rows and delete their transcripts (through the running gateway when "
                  "one serves the state dir, else offline under the store's lock). Asks for --yes");
    add_offline_options(c, ro->where);
    c->add_option("keys", ro->keys, "Session keys (agent:<id>:... or scoped to --agent)")->required();
    c->add_flag("--dry-run", ro->dry_run, "Show what would be done; change nothing");
    c->add_flag("--json", ro->json, "Print JSON");
    c->add_option("--token", ro->token, "The running gateway's token");
    if (!archive) c->add_flag("--yes", ro->yes, "Delete without asking");
    c->callback([ro, &st] { removal_command(*ro, st); });
  }
  auto to = std::make_shared<tail_options>();
  auto* t = s->add_subcommand("tail", "Print a session's last messages (chat.history through the running gateway, else "
                                      "from its transcript, read-only)");
  add_offline_options(t, to->where);
  t->add_option("--session-key,key", to->key, "The session (default main)");
  t->add_option("-n,--tail", to->limit, "How many messages (default 20)")->check(CLI::Range(1, 100000));
  t->add_flag("--json", to->json, "Print JSON");
  t->add_option("--token", to->token, "The running gateway's token");
  t->callback([to, &st] { tail_session_command(*to, st); });
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
      "the active key are never removed. Applies only with --enforce or mode \"enforce\" (handed to the running "
      "gateway when one serves the state dir, refused while another runtime owns the store); otherwise prints the plan and changes nothing. Exit 1 when the disk budget cannot be met");
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
  c->add_option("--token", co->token, "The token of the running gateway the cleanup is handed to (else "
                                      "$SESSIONRT_GATEWAY_TOKEN, <state>/gateway.token)");
  c->callback([co, &st] { cleanup_command(*co, st); });
  add_session_removal_commands(s, st);
}

}  // namespace sessionrt::runtime
