#include "storage/transcript_header.hpp"

#include <fcntl.h>

#include <algorithm>

#include <fmt/format.h>

#include "messages/ids.hpp"
#include "messages/iso_time.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "storage/cold_transcript.hpp"

namespace sessionrt::storage {

result<std::string> read_first_line(fs& f, const std::string& path, std::size_t max_bytes) {
  auto fd = f.open(path, O_RDONLY | O_NOFOLLOW);
  if (!fd.ok()) return fd.error();
  std::string line;
  std::size_t nl = std::string::npos;
  while (nl == std::string::npos && line.size() <= max_bytes) {
    auto chunk = pread_all(f, *fd, 4096, line.size());
    if (!chunk.ok()) {
      (void)f.close(*fd);
      return chunk.error().with_context(path);
    }
    const std::size_t start = line.size();
    line += *chunk;
    nl = line.find('\n', start);
    if (chunk->size() < 4096) break;
  }
  (void)f.close(*fd);
  if (nl == std::string::npos && line.size() > max_bytes)
    return status(errc::limit_exceeded, fmt::format("its first line is longer than {} bytes", max_bytes));
  if (nl != std::string::npos) line.resize(nl);
  return line;
}

bool is_plausible_header_key(std::string_view key) {
  if (key.empty() || key.size() > 512 || js_trim(key).size() != key.size()) return false;
  return std::none_of(key.begin(), key.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
}

result<std::optional<boost::json::object>> read_first_user_message(fs& f, const std::string& path, std::size_t window) {
  auto head = read_transcript_head(f, path, window);  // either form (cold_transcript.hpp)
  if (!head.ok()) {
    if (head.error().code() == errc::not_found) return std::optional<boost::json::object>();
    return head.error().with_context(path);
  }
  const std::string_view text(*head);
  for (std::size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string_view::npos; pos = nl + 1) {
    auto line = json::parse_object(text.substr(pos, nl - pos));
    if (!line.ok() || json::get_string(*line, "type") != std::optional<std::string_view>("message")) continue;
    const auto* m = json::get_object(*line, "message");
    if (m && json::get_string(*m, "role") == std::optional<std::string_view>("user"))
      return std::optional<boost::json::object>(*m);
  }
  return std::optional<boost::json::object>();
}

result<transcript_header_info> read_transcript_header(fs& f, const std::string& path) {
  auto info = f.lstat(path);
  if (!info.ok()) return info.error();
  if (!info->is_regular()) return status(errc::invalid_argument, path + " is not a regular file");
  auto line = read_first_line(f, path, 64 * 1024);
  if (!line.ok()) return line.error().with_context(path);
  auto header = json::parse_object(*line);
  if (!header.ok()) return status(errc::corrupt, path + ": its header line is unreadable: " + header.error().message());
  auto type = json::get_string(*header, "type");
  auto id = json::get_string(*header, "id");
  if (type != "session" || !id)
    return status(errc::corrupt, path + ": its first line is not a session header with an id");
  if (!is_safe_session_id(*id))
    return status(errc::corrupt, fmt::format("{}: its session id \"{}\" is not a safe session id", path, *id));
  transcript_header_info out;
  out.session_id = std::string(*id);
  out.mtime_ms = info->mtime_ns / 1000000;
  if (auto ts = json::get_string(*header, "timestamp")) out.started_ms = parse_iso_ms(*ts);
  if (auto key = json::get_string(*header, "sessionKey"); key && is_plausible_header_key(*key))
    out.session_key = std::string(*key);
  if (auto parent = json::get_string(*header, "parentSession")) out.parent_session = std::string(*parent);
  return out;
}

}  // namespace sessionrt::storage
