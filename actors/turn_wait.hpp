// turn_wait: how long an ask waits for an answer that waits on a session's running turn: the
// router's (hold, key) and (passivate, key, why, settle) answer once the key's actor is gone,
// which is after its turn. Each model call of a turn is cut at model.timeoutMs and a turn makes
// a few in a row (compaction, its retries), so the bound is far past that: only a turn that never
// ends (a runner that ignores its cancellation) turns into an error for the asker (a host
// thread, a maintenance pass) instead of a wait for ever. Without a model timeout (0): an hour.
// The asks whose answer always comes keep caf::infinite, saying why where they are made: a
// store answers every request from its mailbox (a write's failure is an answer too), and the
// router answers every turn (a refusal, a stop and a model timeout are outcomes).
#pragma once
#include <caf/duration.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "actors/runtime_settings.hpp"

namespace sessionrt::actors {

inline caf::duration turn_wait(const runtime_settings& s) {
  const std::int64_t model_ms = s.model.timeout_ms;
  const std::int64_t ms = model_ms > 0 ? std::max<std::int64_t>(4 * model_ms, 60000) : std::int64_t(3600000);
  return caf::duration(std::chrono::milliseconds(ms));
}

}  // namespace sessionrt::actors
