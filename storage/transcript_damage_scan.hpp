// The checks an open for a run makes before it reads a transcript, split from the repair they
// guard (transcript_repair.hpp) so that the common case, a clean file, costs one read and no
// JSON tree.
// - check_transcript_tail reads only the last few KiB (ends in '\n', no NUL bytes in the tail).
// - scan_transcript_for_damage: one sequential read of the file, every line validated by a SAX
//   pass that builds no JSON tree and looks only at the fields the rules read (entry type,
//   message role / content / stopReason / api / provider, content block type / text). It has no
//   false negatives with respect to the per-line rules of repair_transcript_text (a line it
//   passes is one those rules keep as it is); a false positive only costs a repair pass that
//   rewrites nothing. A rule added to the repair must be added here too: the per-field rules
//   are written once in the .cpp (message_string_rule, block_facts) and read by the scan and by
//   message_line_passes_scan.
// Errors name the file: the open / read errors, limit_exceeded over options.max_file_bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/fwd.hpp>

#include "messages/json_reader.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/transcript_repair_options.hpp"

namespace sessionrt::storage {

struct tail_state {
  std::uint64_t size = 0;
  std::size_t checked_bytes = 0;    // how many bytes at the end were read
  bool ends_with_newline = false;   // last byte is '\n'
  bool has_nul = false;             // a NUL byte among the checked bytes
  // An empty file, or one that ends in '\n' with no NUL in the checked tail.
  bool clean() const { return size == 0 || (ends_with_newline && !has_nul); }
};

// Reads at most the last `window` bytes of `path`.
result<tail_state> check_transcript_tail(fs& f, const std::string& path, std::size_t window = 4096);

struct damage_scan {
  std::uint64_t bytes_read = 0;
  std::size_t lines = 0;        // non-blank lines, header included
  bool header_ok = false;       // the first non-blank line is {type:"session", id:<non-empty string>}
  std::size_t suspect_lines = 0;  // lines a per-line rule may change (malformed ones included)
  bool whole_file_rules = false;  // entries the tool-result insertion passes look at
  bool torn_tail = false;       // bytes after the last '\n'
  std::string first_reason;     // why the first suspect line is suspect ("line N: ...")
  // Whether repair_transcript_file may change the file.
  bool needs_repair() const { return suspect_lines > 0 || whole_file_rules || torn_tail; }
};

// Pure: the scan of text already in memory (`text` is the whole file).
damage_scan scan_transcript_text(std::string_view text, const json::parse_limits& line_limits = {});
// The scan's verdict on a line this process writes, from the values it serializes instead of
// their text (a writer's own lines need no read-back): true only when the line
// json::append_compact makes of the entry passes the per-line rules (not suspect, no whole-file
// rule, nesting within json::parse_limits{}.max_depth). `message` is a "message" entry's
// message; `entry` any other entry (one with a "message" member is refused, conservatively).
// The caller still refuses a line it had to fix (invalid UTF-8) or one over the line limit.
// The scan's own rule functions, applied to values; tests/storage/transcript_damage_scan_test.cpp
// holds the two judges to one verdict on generated messages.
bool message_line_passes_scan(const boost::json::object& message);
bool entry_line_passes_scan(const boost::json::object& entry);

// One sequential read of `path` in blocks of `block_bytes`.
result<damage_scan> scan_transcript_for_damage(fs& f, const std::string& path, const repair_options& options = {},
                                               std::size_t block_bytes = 256u << 10);

}  // namespace sessionrt::storage
