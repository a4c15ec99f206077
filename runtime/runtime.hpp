// runtime: sessionrt embedded in a host process (SPEC §7). start() loads each agent's
// sessions.json (a corrupt one is set aside and rebuilt, and said so), takes each store's
// lock (a second runtime on the same state dir fails here, naming the holder), spawns the
// actors (router, store writers, group-commit syncer, timers, event bus) and returns.
//   send(chat_event)   -> std::future<turn_outcome>, ready once the turn is acknowledged
//   handles()          -> the actors as typed handles (actor_handles.hpp), for a host whose own
//                         actors speak to them: the router takes (chat, chat_event) -> turn_outcome
//   send(system_event) -> heartbeat / cron / exec notices, checked; a future of the outcome
//   spawn_subagent(parent_key, spec) -> a sub-agent session; the future has its first turn
//   subscribe(filter, fn) -> lifecycle events; fn runs on the event bus, one event at a time
//                         (runtime_options::subscriptions also see the start-up events)
//   sessions() / session(key) -> rows as the store holds them now (an error when the store
//                         could not be asked; an empty optional when the key has no row)
//   advance(ms)        -> virtual time only: moves the clock and fires what became due
//   flush()            -> writes the stores now
//   maintain()         -> one store maintenance pass now, its maintenance.report event
//   stop(deadline)     -> passivates every session (flush, sync, release locks), writes the
//                         stores, stops the actors; bounded by the deadline
// Model calls never run on the actor scheduler: an async_model_runner is started and
// completes from any thread; a synchronous model_runner runs on model.syncRunnerThreads
// threads of the runtime's own. At most model.maxConcurrent calls run at once (FIFO across
// sessions); a call past model.timeoutMs is cancelled. The runner must be thread-safe.
#pragma once
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include <boost/json/array.hpp>

#include "actors/maintenance/cleanup_run.hpp"
#include "actors/runtime_settings.hpp"
#include "actors/session/session_wait.hpp"
#include "actors/subagent/subagent_spawn.hpp"
#include "messages/chat_event.hpp"
#include "messages/clock.hpp"
#include "messages/lifecycle_event.hpp"
#include "messages/model_runner.hpp"
#include "messages/session_entry.hpp"
#include "runtime/runtime_stats.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/fd_budget.hpp"
#include "storage/fs.hpp"
#include "storage/process_probe.hpp"
#include "storage/session_store_file.hpp"
#include "storage/store_reconcile.hpp"

