// Chat commands (SPEC §7): the command table — every command, how its text is recognized,
// when it runs while a turn runs, which code answers it and how commands.list shows it — and
// the one parser that reads a message against it (recognize_chat_command). A command added to
// kChatCommands is recognized, scheduled (session_machine.cpp) and listed to clients
// (gateway/command_catalog.cpp) from its row; its work is in chat_command_work.cpp, its text
// (the /status lines, /queue's arguments) in chat_command_text.hpp. Pure: no I/O, no clock.
//
// Recognition keeps each command's own rules, as OpenClaw reads them:
//   - /status, /context, /context list, /stop, /compact [instructions], /queue [arguments]:
//     the body trimmed as JavaScript's trim() does, compared after toLowerCase(); a command
//     with arguments is its word, one space, and the rest (trimmed again, its case kept);
//   - /dock-<channel>, /dock_<channel>: the whole body, trimmed of " \t\r\n" only, ASCII
//     case-insensitive; <channel> is [a-z0-9_-]+ (dock_command.hpp moves the route);
//   - session.resetTriggers (/new, /reset): the rules of reset_trigger.hpp (bot mentions in
//     groups, "/cmd@bot", "/cmd: rest", "/reset soft", the sender's authorization).
// A reset trigger is read first: session.resetTriggers may name any text, and a trigger that
// spells another command is a reset (the other commands' spellings never overlap).
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "actors/session/reset_trigger.hpp"

