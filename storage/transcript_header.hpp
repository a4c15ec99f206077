// transcript_header: what line 1 of a <sessionId>.jsonl says, read without reading the rest
// (4 KiB reads; a directory may hold thousands of transcripts). Used to rebuild a lost
// sessions.json and to reconcile the store with the transcripts at start-up.
// Errors: the file is unreadable, its first line is longer than 64 KiB or is not a session
// header with a safe session id (errc::corrupt, message says which).
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage {

struct transcript_header_info {
  std::string session_id;
  std::optional<std::string> session_key;   // sessionrt's "sessionKey" header field, if plausible
  std::optional<std::int64_t> started_ms;   // header timestamp
  std::optional<std::string> parent_session;  // "parentSession": the file a successor continues
  std::int64_t mtime_ms = 0;
};

// Line 1 of a file (without the '\n'), refusing lines longer than max_bytes.
result<std::string> read_first_line(fs& f, const std::string& path, std::size_t max_bytes);
result<transcript_header_info> read_transcript_header(fs& f, const std::string& path);
// The first user message of a transcript (its `message` object), looked for in the file's
// first `window` bytes only (a title, not a context: a line the window cuts is not read);
// nullopt when none is there. A missing file is nullopt too; a transcript kept compressed is
// read from its .zst (cold_transcript.hpp).
result<std::optional<boost::json::object>> read_first_user_message(fs& f, const std::string& path,
                                                                   std::size_t window = 64 * 1024);
// A header "sessionKey" we accept as a store key: 1..512 bytes, trimmed, no control characters.
bool is_plausible_header_key(std::string_view key);

}  // namespace sessionrt::storage
