// transcript_file: the one writer of a <sessionId>.jsonl (a session actor owns it), plus the
// reader it appends through. Appends are assigned an 8-hex id unique in the file, the active
// leaf as parentId and the clock's time, serialized as one JSON line and buffered; flush()
// writes the buffer, sync() makes it durable. Durability per storage.durability:
//   none  — commit() writes; no fsync;
//   batch — commit() writes; the caller calls sync() when a group-commit window closes
//           (sync_due()), and acks the appends up to durable_seq() afterwards;
//   sync  — commit() writes and fdatasyncs.
// A failed write rolls back: the partial line is truncated away, the pending entries leave
// the index and the leaf returns to where it was, and the error names the file.
// Refused appends: a line over max_line_bytes (limit named in the error). Invalid UTF-8 in a
// string is replaced by U+FFFD (counted in stats), never written raw.
// The first append after open indexes the whole file once, so new ids never collide with
// old ones; reading a context never does. The caller holds the write lock (write_lock.hpp).
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/context_builder.hpp"
#include "storage/fs.hpp"
#include "storage/transcript_reader.hpp"

namespace sessionrt::storage {

enum class durability { none, batch, sync };
const char* durability_name(durability d);
std::optional<durability> parse_durability(std::string_view s);

struct transcript_options {
  durability mode = durability::batch;
  std::size_t max_line_bytes = 16u << 20;  // storage.maxLineBytes
  std::int64_t batch_window_ms = 5;        // sync_due(): longest wait of an unsynced append (for
                                           // callers that sync themselves; the runtime's syncer
                                           // has its own storage.batchWindowMs)
  std::size_t batch_max_bytes = 1u << 20;  // a group commit starts early past this many bytes
  reader_limits limits;
};

struct writer_stats {
  std::uint64_t appends = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t writes = 0;
  std::uint64_t syncs = 0;
  std::uint64_t invalid_utf8_replaced = 0;
  std::uint64_t full_index_scans = 0;
};

class transcript_file {
 public:
  // A new transcript with the given header; fails with already_exists if the file exists.
  // The header is written whole (no torn header); with durability sync the file and its
  // directory are fsync'd here, with batch the caller's group commit must fsync the directory
  // too (a new file's name is durable only then).
  static result<std::unique_ptr<transcript_file>> create(fs& f, clock& c, const std::string& path,
                                                         const header_fields& header, const transcript_options& opt = {});
  // An existing transcript for appending. A torn final line is refused (errc::corrupt, naming
  // the bytes); repair it first (transcript_repair.hpp). Legacy versions are refused for
  // writing until migrated (errc::unsupported).
  static result<std::unique_ptr<transcript_file>> open(fs& f, clock& c, const std::string& path,
                                                       const transcript_options& opt = {});
  ~transcript_file();

  transcript_reader& reader() { return *reader_; }
  const boost::json::object& header() const { return reader_->header(); }
  std::string session_id() const;
  const std::string& path() const { return reader_->path(); }
  const std::optional<std::string>& leaf_id() const { return leaf_; }
  const transcript_options& options() const { return opt_; }
  const writer_stats& stats() const { return stats_; }

  // Moves the leaf to an existing entry (branching) or to nothing (next append is a root).
  status set_leaf(std::optional<std::string> id);

  // Each append returns the new entry's id; the leaf moves to it.
  result<std::string> append_message(const boost::json::object& message);
  result<std::string> append_compaction(std::string_view summary, std::string_view first_kept_entry_id,
                                        std::int64_t tokens_before, std::optional<boost::json::object> details = {});
  result<std::string> append_branch_summary(std::optional<std::string> from_id, std::string_view summary,
                                            std::optional<boost::json::value> details = {});
  result<std::string> append_model_change(std::string_view provider, std::string_view model_id);
  result<std::string> append_thinking_level(std::string_view level);
  result<std::string> append_custom(std::string_view custom_type, std::optional<boost::json::value> data);
  result<std::string> append_custom_message(std::string_view custom_type, boost::json::value content, bool display,
                                            std::optional<boost::json::value> details = {});
  result<std::string> append_label(std::string_view target_id, std::optional<std::string_view> label);
  result<std::string> append_session_info(std::string_view name);

