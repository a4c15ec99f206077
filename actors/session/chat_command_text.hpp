// The text of the chat commands' answers (SPEC §7): /status [R§11.2], /context list, and
// /queue's arguments and answer. The command table and the parser are in chat_commands.hpp;
// the commands' work in chat_command_work.cpp. Pure: no I/O, no clock.
#pragma once
#include <boost/json/array.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "actors/session/queue_settings.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::actors {

struct status_inputs {
  std::string session_key;
  const session_entry* entry = nullptr;
  std::int64_t context_window = 200000;
  std::string provider, model;  // configured model when the row names none
  std::int64_t now_ms = 0;
  std::string queue_mode = "followup";  // the session's queue mode in effect
  std::size_t queue_depth = 0;          // messages waiting for the running turn
};
// Lines of [R§11.2]: model, tokens, context used / window and %, compactions, session key
// and age, toggles. Percent = min(999, round(total / ctx * 100)).
std::string format_status(const status_inputs& in);

// What the prompt is made of: one line per context message (role, estimated tokens, a
// preview), then totals.
// With a non-empty system prompt, its own first line ("system prompt", its tokens) counts in the total.
std::string format_context_list(const boost::json::array& messages, std::int64_t context_window,
                                std::string_view system_prompt = {});

// /queue [mode] [cap:N] [drop:old|new|summarize] [debounce:<N>ms|<N>s|<N>]: what to set, or
// the error naming the token that is not understood. No arguments: nothing to set (show).
struct queue_command {
  std::optional<queue_mode> mode;
  std::optional<std::size_t> cap;
  std::optional<queue_drop> drop;
  std::optional<std::int64_t> debounce_ms;
  std::string error;
};
queue_command parse_queue_command(std::string_view args);
// "Queue: collect (cap 20, drop summarize, debounce 0 ms)"
std::string format_queue(const queue_settings& q);

// "1.2k" style token counts, "3m" / "2h" / "4d" durations.
std::string format_tokens(std::int64_t tokens);
std::string format_duration(std::int64_t ms);

}  // namespace sessionrt::actors
