#include "storage/session_paths.hpp"

#include <fmt/format.h>

#include "messages/ids.hpp"
#include "messages/utf8.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage {
namespace {

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

bool has_dotdot_component(std::string_view path) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    std::string_view part = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part == "..") return true;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return false;
}

bool is_unreserved(unsigned char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '-': case '_': case '.': case '!': case '~': case '*': case '\'': case '(': case ')': return true;
    default: return false;
  }
}

result<std::string> checked_transcript_name(std::string_view session_id) {
  if (!is_transcript_id(session_id))
    return status(errc::unsafe_path,
                  fmt::format("session id '{}' cannot name a transcript file: it must match "
                              "[A-Za-z0-9][A-Za-z0-9._-]* and be at most 128 characters",
                              session_id));
  return std::string(session_id) + ".jsonl";
}

}  // namespace

namespace {

// `value` of the variable `var`: "~" / "~/..." expanded with `home`, absolute, no trailing '/'.
result<std::string> expand_state_dir(std::string_view var, std::string_view value, std::optional<std::string_view> home) {
  const bool home_ok = home && !home->empty() && home->front() == '/';
  std::string dir(value);
  if (dir == "~" || dir.rfind("~/", 0) == 0) {
    if (!home_ok)
      return status(errc::invalid_argument,
                    fmt::format("${} '{}' starts with '~' but $HOME is not an absolute path", var, dir));
    dir = std::string(*home) + dir.substr(1);
  }
  if (dir.front() != '/')
    return status(errc::invalid_argument,
                  fmt::format("${} must be an absolute path or start with '~/': got '{}'", var, dir));
  return strip_trailing_slashes(std::move(dir));
}

}  // namespace

result<std::optional<std::string>> state_dir_from_env(const std::function<std::optional<std::string>(std::string_view)>& env) {
  if (!env) return std::optional<std::string>();
  for (std::string_view name : {"SESSIONRT_STATE_DIR", "OPENCLAW_STATE_DIR"}) {
    auto value = env(name);
    if (!value || value->empty()) continue;
    auto dir = expand_state_dir(name, *value, env("HOME"));
    if (!dir.ok()) return dir.error();
    return std::optional<std::string>(std::move(*dir));
  }
  return std::optional<std::string>();
}

result<std::string> default_state_dir(const std::function<std::optional<std::string>(std::string_view)>& env) {
  auto named = state_dir_from_env(env);
  if (!named.ok()) return named.error();
  if (*named) return **named;
  return resolve_state_dir(std::nullopt, env ? env("HOME") : std::nullopt);
}

result<std::string> resolve_state_dir(std::optional<std::string_view> env_state_dir,
                                      std::optional<std::string_view> home) {
  const bool home_ok = home && !home->empty() && home->front() == '/';
  if (env_state_dir && !env_state_dir->empty()) return expand_state_dir("SESSIONRT_STATE_DIR", *env_state_dir, home);
  if (!home_ok)
    return status(errc::invalid_argument,
                  "cannot find the state directory: $SESSIONRT_STATE_DIR is not set and $HOME is not an absolute path");
  return path_join(strip_trailing_slashes(std::string(*home)), ".sessionrt");
}

status check_agent_id(std::string_view agent_id) {
  if (agent_id.empty()) return status(errc::unsafe_path, "agent id is empty");
  if (agent_id == "." || agent_id.find('/') != std::string_view::npos ||
      agent_id.find('\\') != std::string_view::npos || agent_id.find("..") != std::string_view::npos ||
      agent_id.find('\0') != std::string_view::npos)
    return status(errc::unsafe_path,
                  fmt::format("agent id '{}' cannot name a directory: it contains '/', '\\', '..' or NUL", agent_id));
  return {};
}

result<std::string> agent_sessions_dir(std::string_view state_dir, std::string_view agent_id) {
  SRT_RETURN_IF_ERROR(check_agent_id(agent_id));
  return path_join(path_join(path_join(state_dir, "agents"), agent_id), "sessions");
}

result<std::string> store_path(std::string_view state_dir, std::string_view agent_id) {
  auto dir = agent_sessions_dir(state_dir, agent_id);
  if (!dir.ok()) return dir;
  return path_join(*dir, store_file_name);
}

result<std::string> transcript_path(std::string_view sessions_dir, std::string_view session_id) {
  auto name = checked_transcript_name(session_id);
  if (!name.ok()) return name;
  return path_join(sessions_dir, *name);
}

