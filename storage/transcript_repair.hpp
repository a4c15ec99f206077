// Transcript file repair before a load [R§8.1, SPEC §6.1]: the on-disk pass that OpenClaw's
// repairSessionFileIfNeeded makes, plus the torn-tail handling a crash mid-append needs.
// - repair_transcript_text is pure (no I/O, no clock): it takes the file's bytes and returns
//   the cleaned bytes and a report. Lines it does not change are kept byte for byte (unknown
//   fields, number spellings); changed lines are written with json::to_compact.
// - repair_transcript_file reads the file and rewrites it only if something changed: backup
//   "<file>.bak-<pid>-<ms>" (original mode), replace_file_atomic with temp prefix
//   "<basename>.repair", then the backup is unlinked (kept, and named, only if that fails).
//   The original bytes of the lines it drops or rewrites are first written, durably, to
//   "<file>.dropped-<dashed ISO>.jsonl" beside it (report.dropped_path): a repair never loses
//   a byte. Those files count against the disk budget like archives (archive_names.hpp).
//   The caller holds the session write lock (SPEC §1.3). Any failure before the rename leaves
//   the original untouched; every error names the file and the cause.
// - The checks that decide whether a repair is needed (check_transcript_tail,
//   scan_transcript_for_damage) are in transcript_damage_scan.hpp, included here.
// - recover_corrupt_transcript handles a file whose first readable line is not a session
//   header: the raw file is copied to "<file>.corrupt-<ISO with [:.]->'-'>-<8 hex>.jsonl"
//   (kept), the parseable lines are kept after a header synthesized from the caller's fields
//   (or the first header line found), the per-line rules run, and the file is replaced
//   atomically.
// Nothing is dropped without a count: every dropped line is listed with its line number,
// byte length and reason.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/transcript_damage_scan.hpp"
#include "storage/transcript_repair_options.hpp"

namespace sessionrt::storage {

struct dropped_line {
  std::size_t line_no = 0;  // 1-based, counting every '\n'-terminated segment of the file
  std::size_t bytes = 0;    // length of the line without its "\r\n" / "\n"
  std::string reason;
};

struct repair_report {
  std::string file;  // label used by summary()

  // One counter per rule of [R§8.1].
  std::size_t dropped_malformed_lines = 0;  // unparseable JSON, or a message entry without a role
  std::size_t rewrote_assistant_messages = 0;
  std::size_t dropped_blank_user_messages = 0;  // OpenClaw rewrites blank user turns, so always 0
  std::size_t rewrote_user_messages = 0;
  std::size_t removed_corrupted_image_blocks = 0;
  std::size_t inserted_tool_results = 0;

  // A final line without '\n' that does not parse (crash mid-append, or a NUL-filled tail
  // after power loss). Counted here, not in dropped_malformed_lines; listed in `dropped`.
  std::size_t torn_tail_lines = 0;  // 0 or 1
  std::size_t torn_tail_bytes = 0;

  // The last line parsed but had no '\n': the rewrite adds it.
  bool added_final_newline = false;
  // Whitespace-only lines; ignored, and left out of a rewrite.
  std::size_t blank_lines = 0;

  std::vector<dropped_line> dropped;  // every dropped line, in file order

  // Set when the file cannot be repaired (the first kept line is not a session header):
  // nothing is rewritten.
  std::string abandoned_reason;
  // Set by repair_transcript_file when lines were dropped or rewritten: the file that keeps
  // their original bytes (dropped_lines_name), one per line, in file order.
  std::optional<std::string> dropped_path;
  // Set by repair_transcript_file only when the backup could not be removed.
  std::optional<std::string> backup_path;
  // Set by recover_corrupt_transcript: where the raw file was copied (kept), and whether a
  // header was synthesized for it.
  std::optional<std::string> corrupt_backup_path;
  bool synthesized_header = false;

  bool abandoned() const { return !abandoned_reason.empty(); }
  // Whether the cleaned text differs from the input (false when abandoned).
  bool changed() const;
  // [R§8.1]'s sentence: "session file repaired: dropped N malformed line(s), rewrote N
  // assistant message(s), dropped N blank user message(s), rewrote N user message(s), removed N
  // corrupted image block(s), inserted N missing tool result(s) (<file>)". The first N also
  // counts a torn final line, so the sentence never hides a dropped line.
  std::string summary() const;
};

struct repaired_text {
  std::string cleaned_text;  // == the input when !report.changed()
  // The original bytes of every line dropped (the torn tail included) or rewritten, each
  // followed by '\n', in file order; empty when nothing was removed or the repair abandoned.
  std::string removed_lines;
  repair_report report;
};

// Pure: `now_ms` stamps inserted tool results (entry timestamp and message timestamp).
repaired_text repair_transcript_text(std::string_view text, std::int64_t now_ms, const repair_options& options = {});

// Reads, repairs and (only if changed) rewrites `path`. Errors: not_found / io_error from the
// read, limit_exceeded over max_file_bytes, corrupt when the repair is abandoned (the file is
// left as it was), cancelled when the file changed while it was being repaired, and the
// backup / replace errors (no_space, io_error) with the original untouched.
result<repair_report> repair_transcript_file(fs& f, clock& clk, const std::string& path,
                                             const repair_options& options = {});

// The corrupt-header recovery (see the top). `header` is used when no header line is found.
// Errors: the read / copy / replace errors, the file untouched (the copy removed).
result<repair_report> recover_corrupt_transcript(fs& f, clock& clk, const std::string& path,
                                                 const boost::json::object& header,
                                                 const repair_options& options = {});

}  // namespace sessionrt::storage
