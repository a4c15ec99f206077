// logging: how a long-running sessionrt process (`sessionrt gateway`) logs. One call,
// configure_logging(), sets spdlog's default logger from the logging.* settings (the config
// file's, with the command's --log-* flags over them), so every spdlog::info/warn/... of the
// libraries goes where the operator asked:
// - stderr, always, in the style that suits where it goes (detect_console_style): ANSI
//   colours on a terminal; plain lines when stderr is a pipe or a file; under systemd, when
//   $JOURNAL_STREAM names the device:inode of stderr (systemd.exec(5)), each line starts with
//   its syslog priority "<N>" (sd-daemon(3): 7 trace/debug, 6 info, 4 warn, 3 error, 2 fatal)
//   and carries no timestamp, since journald keeps its own;
// - a file too when logging.file / --log-file is set, rotated by size (spdlog's rotating sink:
//   past maxFileBytes "gateway.log" becomes "gateway.1.log", ... keeping maxFiles of them);
//   its parent directory is made when missing;
// - text lines `2025-06-01T12:00:00.123Z info  gateway: listening on ...` (UTC), or with
//   format json one object per line: {"ts","level","logger","component","msg"}; component is the
//   message's leading "word: " (the libraries' convention, "gateway: ..."), else the logger's
//   name; strings are escaped as JSON requires (control characters as \uXXXX, invalid UTF-8 as
//   U+FFFD), so a line is always one valid JSON object.
// Levels: trace | debug | info | warn | error | off (also "warning", "silent" = off and "fatal"
// = only fatal lines, OpenClaw's names). A bad level or format, or a log file that cannot be
// opened for appending, is an error naming the value or the path; nothing is changed then.
//
// What is logged about sessions (log_event, subscribed to the runtime's lifecycle events by the
// gateway): one line per turn failure, transcript repair, compaction (done or failed),
// maintenance pass that changed or would change something and each action it applied, and
// model fallback. At info and above a line names the session key, ids, counts, paths and error
// text, never a message's text or a credential; turn completions and queueing are debug.
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "actors/runtime_settings.hpp"
#include "messages/lifecycle_event.hpp"
#include "messages/status.hpp"
#include "storage/write_lock.hpp"  // storage::env_lookup

namespace sessionrt::runtime {

inline constexpr std::string_view log_level_names = "trace, debug, info, warn, error, off";
inline constexpr std::string_view log_format_names = "text, json";

// The canonical name of a level ("WARNING" -> "warn", "silent" -> "off"), nullopt when unknown.
std::optional<std::string> parse_log_level(std::string_view text);
// "text" or "json" (any case), nullopt otherwise.
std::optional<std::string> parse_log_format(std::string_view text);

enum class console_style {
  color,    // a terminal: the level in colour
  plain,    // a pipe or a file: no escape sequences
  journal,  // systemd's journal: "<N>" priority prefixes, no timestamps
};
// The style for file descriptor `fd`: journal when $JOURNAL_STREAM ("<dev>:<inode>", set by
// systemd for a service whose output goes to the journal) matches fstat(fd); color when fd is a
// terminal; plain otherwise.
console_style detect_console_style(int fd, const storage::env_lookup& env);

struct logging_target {
  // Where the console lines go: nullptr = the process's stderr. Tests pass a stream.
  std::ostream* console = nullptr;
  // nullopt: detect_console_style(2, env) (plain for a stream).
  std::optional<console_style> style;
  storage::env_lookup env;  // $JOURNAL_STREAM; null = the process environment
  std::string logger_name = "sessionrt";
};

// Replaces spdlog's default logger as the settings say. Errors (errc::invalid_argument for a
// bad level / format / size, errc::io_error for a file that cannot be opened) leave the
// current logger in place.
status configure_logging(const actors::logging_settings& settings, const logging_target& target = {});

// The lifecycle events log_event writes a line for.
event_filter log_event_filter();
// One log line for the event (see above); events of other types are ignored.
void log_event(const lifecycle_event& event);

// One log line as configure_logging's formatter writes it (exposed for tests): the level by
// its canonical name, the time in ms since the epoch, the logger's name and the message.
std::string format_json_log_line(std::string_view level, std::int64_t at_ms, std::string_view logger,
                                 std::string_view message);

}  // namespace sessionrt::runtime
