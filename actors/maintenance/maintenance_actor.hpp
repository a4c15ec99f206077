// maintenance_actor: the supervisor that keeps each agent's sessions dir bounded (SPEC §6.2,
// [R§5.3-5.6]). A pass plans each store with maintenance_planner (and, every 5 minutes per
// store or when asked, the cron reaper) from the store actor's rows and a listing of the dir,
// then, in mode enforce, applies the plans through the store actor and the router in bounded
// batches (maintenance_pass.hpp), one batch per message, so the stores, the router and the
// sessions keep serving turns while it runs: a row updated since the plan stays; a live
// session is passivated before a file of its session moves, and a row that came back with the
// session keeps its files. Mode warn plans and reports, and changes nothing. Each pass ends
// with one `maintenance.report` event (maintenance_report_event), also the answer to
// (maintain). Spawn it detached: it lists directories, renames and compresses files.
// Rows archived in place (archiveDashboardAfter) are written with their key held by the router
// (no live session holds the row meanwhile; a message that arrives waits) when the row is as
// planned. With session.maintenance.coldStorage on, each pass also runs a cold storage plan per
// agent (cold_storage_planner.hpp), in any mode: each transcript is compressed with its key held,
// its row read back (still naming the session, not updated since the plan) and the
// transcript's write lock taken (not reentrant: any holder, in this process or another, makes
// it wait for a later pass); one info line per pass says what it compressed and saved.
//   (spawned, maintenance_links)     the stores and the router (once, before any pass)
//   (tick)                           the schedule (self-scheduled every interval_ms, real time)
//   (tick, settle) -> bool           virtual time: a pass when one is due, answered after it
//                                    (true), or false at once when none is due
//   (high_water, agentId)            a store's rows reached the high-water mark: a pass soon
//   (maintain) -> lifecycle_event    a pass now (after the one running), answered with its report
//   (maintain, cleanup_request) -> cleanup_result   `sessions cleanup` in the running runtime
//                                    (cleanup_run.hpp): one pass after the one running, with a
//                                    forced plan per store (a full listing, every row read), the
//                                    CLI's flags, applied when asked (through the stores and the
//                                    router, as any pass), answered with the plans and what was
//                                    applied; it also publishes its maintenance.report.
//   (mstep)                          the next batch (its own)
//   (shard_open, maintenance_unit)   a cluster node's shard is served (runtime::open_shard): its
//                                    store is maintained from the next pass on, as an agent's
//                                    is, through the shard's own files (its write guard before
//                                    each write) and within the agent's bounds, counted over
//                                    all its shards (shard_bounds.hpp); a cleanup covers
//                                    the shards of its agent (or all) served here
//   (shard_close, unit) -> bool      the shard is being closed: from this message on, nothing of
//                                    its store or files is touched by a pass (a job of it not
//                                    begun is dropped, the one running stops at its next step,
//                                    reporting why); answered at once. A write the shard's guard
//                                    refuses (the shard was fenced) stops its job the same way.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "actors/caf_types.hpp"
#include "actors/maintenance/cleanup_run.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/router/router_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/runtime_settings.hpp"
#include "storage/change_feed_fs.hpp"
#include "storage/fs.hpp"
#include "storage/process_probe.hpp"

namespace sessionrt::actors {

using maintain_atom = caf::atom_constant<caf::atom("maintain")>;
using mstep_atom = caf::atom_constant<caf::atom("mstep")>;

struct maintenance_actor_config {
  const runtime_settings* settings = nullptr;  // required (maintenance, cron)
  storage::fs* files = nullptr;                // required
  clock* time = nullptr;                       // required
  std::map<std::string, std::string> sessions_dir;  // agentId -> its sessions dir
  event_bus_actor bus;
  std::shared_ptr<event_hub> hub;
  bool self_scheduling = true;                 // false under virtual time: advance() ticks
  std::int64_t interval_ms = 5 * 60 * 1000;    // a pass at least this often
  std::int64_t reaper_every_ms = 5 * 60 * 1000;  // the cron reaper at most this often per store
  std::size_t batch_actions = 256;             // actions per message
  // When set (the runtime's own fs, watching every sessions dir): a pass stats only the files
  // that changed since the last one (dir_listing.hpp), and lists a dir in full at least this
  // often, to see what changed around the runtime. Real time, under virtual time too: what
  // changes around the runtime (another process) does so on the real clock, and a simulated
  // month would otherwise list its dir 720 times. Unset: every pass lists in full.
  storage::change_feed_fs* feed = nullptr;
  std::int64_t full_scan_every_ms = 60 * 60 * 1000;
  // true: the listing and the rows are kept from pass to pass (dir_listing, row_cache), so a
  // pass reads what changed. false: each pass lists the dir in full and reads every row from
  // the store (list), and drops both once planned: nothing per session is held between
  // passes. The runtime sets it from storage.keepMaintenancePicture (runtime_settings.hpp).
  bool keep_picture = true;
  storage::process_probe* probe = nullptr;  // the write lock's (nullptr: the real processes)
  // Sessions are served per shard (runtime_options::shard_of): no agent's store is here, the
  // shards' come and go (shard_open), and a cleanup of any agent is taken (it covers the
  // agent's shards served now, maybe none).
  bool per_shard = false;
};

// One shard's store as the maintenance pass sees it (shard_open).
struct maintenance_unit {
  std::string name;  // "main/017"
  std::string agent_id;
  std::string sessions_dir;
  store_actor_type store;
  storage::fs* files = nullptr;  // the shard's; outlives the maintenance actor
  int shards = 1;                // the agent's shard count (its census, shard_bounds.hpp)
};

struct maintenance_links {
  std::map<std::string, store_actor_type> stores;  // agentId -> its store actor
  router_actor_type router;
};

// The signatures of the header comment, one per line.
using maintenance_actor_type = caf::typed_actor<
    caf::reacts_to<spawned_atom, maintenance_links>,
    caf::reacts_to<tick_atom>,
    caf::replies_to<tick_atom, settle_atom>::with<bool>,
    caf::reacts_to<high_water_atom, std::string>,
    caf::replies_to<maintain_atom>::with<lifecycle_event>,
    caf::replies_to<maintain_atom, cleanup_request>::with<cleanup_result>,
    caf::reacts_to<mstep_atom>,
    caf::reacts_to<shard_open_atom, maintenance_unit>,
    caf::replies_to<shard_close_atom, std::string>::with<bool>>;

maintenance_actor_type::behavior_type maintenance_actor(maintenance_actor_type::pointer self,
                                                        maintenance_actor_config cfg);

}  // namespace sessionrt::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::maintenance_links)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::maintenance_unit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::cleanup_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::cleanup_result)
