#include "cluster/shard_store_commands.hpp"

#include <fmt/format.h>

#include <memory>
#include <ostream>

#include "cluster/shard_merge.hpp"
#include "cluster/shard_split.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::cluster {
namespace {

struct merge_args {
  std::string cluster_dir;
  std::string out;
  bool force = false;
  bool link = false;
  bool json = false;
};

boost::json::value updated_json(const std::optional<std::int64_t>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}

void print_report(const merge_report& r, bool as_json, std::ostream& out) {
  if (as_json) {
    boost::json::array dups, agents, conflicts, warnings;
    for (const auto& d : r.duplicates)
      dups.push_back({{"key", d.key}, {"kept", to_string(d.kept)}, {"keptUpdatedAt", updated_json(d.kept_updated_at)},
                      {"dropped", to_string(d.dropped)}, {"droppedUpdatedAt", updated_json(d.dropped_updated_at)}});
    for (const auto& a : r.agents) agents.emplace_back(a);
    for (const auto& c : r.conflicts) conflicts.emplace_back(c);
    for (const auto& w : r.warnings) warnings.emplace_back(w);
    boost::json::object o{{"out", r.out_dir},   {"shards", r.shards},       {"agents", agents},
                          {"rows", r.rows},     {"files", r.files},         {"linked", r.linked},
                          {"bytes", r.bytes},   {"duplicates", dups},       {"conflicts", conflicts},
                          {"warnings", warnings}, {"resumed", r.resumed},
                          {"replaced", r.replaced ? boost::json::value(*r.replaced) : boost::json::value(nullptr)}};
    out << json::to_pretty(o) << "\n";
    return;
  }
  out << fmt::format("merged {} shard(s) of {} agent(s) into {}: {} row(s), {} file(s) ({}{})\n", r.shards,
                     r.agents.size(), r.out_dir, r.rows, r.files, runtime::bytes_text(r.bytes),
                     r.linked ? fmt::format(", {} hard-linked", r.linked) : std::string());
  if (r.resumed) out << "finished an interrupted merge (" << merge_staging_dir(r.out_dir) << ")\n";
  if (r.replaced) out << "the previous contents of " << r.out_dir << " were moved to " << *r.replaced << "\n";
  for (const auto& d : r.duplicates)
    out << fmt::format("key in two shards: {} in {} (updatedAt {}) and {} (updatedAt {}); kept {}, the newest\n", d.key,
                       to_string(d.kept), d.kept_updated_at ? std::to_string(*d.kept_updated_at) : "none",
                       to_string(d.dropped), d.dropped_updated_at ? std::to_string(*d.dropped_updated_at) : "none",
                       to_string(d.kept));
  for (const auto& c : r.conflicts) out << "file name in two shards: " << c << "\n";
  for (const auto& w : r.warnings) out << "note: " << w << "\n";
}

void merge_command(const merge_args& a, runtime::cli_state& st) {
  runtime::progress_meter meter(st.io, "merging shards");
  merge_options o;
  o.force = a.force;
  o.link = a.link;
  o.progress = [&](const merge_progress& p) { meter.update(p.shards_done, p.shards_total); };
  auto r = merge_shards(*st.io.files, *st.io.time, a.cluster_dir, a.out, o);
  meter.finish();
  if (!r) return runtime::fail(st, r.error().with_context("store merge"));
  print_report(*r, a.json, *st.io.out);
  st.exit_code = r->duplicates.empty() ? 0 : 1;
}

struct split_args {
  std::string state_dir;
  std::string out;
  int shards = default_shards_per_agent;
  bool json = false;
};

// A runtime (a gateway's, or another) holding one of the state dir's stores: the split is
// refused, naming it (its sessions.json and log are changing).
status refuse_running(const split_args& a, runtime::cli_state& st) {
  const std::string agents = storage::path_join(a.state_dir, "agents");
  auto names = st.io.files->list_dir(agents);
  if (!names.ok()) return {};
  for (const auto& agent : *names) {
    auto path = storage::store_path(a.state_dir, agent);
    if (!path.ok()) continue;
    auto owner = runtime::store_owner(st.io, *path);
    if (!owner.ok()) return owner.error();
    if (*owner)
      return status(errc::locked, fmt::format("{} is held by a running runtime (pid {}): stop its gateway or runtime, "
                                              "then split",
                                              *path, (*owner)->pid ? std::to_string(*(*owner)->pid) : "unknown"));
  }
  return {};
}

void split_command(const split_args& a, runtime::cli_state& st) {
  if (status running = refuse_running(a, st); !running.ok()) return runtime::fail(st, running.with_context("store split"));
  split_options o;
  o.shards_per_agent = a.shards;
  auto r = split_state_dir(*st.io.files, *st.io.time, a.state_dir, a.out, o);
  if (!r) return runtime::fail(st, r.error().with_context("store split"));
  if (a.json) {
    boost::json::array agents, warnings;
    for (const auto& x : r->agents) agents.emplace_back(x);
    for (const auto& w : r->warnings) warnings.emplace_back(w);
    boost::json::object j{{"out", r->out_dir}, {"agents", agents},         {"shards", r->shards},
                          {"rows", r->rows},   {"files", r->files},        {"unplaced", r->unplaced},
                          {"bytes", r->bytes}, {"warnings", warnings}};
    *st.io.out << json::to_pretty(j) << "\n";
  } else {
    *st.io.out << fmt::format("split {} agent(s) into {} shard dir(s) under {}: {} row(s), {} file(s) ({}), {} of no "
                              "row in shard 000\n",
                              r->agents.size(), r->shards, r->out_dir, r->rows, r->files, runtime::bytes_text(r->bytes),
                              r->unplaced);
    for (const auto& w : r->warnings) *st.io.out << "note: " << w << "\n";
  }
  st.exit_code = 0;
}

}  // namespace