namespace sessionrt::runtime {

struct actor_handles;  // runtime/actor_handles.hpp (includes CAF)
struct runtime_impl;   // runtime/runtime_impl.hpp (private to runtime/)

struct runtime_options {
  actors::runtime_settings settings;
  // The model: an asynchronous runner, or a synchronous one (run on the runtime's pool). A
  // synchronous runner that also implements async_model_runner (the simulated model) is
  // started asynchronously. One of the two is required for turns.
  std::shared_ptr<model_runner> runner;
  std::shared_ptr<async_model_runner> async_runner;
  // Where model timeouts and debounce alarms are kept: nullptr = the manual clock under
  // virtual time, else the real clock's alarm thread.
  alarms* timers_clock = nullptr;
  clock* time = nullptr;                  // nullptr: the system clock
  bool virtual_time = false;              // `time` is a manual_clock moved by advance()
  unsigned threads = 0;                   // scheduler threads; 0 = number of cores
  // CAF's scheduler: work stealing (idle workers poll, sleeping up to 10 ms between polls:
  // throughput) or work sharing (one queue, idle workers wake on a condition variable:
  // latency). Unset: sharing under virtual time, whose driver waits on one short request
  // after another, stealing otherwise.
  std::optional<bool> work_sharing;
  std::int64_t store_lock_timeout_ms = 2000;  // waiting for another runtime's store lock
  storage::fs* files = nullptr;           // nullptr: the real filesystem
  // Whether `files` can block on a device. The store, maintenance and subagent actors and the
  // transcript sync workers then get threads of their own; false (an in-memory fs) runs them on
  // the scheduler, which spares a thread hand-off per message.
  bool files_block = true;
  // Set: new session ids are derived from this seed and what each is for (messages/ids.hpp),
  // so a replay of the same events names its sessions alike; unset: random UUID v4s.
  std::optional<std::uint64_t> id_seed;
  storage::process_probe* probe = nullptr;
  // Subscriptions made before anything is published, so that start-up events reach them
  // (store.quarantined for a sessions.json set aside while loading); subscribe() after start()
  // sees only what happens later.
  struct subscription {
    event_filter filter;
    std::function<void(const lifecycle_event&)> fn;
  };
  std::vector<subscription> subscriptions;
  // Set: sessions are served per shard (a cluster node, docs/cluster.md): start() loads no
  // agent store of the state dir (nothing in it is locked or replayed), and a key's session is
  // served only while its shard is open (open_shard); any other key is refused with
  // errc::not_owner. The index of a key's shard: cluster::shard_of (this layer cannot see it).
  std::function<int(std::string_view session_key)> shard_of;
};

// One shard's state, opened and made durable by its owner (cluster/shard_state.hpp), for
// runtime::open_shard: an ordinary state dir holding one agent.
struct shard_store {
  std::string agent;
  int index = 0;
  std::string dir;           // the shard's state dir (its commit log's)
  std::string sessions_dir;  // <dir>/agents/<agent>/sessions
  std::shared_ptr<storage::session_store_file> store;  // loaded and durable, written through `files`
  // Every file call of the shard's sessions, store and log (the owner's guard before each
  // write); must outlive close_shard().
  storage::fs* files = nullptr;
  std::optional<storage::commit_log::new_log> log;  // durability batch: the log this owner writes
  std::string state_id;                             // ... and the shard's state id
  int shards = 1;  // the agent's shard count: the store keeps 1/shards of session.maintenance's bounds
};

struct session_row {
  std::string agent_id;
  std::string key;
  session_entry entry;
};

struct startup_report {
  std::vector<storage::store_load_report> stores;  // one per agent, with any quarantine
  std::vector<storage::adopted_transcript> adopted;  // rows repaired from newer transcripts
  storage::fd_budget open_files;  // the open-file limit raised for the live sessions, or them lowered
};

class runtime {
 public:
  static result<std::unique_ptr<runtime>> start(runtime_options options);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  std::future<turn_outcome> send(chat_event ev);
  void send(chat_event ev, std::function<void(turn_outcome)> done);
  // A system event is checked like a chat event (a bad key, a cron job id that cannot name a
  // session, invalid UTF-8 or a text over session.maxMessageBytes: an outcome with the error,
  // nothing stored); the outcome comes once its session handled it (a notice queued for the
  // next prompt; a cron run's or an isolated heartbeat's turn acknowledged).
  std::future<turn_outcome> send(system_event ev);
  void send(system_event ev, std::function<void(turn_outcome)> done);
  // The actors (include runtime/actor_handles.hpp to use them); empty after stop().
  const actor_handles& handles() const;

  // Compaction providers (SPEC §4): compaction.provider names the one to try first.
  void register_compaction_provider(const std::string& id, std::shared_ptr<compaction_provider> provider);

  std::uint64_t subscribe(event_filter filter, std::function<void(const lifecycle_event&)> fn);
  bool unsubscribe(std::uint64_t id);
  // Delivers an event of the host's to the subscribers, in order with the runtime's own (the
  // cluster node's shard.acquired|released|fenced); dropped when nobody wants its type.
  void publish(lifecycle_event e);

  result<std::vector<session_row>> sessions();
  // How many rows sessions() would list (no row is read).
  result<std::size_t> session_count();
  result<std::optional<session_entry>> session(const std::string& key, const std::string& agent_id = "");
  // The router's, the timers' and the model gate's counters (runtime_stats.hpp; to_text() for
  // the line diagnostics print); stopped set once the runtime is.
  runtime_stats stats();
  struct model_call_stats {
    std::size_t running = 0, waiting = 0, peak_running = 0;
    std::uint64_t admitted = 0, admitted_late = 0;
  };
  model_call_stats model_calls() const;

