// runtime::start, in the order its steps run: take the options, start the model plumbing,
// settle the places (time zone, state dir, open files), load every agent's store (lock, commit
// log replay, reconcile), then start the actor system and spawn the actors into the runtime's
// actor_handles, and last schedule what the stored sessions need and publish what loading found.
#include <caf/all.hpp>
#include <date/tz.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <limits>
#include <map>
#include <thread>

#include "actors/maintenance/maintenance_settings.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/reset_policy.hpp"
#include "actors/session/session_core.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "runtime/config.hpp"
#include "runtime/runtime_impl.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/store_reconcile.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::runtime {

using namespace sessionrt::actors;

namespace {

// What loading the stores hands to the actors: each agent's store file and sessions dir.
struct loaded_stores {
  std::map<std::string, std::shared_ptr<storage::session_store_file>> files;
  std::map<std::string, std::string> sessions_dir;
};

std::vector<std::string> agent_ids(const actors::runtime_settings& s) {
  std::vector<std::string> ids;
  for (const auto& a : s.routing.agents) ids.push_back(normalize_agent_id(a.id));
  if (ids.empty()) ids.push_back(default_agent_of(s.routing));
  return ids;
}

// An actor whose calls into the fs may block gets a thread of its own.
template <class F, class... Ts>
auto spawn_io(caf::actor_system& sys, bool files_block, F fun, Ts&&... xs) {
  return files_block ? sys.spawn<caf::detached>(fun, std::forward<Ts>(xs)...) : sys.spawn(fun, std::forward<Ts>(xs)...);
}

// The clock, the files (through the change feed when maintenance keeps its picture), the
// process probe, and the workspace's AGENTS.md as the system prompt's project context
// (OpenClaw's), read once.
status take_options(runtime_impl& st, const runtime_options& options) {
  st.opt = options;
  st.ids = session_ids(options.id_seed);
  st.settings = options.settings;
  st.time = options.time ? options.time : &storage::real_clock();
  st.keep_maintenance_picture = st.settings.storage.keep_maintenance_picture.value_or(options.virtual_time);
  storage::fs& base_files = options.files ? *options.files : storage::posix_fs();
  if (st.keep_maintenance_picture) st.feed = std::make_unique<storage::change_feed_fs>(base_files);
  st.files = st.feed ? static_cast<storage::fs*>(st.feed.get()) : &base_files;
  st.probe = options.probe ? options.probe : &storage::real_process_probe();
  if (options.virtual_time && !options.time)
    return status(errc::invalid_argument, "virtual_time needs a manual clock in runtime_options.time");
  if (st.settings.prompts.include_agents_md && !st.settings.workspace_dir.empty()) {
    const std::string agents_md = st.settings.workspace_dir + "/AGENTS.md";
    if (st.files->lstat(agents_md).ok()) {
      auto text = storage::read_file(*st.files, agents_md, 1u << 20);
      if (!text.ok()) return text.error().with_context("reading the workspace's AGENTS.md");
      st.settings.prompts.project_context = std::move(*text);
    }
  }
  st.timers_clock = options.timers_clock;
  if (!st.timers_clock && options.virtual_time) {
    auto* manual = dynamic_cast<manual_clock*>(st.time);
    if (!manual) return status(errc::invalid_argument, "virtual_time needs a manual_clock in runtime_options.time");
    st.timers_clock = manual;
  }
  if (!st.timers_clock) st.timers_clock = &storage::real_alarms();
  return {};
}

// The model: asynchronous when the runner can be; a synchronous one runs on the pool.
void start_model_plumbing(runtime_impl& st, const runtime_options& options) {
  st.pool = std::make_unique<blocking_pool>(st.settings.model.sync_runner_threads);
  st.async_runner = options.async_runner;
  if (!st.async_runner && options.runner) st.async_runner = std::dynamic_pointer_cast<async_model_runner>(options.runner);
  if (!st.async_runner && options.runner) {
    st.adapter = std::make_unique<sync_runner_adapter>(options.runner, *st.pool);
    st.async_runner = std::shared_ptr<async_model_runner>(st.async_runner, st.adapter.get());  // not owning
  }
  st.gate = std::make_unique<model_gate>(st.settings.model.max_concurrent, st.settings.model.max_concurrent_by_provider);
}

// The reset time zone, the state dir, and maxLiveSessions fitted to the open-file limit (each
// live session holds its transcript open).
status settle_places(runtime_impl& st) {
  auto zone = resolve_reset_zone(st.settings.session.reset.timezone);
  if (!zone.ok()) return zone.error().with_context("session.timezone");
  st.zone = *zone;
  if (st.settings.state_dir.empty()) {
    const storage::env_lookup env = process_environment();
    auto dir = storage::default_state_dir(env);
    if (!dir.ok()) return dir.error();
    st.settings.state_dir = *dir;
  }
  st.state_dir = st.settings.state_dir;
  auto fds = storage::apply_fd_budget(st.settings.session.max_live_sessions);
  if (fds.ok()) {
    st.report.open_files = *fds;
    if (fds->lowered) {
      spdlog::warn("session.maxLiveSessions {} does not fit the open-file limit ({} of hard limit {}); {} live sessions "
                   "at most (raise `ulimit -n` to allow more)",
                   st.settings.session.max_live_sessions, fds->soft_after, fds->hard, fds->max_live_sessions);
      st.settings.session.max_live_sessions = fds->max_live_sessions;
    }
  }
  return {};
}

// One agent's store: directory, lock (one runtime per state dir; the commit log is opened
// with the first lock, before any load), load, the logged row changes, reconcile.
status load_agent_store(runtime_impl& st, const runtime_options& options, const std::string& agent,
                        loaded_stores& out) {
  auto dir = storage::agent_sessions_dir(st.state_dir, agent);
  if (!dir.ok()) return dir.error();
  SRT_RETURN_IF_ERROR(storage::ensure_dir(*st.files, *dir));
  auto path = storage::store_path(st.state_dir, agent);
  if (!path.ok()) return path.error();
  storage::write_lock_options lo = st.settings.session.write_lock;
  lo.acquire_timeout_ms = options.store_lock_timeout_ms;
  lo.reentrant = false;  // one runtime per store, even within a process
  lo.max_hold_ms = std::max<std::int64_t>(lo.max_hold_ms, 7LL * 24 * 3600 * 1000);
  auto lock = storage::acquire_write_lock(*st.files, *st.time, *st.probe, *path, lo);
  if (!lock.ok())
    return lock.error().with_context(fmt::format("another runtime owns {} (stop it, or use another stateDir)", *path));
  st.store_locks.push_back(std::move(*lock));
  if (st.store_locks.size() == 1) {  // the state dir is ours: the commit log first, before any load
    auto log = open_commit_log(*st.files, st.state_dir);
    if (!log.ok()) return log.error();
    st.log = std::move(*log);
  }
  storage::store_file_options fo;
  fo.spill_min_bytes = st.settings.storage.store_spill_min_bytes.value_or(
      options.files_block ? storage::store_file_options().spill_min_bytes : std::numeric_limits<std::size_t>::max());
  auto file = std::make_shared<storage::session_store_file>(*st.files, *st.time, *path, fo);
  auto rep = file->load();
  if (!rep.ok()) return rep.error();
  if (rep->quarantine)
    spdlog::error("sessions.json of agent {} was unreadable ({}); moved to {}; rebuilt {} row(s) from transcript headers, "
                  "{} key(s) could not be recovered",
                  agent, rep->quarantine->cause, rep->quarantine->quarantined_path,
                  rep->quarantine->rows_from_headers.size(), rep->quarantine->unrecoverable_keys.size());
  // The row changes the commit log holds that the file lacks (durability batch), before the
  // rows are reconciled with their transcripts; written before the logs go (finish_commit_log).
  const bool replayed = apply_logged_rows(*st.log, *file);
  // A crash between a turn's ack and the store's next write leaves a newer transcript than
  // its row: adopt it (store_reconcile.hpp).
  auto rec = storage::reconcile_store(*st.files, file->store(), *dir);
  if (!rec.ok()) return rec.error().with_context("reconciling " + *path + " with its transcripts");
  if (replayed && rec->adopted.empty()) SRT_RETURN_IF_ERROR(file->save());
  if (!rec->adopted.empty()) {
    SRT_RETURN_IF_ERROR(file->save());
    for (const auto& a : rec->adopted)
      spdlog::warn("adopted transcript {} for {} (the row named {}): its row write was lost", a.path, a.key,
                   a.previous_session_id.empty() ? std::string("nothing") : a.previous_session_id);
  }
  st.report.stores.push_back(*rep);
  st.report.adopted.insert(st.report.adopted.end(), rec->adopted.begin(), rec->adopted.end());
  out.files[agent] = file;
  out.sessions_dir[agent] = *dir;
  if (st.feed) st.feed->watch(*dir);
  return {};
}

// Every agent's store; then, every store having its row changes, the old logs go and this
// run's log starts (durability batch).
result<loaded_stores> load_stores(runtime_impl& st, const runtime_options& options) {
  loaded_stores out;
  for (const auto& agent : agent_ids(st.settings)) SRT_RETURN_IF_ERROR(load_agent_store(st, options, agent, out));
  SRT_RETURN_IF_ERROR(finish_commit_log(*st.files, *st.time, st.state_dir, *st.log,
                                        st.settings.storage.durability == storage::durability::batch));
  return out;
}

void start_actor_system(runtime_impl& st, const runtime_options& options) {
  st.cfg = std::make_unique<caf::actor_system_config>();
  const unsigned threads = options.threads ? options.threads : std::max(2u, std::thread::hardware_concurrency());
  st.cfg->set("scheduler.max-threads", static_cast<std::size_t>(threads));
  st.cfg->set("logger.verbosity", caf::atom("quiet"));
  if (options.work_sharing.value_or(options.virtual_time)) st.cfg->set("scheduler.policy", caf::atom("sharing"));
  // The message types that could cross nodes (caf_types.hpp: the others stay process-local).
  st.cfg->add_message_type<status>("sessionrt::status")
      .add_message_type<system_event>("sessionrt::system_event")
      .add_message_type<turn_outcome>("sessionrt::turn_outcome")
      .add_message_type<route_facts>("sessionrt::route_facts")
      .add_message_type<summary_reply>("sessionrt::summary_reply")
      .add_message_type<actors::router_stats>("sessionrt::router_stats")
      .add_message_type<subagent_spec>("sessionrt::subagent_spec");
  st.sys = std::make_unique<caf::actor_system>(*st.cfg);
  caf::logger::set_current_actor_system(nullptr);  // as host_self does, for the constructor's
  for (auto& sub : st.opt.subscriptions) st.hub->subscribe(std::move(sub.filter), std::move(sub.fn));
}

// The event bus, and with durability batch the commit log the turns' bytes go through.
void spawn_bus_and_log(runtime_impl& st) {
  st.actors.bus = st.sys->spawn(event_bus, st.hub);
  if (!st.log || !st.log->log) return;
  st.actors.commit_log = spawn_commit_log_actor(st, st.files, st.state_dir, st.log->recovered.state_id,
                                                *std::exchange(st.log->log, std::nullopt));
}

// Store maintenance: spawned before the stores (they tell it of high water), linked to them
// and to the router once those exist (link_actors).
void spawn_maintenance(runtime_impl& st, const runtime_options& options, const loaded_stores& loaded) {
  maintenance_actor_config mc;
  mc.settings = &st.settings;
  mc.files = st.files;
  mc.time = st.time;
  mc.sessions_dir = loaded.sessions_dir;
  mc.bus = st.actors.bus;
  mc.hub = st.hub;
  mc.self_scheduling = !options.virtual_time;
  mc.feed = st.feed.get();
  mc.keep_picture = st.keep_maintenance_picture;
  mc.probe = st.probe;  // the transcript write lock cold storage takes
  mc.per_shard = bool(options.shard_of);  // the shards' stores come with runtime::open_shard
  st.actors.maintenance = spawn_io(*st.sys, options.files_block, maintenance_actor, mc);
}

void spawn_stores(runtime_impl& st, const loaded_stores& loaded) {
  for (auto& [agent, file] : loaded.files)
    st.actors.stores[agent] = spawn_store_actor(st, file, agent, st.actors.commit_log, st.actors.maintenance);
  if (st.actors.commit_log) {  // the log hands the sessions' rows to the stores (before any row arrives)
    actors::store_routes routes;
    for (auto& [agent, file] : loaded.files) routes.by_agent[agent] = {file->path(), st.actors.stores[agent]};
    caf::anon_send(st.actors.commit_log, spawned_atom::value, std::move(routes));
  }
}

// The timers, then the router (which needs them; they learn its address by (spawned, router)
// in link_actors, before any schedule).
void spawn_timers_and_router(runtime_impl& st, const runtime_options& options, const loaded_stores& loaded) {
  timer_actor_config tc;
  tc.time = st.time;
  tc.self_scheduling = !options.virtual_time;
  tc.bus = st.actors.bus;
  tc.hub = st.hub;
  tc.agent_of_keys = default_agent_of(st.settings.routing);
  st.actors.timers = st.sys->spawn(timer_actor, tc);
  router_config rc;
  rc.core.files = st.files;
  rc.core.time = st.time;
  rc.core.probe = st.probe;
  rc.core.settings = &st.settings;
  rc.core.zone = st.zone;
  rc.core.providers = &st.providers;
  rc.core.ids = st.ids;
  rc.runner = st.async_runner.get();
  rc.gate = st.gate.get();
  rc.pool = st.pool.get();
  rc.timers_clock = st.timers_clock;
  rc.agents.store = st.actors.stores;
  rc.agents.sessions_dir = loaded.sessions_dir;
  rc.commit_log = st.actors.commit_log;
  rc.bus = st.actors.bus;
  rc.hub = st.hub;
  rc.self_scheduling = !options.virtual_time;
  rc.timers = st.actors.timers;
  rc.shard_of = options.shard_of;
  st.actors.router = actors::spawn_router(*st.sys, rc);
}

// The sub-agent spawner, the relay the host callbacks are answered through, and host_steps
// (the relay's and the others' asks of settle(), advance_clock() and run_due_maintenance()).
void spawn_host_side(runtime_impl& st, const runtime_options& options, const loaded_stores& loaded) {
  subagent_actor_config sc;
  sc.settings = &st.settings;
  sc.files = st.files;
  sc.time = st.time;
  sc.stores = st.actors.stores;
  sc.sessions_dir = loaded.sessions_dir;
  sc.router = st.actors.router;
  sc.bus = st.actors.bus;
  sc.hub = st.hub;
  sc.ids = st.ids;
  place_subagents_by_shard(st, sc);
  st.actors.subagents = spawn_io(*st.sys, options.files_block, subagent_actor, std::move(sc));  // a fork reads and fsyncs files
  st.actors.relay = st.sys->spawn(outcome_relay, st.actors.router, st.actors.subagents, st.pending);
  host_steps_links steps{st.actors.relay, st.actors.commit_log, st.actors.bus, st.actors.timers, st.actors.stores,
                         st.actors.maintenance, turn_wait(st.settings)};
  st.actors.steps = st.sys->spawn(host_steps, std::move(steps));
}

// The links made by message: the timers learn the router, the maintenance actor the stores and
// the router (it tells the stores of the router). Then, sent after those, when every stored
// session goes stale, and store.quarantined for each sessions.json set aside while loading.
void link_and_schedule(runtime_impl& st, const loaded_stores& loaded) {
  host_self self{*st.sys};
  self->send(st.actors.timers, spawned_atom::value, passivate_port(st.actors.router));
  self->send(st.actors.maintenance, spawned_atom::value, maintenance_links{st.actors.stores, st.actors.router});
  const std::int64_t now = st.time->now_ms();
  for (auto& [agent, file] : loaded.files) schedule_expiries(st, self, *file);
  for (const auto& rep : st.report.stores) {
    if (!rep.quarantine) continue;
    publish(st.actors.bus, *st.hub,
            payloads::make_event({}, now,
                                 payloads::store_quarantined{rep.quarantine->quarantined_path, rep.quarantine->cause,
                                                             std::int64_t(rep.quarantine->rows_from_headers.size()),
                                                             std::int64_t(rep.quarantine->unrecoverable_keys.size())}));
  }
}

}  // namespace

