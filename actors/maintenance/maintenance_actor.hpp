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
    caf::reacts_to<mstep_atom>>;

maintenance_actor_type::behavior_type maintenance_actor(maintenance_actor_type::pointer self,
                                                        maintenance_actor_config cfg);

}  // namespace sessionrt::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::maintenance_links)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::cleanup_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::cleanup_result)
