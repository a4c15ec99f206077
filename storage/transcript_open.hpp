// transcript_open: how a session opens its transcript for appending.
// - missing file: created with the given header (exclusive, whole header or nothing);
// - existing file whose tail is not clean (a torn final line or NUL garbage left by a crash
//   or power loss, seen by check_transcript_tail without reading the file): repaired first
//   with the backup protocol of transcript_repair, and the report is returned so the caller
//   can emit `transcript.repaired` saying what was dropped;
// - then opened with transcript_file::open (legacy versions are migrated there).
// A healthy file costs one small tail read, not a scan. The caller holds the write lock.
#pragma once
#include <memory>
#include <optional>

#include "storage/transcript_file.hpp"
#include "storage/transcript_repair.hpp"

namespace sessionrt::storage {

struct opened_transcript {
  std::unique_ptr<transcript_file> file;
  bool created = false;
  std::optional<repair_report> repair;  // present when a repair ran
};

result<opened_transcript> open_or_create_transcript(fs& f, clock& c, const std::string& path,
                                                    const header_fields& header, const transcript_options& opt);

}  // namespace sessionrt::storage