void schedule_expiries(runtime_impl& st, caf::scoped_actor& self, const storage::session_store_file& file) {
  const std::int64_t now = st.time->now_ms();
  for (const auto& row : file.store()) {
    const std::string key(row.key);
    if (auto ex = expiry_of(key, row.entry, facts_from_row(key, row.entry), st.settings.session.reset, *st.zone, now))
      self->send(st.actors.timers, schedule_atom::value, key, ex->at_ms, ex->reason);
  }
}

actors::store_actor_type spawn_store_actor(runtime_impl& st, std::shared_ptr<storage::session_store_file> file,
                                           const std::string& agent, const actors::commit_log_actor& log,
                                           const actors::maintenance_actor_type& maintenance, int shards) {
  store_actor_config sc;
  sc.pace = actors::store_write_pace(st.settings.storage);
  sc.commit_log = log;  // batch: row changes are log records, the file is written lazily
  sc.agent_id = agent;
  sc.bus = st.actors.bus;
  sc.hub = st.hub;
  sc.time = st.time;
  sc.maintenance = maintenance;
  sc.high_water_rows =
      static_cast<std::size_t>(entry_high_water(actors::shard_share(st.settings.maintenance, shards).max_entries));
  sc.self_flushing = !st.opt.virtual_time;
  sc.watch_edits = st.settings.storage.watch_store_edits;
  return spawn_io(*st.sys, st.opt.files_block, store_actor, std::move(file), sc);
}