  // Virtual time: advance the manual clock by `ms` and let the timers and the idle sweep run,
  // then the maintenance pass if one became due, then write the stores; returns once they
  // have handled it. Under virtual time the stores have no real-time window of their own:
  // they are written by advance(), flush() and the writes that cannot wait (durable acks,
  // maintenance removals, stop), so what is on disk is a function of virtual time.
  status advance(std::int64_t ms);
  // The same in two halves, for a driver that lets the turns woken by the clock finish first
  // (the simulator): the pass then plans from a state that is a function of virtual time, not
  // of which thread got there first.
  status advance_clock(std::int64_t ms);  // advance() without the maintenance pass
  result<bool> run_due_maintenance();    // the pass when one is due at the clock's time: ran?
  // Waits until every event sent so far has been handled by the router and its session
  // (system events included), the commit log (durability batch) answered every record those
  // sent and runs no sync, and their lifecycle events were delivered (testing aid; a session
  // waiting for a transcript lock answers before the events it holds back). Returns what the
  // sessions wait on once they handled those events (actors/session/session_wait.hpp: the
  // simulator moves virtual time only when none waits on what ends by itself).
  actors::settle_report settle();
  // Writes every agent's sessions.json now with what its store holds (the rows sessions sent
  // so far; the coalescing window would have written them shortly; under virtual time, the
  // host's step), then returns. A store with nothing new is not written. The rows
  // written keep only their place in the file (about 170 B each instead of their text).
  status flush();
  // One store maintenance pass now (SPEC §6.2; after the one running, if any): plans every
  // agent's store, applies the plans in mode enforce (warn changes nothing), and returns the
  // pass's maintenance.report event (also published). Passes also run on their own: every
  // 5 minutes (under virtual time from advance()) and when a store's rows reach high water.
  result<lifecycle_event> maintain();
  // `sessions cleanup` in this runtime (the gateway's sessions.cleanup): a forced plan per
  // store with the CLI's flags, applied when req.apply, through the actors (after the pass
  // running, if any); the plans and what was applied (actors/maintenance/cleanup_run.hpp).
  result<actors::cleanup_result> cleanup(const actors::cleanup_request& req);

  // ---- Session administration (the gateway's sessions.* methods; session_admin.cpp). Each
  // goes through the actors: the key's live actor is passivated first (after its running turn;
  // what arrives meanwhile waits in the router), then the store actor changes the row. /reset,
  // /new, /compact and /stop need no method here: send them as chat events with an explicit
  // session_key.
  struct session_patch {
    // Outer optional: change the field; inner nullopt: clear it (JSON null).
    std::optional<std::optional<std::string>> label, model, thinking_level, queue_mode;
    // OpenClaw's displayName: a session's title, which unlike a label is not unique.
    std::optional<std::optional<std::string>> display_name;
    // OpenClaw's pin: true sets pinnedAt (kept when already pinned), false removes it.
    std::optional<bool> pinned;
    // OpenClaw 2026.9's archive in place (actors/maintenance/manual_archive.hpp): true archives
    // the row ("manual"), false restores it; needs the row's sessionId as expected_session_id.
    std::optional<bool> archived;
    std::optional<std::string> expected_session_id;
  };
  // Patches the key's row (a missing row is created with a new sessionId); model is
  // "provider/model" or a model id; queue_mode must be a queue mode's name. Returns the row.
  result<session_row> patch_session(const std::string& key, const session_patch& patch);
  // A new session `key` that starts from the active branch of `parent_key`'s transcript by the
  // fork rules (actors/session/fork_planner.hpp: the branch copied, or isolated when too large),
  // with no turn: OpenClaw's sessions.create {parentSessionKey, fork:true}. Its row names the
  // parent (parentSessionKey) and, when something was copied, forkedFromParent; `label` when
  // given. Errors: the parent has no row (not_found), `key` has one (already_exists).
  result<session_row> fork_session(const std::string& parent_key, const std::string& key,
                                   const std::optional<std::string>& label = std::nullopt);
  struct deleted_session {
    bool deleted = false;                // there was a row
    std::vector<std::string> archived;   // transcripts renamed to <file>.deleted.<ts>
  };
  // Removes the key's row and archives its transcript (when archive_transcript).
  result<deleted_session> delete_session(const std::string& key, bool archive_transcript = true);
  struct session_history {
    std::string session_id;
    boost::json::array messages;  // the model context (pi's buildSessionContext shape), oldest first
    // Per message: the transcript entry it comes from (the compaction's for its summary), an
    // identity a compaction does not change; in a version 1 file, whose entries have no ids of
    // their own, "@<byte offset>" of its line.
    std::vector<std::string> ids;
    std::vector<std::int64_t> seqs;  // per message: its place in the whole context, 1 = the oldest
    // Per message: the byte offset of its entry in the transcript (a message stored later is
    // further on: the file is only appended to).
    std::vector<std::uint64_t> offsets;
    std::size_t total_messages = 0;  // items in the whole context (messages holds a page of them)
    std::size_t older = 0;           // items before the page (0: it starts with the first)
  };
  // The messages of the key's current transcript as a person should see them (read only):
  // user turns without the runtime context older transcripts stored in front of the words
  // (actors/session/hygiene/display_projection.hpp). `limit` > 0: a page of at most that many,
  // ending `offset` items before the newest, reading only those (storage::read_context_page: the
  // cost follows the page, not the transcript, once a first page of it was read). No row:
  // not_found.
  result<session_history> history(const std::string& key, std::size_t limit = 0, std::size_t offset = 0);
  // A title for a session without one (sessions.list includeDerivedTitles): its row's label,
  // displayName or subject, else its first user message as shown (display projection, white
  // space collapsed, a /command skipped), cut to 60 characters; read from the transcript's first
  // 64 KiB only. nullopt when there is nothing to name it by.
  result<std::optional<std::string>> derived_title(const std::string& key);
  // Waits until an administration call above holds `key` in the router (at once if one does):
  // what is sent for the key from then on waits for the call (testing aid, like settle()).
  // False when the runtime is stopped or the router did not answer.
  bool wait_until_held(const std::string& key);

