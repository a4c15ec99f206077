// fd_budget (the one place that touches RLIMIT_NOFILE): every live session keeps its transcript open (one file descriptor), so
// session.maxLiveSessions must fit the process's open-file limit (RLIMIT_NOFILE; a Debian
// login gets a soft limit of 1,024 against a default of 10,000 live sessions). At start the
// runtime raises the soft limit as far as the sessions need (never past the hard limit, never
// lower than it was), and when even that is too small it lowers the effective maxLiveSessions
// to what fits — past it, the least recently used sessions are passivated instead of turns
// failing with EMFILE — and says so in the start-up report.
#pragma once
#include <cstddef>
#include <cstdint>

#include "messages/status.hpp"

namespace sessionrt::storage {

// Descriptors kept free for everything else: stores, locks being taken, syncer, the host.
inline constexpr std::uint64_t kFdReserve = 256;

struct fd_budget {
  std::uint64_t soft_before = 0;
  std::uint64_t soft_after = 0;  // the soft limit to set (== soft_before: leave it)
  std::uint64_t hard = 0;
  std::size_t max_live_sessions = 0;  // the effective session.maxLiveSessions
  bool lowered = false;               // max_live_sessions is below the configured one
};

// What to do for `configured` live sessions under these limits (pure).
fd_budget plan_fd_budget(std::uint64_t soft, std::uint64_t hard, std::size_t configured);
// Reads RLIMIT_NOFILE, raises the soft limit per the plan and returns it.
result<fd_budget> apply_fd_budget(std::size_t configured);

}  // namespace sessionrt::storage
