#include "runtime/runtime.hpp"


#include "actors/session/hygiene/display_projection.hpp"

#include <caf/all.hpp>
#include <date/tz.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <limits>
#include <map>
#include <thread>

#include "actors/session/session_model.hpp"
#include "actors/session/fork_planner.hpp"
#include "actors/session/compaction_planner.hpp"
#include "actors/caf_types.hpp"
#include "actors/events/event_bus.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "actors/events/event_hub.hpp"
#include "actors/maintenance/maintenance_actor.hpp"
#include "actors/maintenance/manual_archive.hpp"
#include "actors/model/model_gate.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/router/router_actor.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/history_count.hpp"
#include "actors/session/session_core.hpp"
#include "actors/session/session_rollover.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/subagent/subagent_actor.hpp"
#include "actors/commit_log/commit_log_actor.hpp"
#include "runtime/commit_log_setup.hpp"
#include "actors/timers/timer_actor.hpp"
#include "messages/iso_time.hpp"
#include "storage/change_feed_fs.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_header.hpp"
#include "messages/js_text.hpp"
#include "runtime/blocking_pool.hpp"
#include "runtime/config.hpp"
#include "runtime/sync_runner_adapter.hpp"
#include "storage/session_paths.hpp"
#include "storage/store_reconcile.hpp"
#include "storage/system_clock.hpp"
#include "storage/write_lock.hpp"
#include "storage/archive_names.hpp"
#include "storage/context_builder.hpp"
#include "storage/context_page.hpp"
#include "messages/ids.hpp"
#include "actors/session/queue_settings.hpp"

