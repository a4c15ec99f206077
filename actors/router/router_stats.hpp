// router_stats: what the router answers to (stats): its slot table's counts (session_slots.hpp),
// the turns it delegated and the routes it keeps memoized. A plain value, no CAF (its inspect()
// is in router_actor.hpp), so the runtime and its hosts read fields instead of parsing text.
#pragma once
#include <cstddef>
#include <cstdint>

#include "actors/router/session_slots.hpp"

namespace sessionrt::actors {

struct router_stats {
  slot_counts slots;
  std::uint64_t turns = 0;   // chat and system events delegated to a session actor
  std::size_t routes = 0;    // memoized routes (a passivated or trimmed session keeps none)
};

}  // namespace sessionrt::actors