void add_store_shard_commands(CLI::App& app, runtime::cli_state& st) {
  auto named = app.get_subcommands([](CLI::App* s) { return s->get_name() == "store"; });
  CLI::App* store = named.empty() ? nullptr : named.front();
  if (!store)
    store = app.add_subcommand("store", std::string("Store files (offline). ") + runtime::reads_no_settings);
  auto a = std::make_shared<merge_args>();
  auto* merge = store->add_subcommand(
      "merge", "The plain single-node layout (one sessions.json per agent, the transcripts) from a cluster's shards "
               "(docs/cluster.md); writes into a new STATE_DIR, read-only on the shards");
  merge->add_option("--cluster-dir", a->cluster_dir, "The cluster's state dir (holding shards/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  merge->add_option("--out", a->out, "The state dir to write (absent or empty)")->required();
  merge->add_flag("--force", a->force, "Write even when --out is not empty: its contents are moved aside first");
  merge->add_flag("--link", a->link, "Hard-link the transcripts instead of copying them (same filesystem; the "
                                     "shards' later appends then show in both)");
  merge->add_flag("--json", a->json, "Print the report as JSON");
  merge->callback([a, &st] { merge_command(*a, st); });

  auto b = std::make_shared<split_args>();
  auto* split = store->add_subcommand(
      "split", "A single node's state dir into a cluster's shard layout (the reverse of merge; docs/cluster.md): "
               "writes a new cluster dir, read-only on the state dir, refused while a runtime holds it");
  split->add_option("--state-dir", b->state_dir, "The single node's state dir (holding agents/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  split->add_option("--out", b->out, "The cluster dir to write (must not exist)")->required();
  split->add_option("--shards", b->shards, "Shards per agent (the cluster's; default 256)")
      ->check(CLI::Range(1, max_shards_per_agent));
  split->add_flag("--json", b->json, "Print the report as JSON");
  split->callback([b, &st] { split_command(*b, st); });
}

}  // namespace sessionrt::cluster
