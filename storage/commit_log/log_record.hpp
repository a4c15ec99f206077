// log_record: the logical records of the commit log as values, and their bytes (the layout is
// log_format.hpp's). encode_* append one record's payload to `out`; decode() reads a payload
// back, refusing (errc::corrupt, naming the field) a record that is short, has an unknown
// kind or origin, or bytes left over where none belong.
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

// One row change of a sessions.json (kRowChange).
struct row_change {
  std::uint8_t origin = kFromSession;  // kFromSession | kFromStore
  std::uint64_t order = 0;             // its place in the store's order (log_format.hpp)
  std::string store;                   // the sessions.json: relative to the state dir, or absolute
  std::string key;
  std::string text;                    // the row's text (append_row_text); empty: removed
};

// A sessions.json written with every change of it up to here in its store's order (kStoreWritten).
struct store_written {
  std::uint64_t order = 0;
  std::string store;
};

using log_record = std::variant<log_header, transcript_append, row_change, store_written>;

void encode(std::string& out, const log_header& h);
void encode(std::string& out, const transcript_append& a);
// Without building a transcript_append (the session's bytes are copied once, into `out`).
void encode_transcript_append(std::string& out, std::uint8_t flags, std::uint64_t inode, std::uint64_t offset,
                              std::string_view path, std::string_view bytes);
void encode(std::string& out, const row_change& c);
void encode(std::string& out, const store_written& w);
void encode_row_change(std::string& out, std::uint8_t origin, std::uint64_t order, std::string_view store,
                       std::string_view key, std::string_view text);
result<log_record> decode(std::string_view payload);

}  // namespace sessionrt::storage::commit_log
