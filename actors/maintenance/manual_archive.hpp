// manual_archive: OpenClaw 2026.9's `sessions.patch {archived: true|false}` (sessions-patch.ts,
// sessions-mutations.ts) on one row, pure: whether the patch may run and what it writes. No I/O,
// no clock. The caller holds the row (no turn on the key meanwhile) and stores the result.
// - Refused: a key without a row or without a sessionId ("session not found: <key>"), a patch
//   without expectedSessionId ("expectedSessionId required for session lifecycle patch: <key>")
//   or whose expectedSessionId is not the row's ("Session <key> changed before patch. Retry."),
//   archiving "global" or an agent's main key ("Cannot archive an agent's main session.").
//   Pinning an archived row is refused ("cannot pin an archived session; restore it first").
// - archived true: archivedAt = now unless the row is archived already (then it is kept as it
//   is: a second archive changes nothing), archiveReason "manual", archivedBy dropped (OpenClaw
//   sets it to the authenticated user profile; sessionrt has none), pinnedAt dropped.
// - archived false: archivedAt, archivedBy and archiveReason deleted, whatever archived it.
// Maintenance never touches an archived row again but for a cap archive (maintenance_planner.hpp),
// and the next message a person sends to it restores it (session_rollover.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "messages/session_entry.hpp"
#include "messages/status.hpp"

namespace sessionrt::actors {

inline constexpr std::string_view manual_archive_reason = "manual";

// `is_main`: the key is "global" or the agent's main key (session.mainKey).
status check_archive_patch(std::string_view key, const session_entry* row, std::optional<std::string_view> expected_session_id,
                           bool archived, bool is_main);
void apply_archive_patch(session_entry& entry, bool archived, std::int64_t now_ms);
// The refusal of `pinned: true` on an archived row (ok otherwise).
status check_pin_patch(const session_entry& entry, bool pinned);

}  // namespace sessionrt::actors