result<std::string> topic_transcript_path(std::string_view sessions_dir, std::string_view session_id,
                                          std::string_view topic_id) {
  auto base = checked_transcript_name(session_id);
  if (!base.ok()) return base;
  if (topic_id.empty())
    return status(errc::invalid_argument, fmt::format("topic id for session '{}' is empty", session_id));
  auto encoded = encode_uri_component(topic_id);
  if (!encoded.ok()) return encoded.error().with_context(fmt::format("topic id for session '{}'", session_id));
  std::string name = fmt::format("{}-topic-{}.jsonl", session_id, *encoded);
  if (name.size() > 255)
    return status(errc::limit_exceeded,
                  fmt::format("topic transcript name for session '{}' is {} bytes, over the 255-byte file name limit",
                              session_id, name.size()));
  return path_join(sessions_dir, name);
}

result<std::string> successor_transcript_path(std::string_view sessions_dir, std::string_view session_id,
                                              std::int64_t now_ms) {
  auto base = checked_transcript_name(session_id);
  if (!base.ok()) return base;
  return path_join(sessions_dir, fmt::format("{}_{}.jsonl", format_dashed_iso_ts(now_ms), session_id));
}

result<std::string> encode_uri_component(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = decode_utf8_at(text, i).length;
    if (n == 0)
      return status(errc::invalid_argument,
                    fmt::format("text is not valid UTF-8 at byte {} (encodeURIComponent would throw URIError)", i));
    for (std::size_t k = i; k < i + n; ++k) {
      auto c = static_cast<unsigned char>(text[k]);
      if (is_unreserved(c)) {
        out += static_cast<char>(c);
      } else {
        out += '%';
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
    i += n;
  }
  return out;
}

std::string row_transcript_path(fs& files, const std::string& sessions_dir, std::string_view session_id,
                                std::optional<std::string_view> session_file) {
  if (session_file)
    if (auto confined = confine_session_file(files, sessions_dir, std::string(*session_file)); confined.ok())
      return *confined;
  auto path = transcript_path(sessions_dir, session_id);
  return path.ok() ? *path : std::string();
}

result<std::string> confine_session_file(fs& files, const std::string& sessions_dir, const std::string& session_file) {
  auto refuse = [&](std::string_view why) {
    return status(errc::unsafe_path, fmt::format("stored sessionFile '{}' refused: {} (sessions dir {})", session_file,
                                                 why, sessions_dir));
  };
  if (session_file.empty()) return refuse("it is empty");
  if (session_file.find('\0') != std::string::npos) return refuse("it contains NUL");
  if (has_dotdot_component(session_file)) return refuse("it contains a '..' component");

  const std::string full = session_file.front() == '/' ? session_file : path_join(sessions_dir, session_file);
  const std::string name = path_basename(full);
  if (name.empty() || name == ".") return refuse("it does not name a file");
  if (!is_transcript_kind(classify(name).kind)) return refuse("its name is not a transcript file name");

  auto real_sessions = files.realpath(sessions_dir);
  if (!real_sessions.ok()) return real_sessions.error().with_context("resolving the sessions dir");
  // The usual row names a file right in the sessions dir: one resolution serves both.
  const std::string dir = path_dirname(full);
  auto real_dir = dir == sessions_dir ? real_sessions : files.realpath(dir);
  if (!real_dir.ok()) return real_dir.error().with_context(fmt::format("resolving the directory of sessionFile '{}'", session_file));

  bool inside = *real_dir == *real_sessions;
  if (!inside) {
    // A sibling agent's sessions dir: <root>/agents/<agent>/sessions for both.
    auto agents_root = [](const std::string& sessions) -> std::optional<std::string> {
      if (path_basename(sessions) != "sessions") return std::nullopt;
      std::string agent_dir = path_dirname(sessions);
      std::string agents = path_dirname(agent_dir);
      if (agent_dir == agents || path_basename(agents) != "agents") return std::nullopt;
      return agents;
    };
    auto ours = agents_root(*real_sessions);
    auto theirs = agents_root(*real_dir);
    inside = ours && theirs && *ours == *theirs;
  }
  if (!inside) return refuse(fmt::format("its directory resolves to {}, outside the sessions dir", *real_dir));

  std::string confined = path_join(*real_dir, name);
  auto info = files.lstat(confined);
  if (info.ok()) {
    if (S_ISLNK(info->mode)) return refuse("it is a symlink");
    if (!info->is_regular()) return refuse("it is not a regular file");
  } else if (info.error().code() != errc::not_found) {
    return info.error().with_context(fmt::format("checking sessionFile '{}'", session_file));
  }
  return confined;
}

}  // namespace sessionrt::storage
