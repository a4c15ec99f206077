// store_actor: the one writer of a sessions.json (SPEC §1.1). Every mutation of the store goes
// through its mailbox; writes are coalesced: a put marks the store dirty and the file is
// written once per window (storage.storeFlushWindowMs, default 50 ms, stretched to 4x the last
// write's duration so a large store is not rewritten back to back, and with durability batch to
// the file's size at storage.storeRewriteBytesPerSec: write_pace.hpp). A put that asks for a
// durable ack is answered after the write that includes it, which then happens at once (all
// durable puts already queued share it). A failed write keeps the rows dirty, is retried at
// the next window and fails the durable acks waiting on it. Spawn it detached: a write
// fsyncs, and that must not block a scheduler thread. After each write the rows keep only their
// place in the file just written (session_store_file::shed_rows) until next read or changed.
//   (get, key) -> entry_reply            (put, key, entry)             fire and forget
//   (put, key, entry, flush) -> bool     (list) -> entry_rows
//   (list, changes) -> row_changes       the rows changed since the previous ask (row_change_log:
//                                        one reader per store, the maintenance actor)
//   (list, count) -> size_t              how many rows (none is read: spilled rows stay so)
//   (put, key, row_text[, flush])        the row as session_store::append_row_text wrote it
//   (flush, stop) -> bool                write now (shutdown, runtime::flush)
//   (erase, keys, updatedAts) -> size_t  removes the rows whose updatedAt is still the one
//                                        given (erase_no_updated_at: none), writes at once
//   (erase, keys, updatedAts, list) -> vector<string>  the same, answered with the keys removed
//   (spawned, router)                    the router (from the maintenance actor, once)
//   (tick)                               the hand-edit check (its own, every edit_check_ms)
// Hand edits (OpenClaw documents sessions.json as safe to edit): before each get, list, write
// and erase, and every edit_check_ms (real time; under virtual time at each flush), the store
// stats its file; when another program changed it, session_store_file::reload_if_changed()
// merges it (rows the runtime changed since its last write keep the runtime's version, the
// others take the file's: added, changed or removed by hand), the change log says "full" (the
// merged store numbers its rows anew, so maintenance's picture is read again whole),
// `store.reloaded` is published, and each live session whose row was edited is passivated
// through the router (after its running turn), so its next turn reads the edited row. A running turn's own row write still wins over an edit of the
// same row made before it. Only a complete JSON object is taken: a file that does not parse is
// never taken nor written over (the runtime's changes wait in memory, durable acks fail
// meanwhile, writes retry each window) until a check finds a file that parses; it may be an
// editor's save in progress, so it is reported (`store.edit_refused`, an error log line) only
// when the next check finds it unchanged, and once.
// After a put that brings the unarchived rows (archivedAt unset: archived rows do not count, as
// for the cap) to high_water_rows (0: never), it sends (high_water, agent_id) to `maintenance`
// once, and again only after they fell below it or an erase (archived_rows.hpp).
// Durability batch (cfg.commit_log set): every row change is a record of the state dir's commit
// log, durable before it is acknowledged, so sessions.json is written lazily — with the window
// (storage.storeFlushWindowMs: the longest a change waits for the file, so the age of the file
// readers see; stretched for a large file by the rewrite rate), at (flush, stop), and when the
// log asks before a checkpoint (checkpt: with the window alone, not the rate's wait) — never
// at once for a durable put. A session's rows come from the log (logrows: already recorded, in
// their sequence). The store's own changes (puts from others than sessions: admin, subagents,
// maintenance's archive; erases) are sent to the log as its records, placed after the last
// session row it took; a durable put or an erase is answered once its record is durable
// (the log's (synced) answer). After each write, and at (checkpt) or (flush, stop) when there
// is nothing to write, the store records that sessions.json holds everything so far
// (kStoreWritten): a checkpoint drops a log only after that, and a replay starts there.
// self_flushing false (virtual time): there is no window; the host writes with (flush, stop)
// at points of its choosing (a simulation: once the oldest unwritten change is
// storeFlushWindowMs old in virtual time, sim/clock_driver), so what is on disk at a crash is
// a function of virtual time, not of when a real-time window happened to close.
#pragma once
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/commit_log/commit_log_actor.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/store/archived_rows.hpp"
#include "actors/store/row_change_log.hpp"
#include "actors/store/write_pace.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::actors {

using erase_atom = caf::atom_constant<caf::atom("erase")>;
using high_water_atom = caf::atom_constant<caf::atom("highwater")>;
using count_atom = caf::atom_constant<caf::atom("count")>;
inline constexpr std::int64_t erase_no_updated_at = std::numeric_limits<std::int64_t>::min();

