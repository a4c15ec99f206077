// session_paths: where a session's files live, and the checks that keep ids and stored paths
// inside the sessions dir (SPEC §1 layout, §9 bad input; [R§3.1]).
// Layout: <state>/agents/<agentId>/sessions/{sessions.json, <sessionId>.jsonl, ...}.
// - everything except confine_session_file is pure string work (no disk access);
// - an id that would leave its directory is refused with errc::unsafe_path and a message that
//   names the id; nothing here normalizes agent ids (routing does), it only refuses unsafe ones;
// - confine_session_file is the one gate a stored `sessionFile` passes before it is opened.
#pragma once
#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage {

inline constexpr std::string_view store_file_name = "sessions.json";

// $SESSIONRT_STATE_DIR when set and non-empty ("~" / "~/..." expanded with `home`), else
// "<home>/.sessionrt". A trailing '/' is dropped. Errors (invalid_argument): neither is usable,
// or "~" is used without a home.
result<std::string> resolve_state_dir(std::optional<std::string_view> env_state_dir,
                                      std::optional<std::string_view> home);

// The state dir the environment names: $SESSIONRT_STATE_DIR, else $OPENCLAW_STATE_DIR (an
// OpenClaw install's variable: sessionrt then runs on the files OpenClaw uses), the first set
// and non-empty, expanded as resolve_state_dir does; nullopt when neither is set.
result<std::optional<std::string>> state_dir_from_env(const std::function<std::optional<std::string>(std::string_view)>& env);
// state_dir_from_env, else "<$HOME>/.sessionrt": where a command works when nothing names a dir.
result<std::string> default_state_dir(const std::function<std::optional<std::string>(std::string_view)>& env);

// unsafe_path when the agent id is empty, ".", contains '/', '\\', NUL or "..".
status check_agent_id(std::string_view agent_id);
// <state>/agents/<agentId>/sessions
result<std::string> agent_sessions_dir(std::string_view state_dir, std::string_view agent_id);
// <state>/agents/<agentId>/sessions/sessions.json
result<std::string> store_path(std::string_view state_dir, std::string_view agent_id);

// <sessionsDir>/<sessionId>.jsonl; unsafe_path unless is_transcript_id(session_id).
result<std::string> transcript_path(std::string_view sessions_dir, std::string_view session_id);
// <sessionsDir>/<sessionId>-topic-<encodeURIComponent(topicId)>.jsonl. invalid_argument for an
// empty topic or one that is not valid UTF-8; limit_exceeded when the name passes 255 bytes.
result<std::string> topic_transcript_path(std::string_view sessions_dir, std::string_view session_id,
                                          std::string_view topic_id);
// <sessionsDir>/<ISO with [:.]->'-'>_<sessionId>.jsonl, the pi naming of a compaction
// successor or fork ("2026-11-30T01-31-20-053Z_<id>.jsonl").
result<std::string> successor_transcript_path(std::string_view sessions_dir, std::string_view session_id,
                                              std::int64_t now_ms);

// JavaScript's encodeURIComponent on UTF-8 text: A-Z a-z 0-9 - _ . ! ~ * ' ( ) are kept, every
// other byte of the UTF-8 encoding becomes %XX (uppercase hex). Text that is not valid UTF-8
// (including encoded surrogates, JavaScript's lone surrogates) is refused (invalid_argument),
// as encodeURIComponent throws URIError.
result<std::string> encode_uri_component(std::string_view text);

// Accepts a stored `sessionFile` (absolute, or relative to `sessions_dir`) only if
// - no component of it is "..", it is not empty and has no NUL;
// - realpath of its directory is realpath(sessions_dir), or a sibling agent's sessions dir
//   (realpath(sessions_dir) = <root>/<agent>/sessions and the file's dir = <root>/<other>/sessions);
// - its name is a transcript name (classify(): primary, topic, successor or checkpoint), so a
//   stored path can never point the transcript writer at sessions.json, a lock or an archive;
// - it is not a symlink (when it exists).
// Returns "<realpath(dir)>/<name>". Errors: unsafe_path naming the stored value and why;
// not_found / io_error when the sessions dir or the file's dir cannot be resolved.
result<std::string> confine_session_file(fs& files, const std::string& sessions_dir, const std::string& session_file);

// Where a row's transcript is: its stored sessionFile when it has one that confine_session_file
// accepts, else <sessionId>.jsonl in the sessions dir; "" when the id is not a valid one either.
std::string row_transcript_path(fs& files, const std::string& sessions_dir, std::string_view session_id,
                                std::optional<std::string_view> session_file);

}  // namespace sessionrt::storage
