// transcript_check: a full read of one transcript that reports what is wrong with it without
// changing it (for `sessionrt transcript check` and for people debugging a file): header,
// entry count, active leaf, and problems — malformed lines (with line numbers), a torn final
// line, duplicate ids, parents that point nowhere, parent cycles, compactions whose
// firstKeptEntryId is not among their ancestors, message entries without a role. A transcript
// kept compressed (cold_transcript.hpp) is checked from its .zst.
#pragma once
#include <string>
#include <vector>

#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage {

struct transcript_problem {
  std::size_t line = 0;  // 1-based line number; 0 when not tied to one line
  std::string what;
};

struct transcript_check_report {
  std::string path;
  std::string session_id;
  int version = 0;
  std::size_t lines = 0;    // non-blank lines after the header
  std::size_t entries = 0;  // lines that are entries
  std::string leaf_id;      // empty: no entries
  std::uint64_t bytes = 0;
  std::vector<transcript_problem> problems;
  bool ok() const { return problems.empty(); }
};

// Errors only when the file cannot be read at all (missing, unreadable); a bad header is a
// reported problem, not an error.
result<transcript_check_report> check_transcript(fs& f, const std::string& path, std::size_t max_bytes = 1u << 30);

}  // namespace sessionrt::storage
