// dashboard_archive: OpenClaw 2026.9's session.maintenance.archiveDashboardAfter
// (archiveStaleDashboardEntries in store-maintenance.ts), pure: which rows it archives and what
// archiving writes into a row. No I/O, no clock.
// - A row is a stale dashboard when its key is agent:<id>:dashboard:<...> (the Control UI's chat
//   sessions; the rest compared lower-cased, as OpenClaw parses it), it is not archived already,
//   none of OpenClaw's preservations hold (a pin on a pinnable row, modelSelectionLocked, status
//   "running"; the planner adds its own: protected, preserveRecent, the active and preserved
//   keys), and its activity (the latest of lastInteractionAt, lastActivityAt, sessionStartedAt,
//   updatedAt) is known (> 0) and older than now - archiveDashboardAfter.
// - Archiving is in place: the row stays, with archivedAt = now, archivedBy deleted and
//   archiveReason "stale-dashboard"; updatedAt is not touched. An archived row is left out of
//   sessions.list unless asked for (`archived: true | "all"`), and the next message a person
//   sends to it takes it out of the archive (session_rollover.hpp).
#pragma once
#include <cstdint>
#include <string_view>

#include "messages/session_entry.hpp"

namespace sessionrt::actors {

class maintenance_row;

inline constexpr std::string_view stale_dashboard_reason = "stale-dashboard";

bool is_dashboard_key(std::string_view key);
bool is_stale_dashboard(const maintenance_row& row, std::int64_t archive_after_ms, std::int64_t now_ms);
// OpenClaw's isPinnableSessionEntry: not a sub-agent, no spawnedBy, and a parentSessionKey
// (if any) that is the agent's main key.
bool is_pinnable_row(std::string_view key, const session_entry& entry);

// Sets archivedAt (kept in its place when present), drops archivedBy, sets archiveReason.
void archive_row_in_place(session_entry& entry, std::int64_t now_ms, std::string_view reason = stale_dashboard_reason);
// What archive_row_in_place adds to a row without either field, in sessions.json's
// two-space-indented form (the planner's projected store size).
std::uint64_t archived_row_extra_bytes(std::int64_t now_ms, std::string_view reason = stale_dashboard_reason);

}  // namespace sessionrt::actors