  status flush();   // write buffered lines
  status sync();    // flush + fdatasync
  status commit();  // per durability mode (see above)
  // Frees the write buffer's memory when nothing is pending (a session between turns keeps
  // no buffer; the next append allocates it again).
  void release_buffer();
  bool sync_due() const;  // batch: the oldest unsynced append waited batch_window_ms, or too many bytes
  std::uint64_t appended_seq() const { return appended_seq_; }
  std::uint64_t durable_seq() const { return durable_seq_; }
  std::uint64_t written_seq() const { return written_seq_; }
  // Someone else fdatasync'd fd() after the appends up to `seq` were written (group commit by
  // a syncer): they are durable now; `dir_synced`: the directory was fsync'd too.
  void note_synced(std::uint64_t seq, bool dir_synced);
  // Created by create() with durability batch and the directory not fsync'd since: the file's
  // name is not durable yet. sync() fsyncs the directory; a syncer must do it (and say so).
  bool dir_unsynced() const { return dir_unsynced_; }
  int fd() const { return reader_->fd(); }
  const shared_fd_ptr& shared_fd() const { return reader_->shared(); }
  std::size_t pending_bytes() const { return pending_.size(); }
  // Durability batch: the bytes at the file's offsets [from, data_end) as this writer wrote
  // them, taken out of the writer (the commit log's record of a turn carries them, so it need
  // not read them back). The writer keeps what it wrote (the header it created, each flush)
  // until a take, at most kMaxWrittenBytes; nullopt when it does not hold all of the range (an
  // earlier take, a record carried over, more than the bound): the caller reads the file.
  // Either way it holds nothing after the call.
  std::optional<std::string> take_written(std::uint64_t from);
  static constexpr std::size_t kMaxWrittenBytes = 4u << 20;

  // The file's fstat when it ends at this writer's last complete line, nothing is buffered,
  // and every line this writer appended passes the damage scan's rules (judged at the append
  // from the values serialized: message_line_passes_scan; the open checked the rest), else
  // nullopt: what verified_transcripts::note asks. An error turn or a blank block the writer
  // stored itself is something the next open's repair must still see.
  std::optional<file_info> clean_stamp();

  // The model context (flushes first so the reader sees every append).
  result<session_context> context(const leaf_selector& leaf = leaf_selector::active());

 private:
  transcript_file(fs& f, clock& c, transcript_options opt) : fs_(f), clock_(c), opt_(opt) {}
  status ensure_full_index();
  std::string unique_id();
  // Indexes the line just serialized at pending_[start..] (without '\n'), after checking its
  // size and UTF-8; on refusal the bytes are taken back out of the buffer.
  // `passes_scan`: the line's values pass the damage scan's rules (clean_stamp).
  result<std::string> push(std::size_t start, const std::string& id, entry_type type, bool assistant, bool passes_scan);
  result<std::string> push_entry(boost::json::object entry);
  std::optional<std::string_view> parent() const;

  fs& fs_;
  clock& clock_;
  transcript_options opt_;
  std::unique_ptr<transcript_reader> reader_;
  std::optional<std::string> leaf_;
  std::string pending_;
  // What take_written() hands out: the bytes written from written_start_ on (durability batch).
  std::string written_;
  std::uint64_t written_start_ = 0;
  void keep_written(std::uint64_t at, std::string& bytes);
  std::size_t pending_entries_ = 0;
  std::optional<std::string> leaf_before_pending_;
  std::uint64_t appended_seq_ = 0, written_seq_ = 0, durable_seq_ = 0;
  std::int64_t oldest_unsynced_ms_ = 0;
  std::uint64_t unsynced_bytes_ = 0;
  bool fully_indexed_for_write_ = false;
  bool dir_unsynced_ = false;
  bool own_lines_pass_scan_ = true;  // every line appended so far (clean_stamp)
  writer_stats stats_;
};

}  // namespace sessionrt::storage
