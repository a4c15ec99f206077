// transcript_open: how a session opens its transcript for a run [R§8.1, SPEC §6.1].
// - missing file: created with the given header (exclusive, whole header or nothing);
// - existing file: checked once, by one sequential read with a SAX pass per line
//   (scan_transcript_for_damage; no JSON trees are built), for what the repair rules fix: a
//   torn or NUL-filled tail, malformed lines anywhere, message entries without a role, blank
//   user turns, empty error assistant turns, corrupted base64 images, and the entries the
//   missing-tool-result passes look at. Only then is repair_transcript_file run (backup
//   "<file>.bak-<pid>-<ms>", atomic replace, backup removed); its report is returned when it
//   changed the file, so the caller can emit `transcript.repaired` with the summary line;
// - a file whose first readable line is not a session header is recovered
//   (recover_corrupt_transcript: the original kept as "<file>.corrupt-...", the parseable
//   lines kept after a header from `header`), reported the same way;
// - a transcript kept compressed ("<path>.zst", cold_transcript.hpp) is first restored to
//   <path> durably (and the .zst removed), so the first append lands in the whole old file;
//   a leftover .zst beside <path> is removed. A .zst that does not decompress is an error
//   naming it, and nothing is created in its place;
// - then opened with transcript_file::open (legacy versions are migrated there).
// The check runs at open only: the writer's own appends afterwards are trusted, so a turn
// never rescans the file, nor a reopen of a file that has not changed since this runtime
// closed it clean (open_check::verified). The caller holds the write lock.
#pragma once
#include <memory>
#include <optional>

#include "storage/cold_transcript.hpp"
#include "storage/transcript_file.hpp"
#include "storage/transcript_repair.hpp"
#include "storage/verified_transcripts.hpp"

namespace sessionrt::storage {

struct opened_transcript {
  std::unique_ptr<transcript_file> file;
  bool created = false;
  std::optional<repair_report> repair;  // present when a repair changed the file
  std::uint64_t checked_bytes = 0;      // bytes the damage check read (0 for a new file)
  bool restored = false;                // restored from its compressed copy just now
};

struct open_check {
  bool scan_for_damage = true;  // false: only the tail is checked (the old behaviour)
  repair_options repair;
  // Files this runtime closed clean: one unchanged since is not checked again (its entry is
  // taken; transcript_file::open still refuses a torn last line). Null: every open checks.
  verified_transcripts* verified = nullptr;
};

result<opened_transcript> open_or_create_transcript(fs& f, clock& c, const std::string& path,
                                                    const header_fields& header, const transcript_options& opt,
                                                    const open_check& check = {});

}  // namespace sessionrt::storage