namespace sessionrt::runtime {

using namespace sessionrt::actors;

struct runtime::impl {
  runtime_options opt;
  session_ids ids;  // from opt.id_seed: every new session id the runtime asks for
  actors::runtime_settings settings;
  clock* time = nullptr;
  // While maintenance keeps its picture, every file call of the runtime goes through the feed,
  // which tells the maintenance pass what changed in the sessions dirs (declared before the
  // actor system: outlives it). Null otherwise: each pass lists the dirs in full.
  std::unique_ptr<storage::change_feed_fs> feed;
  bool keep_maintenance_picture = false;
  storage::fs* files = nullptr;
  storage::process_probe* probe = nullptr;
  const date::time_zone* zone = nullptr;
  std::string state_dir;
  startup_report report;
  std::vector<storage::write_lock> store_locks;
  std::shared_ptr<event_hub> hub = std::make_shared<event_hub>();
  compaction_providers providers;
  // The model plumbing (declared before the actor system: destroyed after it).
  std::unique_ptr<blocking_pool> pool;         // a synchronous runner's calls, providers' summaries
  std::unique_ptr<sync_runner_adapter> adapter;
  std::unique_ptr<model_gate> gate;
  std::shared_ptr<async_model_runner> async_runner;  // kept alive while sessions call it
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor router, bus, commit_log, timers;  // commit_log: durability batch only
  std::optional<commit_log_setup> log;  // the commit log replayed (and its new file, until its actor takes it)
  caf::actor maintenance;  // the store maintenance supervisor (maintenance_actor.hpp)
  // The host callbacks of send(ev, done), answered by the outcome relay (ids in messages).
  std::shared_ptr<pending_outcomes> pending = std::make_shared<pending_outcomes>();
  caf::actor relay;
  caf::actor subagents;  // spawns sub-agent sessions (subagent_actor.hpp)
  std::map<std::string, caf::actor> stores;
  bool stopped = false;
  storage::context_counts history_counts;  // what history pages counted (history())
};

namespace {

// The blocking actor a host thread's synchronous call uses. CAF 0.17's scoped_actor parks a
// reference to the system's logger in the calling thread's thread_local, and ~actor_system
// waits until the logger is gone: a thread that ever called the runtime (a host's main thread,
// a pooled worker) kept the system from finishing when another thread stopped it, forever.
// The runtime logs through spdlog, never CAF's logger, so the reference is dropped at once.
class host_self : public caf::scoped_actor {
 public:
  explicit host_self(caf::actor_system& sys) : caf::scoped_actor(sys) {}
  ~host_self() { caf::logger::set_current_actor_system(nullptr); }
  host_self(const host_self&) = delete;
  host_self& operator=(const host_self&) = delete;
};

// Puts `entry` as `key`'s row in the agent's store and waits until it is durable: in
// sessions.json, or with durability batch in the commit log (the file follows lazily).
status put_row_now(caf::scoped_actor& self, const caf::actor& store, const std::string& agent, const std::string& key,
                   const session_entry& entry) {
  status failed;
  self->request(store, caf::infinite, put_atom::value, key, entry, flush_atom::value)
      .receive([&](bool ok) { if (!ok) failed = status(errc::io_error, "writing the store of agent " + agent + " failed"); },
               [&](caf::error& e) { failed = status(errc::io_error, "writing the row of " + key + ": " + self->system().render(e)); });
  return failed;
}

// Asks every agent's store actor to write sessions.json now and waits for each; the first
// failure names its agent.
status write_stores(caf::scoped_actor& self, const std::map<std::string, caf::actor>& stores, caf::duration timeout) {
  status result;
  for (const auto& [agent, store] : stores)
    self->request(store, timeout, flush_atom::value, stop_atom::value)
        .receive([](bool) {},
                 [&, agent = agent](caf::error& e) {
                   if (result.ok())
                     result = status(errc::io_error,
                                     fmt::format("writing the store of agent {}: {}", agent, self->system().render(e)));
                 });
  return result;
}

// An actor whose calls into the fs may block gets a thread of its own.
template <class F, class... Ts>
auto spawn_io(caf::actor_system& sys, bool files_block, F fun, Ts&&... xs) {
  return files_block ? sys.spawn<caf::detached>(fun, std::forward<Ts>(xs)...) : sys.spawn(fun, std::forward<Ts>(xs)...);
}

std::vector<std::string> agent_ids(const actors::runtime_settings& s) {
  std::vector<std::string> ids;
  for (const auto& a : s.routing.agents) ids.push_back(normalize_agent_id(a.id));
  if (ids.empty()) ids.push_back(default_agent_of(s.routing));
  return ids;
}

}  // namespace

runtime::runtime(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

runtime::~runtime() {
  if (impl_ && !impl_->stopped) (void)stop();
}

result<std::unique_ptr<runtime>> runtime::start(runtime_options options) {
  auto st = std::make_unique<impl>();
  st->opt = options;
  st->ids = session_ids(options.id_seed);
  st->settings = options.settings;
  st->time = options.time ? options.time : &storage::real_clock();
  st->keep_maintenance_picture = st->settings.storage.keep_maintenance_picture.value_or(options.virtual_time);
  storage::fs& base_files = options.files ? *options.files : storage::posix_fs();
  if (st->keep_maintenance_picture) st->feed = std::make_unique<storage::change_feed_fs>(base_files);
  st->files = st->feed ? static_cast<storage::fs*>(st->feed.get()) : &base_files;
  st->probe = options.probe ? options.probe : &storage::real_process_probe();
  if (options.virtual_time && !options.time)
    return status(errc::invalid_argument, "virtual_time needs a manual clock in runtime_options.time");
  // The workspace's AGENTS.md is the system prompt's project context (OpenClaw's), read once.
  if (st->settings.prompts.include_agents_md && !st->settings.workspace_dir.empty()) {
    const std::string agents_md = st->settings.workspace_dir + "/AGENTS.md";
    if (st->files->lstat(agents_md).ok()) {
      auto text = storage::read_file(*st->files, agents_md, 1u << 20);
      if (!text.ok()) return text.error().with_context("reading the workspace's AGENTS.md");
      st->settings.prompts.project_context = std::move(*text);
    }
  }
  alarms* timers_clock = options.timers_clock;
  if (!timers_clock && options.virtual_time) {
    auto* manual = dynamic_cast<manual_clock*>(st->time);
    if (!manual) return status(errc::invalid_argument, "virtual_time needs a manual_clock in runtime_options.time");
    timers_clock = manual;
  }
  if (!timers_clock) timers_clock = &storage::real_alarms();

  // The model: asynchronous when the runner can be; a synchronous one runs on the pool.
  st->pool = std::make_unique<blocking_pool>(st->settings.model.sync_runner_threads);
  st->async_runner = options.async_runner;
  if (!st->async_runner && options.runner)
    st->async_runner = std::dynamic_pointer_cast<async_model_runner>(options.runner);
  if (!st->async_runner && options.runner) {
    st->adapter = std::make_unique<sync_runner_adapter>(options.runner, *st->pool);
    st->async_runner = std::shared_ptr<async_model_runner>(st->async_runner, st->adapter.get());  // not owning
  }
  st->gate = std::make_unique<model_gate>(st->settings.model.max_concurrent, st->settings.model.max_concurrent_by_provider);

  auto zone = resolve_reset_zone(st->settings.session.reset.timezone);
  if (!zone.ok()) return zone.error().with_context("session.timezone");
  st->zone = *zone;
  if (st->settings.state_dir.empty()) {
    const storage::env_lookup env = process_environment();
    auto dir = storage::default_state_dir(env);
    if (!dir.ok()) return dir.error();
    st->settings.state_dir = *dir;
  }
  st->state_dir = st->settings.state_dir;

  // Each live session holds its transcript open: fit maxLiveSessions to the open-file limit.
  auto fds = storage::apply_fd_budget(st->settings.session.max_live_sessions);
  if (fds.ok()) {
    st->report.open_files = *fds;
    if (fds->lowered) {
      spdlog::warn("session.maxLiveSessions {} does not fit the open-file limit ({} of hard limit {}); {} live sessions "
                   "at most (raise `ulimit -n` to allow more)",
                   st->settings.session.max_live_sessions, fds->soft_after, fds->hard, fds->max_live_sessions);
      st->settings.session.max_live_sessions = fds->max_live_sessions;
    }
  }

  // Each agent's store: directory, lock (one runtime per state dir), load.
  std::map<std::string, std::shared_ptr<storage::session_store_file>> loaded;
  agent_stores agents;
  for (const auto& agent : agent_ids(st->settings)) {
    auto dir = storage::agent_sessions_dir(st->state_dir, agent);
    if (!dir.ok()) return dir.error();
    SRT_RETURN_IF_ERROR(storage::ensure_dir(*st->files, *dir));
    auto path = storage::store_path(st->state_dir, agent);
    if (!path.ok()) return path.error();
    storage::write_lock_options lo = st->settings.session.write_lock;
    lo.acquire_timeout_ms = options.store_lock_timeout_ms;
    lo.reentrant = false;  // one runtime per store, even within a process
    lo.max_hold_ms = std::max<std::int64_t>(lo.max_hold_ms, 7LL * 24 * 3600 * 1000);
    auto lock = storage::acquire_write_lock(*st->files, *st->time, *st->probe, *path, lo);
    if (!lock.ok())
      return lock.error().with_context(fmt::format("another runtime owns {} (stop it, or use another stateDir)", *path));
    st->store_locks.push_back(std::move(*lock));
    if (st->store_locks.size() == 1) {  // the state dir is ours: the commit log first, before any load
      auto log = open_commit_log(*st->files, st->state_dir);
      if (!log.ok()) return log.error();
      st->log = std::move(*log);
    }
    storage::store_file_options fo;
    fo.spill_min_bytes = st->settings.storage.store_spill_min_bytes.value_or(
        options.files_block ? storage::store_file_options().spill_min_bytes : std::numeric_limits<std::size_t>::max());
    auto file = std::make_shared<storage::session_store_file>(*st->files, *st->time, *path, fo);
    auto rep = file->load();
    if (!rep.ok()) return rep.error();
    if (rep->quarantine)
      spdlog::error("sessions.json of agent {} was unreadable ({}); moved to {}; rebuilt {} row(s) from transcript headers, "
                    "{} key(s) could not be recovered",
                    agent, rep->quarantine->cause, rep->quarantine->quarantined_path,
                    rep->quarantine->rows_from_headers.size(), rep->quarantine->unrecoverable_keys.size());
    // The row changes the commit log holds that the file lacks (durability batch), before the
    // rows are reconciled with their transcripts; written before the logs go (below).
    const bool replayed = apply_logged_rows(*st->log, *file);
    // A crash between a turn's ack and the store's next write leaves a newer transcript than
    // its row: adopt it (store_reconcile.hpp).
    auto rec = storage::reconcile_store(*st->files, file->store(), *dir);
    if (!rec.ok()) return rec.error().with_context("reconciling " + *path + " with its transcripts");
    if (replayed && rec->adopted.empty()) SRT_RETURN_IF_ERROR(file->save());
    if (!rec->adopted.empty()) {
      SRT_RETURN_IF_ERROR(file->save());
      for (const auto& a : rec->adopted)
        spdlog::warn("adopted transcript {} for {} (the row named {}): its row write was lost", a.path, a.key,
                     a.previous_session_id.empty() ? std::string("nothing") : a.previous_session_id);
    }
    st->report.stores.push_back(*rep);
    st->report.adopted.insert(st->report.adopted.end(), rec->adopted.begin(), rec->adopted.end());
    loaded[agent] = file;
    agents.sessions_dir[agent] = *dir;
    if (st->feed) st->feed->watch(*dir);
  }

  // Every store has its row changes: the old logs go, this run's log starts (batch).
  SRT_RETURN_IF_ERROR(finish_commit_log(*st->files, *st->time, st->state_dir, *st->log,
                                        st->settings.storage.durability == storage::durability::batch));

  // The actor system and the actors.
  st->cfg = std::make_unique<caf::actor_system_config>();
  const unsigned threads = options.threads ? options.threads : std::max(2u, std::thread::hardware_concurrency());
  st->cfg->set("scheduler.max-threads", static_cast<std::size_t>(threads));
  st->cfg->set("logger.verbosity", caf::atom("quiet"));
  if (options.work_sharing.value_or(options.virtual_time)) st->cfg->set("scheduler.policy", caf::atom("sharing"));
  // The message types that could cross nodes (caf_types.hpp: the others stay process-local).
  st->cfg->add_message_type<status>("sessionrt::status")
      .add_message_type<system_event>("sessionrt::system_event")
      .add_message_type<turn_outcome>("sessionrt::turn_outcome")
      .add_message_type<route_facts>("sessionrt::route_facts")
      .add_message_type<summary_reply>("sessionrt::summary_reply")
      .add_message_type<actors::router_stats>("sessionrt::router_stats")
      .add_message_type<subagent_spec>("sessionrt::subagent_spec");
  st->sys = std::make_unique<caf::actor_system>(*st->cfg);
  caf::logger::set_current_actor_system(nullptr);  // as host_self does, for the constructor's
  auto& sys = *st->sys;
  for (auto& sub : options.subscriptions) st->hub->subscribe(std::move(sub.filter), std::move(sub.fn));
  st->bus = caf::actor_cast<caf::actor>(sys.spawn(event_bus, st->hub));
  if (st->log && st->log->log) {  // durability batch: the turns' bytes go through the commit log
    actors::commit_log_config lc;
    lc.files = st->files;
    lc.time = st->time;
    lc.state_dir = st->state_dir;
    lc.state_id = st->log->recovered.state_id;
    lc.first = *std::exchange(st->log->log, std::nullopt);
    lc.window_ms = st->settings.storage.batch_window_ms;
    lc.files_block = options.files_block;
    lc.self_scheduling = !options.virtual_time;
    // Not detached: it writes to the page cache like the sessions do; its sync workers are.
    st->commit_log = caf::actor_cast<caf::actor>(sys.spawn(actors::commit_log, std::move(lc)));
  }
  // Store maintenance: spawned before the stores (they tell it of high water), linked to them
  // and to the router once those exist.
  {
    maintenance_actor_config mc;
    mc.settings = &st->settings;
    mc.files = st->files;
    mc.time = st->time;
    mc.sessions_dir = agents.sessions_dir;
    mc.bus = st->bus;
    mc.hub = st->hub;
    mc.self_scheduling = !options.virtual_time;
    mc.feed = st->feed.get();
    mc.keep_picture = st->keep_maintenance_picture;
    mc.probe = st->probe;  // the transcript write lock cold storage takes
    st->maintenance = spawn_io(sys, options.files_block, maintenance_actor, mc);
  }
  for (auto& [agent, file] : loaded) {
    store_actor_config sc;
    sc.flush_window_ms = actors::store_flush_window(st->settings.storage);
    sc.commit_log = st->commit_log;  // batch: row changes are log records, the file is written lazily
    sc.agent_id = agent;
    sc.bus = st->bus;
    sc.hub = st->hub;
    sc.time = st->time;
    sc.maintenance = st->maintenance;
    sc.high_water_rows = static_cast<std::size_t>(entry_high_water(st->settings.maintenance.max_entries));
    sc.self_flushing = !options.virtual_time;
    sc.watch_edits = st->settings.storage.watch_store_edits;
    st->stores[agent] = caf::actor_cast<caf::actor>(spawn_io(sys, options.files_block, store_actor, file, sc));
    agents.store[agent] = st->stores[agent];
  }
  if (st->commit_log) {  // the log hands the sessions' rows to the stores (before any row arrives)
    actors::store_routes routes;
    for (auto& [agent, file] : loaded) routes.by_agent[agent] = {file->path(), st->stores[agent]};
    caf::anon_send(caf::actor_cast<actors::commit_log_actor>(st->commit_log), spawned_atom::value, std::move(routes));
  }
  // The router needs the timers and the timers the router: the timers get it by message.
  timer_actor_config tc;
  tc.time = st->time;
  tc.self_scheduling = !options.virtual_time;
  tc.bus = st->bus;
  tc.hub = st->hub;
  tc.agent_of_keys = default_agent_of(st->settings.routing);
  router_config rc;
  rc.core.files = st->files;
  rc.core.time = st->time;
  rc.core.probe = st->probe;
  rc.core.settings = &st->settings;
  rc.core.zone = st->zone;
  rc.core.providers = &st->providers;
  rc.core.ids = st->ids;
  rc.runner = st->async_runner.get();
  rc.gate = st->gate.get();
  rc.pool = st->pool.get();
  rc.timers_clock = timers_clock;
  rc.agents = agents;
  rc.commit_log = st->commit_log;
  rc.bus = st->bus;
  rc.hub = st->hub;
  rc.self_scheduling = !options.virtual_time;
  // The timers learn the router's address by (spawned, router), before any schedule.
  host_self self{sys};
  st->timers = caf::actor_cast<caf::actor>(sys.spawn(timer_actor, tc));
  rc.timers = st->timers;
  st->router = caf::actor_cast<caf::actor>(actors::spawn_router(sys, rc));
  {
    subagent_actor_config sc;
    sc.settings = &st->settings;
    sc.files = st->files;
    sc.time = st->time;
    sc.stores = st->stores;
    sc.sessions_dir = agents.sessions_dir;
    sc.router = st->router;
    sc.bus = st->bus;
    sc.hub = st->hub;
    sc.ids = st->ids;
    st->subagents = spawn_io(sys, options.files_block, subagent_actor, std::move(sc));  // a fork reads and fsyncs files
  }
  st->relay = sys.spawn(outcome_relay, st->router, st->subagents, st->pending);
  self->send(st->timers, spawned_atom::value, st->router);
  self->send(st->maintenance, spawned_atom::value, maintenance_links{st->stores, caf::actor_cast<caf::actor>(st->router)});

  // Start-up schedule: when every stored session goes stale.
  const std::int64_t now = st->time->now_ms();
  for (auto& [agent, file] : loaded)
    for (const auto& row : file->store()) {
      const std::string key(row.key);
      if (auto ex = expiry_of(key, row.entry, facts_from_row(key, row.entry), st->settings.session.reset, *st->zone, now))
        self->send(st->timers, schedule_atom::value, key, ex->at_ms, ex->reason);
    }
  for (const auto& rep : st->report.stores) {
    if (!rep.quarantine) continue;
    publish(st->bus, *st->hub,
            payloads::make_event({}, now,
                                 payloads::store_quarantined{rep.quarantine->quarantined_path, rep.quarantine->cause,
                                                             std::int64_t(rep.quarantine->rows_from_headers.size()),
                                                             std::int64_t(rep.quarantine->unrecoverable_keys.size())}));
  }
  return std::unique_ptr<runtime>(new runtime(std::move(st)));
}

namespace {

// The future form of a send(ev, done).
template <class Event>
std::future<turn_outcome> future_of(runtime& rt, Event ev) {
  auto p = std::make_shared<std::promise<turn_outcome>>();
  auto f = p->get_future();
  rt.send(std::move(ev), [p](turn_outcome out) { p->set_value(std::move(out)); });
  return f;
}

// After stop() every send is answered at once.
bool refused_when_stopped(bool stopped, const std::function<void(turn_outcome)>& done) {
  if (!stopped) return false;
  turn_outcome out;
  out.st = status(errc::cancelled, "the runtime is stopped");
  done(std::move(out));
  return true;
}

}  // namespace

std::future<turn_outcome> runtime::send(chat_event ev) { return future_of(*this, std::move(ev)); }

void runtime::send(chat_event ev, std::function<void(turn_outcome)> done) {
  if (refused_when_stopped(impl_->stopped, done)) return;
  caf::anon_send(impl_->relay, chat_atom::value, impl_->pending->add(std::move(done)), std::move(ev));
}

std::future<turn_outcome> runtime::send(system_event ev) { return future_of(*this, std::move(ev)); }

void runtime::send(system_event ev, std::function<void(turn_outcome)> done) {
  if (refused_when_stopped(impl_->stopped, done)) return;
  // Through the relay: behind the turns sent before it.
  caf::anon_send(impl_->relay, system_atom::value, impl_->pending->add(std::move(done)), std::move(ev));
}

// ---- Sub-agents ----

std::future<turn_outcome> runtime::spawn_subagent(const std::string& parent_key, actors::subagent_spec spec) {
  auto p = std::make_shared<std::promise<turn_outcome>>();
  auto f = p->get_future();
  spawn_subagent(parent_key, std::move(spec), [p](turn_outcome out) { p->set_value(std::move(out)); });
  return f;
}

void runtime::spawn_subagent(const std::string& parent_key, actors::subagent_spec spec,
                             std::function<void(turn_outcome)> done) {
  if (refused_when_stopped(impl_->stopped, done)) return;
  // Through the relay, as the turns: the outcome reaches `done` through `pending` (stop()
  // cancels what is still unanswered).
  caf::anon_send(impl_->relay, spawn_atom::value, impl_->pending->add(std::move(done)), parent_key, std::move(spec));
}

const caf::actor& runtime::subagents() const { return impl_->subagents; }

const caf::actor& runtime::router() const { return impl_->router; }

void runtime::register_compaction_provider(const std::string& id, std::shared_ptr<compaction_provider> provider) {
  impl_->providers.add(id, std::move(provider));
}

std::uint64_t runtime::subscribe(event_filter filter, std::function<void(const lifecycle_event&)> fn) {
  return impl_->hub->subscribe(std::move(filter), std::move(fn));
}

bool runtime::unsubscribe(std::uint64_t id) { return impl_->hub->unsubscribe(id); }

result<std::vector<session_row>> runtime::sessions() {
  std::vector<session_row> out;
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  host_self self{*impl_->sys};
  status failed;
  for (auto& [agent, store] : impl_->stores)
    self->request(store, caf::infinite, list_atom::value)
        .receive(
            [&, agent = agent](entry_rows& rows) {
              for (auto& [k, e] : rows) out.push_back({agent, k, std::move(e)});
            },
            [&, agent = agent](caf::error& e) {
              if (failed.ok())
                failed = status(errc::io_error, fmt::format("listing the sessions of agent {}: {}", agent,
                                                            self->system().render(e)));
            });
  if (!failed.ok()) return failed;
  return out;
}

result<std::optional<session_entry>> runtime::session(const std::string& key, const std::string& agent_id) {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  std::string agent = agent_id;
  if (agent.empty()) {
    auto parsed = parse_agent_session_key(key);
    agent = parsed ? parsed->agent_id : default_agent_of(impl_->settings.routing);
  }
  auto it = impl_->stores.find(agent);
  if (it == impl_->stores.end()) return status(errc::not_found, fmt::format("no agent {} is configured", agent));
  std::optional<session_entry> out;
  status failed;
  host_self self{*impl_->sys};
  self->request(it->second, caf::infinite, get_atom::value, key)
      .receive(
          [&](entry_reply& r) {
            if (!r.error.empty())
              failed = status(errc::corrupt, "the session row of " + key + " cannot be read: " + r.error);
            else if (r.found)
              out = std::move(r.entry);
          },
          [&](caf::error& e) {
            failed = status(errc::io_error, "asking the store for " + key + ": " + self->system().render(e));
          });
  if (!failed.ok()) return failed;
  return out;
}

runtime::model_call_stats runtime::model_calls() const {
  const auto s = impl_->gate->stats();
  return {s.running, s.waiting, s.peak_running, s.admitted, s.admitted_late};
}

runtime_stats runtime::stats() {
  runtime_stats out;
  if (impl_->stopped) {
    out.stopped = true;
    return out;
  }
  host_self self{*impl_->sys};
  self->request(impl_->router, caf::infinite, stats_atom::value)
      .receive(
          [&](actors::router_stats& r) {
            out.live = r.slots.live;
            out.trimmed = r.slots.trimmed;
            out.slots = r.slots.slots;
            out.open = r.slots.open;
            out.passivating = r.slots.passivating;
            out.queued = r.slots.queued;
            out.waiting = r.slots.waiting;
            out.turns = r.turns;
            out.routes = r.routes;
          },
          [&](caf::error& e) { out.router_error = self->system().render(e); });
  self->request(impl_->timers, caf::infinite, stats_atom::value)
      .receive([&](std::size_t n) { out.timers = n; },
               [&](caf::error& e) { out.timers_error = self->system().render(e); });
  const auto calls = impl_->gate->stats();
  out.model_running = calls.running;
  out.model_waiting = calls.waiting;
  out.model_peak = calls.peak_running;
  return out;
}

void runtime::settle() {
  if (impl_->stopped) return;
  host_self self{*impl_->sys};
  // The router, then every session it has, handled what was sent before; then the bus
  // published the events that produced.
  auto warn = [&](const char* what) {
    return [&, what](caf::error& e) { spdlog::warn("settle: {} did not answer: {}", what, self->system().render(e)); };
  };
  // Through the relay: behind the turns sent before (which wait there for the router).
  self->request(impl_->relay, caf::infinite, settle_atom::value).receive([](bool) {}, warn("the router"));
  // The records those sessions sent (a turn's, or the user's line of a model call that waits)
  // are answered and no log sync runs: a power cut now finds what a later one would.
  if (impl_->commit_log)
    self->request(caf::actor_cast<actors::commit_log_actor>(impl_->commit_log), caf::infinite, settle_atom::value)
        .receive([](bool) {}, warn("the commit log"));
  self->request(impl_->bus, caf::infinite, settle_atom::value).receive([] {}, warn("the event bus"));
}

status runtime::flush() {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  host_self self{*impl_->sys};
  return write_stores(self, impl_->stores, caf::infinite);
}

status runtime::advance(std::int64_t ms) {
  SRT_RETURN_IF_ERROR(advance_clock(ms));
  auto ran = run_due_maintenance();
  if (!ran.ok()) return ran.error();
  return flush();
}

namespace {
// A blocking request's error, as the first failure of a virtual-time step.
auto step_failure(caf::scoped_actor& self, status& failed, const char* what) {
  return [&self, &failed, what](caf::error& e) {
    if (failed.ok()) failed = status(errc::io_error, fmt::format("advance: {}: {}", what, self->system().render(e)));
  };
}
}  // namespace

status runtime::advance_clock(std::int64_t ms) {
  if (!impl_->opt.virtual_time) return status(errc::unsupported, "advance() needs virtual time (runtime_options.virtual_time)");
  auto* manual = dynamic_cast<manual_clock*>(impl_->time);
  if (!manual) return status(errc::invalid_argument, "virtual time needs a manual_clock");
  manual->advance(ms);  // fires the alarms that became due (model answers, timeouts)
  host_self self{*impl_->sys};
  status failed;
  // The timers fire what became due (their passivation requests reach the router before the
  // sweep below, being sent earlier to the same router).
  self->request(impl_->timers, caf::infinite, tick_atom::value).receive([] {}, step_failure(self, failed, "the timers"));
  // The router sweeps, and answers once every passivation it started (or the timers asked
  // for) is done; then the bus has every event those passivations published.
  self->request(impl_->relay, caf::infinite, tick_atom::value, settle_atom::value)
      .receive([](bool) {}, step_failure(self, failed, "the router"));
  self->request(impl_->bus, caf::infinite, settle_atom::value).receive([] {}, step_failure(self, failed, "the event bus"));
  return failed;
}

result<bool> runtime::run_due_maintenance() {
  if (!impl_->opt.virtual_time) return status(errc::unsupported, "run_due_maintenance() needs virtual time");
  host_self self{*impl_->sys};
  status failed;
  bool ran = false;
  // Each store answers a read first: a put it took before has then told the maintenance actor
  // of high water (sent while taking the put, so ahead of the tick below in that mailbox);
  // otherwise whether this tick sees it would be thread timing.
  for (const auto& [agent_id, store] : impl_->stores)
    self->request(caf::actor_cast<actors::store_actor_type>(store), caf::infinite, actors::get_atom::value, std::string())
        .receive([](const entry_reply&) {}, step_failure(self, failed, "a store"));
  self->request(impl_->maintenance, caf::infinite, tick_atom::value, settle_atom::value)
      .receive([&](bool pass) { ran = pass; }, step_failure(self, failed, "the maintenance actor"));
  // The bus then has the events of the pass.
  if (ran) self->request(impl_->bus, caf::infinite, settle_atom::value).receive([] {}, step_failure(self, failed, "the event bus"));
  if (!failed.ok()) return failed;
  return ran;
}

status runtime::stop(std::chrono::milliseconds deadline) {
  if (impl_->stopped) return {};
  impl_->stopped = true;
  status result;
  {
    host_self self{*impl_->sys};
    const auto t = caf::duration(deadline);
    self->send_exit(impl_->maintenance, caf::exit_reason::user_shutdown);  // no file moves while stopping
    self->request(impl_->relay, t, stop_atom::value)
        .receive([](bool) {},
                 [&](caf::error& e) {
                   result = status(errc::timeout, "stopping the sessions: " + self->system().render(e));
                 });
    if (status written = write_stores(self, impl_->stores, t); result.ok()) result = written;
    // Let the last events reach subscribers.
    self->request(impl_->bus, t, settle_atom::value).receive([] {}, [&](caf::error& e) {
      spdlog::warn("stopping: the last lifecycle events may not have reached subscribers: {}", self->system().render(e));
    });
    // The relay has every outcome the sessions sent before they passivated.
    self->request(impl_->relay, t, settle_atom::value).receive([](bool) {}, [&](caf::error& e) {
      spdlog::warn("stopping: the outcome relay did not answer: {}", self->system().render(e));
    });
    // The sessions are stopped: what the commit log holds goes into the transcripts for good.
    if (impl_->commit_log)
      self->request(caf::actor_cast<actors::commit_log_actor>(impl_->commit_log), t, actors::checkpoint_atom::value)
          .receive([](const std::string&) {},
                   [&](caf::error& e) { spdlog::warn("stopping: the commit log's checkpoint: {}", self->system().render(e)); });
    for (auto* a : {&impl_->subagents, &impl_->relay, &impl_->router, &impl_->timers, &impl_->bus, &impl_->commit_log})
      self->send_exit(*a, caf::exit_reason::user_shutdown);
    for (auto& [agent, store] : impl_->stores) self->send_exit(store, caf::exit_reason::user_shutdown);
  }
  impl_->subagents = impl_->relay = impl_->router = impl_->timers = impl_->bus = impl_->commit_log = impl_->maintenance = caf::actor();
  impl_->stores.clear();
  impl_->sys.reset();  // waits for every actor to finish
  // Every send is answered: what no session answered (it raced the stop) is cancelled.
  impl_->pending->cancel_all(status(errc::cancelled, "the runtime stopped before this turn was answered"));
  impl_->store_locks.clear();
  // Calls still running in a synchronous runner finish on their own threads (their answers
  // reach no actor); the pool does not wait for them.
  impl_->adapter.reset();
  impl_->pool.reset();
  return result;
}

result<lifecycle_event> runtime::maintain() {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  host_self self{*impl_->sys};
  std::optional<lifecycle_event> report;
  status failed;
  self->request(impl_->maintenance, caf::infinite, maintain_atom::value)
      .receive([&](lifecycle_event& e) { report = std::move(e); },
               [&](caf::error& e) {
                 failed = status(errc::io_error, "the maintenance pass did not answer: " + self->system().render(e));
               });
  if (!failed.ok()) return failed;
  return std::move(*report);
}

result<actors::cleanup_result> runtime::cleanup(const actors::cleanup_request& req) {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  host_self self{*impl_->sys};
  std::optional<actors::cleanup_result> out;
  status failed;
  self->request(impl_->maintenance, caf::infinite, maintain_atom::value, req)
      .receive([&](actors::cleanup_result& r) { out = std::move(r); },
               [&](caf::error& e) { failed = status(errc::invalid_argument, "sessions cleanup: " + self->system().render(e)); });
  if (!failed.ok()) return failed;
  return std::move(*out);
}

bool runtime::stopped() const { return impl_->stopped; }
const startup_report& runtime::startup() const { return impl_->report; }
const actors::runtime_settings& runtime::settings() const { return impl_->settings; }
const std::string& runtime::state_dir() const { return impl_->state_dir; }

// ---- Session administration ---------------------------------------------------------------
namespace {

std::string agent_of_key(const std::string& key, const actors::runtime_settings& s) {
  auto parsed = parse_agent_session_key(key);
  return parsed ? parsed->agent_id : default_agent_of(s.routing);
}

// The router's hold on a key while an admin method rewrites its row: released when it goes
// (on every path out of the method), so the key's next actor starts from the new row.
class key_hold {
 public:
  key_hold() = default;
  key_hold(caf::actor router, std::string key) : router_(std::move(router)), key_(std::move(key)) {}
  key_hold(key_hold&& o) noexcept : router_(std::exchange(o.router_, caf::actor{})), key_(std::move(o.key_)) {}
  key_hold& operator=(key_hold&& o) noexcept {
    if (this != &o) {
      release();
      router_ = std::exchange(o.router_, caf::actor{});
      key_ = std::move(o.key_);
    }
    return *this;
  }
  ~key_hold() { release(); }

 private:
  void release() {
    if (router_) caf::anon_send(std::exchange(router_, caf::actor{}), release_atom::value, key_);
  }
  caf::actor router_;
  std::string key_;
};

}  // namespace

struct runtime::admin_target {
  std::string agent;
  caf::actor store;
  std::optional<session_entry> row;
  key_hold hold;
};

result<runtime::admin_target> runtime::take_for_admin(caf::scoped_actor& self, const std::string& key) {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  admin_target t;
  t.agent = agent_of_key(key, impl_->settings);
  auto store = impl_->stores.find(t.agent);
  if (store == impl_->stores.end()) return status(errc::not_found, fmt::format("no agent {} is configured", t.agent));
  t.store = store->second;
  // The key's actor passivates (after its running turn) and no new one starts until t goes:
  // a chat that arrives meanwhile waits in the router instead of starting from the old row.
  status failed;
  self->request(impl_->router, caf::infinite, hold_atom::value, key)
      .receive([](bool) {}, [&](caf::error& e) { failed = status(errc::io_error, "holding " + key + ": " + self->system().render(e)); });
  if (!failed.ok()) return failed;
  t.hold = key_hold(impl_->router, key);
  auto row = session(key, t.agent);
  if (!row.ok()) return row.error();
  t.row = std::move(*row);
  return t;
}

result<session_row> runtime::patch_session(const std::string& key, const session_patch& patch) {
  std::optional<actors::queue_mode> mode;
  if (patch.queue_mode && *patch.queue_mode) {
    mode = actors::parse_queue_mode(**patch.queue_mode);
    if (!mode)
      return status(errc::invalid_argument, "queueMode " + **patch.queue_mode +
                                                " is not one of followup, collect, interrupt, steer");
  }
  host_self self{*impl_->sys};
  auto target = take_for_admin(self, key);
  if (!target.ok()) return target.error();
  const std::string& agent = target->agent;
  if (patch.archived) {
    const bool is_main = key == "global" || key == actors::build_main_key(agent, impl_->settings.routing.session.main_key);
    SRT_RETURN_IF_ERROR(actors::check_archive_patch(key, target->row ? &*target->row : nullptr,
                                                    patch.expected_session_id, *patch.archived, is_main));
  }
  session_entry entry;
  if (target->row) {
    entry = std::move(*target->row);
  } else {
    entry.set_session_id(impl_->ids.next(key, impl_->time->now_ms(), "", "patch"));
  }
  // OpenClaw applies archived before pinned: archiving unpins, and pinning an archived row fails.
  if (patch.archived) actors::apply_archive_patch(entry, *patch.archived, impl_->time->now_ms());
  if (patch.pinned) SRT_RETURN_IF_ERROR(actors::check_pin_patch(entry, *patch.pinned));
  auto apply = [](const std::optional<std::optional<std::string>>& change, auto set, auto clear) {
    if (!change) return;
    if (*change) set(**change); else clear();
  };
  apply(patch.label, [&](const std::string& v) { entry.set_label(v); }, [&] { entry.clear_label(); });
  apply(patch.display_name, [&](const std::string& v) { entry.set_display_name(v); }, [&] { entry.clear_display_name(); });
  apply(patch.thinking_level, [&](const std::string& v) { entry.set_thinking_level(v); },
        [&] { entry.clear_thinking_level(); });
  apply(patch.queue_mode, [&](const std::string&) { entry.set_queue_mode(actors::queue_mode_name(*mode)); },
        [&] { entry.clear_queue_mode(); });
  // A model set here is the user's choice, as /new <model> makes it (source "user", kept on
  // reset); "provider/model", or a model of the configured provider.
  apply(patch.model,
        [&](const std::string& v) {
          const std::string agent_default =
              actors::default_model(impl_->settings, actors::agent_of_key(key)).provider;
          auto ref = actors::resolve_model_ref(impl_->settings, v, agent_default);
          if (ref) actors::apply_model_selection(entry, {ref->provider, ref->model});
        },
        [&] { actors::apply_model_selection(entry, {"", "", true}); });
  if (patch.pinned) {
    if (!*patch.pinned) entry.erase("pinnedAt");
    else if (!entry.json().contains("pinnedAt")) entry.json()["pinnedAt"] = impl_->time->now_ms();
  }
  entry.set_updated_at(impl_->time->now_ms());
  SRT_RETURN_IF_ERROR(put_row_now(self, target->store, agent, key, entry));
  return session_row{agent, key, std::move(entry)};
}

result<runtime::deleted_session> runtime::delete_session(const std::string& key, bool archive) {
  host_self self{*impl_->sys};
  auto target = take_for_admin(self, key);
  if (!target.ok()) return target.error();
  const std::string& agent = target->agent;
  deleted_session out;
  if (!target->row) return out;
  const session_entry& entry = *target->row;
  status failed;
  self->request(target->store, caf::infinite, erase_atom::value, std::vector<std::string>{key},
                std::vector<std::int64_t>{entry.updated_at().value_or(erase_no_updated_at)})
      .receive([&](std::size_t n) { out.deleted = n > 0; },
               [&](caf::error& e) { failed = status(errc::io_error, "removing the row of " + key + ": " + self->system().render(e)); });
  if (!failed.ok()) return failed;
  if (!out.deleted) return status(errc::already_exists, "the session " + key + " changed while it was being deleted; try again");
  if (archive && entry.session_id()) {
    auto dir = storage::agent_sessions_dir(impl_->state_dir, agent);
    if (!dir.ok()) return dir.error();
    const std::string path = storage::row_transcript_path(*impl_->files, *dir, *entry.session_id(), entry.session_file());
    if (!path.empty()) {
      auto moved = storage::archive_transcript(*impl_->files, *impl_->time, path, storage::archive_reason::deleted);
      if (moved.ok()) out.archived.push_back(*moved);
      else if (moved.error().code() != errc::not_found) return moved.error().with_context("the row of " + key + " was removed");
    }
  }
  return out;
}

namespace {
// The transcript a row names ("" when it names none usable), under the agent's sessions dir.
result<std::string> transcript_of_row(storage::fs& files, const std::string& state_dir, const std::string& agent,
                                      const session_entry& entry) {
  auto dir = storage::agent_sessions_dir(state_dir, agent);
  if (!dir.ok()) return dir.error();
  return storage::row_transcript_path(files, *dir, std::string(entry.session_id().value_or("")), entry.session_file());
}
}  // namespace

result<session_row> runtime::fork_session(const std::string& parent_key, const std::string& key,
                                          const std::optional<std::string>& label) {
  const std::string parent_agent = agent_of_key(parent_key, impl_->settings);
  auto parent = session(parent_key, parent_agent);
  if (!parent.ok()) return parent.error();
  if (!parent->has_value()) return status(errc::not_found, "no session " + parent_key + " to fork");
  auto parent_path = transcript_of_row(*impl_->files, impl_->state_dir, parent_agent, **parent);
  if (!parent_path.ok()) return parent_path.error();
  host_self self{*impl_->sys};
  auto target = take_for_admin(self, key);
  if (!target.ok()) return target.error();
  if (target->row) return status(errc::already_exists, "the session " + key + " exists: a fork starts a new one");
  const std::string& agent = target->agent;
  auto dir = storage::agent_sessions_dir(impl_->state_dir, agent);
  if (!dir.ok()) return dir.error();
  const std::int64_t now = impl_->time->now_ms();
  session_entry entry;
  entry.set_session_id(impl_->ids.next(key, now, "", "fork"));
  const std::string session_id(*entry.session_id());
  auto child = storage::successor_transcript_path(*dir, session_id, now);  // as a sub-agent's fork is named
  if (!child.ok()) return child.error();
  actors::fork_request fr;
  fr.parent_path = *parent_path;
  fr.child_path = *child;
  fr.child_header.id = session_id;
  fr.child_header.timestamp_ms = now;
  fr.child_header.cwd = impl_->settings.workspace_dir.empty() ? *dir : impl_->settings.workspace_dir;
  fr.child_header.session_key = key;
  const std::int64_t window = actors::resolve_session_model(impl_->settings, agent, &entry).context_window;
  fr.max_tokens = actors::fork_token_limit(window, actors::effective_reserve(impl_->settings.compaction, window));
  auto forked = actors::write_fork(*impl_->files, fr);
  if (!forked.ok()) return forked.error();
  entry.set_session_file(*child);
  entry.set_parent_session_key(parent_key);
  if (forked->mode != actors::fork_mode::isolated) entry.set_forked_from_parent(true);
  if (label && !label->empty()) entry.set_label(*label);
  entry.set_session_started_at(now);
  entry.set_updated_at(now);
  SRT_RETURN_IF_ERROR(put_row_now(self, target->store, agent, key, entry));
  return session_row{agent, key, std::move(entry)};
}

result<std::optional<std::string>> runtime::derived_title(const std::string& key) {
  const std::string agent = agent_of_key(key, impl_->settings);
  auto row = session(key, agent);
  if (!row.ok()) return row.error();
  if (!row->has_value()) return std::optional<std::string>();
  const session_entry& entry = **row;
  for (std::string_view field : {"label", "displayName", "subject"})
    if (auto v = json::get_string(entry.json(), field); v && !js_trim(*v).empty()) return std::optional<std::string>(*v);
  auto path = transcript_of_row(*impl_->files, impl_->state_dir, agent, entry);
  if (!path.ok()) return path.error();
  if (path->empty()) return std::optional<std::string>();
  auto first = storage::read_first_user_message(*impl_->files, *path);
  if (!first.ok()) return first.error();
  if (!*first) return std::optional<std::string>();
  return actors::hygiene::display_title(**first);
}

result<runtime::session_history> runtime::history(const std::string& key, std::size_t limit, std::size_t offset) {
  const std::string agent = agent_of_key(key, impl_->settings);
  auto row = session(key, agent);
  if (!row.ok()) return row.error();
  if (!row->has_value()) return status(errc::not_found, "no session " + key);
  const session_entry& entry = **row;
  session_history out;
  out.session_id = std::string(entry.session_id().value_or(""));
  if (out.session_id.empty() && !entry.session_file()) return out;
  auto path = transcript_of_row(*impl_->files, impl_->state_dir, agent, entry);
  if (!path.ok()) return path.error();
  if (path->empty()) return status(errc::invalid_argument, "the row of " + key + " names no usable transcript");
  auto reader = storage::transcript_reader::open(*impl_->files, *path);
  if (!reader.ok()) {
    if (reader.error().code() == errc::not_found) return out;  // no turn yet
    return reader.error();
  }
  // What earlier pages of this file counted (storage/context_counts.hpp).
  std::shared_ptr<storage::context_counts::file> counts;
  // A cold transcript's reader reads an in-memory copy: its fd is not one of impl_->files.
  auto info = (*reader)->cold() ? impl_->files->lstat(*path + ".zst") : impl_->files->fstat((*reader)->fd());
  if (info.ok()) {
    counts = impl_->history_counts.of({*path, info->dev, info->ino}, (*reader)->data_end());
    // And the count the session keeps in its row: the first page after a start stops there too.
    actors::remember_history_count(*counts, entry);
  }
  auto page = storage::read_context_page(**reader, {limit, offset}, counts);
  if (!page.ok()) return page.error();
  const bool own_ids = (*reader)->source_version() >= 2;  // version 1 ids are made up at each read
  boost::json::array shown;
  for (auto& item : page->items) {
    shown.push_back(std::move(item.message));
    out.ids.push_back(own_ids ? item.entry_id : "@" + std::to_string(item.entry_offset));
    out.seqs.push_back(item.seq);
    out.offsets.push_back(item.entry_offset);
  }
  out.messages = actors::hygiene::display_messages(shown);
  out.total_messages = page->total;
  out.older = page->older;
  return out;
}

}  // namespace sessionrt::runtime
