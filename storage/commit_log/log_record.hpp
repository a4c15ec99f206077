// log_record: the logical records of the commit log as values, and their bytes (the layout is
// log_format.hpp's). encode_* append one record's payload to `out`; decode() reads a payload
// back, refusing (errc::corrupt, naming the field) a record that is short, has an unknown or
// reserved kind, or bytes left over where none belong.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "messages/status.hpp"
#include "storage/commit_log/log_format.hpp"

namespace sessionrt::storage::commit_log {

struct log_header {
  std::uint32_t format_version = kFormatVersion;
  std::uint64_t log_number = 0;
  std::int64_t created_ms = 0;
  std::string state_id;
};

struct transcript_append {
  std::uint8_t flags = 0;
  std::uint64_t inode = 0;
  std::uint64_t offset = 0;
  std::string path;   // relative to the state dir, or absolute
  std::string bytes;  // what is at [offset, offset + bytes.size())
};

using log_record = std::variant<log_header, transcript_append>;

void encode(std::string& out, const log_header& h);
void encode(std::string& out, const transcript_append& a);
// Without building a transcript_append (the session's bytes are copied once, into `out`).
void encode_transcript_append(std::string& out, std::uint8_t flags, std::uint64_t inode, std::uint64_t offset,
                              std::string_view path, std::string_view bytes);
result<log_record> decode(std::string_view payload);

}  // namespace sessionrt::storage::commit_log
