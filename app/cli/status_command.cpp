// `sessionrt status [--json]`: per store, its path, whether a runtime owns it (the store's
// write lock), the row counts, the disk use of the sessions dir against the budget
// (session.maintenance.maxDiskBytes) and the most recent activity [R§11.3]. Read-only.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>

#include "actors/maintenance/maintenance_settings.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "actors/router/session_key.hpp"
#include "app/cli/command_line.hpp"
#include "app/cli/sessions_view.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::runtime {
namespace {

namespace bj = boost::json;

struct status_options {
  offline_options where;
  bool json = false;
  std::string token;  // for a live gateway
};

// What a live gateway of the state dir says of its runtime (its `status` method), if one is.
std::optional<result<bj::object>> gateway_status(const status_options& o, const offline_context& ctx, cli_state& st) {
  if (!st.gateway || ctx.state_dir.empty()) return std::nullopt;
  auto answer = st.gateway(st.io, ctx.state_dir, o.token, "status", bj::object{});
  if (!answer) return std::nullopt;
  if (!answer->ok()) return answer->error();
  if (!answer->value().is_object()) return status(errc::corrupt, "the gateway's status answer is not an object");
  return answer->value().as_object();
}

std::int64_t int_at(const bj::object& o, std::string_view a, std::string_view b = {}) {
  const bj::value* v = o.if_contains(a);
  if (v && !b.empty()) v = v->is_object() ? v->as_object().if_contains(b) : nullptr;
  return v ? json::as_int(*v).value_or(0) : 0;
}

constexpr std::size_t recent_rows = 5;

void status_command(const status_options& o, cli_state& st) {
  auto ctx = open_offline(st.io, o.where);
  if (!ctx.ok()) return fail(st, ctx.error());
  print_config_warnings(st, *ctx);
  const auto& m = ctx->settings.maintenance;
  const auto hw = actors::high_water_bytes(m);
  const std::int64_t now = st.io.time->now_ms();
  auto live = gateway_status(o, *ctx, st);
  if (live && !live->ok()) return fail(st, live->error());
  bj::array stores_json;
  std::string text;
  for (const auto& store : ctx->stores) {
    auto parsed = read_store_readonly(st.io, store);
    if (!parsed.ok()) {
      if (ctx->aggregate && parsed.error().code() == errc::not_found) continue;
      return fail(st, parsed.error());
    }
    auto owner = store_owner(st.io, store.path);
    if (!owner.ok()) return fail(st, owner.error());
    progress_meter meter(st.io, "scanning files");
    auto listing = actors::scan_sessions_dir(*st.io.files, store.sessions_dir,
                                             [&](std::size_t d, std::size_t t) { meter.update(d, t); });
    meter.finish();
    if (!listing.ok()) return fail(st, listing.error().with_context(store.sessions_dir));
    std::map<std::string, std::size_t> by_kind;
    std::size_t protected_rows = 0;
    std::vector<listed_row> rows;
    for (auto r : parsed->store) {
      ++by_kind[std::string(session_kind(r.key, r.entry))];
      if (actors::is_protected_key(r.key, &r.entry)) ++protected_rows;
      rows.push_back({store.agent_id, std::string(r.key), &r.entry});
    }
    std::uint64_t total = 0, transcripts = 0, archives = 0;
    // What transcript repairs removed, kept beside the files (<file>.dropped-<ts>.jsonl), so an
    // operator sees them and can read them before the disk budget deletes them.
    std::vector<std::pair<std::string, std::uint64_t>> dropped;
    for (const auto& f : *listing) {
      total += f.size;
      auto kind = storage::classify(f.name).kind;
      if (storage::holds_transcript(kind)) transcripts += f.size;  // compressed ones too
      else if (storage::is_archive_kind(kind)) archives += f.size;
      if (kind == storage::artifact_kind::dropped_lines) dropped.emplace_back(f.name, f.size);
    }
    std::sort(dropped.begin(), dropped.end());
    const std::uint64_t other = total - transcripts - archives;
    std::stable_sort(rows.begin(), rows.end(), [](const listed_row& a, const listed_row& b) {
      return a.entry->updated_at().value_or(INT64_MIN) > b.entry->updated_at().value_or(INT64_MIN);
    });
    if (rows.size() > recent_rows) rows.resize(recent_rows);
    const bool over = m.max_disk_bytes && total > static_cast<std::uint64_t>(*m.max_disk_bytes);
    if (o.json) {
      bj::object kinds;
      for (const auto& [k, n] : by_kind) kinds[k] = n;
      bj::array recent;
      for (const auto& r : rows) {
        bj::object e{{"key", r.key}};
        if (auto at = r.entry->updated_at()) {
          e["updatedAt"] = *at;
          e["ageMs"] = std::max<std::int64_t>(0, now - *at);
        }
        if (auto model = display_model(*r.entry, ctx->settings); !model.empty()) e["model"] = model;
        recent.push_back(std::move(e));
      }
      bj::array dropped_json;
      for (const auto& [name, size] : dropped)
        dropped_json.push_back(bj::object{{"path", storage::path_join(store.sessions_dir, name)}, {"bytes", size}});
      bj::object runtime{{"running", owner->has_value()}};
      if (*owner && (*owner)->pid) runtime["pid"] = *(*owner)->pid;
      if (live) {
        const bj::object& g = live->value();
        runtime["gateway"] = bj::object{{"pid", int_at(g, "pid")},
                                        {"uptimeMs", int_at(g, "uptimeMs")},
                                        {"sessions", int_at(g, "sessions", "count")},
                                        {"modelCallsRunning", int_at(g, "modelCalls", "running")},
                                        {"modelCallsWaiting", int_at(g, "modelCalls", "waiting")}};
      }
      stores_json.push_back(bj::object{
          {"agentId", store.agent_id},
          {"path", store.path},
          {"runtime", std::move(runtime)},
          {"sessions", bj::object{{"count", parsed->store.size()}, {"byKind", std::move(kinds)}, {"protected", protected_rows}}},
          {"disk", bj::object{{"totalBytes", total},
                              {"files", listing->size()},
                              {"transcriptBytes", transcripts},
                              {"archiveBytes", archives},
                              {"otherBytes", other},
                              {"maxBytes", m.max_disk_bytes ? bj::value(*m.max_disk_bytes) : bj::value(nullptr)},
                              {"highWaterBytes", hw ? bj::value(*hw) : bj::value(nullptr)},
                              {"overBudget", over},
                              {"droppedLines", std::move(dropped_json)}}},
          {"maintenance", bj::object{{"mode", actors::maintenance_mode_name(m.mode)}}},
          {"recent", std::move(recent)}});
    } else {
      if (!text.empty()) text += "\n";
      text += fmt::format("Session store: {}\n", store.path);
      text += *owner ? fmt::format("Runtime: running (pid {})\n", (*owner)->pid ? std::to_string(*(*owner)->pid) : "unknown")
                     : "Runtime: not running\n";
      if (live) {
        const bj::object& g = live->value();
        text += fmt::format("Gateway: pid {}, up {} s, {} sessions, model calls running {}, waiting {}\n", int_at(g, "pid"),
                            int_at(g, "uptimeMs") / 1000, int_at(g, "sessions", "count"),
                            int_at(g, "modelCalls", "running"), int_at(g, "modelCalls", "waiting"));
      }
      std::string kinds;
      for (const auto& [k, n] : by_kind) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", k, n);
      text += fmt::format("Sessions: {}{}; protected {}\n", parsed->store.size(),
                          kinds.empty() ? "" : " (" + kinds + ")", protected_rows);
      text += fmt::format("Disk: {} in {} files (transcripts {}, archives {}, other {})\n", bytes_text(total),
                          listing->size(), bytes_text(transcripts), bytes_text(archives), bytes_text(other));
      if (!dropped.empty()) {
        text += fmt::format("Repairs kept {} file(s) of removed lines (read them; the disk budget deletes the oldest first):\n",
                            dropped.size());
        for (const auto& [name, size] : dropped)
          text += fmt::format("  {} ({})\n", storage::path_join(store.sessions_dir, name), bytes_text(size));
      }
      if (m.max_disk_bytes)
        text += fmt::format("Budget: {} of {} ({}%), high water {}{}\n", bytes_text(total), bytes_text(*m.max_disk_bytes),
                            total * 100 / static_cast<std::uint64_t>(*m.max_disk_bytes), bytes_text(*hw),
                            over ? ": over budget (`sessionrt sessions cleanup --dry-run` shows what would go)" : "");
      else
        text += "Budget: none (session.maintenance.maxDiskBytes is unset)\n";
      text += fmt::format("Maintenance: mode {}, pruneAfter {}d, maxEntries {}\n", actors::maintenance_mode_name(m.mode),
                          m.prune_after_ms / actors::day_ms, m.max_entries);
      text += "Recent activity:\n";
      if (rows.empty()) text += "  (no sessions)\n";
      for (const auto& r : rows) {
        auto at = r.entry->updated_at();
        std::string model = display_model(*r.entry, ctx->settings);
        text += fmt::format("  {}{}{}\n", pad(at ? age_text(now - *at) : "-", 9), pad(r.key, 26), model.empty() ? "-" : model);
      }
    }
  }
  if (o.json)
    *st.io.out << json::to_pretty(bj::object{{"stores", std::move(stores_json)}}) << "\n";
  else
    *st.io.out << text;
  st.exit_code = 0;
}

}  // namespace

void add_status_command(CLI::App& app, cli_state& st) {
  auto o = std::make_shared<status_options>();
  auto* s = app.add_subcommand("status",
                               "The store's path, whether a runtime owns it, row counts, disk use against the budget "
                               "and recent activity (offline, read-only)");
  add_offline_options(s, o->where);
  s->add_flag("--json", o->json, "Print JSON: {stores: [{agentId, path, runtime, sessions, disk, maintenance, recent}]}");
  s->add_option("--token", o->token,
                "The token of the running gateway (else $SESSIONRT_GATEWAY_TOKEN, <state>/gateway.token); with a live "
                "gateway in <state>/gateway.json its runtime's figures are added (runtime.gateway)");
  s->callback([o, &st] { status_command(*o, st); });
}

}  // namespace sessionrt::runtime
