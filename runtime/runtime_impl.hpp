// runtime_impl: what a started runtime holds (runtime.hpp's facade over it), shared by the
// files that implement the facade: runtime_start.cpp (start's steps), runtime.cpp (turns,
// reads, virtual time, stop) and session_admin.cpp (the sessions.* calls). Private to runtime/.
// A host thread's synchronous call asks an actor through a host_self; how long it waits is
// said at each request (actors/turn_wait.hpp).
#pragma once
#include <caf/all.hpp>

#include <chrono>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/events/event_hub.hpp"
#include "actors/model/model_gate.hpp"
#include "actors/router/pending_outcomes.hpp"
#include "actors/session/compaction_providers.hpp"
#include "actors/turn_wait.hpp"
#include "messages/ids.hpp"
#include "runtime/actor_handles.hpp"
#include "runtime/blocking_pool.hpp"
#include "runtime/commit_log_setup.hpp"
#include "runtime/host_self.hpp"
#include "runtime/runtime.hpp"
#include "runtime/sync_runner_adapter.hpp"
#include "storage/change_feed_fs.hpp"
#include "storage/context_counts.hpp"
#include "storage/write_lock.hpp"

namespace date {
class time_zone;
}

namespace sessionrt::runtime {

struct runtime_impl {
  runtime_options opt;
  session_ids ids;  // from opt.id_seed: every new session id the runtime asks for
  actors::runtime_settings settings;
  clock* time = nullptr;
  alarms* timers_clock = nullptr;  // model timeouts and debounce alarms
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
  std::shared_ptr<actors::event_hub> hub = std::make_shared<actors::event_hub>();
  actors::compaction_providers providers;
  // The model plumbing (declared before the actor system: destroyed after it).
  std::unique_ptr<blocking_pool> pool;         // a synchronous runner's calls, providers' summaries
  std::unique_ptr<sync_runner_adapter> adapter;
  std::unique_ptr<actors::model_gate> gate;
  std::shared_ptr<async_model_runner> async_runner;  // kept alive while sessions call it
  std::optional<commit_log_setup> log;  // the commit log replayed (and its new file, until its actor takes it)
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  step_host step;  // after sys: ended before it (stop() resets it first)
  actor_handles actors;  // every handle, built by start(); empty after stop()
  // The host callbacks of send(ev, done), answered by the outcome relay (ids in messages).
  std::shared_ptr<actors::pending_outcomes> pending = std::make_shared<actors::pending_outcomes>();
  bool stopped = false;
  storage::context_counts history_counts;  // what history pages counted (history())
  // The open shards (runtime_options::shard_of), by unit name: their own actors. Changed by
  // open_shard / close_shard (one caller thread: the cluster node's) and stop().
  struct open_shard_actors {
    actors::store_actor_type store;
    actors::commit_log_actor commit_log;  // durability batch, else empty
    std::string sessions_dir;
    storage::fs* files = nullptr;  // the shard's (its guard before each write)
  };
  mutable std::mutex shards_mu;
  std::map<std::string, open_shard_actors> shards;
  // Announced (opening_shard) and not yet open or failed; being closed (close_shard). What
  // serves() answers before a turn is accepted: an opening shard holds what arrives, a closing
  // one refuses it.
  std::set<std::string> opening_units, closing_units;
};

// A store actor over `file` (runtime_start.cpp's, for the agents' stores and the shards'; a
// shard's store of `shards` tells maintenance of high water at its share of maxEntries).
actors::store_actor_type spawn_store_actor(runtime_impl& st, std::shared_ptr<storage::session_store_file> file,
                                           const std::string& agent, const actors::commit_log_actor& log,
                                           const actors::maintenance_actor_type& maintenance, int shards = 1);
// A commit log actor writing `first` in `state_dir` through `files`.
actors::commit_log_actor spawn_commit_log_actor(runtime_impl& st, storage::fs* files, const std::string& state_dir,
                                                const std::string& state_id, storage::commit_log::new_log first);
// Tells the timers when each of the file's sessions goes stale.
void schedule_expiries(runtime_impl& st, caf::scoped_actor& self, const storage::session_store_file& file);
// Writes the open shards' stores and checkpoints their logs (stop(), after the sessions
// stopped); the first failure.
status stop_shards(caf::scoped_actor& self, runtime_impl& st, caf::duration timeout);
// Where a key's session lives: its agent's store, sessions dir and files, or (sessions per
// shard) its open shard's. not_found when no agent `agent` is configured; not_owner when the
// key's shard is not open here.
struct key_place {
  actors::store_actor_type store;
  std::string sessions_dir;
  storage::fs* files = nullptr;
};
result<key_place> place_of_key(const runtime_impl& st, const std::string& key, const std::string& agent);
// The open shards' store actors by unit name (flush()).
std::map<std::string, actors::store_actor_type> shard_store_actors(const runtime_impl& st);
// Sessions per shard: the sub-agent actor's place_of and shard_of (the child in its parent's
// shard); nothing changed without runtime_options::shard_of.
void place_subagents_by_shard(runtime_impl& st, actors::subagent_actor_config& sc);

// Puts `entry` as `key`'s row in the agent's store and waits until it is durable: in
// sessions.json, or with durability batch in the commit log (the file follows lazily).
status put_row_now(caf::scoped_actor& self, const actors::store_actor_type& store, const std::string& agent,
                   const std::string& key, const session_entry& entry);

// Asks every agent's store actor to write sessions.json now and waits for each (at most
// `timeout`); the first failure names its agent.
status write_stores(caf::scoped_actor& self, const std::map<std::string, actors::store_actor_type>& stores,
                    caf::duration timeout);

// The agent a key belongs to: the one it names, else the default agent.
std::string agent_of_key(const std::string& key, const actors::runtime_settings& s);

}  // namespace sessionrt::runtime