actors::commit_log_actor spawn_commit_log_actor(runtime_impl& st, storage::fs* files, const std::string& state_dir,
                                                const std::string& state_id, storage::commit_log::new_log first) {
  actors::commit_log_config lc;
  lc.files = files;
  lc.time = st.time;
  lc.state_dir = state_dir;
  lc.state_id = state_id;
  lc.first = std::move(first);
  lc.window_ms = st.settings.storage.batch_window_ms;
  lc.checkpoint_bytes = st.settings.storage.commit_log_checkpoint_bytes;
  lc.checkpoint_interval_ms = st.settings.storage.commit_log_checkpoint_interval_ms;
  lc.preallocate_bytes = st.settings.storage.commit_log_preallocate_bytes;
  lc.recycled_logs = st.settings.storage.commit_log_recycled_files;
  lc.files_block = st.opt.files_block;
  lc.self_scheduling = !st.opt.virtual_time;
  // Not detached: it writes to the page cache like the sessions do; its sync workers are.
  return st.sys->spawn(actors::commit_log, std::move(lc));
}

result<std::unique_ptr<runtime>> runtime::start(runtime_options options) {
  auto st = std::make_unique<runtime_impl>();
  SRT_RETURN_IF_ERROR(take_options(*st, options));
  start_model_plumbing(*st, options);
  SRT_RETURN_IF_ERROR(settle_places(*st));
  // Sessions per shard: the shards' stores open while running (runtime_shards.cpp), none here.
  auto loaded = options.shard_of ? result<loaded_stores>(loaded_stores{}) : load_stores(*st, options);
  if (!loaded.ok()) return loaded.error();
  start_actor_system(*st, options);
  spawn_bus_and_log(*st);
  spawn_maintenance(*st, options, *loaded);
  spawn_stores(*st, *loaded);
  spawn_timers_and_router(*st, options, *loaded);
  spawn_host_side(*st, options, *loaded);
  link_and_schedule(*st, *loaded);
  return std::unique_ptr<runtime>(new runtime(std::move(st)));
}

}  // namespace sessionrt::runtime
