// queue_settings: what a session does with messages that arrive while its turn waits on the
// model (OpenClaw's queue modes: the row's queueMode / queueCap / queueDrop / queueDebounceMs,
// the /queue command, and `messages.queue` in the config for the defaults).
//   followup  run each after the current turn, in arrival order (the default)
//   collect   the messages that arrived during the run become one follow-up turn
//   interrupt cancel the running call (nothing of its partial reply is stored), run the new one
//   steer     hand the message to the runner at its next tool boundary when the runner says it
//             can take it, else followup
// cap bounds what waits; past it `drop` says what goes: old (the oldest waiting), new (the one
// arriving), summarize (the oldest ones are folded into one "[Queued messages]" follow-up).
// debounce_ms waits that long after the last arrival before a follow-up starts.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sessionrt::actors {

enum class queue_mode { followup, collect, interrupt, steer };
enum class queue_drop { old_first, new_first, summarize };

struct queue_settings {
  queue_mode mode = queue_mode::followup;  // messages.queue.mode
  std::size_t cap = 20;                    // messages.queue.cap (>= 1)
  queue_drop drop = queue_drop::summarize; // messages.queue.drop
  std::int64_t debounce_ms = 0;            // messages.queue.debounceMs
};

std::optional<queue_mode> parse_queue_mode(std::string_view text);
std::optional<queue_drop> parse_queue_drop(std::string_view text);
std::string_view queue_mode_name(queue_mode m);
std::string_view queue_drop_name(queue_drop d);

}  // namespace sessionrt::actors
