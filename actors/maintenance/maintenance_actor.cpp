#include "actors/maintenance/maintenance_actor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "actors/events/event_bus.hpp"
#include "actors/maintenance/cold_storage_planner.hpp"
#include "actors/maintenance/cron_retention.hpp"
#include "actors/maintenance/dashboard_archive.hpp"
#include "actors/maintenance/dir_listing.hpp"
#include "actors/maintenance/maintenance_pass.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "actors/maintenance/row_cache.hpp"
#include "actors/maintenance/shard_census.hpp"
#include "actors/router/session_key.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/turn_wait.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/durable_file.hpp"
#include "storage/system_clock.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::actors {
namespace {

// Requests: to a store with no timeout (it answers every one from its mailbox, waiting on no
// session; a failed write is an answer); to the router for a key's hold or passivation, which
// wait for the key's running turn, at most turn_wait (turn_wait.hpp): the key is skipped then.

struct maintenance_state {
  explicit maintenance_state(maintenance_actor_config c) : cfg(std::move(c)) {}
  maintenance_actor_config cfg;
  maintenance_links links;
  bool running = false;
  std::string trigger;
  std::deque<maintenance_job> todo;  // this pass, the job at the front runs
  std::vector<maintenance_job> done;
  std::vector<caf::response_promise> report_waiters;  // answered when this pass ends
  std::vector<caf::response_promise> settle_waiters;  // (tick, settle) of this pass
  // Asked for while a pass ran: one more pass, then these are answered.
  bool again = false;
  std::string again_trigger;
  bool again_reaper = false;
  std::vector<caf::response_promise> again_report_waiters;
  std::int64_t next_due_ms = 0;
  std::string due_trigger = "schedule";  // what made the next pass due (virtual time)
  std::map<std::string, std::int64_t> reaped_at_ms;  // agent or shard -> the reaper's last run
  std::map<std::string, dir_listing> listings;  // sessions dir -> its picture
  std::map<std::string, row_cache> rows;         // agent or shard -> its store's rows
  // The shards served (shard_open), by unit name. A closed one stays until its pass ended (the
  // jobs of the pass running may still name it), marked closed: nothing of it is touched.
  struct unit_entry {
    maintenance_unit unit;
    bool closed = false;
  };
  std::map<std::string, unit_entry> units;
  // `sessions cleanup` passes: the one running (set while its pass runs) and those waiting.
  struct cleanup_pass {
    cleanup_request req;
    caf::response_promise rp;
  };
  std::optional<cleanup_pass> cleanup;
  std::deque<cleanup_pass> cleanups;
  // Per pass (dropped when it ends): agent -> each of its shards as its dir in the shared state
  // dir holds it (shard_census.hpp), read once, when the agent's first shard is planned.
  std::map<std::string, std::vector<shard_load>> census;
};
using state_ptr = std::shared_ptr<maintenance_state>;
using self_ptr = maintenance_actor_type::pointer;

std::int64_t now_ms(const maintenance_state& st) { return st.cfg.time->now_ms(); }
// The full-scan cadence (maintenance_actor.hpp) reads the real clock, under virtual time too.
std::int64_t real_now_ms() {
  static storage::system_clock real;
  return real.now_ms();
}
const maintenance_settings& settings_of(const maintenance_state& st) { return st.cfg.settings->maintenance; }

// A job's store, files, bounds and cache name: its shard's, or its agent's.
const store_actor_type& store_of(const maintenance_state& st, const maintenance_job& job) {
  return job.shard.empty() ? st.links.stores.at(job.agent_id) : st.units.at(job.shard).unit.store;
}
storage::fs& files_of(const maintenance_state& st, const maintenance_job& job) {
  return job.files ? *job.files : *st.cfg.files;
}
const std::string& cache_name(const maintenance_job& job) { return job.shard.empty() ? job.agent_id : job.shard; }
// A shard closed (or forgotten) since its job was queued: nothing of it may be touched.
bool shard_gone(const maintenance_state& st, const maintenance_job& job) {
  if (job.shard.empty()) return false;
  auto it = st.units.find(job.shard);
  // Other files: the shard was closed and opened again since (each open has files of its own).
  return it == st.units.end() || it->second.closed || it->second.unit.files != job.files;
}

void start_pass(self_ptr self, const state_ptr& st, std::string trigger, bool force_reaper);

// A job of the agent's store, or of the shard's when `unit` is given.
maintenance_job job_for(const std::string& agent, const std::string& dir, const maintenance_unit* unit) {
  maintenance_job j;
  j.agent_id = agent;
  j.sessions_dir = dir;
  if (unit) {
    j.shard = unit->name;
    j.files = unit->files;
  }
  return j;
}

// The jobs of one store: the reaper when due, then the maintenance plan, then cold storage.
void queue_store_jobs(maintenance_state& st, const maintenance_job& base, bool force_reaper, std::int64_t now) {
  const std::string& name = cache_name(base);
  auto last = st.reaped_at_ms.find(name);
  const bool reap_due = force_reaper || last == st.reaped_at_ms.end() || now - last->second >= st.cfg.reaper_every_ms;
  if (st.cfg.settings->cron.session_retention_ms && reap_due) {
    maintenance_job j = base;
    j.reaper = true;
    st.todo.push_back(std::move(j));
    st.reaped_at_ms[name] = now;
  }
  st.todo.push_back(base);
  if (st.cfg.settings->maintenance.cold_storage_enabled) {
    maintenance_job c = base;
    c.cold = true;
    st.todo.push_back(std::move(c));
  }
}

// The jobs of a pass: each agent's store, then each shard's served here.
void queue_jobs(maintenance_state& st, bool force_reaper) {
  const std::int64_t now = now_ms(st);
  for (const auto& [agent, dir] : st.cfg.sessions_dir) {
    if (!st.links.stores.count(agent)) continue;
    queue_store_jobs(st, job_for(agent, dir, nullptr), force_reaper, now);
  }
  for (const auto& [name, u] : st.units)
    if (!u.closed) queue_store_jobs(st, job_for(u.unit.agent_id, u.unit.sessions_dir, &u.unit), force_reaper, now);
}

// The closed shards are forgotten once no job names them (a pass ended).
void forget_closed_units(maintenance_state& st) {
  for (auto it = st.units.begin(); it != st.units.end();) {
    if (!it->second.closed) {
      ++it;
      continue;
    }
    st.rows.erase(it->first);
    st.reaped_at_ms.erase(it->first);
    st.listings.erase(it->second.unit.sessions_dir);
    it = st.units.erase(it);
  }
}

// One info line per pass for cold storage, when it did or skipped anything.
void log_cold_storage(const std::vector<maintenance_job>& jobs) {
  std::size_t planned = 0, compressed = 0, deleted = 0, skipped = 0;
  std::uint64_t before = 0, after = 0;
  for (const auto& j : jobs) {
    if (!j.cold) continue;
    planned += j.plan.actions.size();
    compressed += j.files_compressed;
    deleted += j.files_deleted;
    skipped += j.skipped.size();
    before += j.cold_bytes_before;
    after += j.cold_bytes_after;
  }
  if (planned == 0) return;
  spdlog::info("maintenance: cold storage: {} transcript(s) compressed, {} -> {} bytes ({} saved), {} leftover(s) "
               "removed, {} skipped",
               compressed, before, after, before - after, deleted, skipped);
}

void start_cleanup(self_ptr self, const state_ptr& st);

cleanup_result cleanup_answer(const maintenance_state& st) {
  cleanup_result out;
  out.mode = st.cleanup->req.mode;
  out.dry_run = !st.cleanup->req.apply;
  for (const auto& job : st.done) {
    cleanup_store_result r;
    r.agent_id = job.agent_id;
    r.shard = job.shard;
    r.store_path = job.sessions_dir + "/sessions.json";
    r.plan = job.plan;
    r.applied = st.cleanup->req.apply && job.error.empty();
    r.applied_actions = job.applied;
    r.skipped = job.skipped;
    r.current_entries = job.plan.before_count - job.rows_removed;
    r.error = job.error;
    if (st.cleanup->req.fix_dm_scope && st.cfg.settings->routing.session.direct_message_scope != dm_scope::main)
      r.notes.push_back(fmt::format("--fix-dm-scope retires nothing: session.dmScope is \"{}\", not \"main\"",
                                    to_string(st.cfg.settings->routing.session.direct_message_scope)));
    out.stores.push_back(std::move(r));
  }
  return out;
}

void finish_pass(self_ptr self, const state_ptr& st) {
  const maintenance_mode mode = st->cleanup ? st->cleanup->req.mode : settings_of(*st).mode;
  auto event = maintenance_report_event(st->done, mode, st->trigger, now_ms(*st));
  log_cold_storage(st->done);
  publish(self, st->cfg.bus, *st->cfg.hub, event);
  for (auto& rp : st->report_waiters) rp.deliver(event);
  for (auto& rp : st->settle_waiters) rp.deliver(true);
  st->report_waiters.clear();
  st->settle_waiters.clear();
  if (st->cleanup) {
    st->cleanup->rp.deliver(cleanup_answer(*st));
    st->cleanup.reset();
  }
  st->done.clear();
  st->census.clear();
  st->running = false;
  forget_closed_units(*st);
  if (!st->cleanups.empty()) {
    // A cleanup asked for meanwhile goes first; a scheduled pass asked for meanwhile follows it.
    start_cleanup(self, st);
    return;
  }
  if (st->again) {
    st->again = false;
    st->report_waiters = std::move(st->again_report_waiters);
    st->again_report_waiters.clear();
    start_pass(self, st, st->again_trigger, st->again_reaper);
  }
}

void next_job(self_ptr self, const state_ptr& st) {
  st->done.push_back(std::move(st->todo.front()));
  st->todo.pop_front();
  self->send(self, mstep_atom::value);
}

// The front job's shard was closed: the job ends here, saying so, and touches nothing more.
void stop_closed_job(self_ptr self, const state_ptr& st) {
  auto& job = st->todo.front();
  if (job.error.empty())
    job.error = fmt::format("shard {} left this node during the pass; its maintenance stopped there", job.shard);
  job.planned = true;
  job.next = job.plan.actions.size();
  next_job(self, st);
}

// The unarchived rows of a store, as the cap counts them.
std::int64_t unarchived_rows(const std::vector<maintenance_row>& mrows) {
  return static_cast<std::int64_t>(std::count_if(mrows.begin(), mrows.end(), [](const auto& r) { return !r.archived; }));
}

// The agent's shards as the shared state dir holds them (this pass's reading, made once).
// Missing dirs (shards never opened) and unreadable ones count as empty; one line says so.
const std::vector<shard_load>& census_of(maintenance_state& st, const maintenance_job& job) {
  const maintenance_unit& unit = st.units.at(job.shard).unit;
  auto [it, fresh] = st.census.try_emplace(unit.agent_id);
  if (!fresh) return it->second;
  auto& loads = it->second;
  loads.resize(static_cast<std::size_t>(std::max(1, unit.shards)));
  const std::string own = unit.name.substr(unit.name.rfind('/') + 1);
  std::size_t missing = 0;
  std::vector<std::string> problems;
  for (int i = 0; i < unit.shards; ++i) {
    auto dir = sibling_sessions_dir(unit.sessions_dir, unit.agent_id, own, i);
    if (!dir) {
      problems.push_back(fmt::format("{} is not <cluster>/shards/<agent>/<nnn>/agents/<agent>/sessions", unit.sessions_dir));
      break;
    }
    auto reading = read_shard_load(files_of(st, job), *dir);
    loads[static_cast<std::size_t>(i)] = reading.load;
    if (reading.missing) ++missing;
    if (!reading.problem.empty()) problems.push_back(fmt::format("{}: {}", *dir, reading.problem));
  }
  if (!problems.empty())
    spdlog::warn("maintenance: agent {}: {} shard dir(s) unreadable, counted as empty in its census: {}", unit.agent_id,
                 problems.size(), problems.front());
  if (missing > 0) spdlog::debug("maintenance: agent {}: {} shard(s) without a store, counted as empty", unit.agent_id, missing);
  return loads;
}

// A job's bounds: the agent's, or for a shard its part of them decided against the whole agent
// (shard_bounds.hpp) from the census, this shard (`own_rows`, `own_bytes`: the rows and dir
// planned now) and the other shards served here as their row caches last saw them (their
// sessions.json may lag their commit log) in place of their readings.
maintenance_settings job_settings(maintenance_state& st, const maintenance_job& job, std::int64_t own_rows,
                                  std::int64_t own_bytes) {
  if (job.shard.empty()) return settings_of(st);
  const maintenance_unit& unit = st.units.at(job.shard).unit;
  if (unit.shards <= 1) return settings_of(st);
  std::vector<shard_load> loads = census_of(st, job);
  std::size_t own_index = loads.size();
  for (const auto& [name, entry] : st.units) {
    if (entry.unit.agent_id != unit.agent_id) continue;
    const auto slash = name.rfind('/');
    std::size_t index = 0;
    for (char c : name.substr(slash + 1)) index = index * 10 + static_cast<std::size_t>(c - '0');
    if (index >= loads.size()) continue;
    if (name == job.shard) {
      own_index = index;
      loads[index] = shard_load{own_rows, own_bytes};
    } else if (auto rows = st.rows.find(name); !entry.closed && rows != st.rows.end()) {
      loads[index].rows = unarchived_rows(rows->second.rows());
    }
  }
  return shard_bounds(settings_of(st), loads, own_index);
}

// The rows and the listing are in: plan the job.
void plan_job(maintenance_state& st, maintenance_job& job, const std::vector<maintenance_row>& mrows,
              const dir_index& files) {
  if (job.reaper) {
    // The reaper is cron.sessionRetention's, not session.maintenance's: it runs in either mode,
    // as OpenClaw's does [R§5.6] (cron.sessionRetention: false turns it off).
    job.plan = plan_cron_reaper(mrows, files, st.cfg.settings->cron, now_ms(st), {}, maintenance_mode::enforce);
  } else if (job.cold) {
    cold_storage_input in;
    in.rows = &mrows;
    in.index = &files;
    in.settings = settings_of(st);
    in.now_ms = now_ms(st);
    job.plan = plan_cold_storage(in);
  } else {
    planner_input in;
    in.rows = &mrows;
    in.index = &files;
    in.settings = job_settings(st, job, unarchived_rows(mrows), static_cast<std::int64_t>(files.bytes()));
    in.now_ms = now_ms(st);
    job.plan = plan_maintenance(in);
  }
  job.planned = true;
  index_plan(job);
}

// A cleanup's plan: forced, the CLI's flags, from a full listing and every row.
void plan_cleanup_job(maintenance_state& st, maintenance_job& job, const std::vector<maintenance_row>& mrows,
                      const std::vector<dir_file>& files, const std::unordered_set<std::string>& empty) {
  const cleanup_request& req = st.cleanup->req;
  planner_input in;
  in.rows = &mrows;
  in.files = &files;
  std::int64_t own_bytes = 0;
  for (const auto& f : files) own_bytes += static_cast<std::int64_t>(f.size);
  in.settings = job_settings(st, job, unarchived_rows(mrows), own_bytes);
  in.settings.mode = req.mode;
  in.now_ms = now_ms(st);
  in.active_key = req.active_key;
  in.forced = true;
  in.fix_missing = req.fix_missing;
  in.empty_transcripts = &empty;
  in.fix_dm_scope = req.fix_dm_scope && st.cfg.settings->routing.session.direct_message_scope == dm_scope::main;
  job.plan = plan_maintenance(in);
  job.planned = true;
  index_plan(job);
}

void step(self_ptr self, const state_ptr& st);

// The batch's rows are erased (or there were none): passivate and read back the keys whose
// sessions have file actions, then move the files.
void apply_files(self_ptr self, const state_ptr& st, const maintenance_batch& batch, const batch_checks& checks) {
  auto& job = st->todo.front();
  const auto keep = sessions_to_keep(job, batch, checks);
  for (std::size_t i = batch.begin; i < batch.end; ++i) {
    const auto& a = job.plan.actions[i];
    if (a.kind == action_kind::remove_row || a.kind == action_kind::archive_row) continue;
    if (!a.session_id.empty() && keep.count(a.session_id)) {
      job.skipped.push_back(fmt::format("{}: session {} is live or referenced again; left alone", a.file, a.session_id));
      continue;
    }
    std::string skipped;
    if (shard_gone(*st, job)) return stop_closed_job(self, st);
    auto done = apply_file_action(files_of(*st, job), job.sessions_dir, a, skipped);
    if (!done.ok()) {
      job.error = done.error().message();
      job.next = job.plan.actions.size();
      return next_job(self, st);
    }
    if (!*done) {
      job.skipped.push_back(std::move(skipped));
      continue;
    }
    job.applied.push_back(a);
    if (a.kind == action_kind::archive_file)
      ++job.files_archived;
    else
      ++job.files_deleted;
  }
  job.next = batch.end;
  self->send(self, mstep_atom::value);
}

void check_keys(self_ptr self, const state_ptr& st, std::shared_ptr<maintenance_batch> batch) {
  auto checks = std::make_shared<batch_checks>();
  auto left = std::make_shared<std::size_t>(batch->check_keys.size());
  auto one_done = [self, st, batch, checks, left] {
    if (--*left == 0) apply_files(self, st, *batch, *checks);
  };
  if (*left == 0) return apply_files(self, st, *batch, *checks);
  const auto store = store_of(*st, st->todo.front());
  for (const auto& key : batch->check_keys) {
    auto read_back = [self, store, checks, key, one_done] {
      self->request(store, caf::infinite, get_atom::value, key)
          .then(
              [checks, key, one_done](entry_reply& r) {
                if (!r.error.empty()) checks->busy_keys.insert(key);
                if (r.found) checks->row_session[key] = std::string(r.entry.session_id().value_or(""));
                one_done();
              },
              [checks, key, one_done](caf::error&) {
                checks->busy_keys.insert(key);
                one_done();
              });
    };
    self->request(st->links.router, turn_wait(*st->cfg.settings), passivate_atom::value, key,
                  std::string("maintenance"), settle_atom::value)
        .then(
            [checks, key, read_back, one_done](bool passivated) {
              if (!passivated) {
                checks->busy_keys.insert(key);
                return one_done();
              }
              read_back();
            },
            [checks, key, one_done](caf::error&) {
              checks->busy_keys.insert(key);
              one_done();
            });
  }
}

// Runs `fn(done)` with `key` held by the router (no live actor has its row; what arrives for
// it waits), releasing the key when `done` is called; `fn` is not called when the hold fails.
void with_key_held(self_ptr self, const state_ptr& st, const std::string& key,
                   std::function<void(std::function<void()> done)> fn, std::function<void()> failed) {
  auto router = st->links.router;
  self->request(router, turn_wait(*st->cfg.settings), hold_atom::value, key)
      .then([self, router, key, fn](bool) { fn([self, router, key] { self->send(router, release_atom::value, key); }); },
            [self, router, key, failed](caf::error&) {
              self->send(router, release_atom::value, key);  // a hold not answered in time stays counted
              failed();
            });
}

// Archives the batch's rows archived in place (dashboards, stale, cap), one key at a time, then goes on to the
// file actions. A row that changed since the plan (or is gone, or archived meanwhile) stays.
void archive_rows(self_ptr self, const state_ptr& st, std::shared_ptr<maintenance_batch> batch, std::size_t at) {
  if (at >= batch->archive_rows.size()) return check_keys(self, st, batch);
  auto& job = st->todo.front();
  if (shard_gone(*st, job)) return stop_closed_job(self, st);
  const plan_action& a = job.plan.actions[batch->archive_rows[at]];
  auto next = [self, st, batch, at] { archive_rows(self, st, batch, at + 1); };
  auto skip = [st, key = a.key, next](const std::string& why) {
    st->todo.front().skipped.push_back(fmt::format("row {} {}; not archived", key, why));
    next();
  };
  const auto store = store_of(*st, job);
  // A live session with a turn in flight declines to passivate: the row is skipped (the next
  // pass sees it again) instead of the hold waiting for the turn, which under virtual time
  // would hold the clock with the pass (the cap now archives busy sessions' rows).
  auto held = [self, st, store, a, next, skip] {
  with_key_held(
      self, st, a.key,
      [self, st, store, a, next, skip](std::function<void()> done) {
        self->request(store, caf::infinite, get_atom::value, a.key)
            .then(
                [self, st, store, a, next, skip, done](entry_reply& r) {
                  if (!r.found) {
                    done();
                    return skip("is gone");
                  }
                  if (r.entry.updated_at() != a.updated_at) {
                    done();
                    return skip("was updated after the plan was made");
                  }
                  if (r.entry.json().contains("archivedAt")) {
                    done();
                    return skip("is archived already");
                  }
                  archive_row_in_place(r.entry, a.at_ms, row_archive_reason(a.step));
                  self->request(store, caf::infinite, put_atom::value, a.key, r.entry, flush_atom::value)
                      .then(
                          [st, a, next, skip, done](bool ok) {
                            done();
                            if (!ok) return skip("could not be written");
                            auto& job = st->todo.front();
                            job.applied.push_back(a);
                            ++job.rows_archived;
                            next();
                          },
                          [skip, done](caf::error&) {
                            done();
                            skip("could not be written");
                          });
                },
                [skip, done](caf::error&) {
                  done();
                  skip("could not be read");
                });
      },
      [skip] { skip("could not be held"); });
  };
  self->request(st->links.router, turn_wait(*st->cfg.settings), passivate_atom::value, a.key, std::string("maintenance"),
                settle_atom::value)
      .then([held, skip](bool passivated) { passivated ? held() : skip("has a turn in flight"); },
            [skip](caf::error&) { skip("could not be passivated"); });
}

void apply_batch(self_ptr self, const state_ptr& st) {
  auto& job = st->todo.front();
  auto batch = std::make_shared<maintenance_batch>(batch_of(job, st->cfg.batch_actions, erase_no_updated_at));
  if (batch->erase_keys.empty()) return archive_rows(self, st, batch, 0);
  const auto store = store_of(*st, job);
  self->request(store, caf::infinite, erase_atom::value, batch->erase_keys, batch->erase_updated_at, list_atom::value)
      .then(
          [self, st, batch](std::vector<std::string>& gone) {
            auto& j = st->todo.front();
            const std::size_t removed = gone.size();
            j.rows_removed += removed;
            const std::unordered_set<std::string> gone_set(gone.begin(), gone.end());
            for (std::size_t i = batch->begin; i < batch->end; ++i)
              if (j.plan.actions[i].kind == action_kind::remove_row && gone_set.count(j.plan.actions[i].key))
                j.applied.push_back(j.plan.actions[i]);
            if (removed < batch->erase_keys.size())
              j.skipped.push_back(fmt::format("{} row(s) were updated or gone since the plan; kept",
                                              batch->erase_keys.size() - removed));
            archive_rows(self, st, batch, 0);
          },
          [self, st](caf::error& err) {
            // Nothing of the batch moved: its files wait for the next pass.
            auto& j = st->todo.front();
            j.error = "removing rows: " + self->system().render(err);
            next_job(self, st);
          });
}

// The files of a sessions dir for a pass: its kept picture, brought up to date from what a
// change feed says changed, or (without a feed, or when a full scan is due) by a full scan.
// Valid until the next pass lists this dir.
// A shard's dir is not watched by the feed (its files are its own fs's): it is listed in full.
result<const dir_index*> list_for_pass(maintenance_state& st, const maintenance_job& job) {
  const std::string& dir = job.sessions_dir;
  storage::fs& files = files_of(st, job);
  auto& picture = st.listings[dir];
  if (!st.cfg.keep_picture) {
    if (st.cfg.feed) (void)st.cfg.feed->take(dir);  // a full scan sees it all; the feed stays small
    SRT_RETURN_IF_ERROR(picture.rescan(files, dir, real_now_ms()));
    return &picture.index();
  }
  if (!st.cfg.feed || !job.shard.empty()) {
    SRT_RETURN_IF_ERROR(picture.rescan(files, dir, real_now_ms()));
    return &picture.index();
  }
  // Taken before a full scan, so that what changes while it runs is looked at next time.
  auto changed = st.cfg.feed->take(dir);
  const std::int64_t now = real_now_ms();
  if (!changed || !picture.valid() || now - picture.scanned_at() >= st.cfg.full_scan_every_ms)
    SRT_RETURN_IF_ERROR(picture.rescan(*st.cfg.files, dir, now));
  else
    SRT_RETURN_IF_ERROR(picture.refresh(*st.cfg.files, dir, *changed));
  return &picture.index();
}

// The store's rows as the planner reads them; the rows' text is freed as soon as they are read.
std::vector<maintenance_row> maintenance_rows_of(entry_rows rows, const std::string& sessions_dir) {
  std::vector<maintenance_row> out;
  out.reserve(rows.size());
  for (const auto& [key, entry] : rows) out.push_back(maintenance_row_of(key, entry, sessions_dir));
  return out;
}

// storage.keepMaintenancePicture false: every row read for this plan, nothing kept after it.
void read_rows_and_plan(self_ptr self, const state_ptr& st, const dir_index* listing) {
  self->request(store_of(*st, st->todo.front()), caf::infinite, list_atom::value)
      .then(
          [self, st, listing](entry_rows& rows) {
            auto& job = st->todo.front();
            std::vector<maintenance_row> mrows = maintenance_rows_of(std::move(rows), job.sessions_dir);
            plan_job(*st, job, mrows, *listing);
            st->listings.erase(job.sessions_dir);
            step(self, st);
          },
          [self, st](caf::error& err) {
            auto& job = st->todo.front();
            job.error = "listing the store: " + self->system().render(err);
            st->listings.erase(job.sessions_dir);
            next_job(self, st);
          });
}

void list_and_plan(self_ptr self, const state_ptr& st) {
  auto& job = st->todo.front();
  // The dir first: a transcript listed was created before the rows are read.
  auto files = list_for_pass(*st, job);
  if (!files.ok()) {
    job.error = files.error().message();
    job.planned = true;
    return next_job(self, st);
  }
  const dir_index* listing = *files;
  if (!st->cfg.keep_picture) return read_rows_and_plan(self, st, listing);
  self->request(store_of(*st, job), caf::infinite, list_atom::value, changes_atom::value)
      .then(
          [self, st, listing](row_changes& changes) {
            auto& job = st->todo.front();
            // Closed (and maybe opened again) meanwhile: these changes are not the cache's.
            if (shard_gone(*st, job)) return stop_closed_job(self, st);
            auto& rows = st->rows.try_emplace(cache_name(job), job.sessions_dir).first->second;
            rows.apply(changes);
            plan_job(*st, job, rows.rows(), *listing);
            step(self, st);
          },
          [self, st](caf::error& err) {
            st->todo.front().error = "listing the store: " + self->system().render(err);
            next_job(self, st);
          });
}

// A cleanup job: the dir listed in full, every row read, then the forced plan.
void list_and_plan_cleanup(self_ptr self, const state_ptr& st) {
  auto& job = st->todo.front();
  auto files = scan_sessions_dir(files_of(*st, job), job.sessions_dir);
  if (!files.ok()) {
    job.error = files.error().with_context(job.sessions_dir).message();
    job.planned = true;
    return next_job(self, st);
  }
  auto listing = std::make_shared<std::vector<dir_file>>(std::move(*files));
  self->request(store_of(*st, job), caf::infinite, list_atom::value)
      .then(
          [self, st, listing](entry_rows& rows) {
            auto& job = st->todo.front();
            std::vector<maintenance_row> mrows = maintenance_rows_of(std::move(rows), job.sessions_dir);
            std::unordered_set<std::string> empty;
            if (st->cleanup->req.fix_missing) {
              auto found = find_empty_transcripts(files_of(*st, job), job.sessions_dir, mrows, *listing);
              if (!found.ok()) {
                job.error = found.error().message();
                job.planned = true;
                return next_job(self, st);
              }
              empty = std::move(*found);
            }
            plan_cleanup_job(*st, job, mrows, *listing, empty);
            step(self, st);
          },
          [self, st](caf::error& err) {
            st->todo.front().error = "listing the store: " + self->system().render(err);
            st->todo.front().planned = true;
            next_job(self, st);
          });
}

// ---- cold storage ---------------------------------------------------------------------------

// Compresses the transcript of `a` (its key held, its row read back): under its write lock,
// taken without waiting and not reentrant, so a session of this process or a program that
// holds it keeps the file hot until a later pass.
void compress_one(maintenance_state& st, maintenance_job& job, const plan_action& a) {
  const std::string path = storage::path_join(job.sessions_dir, a.file);
  storage::write_lock_options lo = st.cfg.settings->session.write_lock;
  lo.reentrant = false;
  storage::process_probe& probe = st.cfg.probe ? *st.cfg.probe : storage::real_process_probe();
  storage::fs& files = files_of(st, job);
  auto lock = storage::try_acquire_write_lock(files, *st.cfg.time, probe, path, lo);
  if (!lock.ok() || std::holds_alternative<storage::lock_busy>(*lock)) {
    job.skipped.push_back(fmt::format("{}: its write lock is held; left uncompressed", a.file));
    return;
  }
  storage::compress_options co;
  co.expect_size = a.bytes;
  co.expect_mtime_ms = a.mtime_ms;
  auto moved = storage::compress_transcript(files, path, co);
  (void)std::get<storage::write_lock>(*lock).release();
  if (!moved.ok()) {
    job.skipped.push_back(fmt::format("{}: {}", a.file, moved.error().message()));
    return;
  }
  if (!moved->done) {
    job.skipped.push_back(moved->skipped);
    return;
  }
  job.applied.push_back(a);
  ++job.files_compressed;
  job.cold_bytes_before += moved->raw_bytes;
  job.cold_bytes_after += moved->cold_bytes;
}

// A delete of the cold storage plan: a leftover .zst (only while its .jsonl is still there:
// without it the .zst is the transcript) or a stale temp.
void delete_leftover(maintenance_state& st, maintenance_job& job, const plan_action& a) {
  if (storage::is_cold_path(a.file)) {
    auto hot = files_of(st, job).lstat(storage::path_join(job.sessions_dir, a.file.substr(0, a.file.size() - 4)));
    if (!hot.ok()) {
      job.skipped.push_back(fmt::format("{}: its .jsonl is gone, so it is the transcript; kept", a.file));
      return;
    }
  }
  std::string skipped;
  auto done = apply_file_action(files_of(st, job), job.sessions_dir, a, skipped);
  if (!done.ok()) {
    job.skipped.push_back(fmt::format("{}: {}", a.file, done.error().message()));
  } else if (!*done) {
    job.skipped.push_back(std::move(skipped));
  } else {
    job.applied.push_back(a);
    ++job.files_deleted;
  }
}

// The cold storage plan's actions one at a time (each compression holds its key), a few per
// message so the actor keeps answering.
void apply_cold(self_ptr self, const state_ptr& st, std::size_t left) {
  auto& job = st->todo.front();
  if (shard_gone(*st, job)) return stop_closed_job(self, st);
  if (job.next >= job.plan.actions.size() || left == 0) return self->send(self, mstep_atom::value);
  const plan_action a = job.plan.actions[job.next++];
  auto next = [self, st, left] { apply_cold(self, st, left - 1); };
  if (a.kind != action_kind::compress_file) {
    delete_leftover(*st, job, a);
    return next();
  }
  const auto store = store_of(*st, job);
  auto skip = [st, next](std::string why) {
    st->todo.front().skipped.push_back(std::move(why));
    next();
  };
  with_key_held(
      self, st, a.key,
      [self, st, store, a, next, skip](std::function<void()> done) {
        self->request(store, caf::infinite, get_atom::value, a.key)
            .then(
                [st, a, next, skip, done](entry_reply& r) {
                  // Only as planned: the row still names the session and nothing happened since.
                  if (!r.found || r.entry.session_id() != std::optional<std::string_view>(a.session_id) ||
                      r.entry.updated_at() != a.updated_at) {
                    done();
                    return skip(fmt::format("{}: the row of {} changed after the plan was made; left uncompressed",
                                            a.file, a.key));
                  }
                  compress_one(*st, st->todo.front(), a);
                  done();
                  next();
                },
                [a, skip, done](caf::error&) {
                  done();
                  skip(fmt::format("{}: the row of {} could not be read; left uncompressed", a.file, a.key));
                });
      },
      [a, skip] { skip(fmt::format("{}: {} could not be held; left uncompressed", a.file, a.key)); });
}

// The front job's next move: plan it, apply a batch, or finish it.
void step(self_ptr self, const state_ptr& st) {
  if (st->todo.empty()) return finish_pass(self, st);
  auto& job = st->todo.front();
  if (shard_gone(*st, job)) return stop_closed_job(self, st);
  if (!job.planned) return st->cleanup ? list_and_plan_cleanup(self, st) : list_and_plan(self, st);
  // warn reports and changes nothing, except for the cron reaper (see plan_job); a cleanup
  // applies when it was asked to.
  const bool applies = st->cleanup ? st->cleanup->req.apply
                                   : job.reaper || job.cold || settings_of(*st).mode == maintenance_mode::enforce;
  if (!applies || job.next >= job.plan.actions.size()) return next_job(self, st);
  if (job.cold) return apply_cold(self, st, std::min<std::size_t>(8, st->cfg.batch_actions));
  apply_batch(self, st);
}

void start_pass(self_ptr self, const state_ptr& st, std::string trigger, bool force_reaper) {
  if (st->running) {
    st->again = true;
    st->again_trigger = std::move(trigger);
    st->again_reaper = st->again_reaper || force_reaper;
    return;
  }
  st->running = true;
  st->trigger = std::move(trigger);
  st->again_reaper = false;
  st->next_due_ms = now_ms(*st) + st->cfg.interval_ms;
  queue_jobs(*st, force_reaper);
  self->send(self, mstep_atom::value);
}

void start_cleanup(self_ptr self, const state_ptr& st) {
  st->cleanup = std::move(st->cleanups.front());
  st->cleanups.pop_front();
  st->running = true;
  st->trigger = "cleanup";
  for (const auto& [agent, dir] : st->cfg.sessions_dir) {
    if (!st->links.stores.count(agent)) continue;
    if (!st->cleanup->req.agent_id.empty() && st->cleanup->req.agent_id != agent) continue;
    st->todo.push_back(job_for(agent, dir, nullptr));
  }
  for (const auto& [name, u] : st->units) {
    if (u.closed) continue;
    if (!st->cleanup->req.agent_id.empty() && st->cleanup->req.agent_id != u.unit.agent_id) continue;
    st->todo.push_back(job_for(u.unit.agent_id, u.unit.sessions_dir, &u.unit));
  }
  self->send(self, mstep_atom::value);
}

caf::result<cleanup_result> on_cleanup(self_ptr self, const state_ptr& st, cleanup_request req) {
  if (!st->cfg.per_shard && !req.agent_id.empty() && !st->cfg.sessions_dir.count(req.agent_id))
    return caf::make_error(caf::sec::runtime_error, fmt::format("no agent \"{}\" in this runtime", req.agent_id));
  auto rp = self->make_response_promise();
  st->cleanups.push_back({std::move(req), rp});
  if (!st->running) start_cleanup(self, st);
  return rp;
}

caf::result<lifecycle_event> on_maintain(self_ptr self, const state_ptr& st) {
  auto rp = self->make_response_promise();
  if (st->running) {
    st->again_report_waiters.push_back(rp);
    start_pass(self, st, "request", true);  // runs after the current one
  } else {
    st->report_waiters.push_back(rp);
    start_pass(self, st, "request", true);
  }
  return rp;
}

// Virtual time: a pass when one is due, answered (true) once it ended; false: none was due.
caf::result<bool> on_tick_settle(self_ptr self, const state_ptr& st) {
  if (!st->running && now_ms(*st) < st->next_due_ms) return false;
  auto rp = self->make_response_promise();
  if (!st->running) start_pass(self, st, std::exchange(st->due_trigger, "schedule"), false);
  st->settle_waiters.push_back(rp);
  return rp;
}

void on_shard_open(self_ptr self, const state_ptr& st, maintenance_unit u) {
  // Its store learns the router, as the agents' do (a hand edit passivates a live session).
  if (st->links.router) self->send(u.store, spawned_atom::value, passivate_port(st->links.router));
  const std::string name = u.name;
  st->rows.erase(name);  // a new store actor: its rows are read anew
  st->listings.erase(u.sessions_dir);
  st->units[name] = maintenance_state::unit_entry{std::move(u), false};
}

bool on_shard_close(const state_ptr& st, const std::string& name) {
  auto it = st->units.find(name);
  if (it == st->units.end()) return false;
  it->second.closed = true;
  // Dropped now when no pass may name it; else when the pass ends. The jobs of it still queued
  // stop at their first step (shard_gone).
  if (!st->running) forget_closed_units(*st);
  return true;
}

void schedule(self_ptr self, const maintenance_state& st) {
  if (st.cfg.self_scheduling) self->delayed_send(self, std::chrono::milliseconds(st.cfg.interval_ms), tick_atom::value);
}

}  // namespace