  // ---- Sub-agents (actors/subagent/subagent_actor.hpp) ----
  // Spawns agent:<target>:subagent:<uuid> from the session `parent_key` (which must have a
  // row): its row gets spawnedBy / parentSessionKey / spawnDepth (at most
  // agents.maxSpawnDepth) / subagentRole / subagentControlScope (and forkedFromParent with
  // spec.fork: it starts from the parent's active branch, or isolated when that is too large,
  // fork_planner.hpp). The task runs as its first turn; the future has that turn's outcome
  // (session_key = the child's key, or the refusal), and subscribers of the parent get
  // subagent.completed with the reply. Send it once the parent's own turns are answered: a
  // fork copies what the parent's transcript holds at that moment.
  std::future<turn_outcome> spawn_subagent(const std::string& parent_key, actors::subagent_spec spec);
  void spawn_subagent(const std::string& parent_key, actors::subagent_spec spec, std::function<void(turn_outcome)> done);
  // The actor behind it, (spawn, parent_key, subagent_spec) -> turn_outcome, is handles().subagents.

  // ---- Sessions per shard (runtime_options::shard_of; runtime_shards.cpp) ----
  // The shard is being opened: its keys wait, in arrival order, until open_shard() or
  // shard_open_failed() for it.
  void opening_shard(const std::string& agent, int index);
  void shard_open_failed(const std::string& agent, int index);
  // Serves the shard's sessions from its state (a store actor and, with a log, a commit log
  // actor of its own); what waited is delivered. already_exists when it is open.
  status open_shard(shard_store s);
  // Stops serving the shard: its keys are held (what arrives waits), every session of it
  // passivates after its running turn, the store is written and the log checkpointed, the
  // actors stop; then what waited is refused (not_owner). Past `deadline` it goes on without
  // the sessions that did not stop (the caller fences the shard's files: they write nothing
  // more) and says so in the error. Not open: nothing to do.
  status close_shard(const std::string& agent, int index, std::chrono::milliseconds deadline);
  // The open shards' unit names ("main/017"), in order.
  std::vector<std::string> open_shards() const;
  // Whether a turn for `key` (of agent `agent`) is taken here now: ok without shards, or when
  // its shard is open or being opened (the router holds it); not_owner when the shard is not
  // here or is being closed. A caller that answers before the turn runs (the gateway's
  // chat.send "started") asks first, so a client is told to retry instead of getting a run
  // that fails. Advisory: a close may begin right after; the run then fails with not_owner.
  status serves(const std::string& key, const std::string& agent) const;

  status stop(std::chrono::milliseconds deadline = std::chrono::seconds(10));
  bool stopped() const;

  const startup_report& startup() const;
  const actors::runtime_settings& settings() const;
  const std::string& state_dir() const;

 private:
  explicit runtime(std::unique_ptr<runtime_impl> p);
  std::unique_ptr<runtime_impl> impl_;
};

}  // namespace sessionrt::runtime