namespace sessionrt::actors {

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

// How commands.list shows a row (gateway/command_catalog.cpp).
enum class command_listing {
  not_listed,
  once,                // one entry, named by `alias`
  per_reset_trigger,   // one entry per session.resetTriggers entry that is a "/word"
  per_linked_channel,  // one per channel session.identityLinks names ("<channel>" in alias and description)
};

// An argument as OpenClaw's commands.list shows it (serializeArg).
struct command_arg {
  std::string_view name;
  std::string_view description;
  std::string_view type = "string";
  std::span<const std::string_view> choices = {};
};

// What a rule reads besides the text. resets: who sent it and where (nullptr: reset triggers
// are not read — the first message after a reset, which cannot reset again).
struct command_context {
  const reset_trigger_options* resets = nullptr;
};

struct recognized_command {
  chat_command id = chat_command::none;
  std::string args;              // /compact, /queue: the rest of the line
  std::string channel;           // dock: the target channel, lowercased
  reset_trigger_result trigger;  // what the reset rules read (also a soft reset, which is no
                                 // command: the rollover acts on it)
};

// A row's own text rule, for commands whose spelling is not a fixed word (reset, dock).
using command_rule = bool (*)(std::string_view body, const command_context& ctx, recognized_command& out);
bool reset_rule(std::string_view body, const command_context& ctx, recognized_command& out);
bool dock_rule(std::string_view body, const command_context& ctx, recognized_command& out);

struct chat_command_row {
  chat_command id = chat_command::none;
  std::string_view name;     // as reported (turn_outcome::command)
  command_timing timing = command_timing::turn;
  std::string_view done_by;  // the code that answers it
  // Recognition: `rule` when set; else the lowercased, trimmed body equals `spelling` or
  // `spelling_too`, or (takes_args) starts with `spelling` and a space.
  command_rule rule = nullptr;
  std::string_view spelling, spelling_too;
  bool takes_args = false;
  std::string_view example;  // a text it recognizes (the table's tests read every row's)
  // commands.list (OpenClaw's descriptions, categories and argument names):
  command_listing listing = command_listing::not_listed;
  std::string_view alias;  // the text alias listed ("/context")
  std::string_view description, category;
  bool accepts_args = false;
  std::span<const command_arg> args = {};
};

inline constexpr std::string_view kContextActions[] = {"list"};
inline constexpr command_arg kContextArgs[] = {
    {"action", "list (the default): what the prompt is made of", "string", kContextActions}};
inline constexpr command_arg kCompactArgs[] = {{"instructions", "Extra compaction instructions"}};
inline constexpr std::string_view kQueueModes[] = {"steer", "followup", "collect", "interrupt"};
inline constexpr std::string_view kQueueDrops[] = {"old", "new", "summarize"};
inline constexpr command_arg kQueueArgs[] = {{"mode", "queue mode", "string", kQueueModes},
                                             {"debounce", "debounce duration (e.g. 500ms, 2s)"},
                                             {"cap", "queue cap", "number"},
                                             {"drop", "drop policy", "string", kQueueDrops}};

// The command table, in commands.list's order (recognition reads the reset row first).
inline constexpr chat_command_row kChatCommands[] = {
    {.id = chat_command::none,
     .timing = command_timing::turn,
     .done_by = "session_core::run_turn (turn_loop.cpp): a model turn",
     .example = "hello"},
    {.id = chat_command::status,
     .name = "/status",
     .timing = command_timing::answer_if_busy,
     .done_by = "session_core::command_turn, or answer_while_busy + the queue depth (session_machine)",
     .spelling = "/status",
     .example = "  /STATUS ",
     .listing = command_listing::once,
     .alias = "/status",
     .description = "Show current status.",
     .category = "status"},
    {.id = chat_command::context_list,
     .name = "/context list",
     .timing = command_timing::answer_if_busy,
     .done_by = "session_core::command_turn, or answer_while_busy",
     .spelling = "/context list",
     .spelling_too = "/context",
     .example = "/context",
     .listing = command_listing::once,
     .alias = "/context",
     .description = "Explain how context is built and used.",
     .category = "status",
     .accepts_args = true,
     .args = kContextArgs},
    {.id = chat_command::stop,
     .name = "/stop",
     .timing = command_timing::stop,
     .done_by = "session_machine::stop_command (cancels the running turn)",
     .spelling = "/stop",
     .example = "/stop",
     .listing = command_listing::once,
     .alias = "/stop",
     .description = "Stop the current run.",
     .category = "session"},
    {.id = chat_command::reset,
     .name = "/new, /reset (session.resetTriggers)",
     .timing = command_timing::run_next,
     .done_by = "session_core::chat_turn (rollover) + after_reset (/new <model>)",
     .rule = reset_rule,
     .example = "/new hello",
     .listing = command_listing::per_reset_trigger,
     .description = "Start a new session (session.resetTriggers).",
     .category = "session",
     .accepts_args = true},
    {.id = chat_command::compact,
     .name = "/compact",
     .timing = command_timing::turn,
     .done_by = "session_core::command_turn -> compact()",
     .spelling = "/compact",
     .takes_args = true,
     .example = "/compact keep the plan",
     .listing = command_listing::once,
     .alias = "/compact",
     .description = "Compact the session context.",
     .category = "session",
     .accepts_args = true,
     .args = kCompactArgs},
    {.id = chat_command::queue,
     .name = "/queue",
     .timing = command_timing::turn,
     .done_by = "session_core::command_turn (the row's queue fields)",
     .spelling = "/queue",
     .takes_args = true,
     .example = "/queue collect cap:5",
     .listing = command_listing::once,
     .alias = "/queue",
     .description = "Adjust queue settings.",
     .category = "options",
     .accepts_args = true,
     .args = kQueueArgs},
    {.id = chat_command::dock,
     .name = "/dock-<channel>",
     .timing = command_timing::turn,
     .done_by = "session_core::command_turn (dock_command.hpp)",
     .rule = dock_rule,
     .example = "/dock-telegram",
     .listing = command_listing::per_linked_channel,
     .alias = "/dock-<channel>",
     .description = "Move this direct session's replies to <channel>.",
     .category = "tools"},
};

constexpr const chat_command_row& chat_command_info(chat_command c) {
  for (const auto& row : kChatCommands)
    if (row.id == c) return row;
  return kChatCommands[0];
}

// The command `body` is, by the table (chat_command::none: an ordinary message). Also fills
// `trigger` whenever ctx.resets is set.
recognized_command recognize_chat_command(std::string_view body, const command_context& ctx = {});

}  // namespace sessionrt::actors