maintenance_actor_type::behavior_type maintenance_actor(self_ptr self, maintenance_actor_config cfg) {
  auto st = std::make_shared<maintenance_state>(std::move(cfg));
  st->next_due_ms = now_ms(*st) + st->cfg.interval_ms;
  schedule(self, *st);
  return {
      [st, self](spawned_atom, maintenance_links& links) {
        st->links = std::move(links);
        // The stores learn the router from here: a hand edit of a live session's row passivates
        // it, so its next turn starts from the edited row (store_actor.hpp).
        for (const auto& [agent, store] : st->links.stores)
          if (st->links.router) self->send(store, spawned_atom::value, passivate_port(st->links.router));
      },
      [self, st](tick_atom) {
        if (!st->running && now_ms(*st) >= st->next_due_ms) start_pass(self, st, "schedule", false);
        schedule(self, *st);
      },
      [self, st](tick_atom, settle_atom) { return on_tick_settle(self, st); },
      [self, st](high_water_atom, const std::string&) {
        // Under virtual time the pass waits for the driver's next tick: started here, it
        // would plan while the turns that filled the store are still writing.
        if (!st->cfg.self_scheduling) {
          st->next_due_ms = std::min(st->next_due_ms, now_ms(*st));
          st->due_trigger = "high-water";
        } else if (!st->running) {
          start_pass(self, st, "high-water", false);
        }
      },
      [self, st](maintain_atom) { return on_maintain(self, st); },
      [self, st](maintain_atom, cleanup_request& req) { return on_cleanup(self, st, std::move(req)); },
      [self, st](mstep_atom) { step(self, st); },
      [self, st](shard_open_atom, maintenance_unit& u) { on_shard_open(self, st, std::move(u)); },
      [st](shard_close_atom, const std::string& name) { return on_shard_close(st, name); },
  };
}

}  // namespace sessionrt::actors