// What a store needs of the maintenance actor (maintenance_actor.hpp, whose handle converts to
// it): (high_water, agentId).
using high_water_port = caf::typed_actor<caf::reacts_to<high_water_atom, std::string>>;

struct store_actor_config {
  // When the file is written: storage.storeFlushWindowMs, and with durability batch the rewrite
  // rate (write_pace.hpp). Real time only; stretched to 4x the last write's duration.
  write_pace pace{50};
  std::string agent_id;
  event_bus_actor bus;
  std::shared_ptr<event_hub> hub;
  clock* time = nullptr;
  high_water_port maintenance;     // told when the unarchived row count reaches high_water_rows
  std::size_t high_water_rows = 0;
  bool self_flushing = true;       // false: no window, the host flushes (see above)
  // storage.watchStoreEdits (default on): take hand edits of sessions.json while running. Off,
  // an edit in place makes the rows kept on disk fail until a restart.
  bool watch_edits = true;
  std::int64_t edit_check_ms = 1000;  // hand-edit check while idle (self_flushing only; 0: only on use)
  commit_log_actor commit_log;  // durability batch: row changes are records of the commit log (see above)
};

// store.reloaded: a hand edit of sessions.json was merged (keys listed up to 50 each).
struct store_reloaded {
  static constexpr std::string_view type = "store.reloaded";
  std::string path;
  std::vector<std::string> added, changed, removed;
  std::int64_t kept_runtime = 0;  // keptRuntime: rows the runtime changed since its last write, kept
  boost::json::object data() const;
};
// store.edit_refused: sessions.json was changed by another program and does not parse.
struct store_edit_refused {
  static constexpr std::string_view type = "store.edit_refused";
  std::string path, cause;
  boost::json::object data() const;
};

using store_actor_type = caf::typed_actor<
    caf::replies_to<get_atom, std::string>::with<entry_reply>,
    caf::reacts_to<put_atom, std::string, session_entry>,
    caf::reacts_to<put_atom, std::string, std::string>,  // row text
    caf::replies_to<put_atom, std::string, session_entry, flush_atom>::with<bool>,
    caf::replies_to<put_atom, std::string, std::string, flush_atom>::with<bool>,
    caf::replies_to<list_atom>::with<entry_rows>,
    caf::replies_to<list_atom, changes_atom>::with<row_changes>,
    caf::replies_to<list_atom, count_atom>::with<std::size_t>,
    caf::reacts_to<flush_atom>,                          // the coalescing window closed (its own)
    caf::reacts_to<write_now_atom>,                      // durable acks wait: write now (its own)
    caf::replies_to<flush_atom, stop_atom>::with<bool>,
    caf::replies_to<erase_atom, std::vector<std::string>, std::vector<std::int64_t>>::with<std::size_t>,
    caf::replies_to<erase_atom, std::vector<std::string>, std::vector<std::int64_t>, list_atom>::with<
        std::vector<std::string>>,
    caf::reacts_to<spawned_atom, passivate_port>,        // the router
    caf::reacts_to<tick_atom>,                           // the hand-edit check (its own)
    caf::reacts_to<log_rows_atom, row_batch>,            // batch: the sessions' rows, from the log
    caf::reacts_to<checkpoint_atom>,                     // batch: the log waits for a write
    caf::reacts_to<synced_atom, std::uint64_t, std::uint64_t, std::string>>;  // batch: the log's answers

struct store_state {
  std::shared_ptr<storage::session_store_file> file;
  store_actor_config cfg;
  bool dirty = false;
  bool window_scheduled = false;
  // A (write_now) to itself is on its way: at once for durable puts (no commit log), after the
  // window alone for a (checkpt) (with one; the two never meet).
  bool write_now_scheduled = false;
  std::vector<caf::typed_response_promise<bool>> durable_waiters;
  std::int64_t last_write_ms = 0;  // how long the last write took (real time)
  bool high_water_told = false;
  archived_rows archived;  // which rows have archivedAt (counted once the store nears the mark)
  row_change_log changes;
  passivate_port router;  // sessions whose rows were edited by hand are passivated through it
  // Durability batch: the last session row taken (its number in the log's row sequence), the
  // store's own appends sent, and what waits for the log's answers (append seq, callback).
  std::uint64_t applied_through = 0;
  std::uint64_t log_sent = 0;
  std::deque<std::pair<std::uint64_t, std::function<void(const std::string&)>>> log_waiters;
};

store_actor_type::behavior_type store_actor(store_actor_type::stateful_pointer<store_state> self,
                                            std::shared_ptr<storage::session_store_file> file, store_actor_config cfg);

}  // namespace sessionrt::actors
