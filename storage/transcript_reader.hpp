// transcript_reader: random access to the entries of one <sessionId>.jsonl without reading
// the whole file. Opening reads the header line only; the index is filled lazily by scanning
// backward from the end in blocks, as far as a caller's question needs (the leaf, an id, the
// root). Entry content is parsed only when asked for. Lines that do not parse are skipped and
// counted (never silently); a final line without '\n' is a torn append and is not an entry
// (transcript_repair fixes the file; this class never modifies it).
// Legacy files (header version 1 or 2) are read whole and migrated in memory [R§3.2].
// The reader owns its fd (shared with whoever must keep it open: shared()). Not thread-safe.
// A transcript kept compressed ("<path>.zst" without "<path>", or a path ending ".jsonl.zst";
// cold_transcript.hpp) is opened read-only from a decompressed copy in memory (cold());
// opening one for writing is not_found: restore it first.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/shared_fd.hpp"
#include "storage/transcript_index.hpp"

namespace sessionrt::storage {

struct reader_limits {
  std::size_t max_line_bytes = 64u << 20;    // a longer line is an error naming this limit
  std::size_t max_legacy_bytes = 1u << 30;   // v1/v2 files are read whole
  std::size_t block_bytes = 256u << 10;      // backward scan granularity
  std::uint64_t max_cold_bytes = 4ull << 30;  // a compressed transcript inflating past this is refused
  // Read the file as if it ended here (the offset of a line's start, as an index_record gives
  // it): the lines from it on are not seen. Past the end: the whole file.
  std::uint64_t end_at = UINT64_MAX;
};

struct reader_stats {
  std::uint64_t bytes_read = 0;
  std::uint64_t lines_indexed = 0;
  std::uint64_t lines_parsed = 0;   // full JSON parses (skim fallbacks + content reads)
  std::uint64_t malformed_lines = 0;
  std::uint64_t torn_tail_bytes = 0;  // bytes after the last '\n' at open
};

class transcript_reader {
 public:
  using position = transcript_index::position;

  // Opens `path` read-only. Errors: not_found, corrupt (no valid session header on line 1),
  // limit_exceeded. `fd_flags` lets the writer open the same fd O_RDWR|O_APPEND.
  static result<std::unique_ptr<transcript_reader>> open(fs& f, const std::string& path, const reader_limits& limits = {},
                                                         int fd_flags = 0);
  ~transcript_reader();
  transcript_reader(const transcript_reader&) = delete;
  transcript_reader& operator=(const transcript_reader&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_ ? fd_->fd() : -1; }
  // The fd as a shared handle: whoever holds it keeps the file open (the syncer, see shared_fd.hpp).
  const shared_fd_ptr& shared() const { return fd_; }
  const boost::json::object& header() const { return header_; }
  int source_version() const { return version_; }  // the file's version before migration
  bool migrated() const { return version_ < kTranscriptVersion; }
  bool cold() const { return view_ != nullptr; }  // read from its compressed copy

  transcript_index& index() { return index_; }
  const reader_stats& stats() const { return stats_; }
  bool fully_indexed() const { return covered_begin_ <= data_start_; }
  std::uint64_t data_start() const { return data_start_; }
  std::uint64_t data_end() const { return data_end_; }

  // Scans one more block backward. Returns false when the file start was already reached.
  result<bool> extend_backward();
  status index_all();
  // Position of an entry by id, scanning backward as far as needed.
  result<std::optional<position>> locate(std::string_view id);
  // The active leaf: last entry in file order that is not a side append, resolving OpenClaw
  // leaf controls. nullopt: no entries, or a leaf control pointing at nothing.
  result<std::optional<position>> active_leaf();
  // The last indexed entry in file order (pi's fallback leaf), scanning as needed.
  result<std::optional<position>> last_entry();

  // The parsed line of an indexed entry (cached for parsed records, read otherwise).
  result<std::shared_ptr<const boost::json::object>> entry(position p);
  // Reads several entries with as few reads as possible (one pread covering them all when
  // they are close). Positions must be indexed. Lines that fail to parse give nullptr. A line
  // not cached comes as a fresh non-const object that only the returned pointer owns
  // (use_count() == 1), which its caller may move from.
  result<std::vector<std::shared_ptr<const boost::json::object>>> entries(const std::vector<position>& ps);

  // The last entries of the file, oldest first: at most `max_entries`, reading at most
  // `max_bytes` from the end (a line that does not fit is not returned). Does not touch the
  // index. Lines that do not parse are skipped and counted in stats().malformed_lines.
  result<std::vector<boost::json::object>> tail(std::size_t max_entries, std::size_t max_bytes);

  // --- used by transcript_file when it appends through the same fd ---
  void note_appended(std::uint64_t new_end) { data_end_ = new_end; }

 private:
  transcript_reader(fs& f, std::string path, reader_limits limits) : fs_(f), path_(std::move(path)), limits_(limits) {}
  status read_header();
  status load_legacy();
  // Adds the line [off, off+len) (already in memory) to the front of the index.
  void index_line_front(std::string_view line, std::uint64_t off);

  fs& fs_;  // the caller's, or *view_
  std::string path_;
  reader_limits limits_;
  std::unique_ptr<fs> view_;  // a cold transcript's decompressed copy; outlives fd_ (declared first)
  shared_fd_ptr fd_;
  boost::json::object header_;
  int version_ = kTranscriptVersion;
  std::uint64_t data_start_ = 0;     // first byte after the header line
  std::uint64_t data_end_ = 0;       // end of the last complete line
  std::uint64_t covered_begin_ = 0;  // lines at or after this offset are indexed
  transcript_index index_;
  reader_stats stats_;
};

}  // namespace sessionrt::storage
