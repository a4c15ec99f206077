// Chat commands (SPEC §7): the command table (every command, when it runs while a turn runs,
// and which code answers it), their recognition, and the text of /status [R§11.2], /context
// list and /queue. Pure: no I/O, no clock.
#pragma once
#include <boost/json/array.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "actors/session/queue_settings.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::actors {

// reset: a session.resetTriggers command (/new, /reset; reset_trigger.hpp, which needs the
// sender and the route). dock: /dock-<channel> (dock_command.hpp). parse_chat_command returns
// neither: they are told apart by their own rules.
enum class chat_command { none, status, context_list, compact, stop, queue, reset, dock };

// What the session does with a chat message, by its command, when it arrives while a turn runs
// (session_machine.cpp acts on it; without a running turn only `stop` differs: answered at once).
enum class command_timing {
  turn,            // a turn of its own, in queue order: waits by the queue mode while one runs
  answer_if_busy,  // while a turn runs: answered at once from the row and the context (when the
                   // row is in memory; else it waits as a turn)
  stop,            // never a turn: cancels the running turn and drops the waiting messages
  run_next,        // while a turn runs: cancels it and runs next, ahead of what waits
};

// The command table: every chat command, when it runs, and where its work is done.
struct chat_command_row {
  chat_command id;
  std::string_view name;     // as typed (gateway/command_catalog.cpp lists them to clients)
  command_timing timing;
  std::string_view done_by;  // the code that answers it
};
inline constexpr chat_command_row kChatCommands[] = {
    {chat_command::none, "", command_timing::turn, "session_core::run_turn (turn_loop.cpp): a model turn"},
    {chat_command::status, "/status", command_timing::answer_if_busy,
     "session_core::chat_turn, or answer_while_busy + the queue depth (session_machine)"},
    {chat_command::context_list, "/context list", command_timing::answer_if_busy,
     "session_core::chat_turn, or answer_while_busy"},
    {chat_command::compact, "/compact", command_timing::turn, "session_core::chat_turn -> compact()"},
    {chat_command::stop, "/stop", command_timing::stop, "session_machine (cancels the running turn)"},
    {chat_command::queue, "/queue", command_timing::turn, "session_core::chat_turn (the row's queue fields)"},
    {chat_command::reset, "/new, /reset (session.resetTriggers)", command_timing::run_next,
     "session_core::chat_turn (rollover), is_reset_command while busy"},
    {chat_command::dock, "/dock-<channel>", command_timing::turn, "session_core::chat_turn (dock_command.hpp)"},
};
constexpr const chat_command_row& chat_command_info(chat_command c) {
  for (const auto& row : kChatCommands)
    if (row.id == c) return row;
  return kChatCommands[0];
}

// Recognizes "/status", "/context list" (also "/context"), "/compact [instructions]", "/stop",
// "/queue [mode] [cap:N] [drop:old|new|summarize] [debounce:<duration>]"; `args` gets the
// rest of the line for /compact and /queue.
chat_command parse_chat_command(std::string_view body, std::string& args);

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
