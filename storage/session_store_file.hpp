// session_store_file: loads and saves one sessions.json [R§2.3, R§2.4, SPEC §1.1, §9].
// - load(): a missing file is an empty store. A file that parses as a JSON object is migrated
//   and normalized as OpenClaw does on load; every change is listed in the report, none is
//   silent. A file over the byte limit or nested deeper than the depth limit is an error and is
//   left untouched (it may be valid, only big). A file that does not parse, is empty, or is not
//   an object is never overwritten: it is renamed to "<name>.corrupt-<ts>" and the store is
//   rebuilt from the newest stale temp file that parses, then from the headers of the *.jsonl
//   transcripts beside it; the rebuilt store is saved durably and the report says what was
//   recovered from where and which keys were lost. Nothing is logged; the report is the record.
// - save(): writes JSON.stringify(store, null, 2) plus "\n" iff the loaded file ended with one
//   (a new file does), atomically (temp + fsync + rename + directory fsync; durable=false skips
//   the fsyncs), mode 0600, creating the directory 0700. Skipped when the bytes would equal
//   what this object last read or wrote. A failed save leaves the previous file in place.
//   Only rows changed since the last save are serialized again (session_store's per-row text);
//   the file's text is written a piece (256 KiB) at a time from a buffer kept from one save to
//   the next, so a large store is never whole in memory nor faulted into fresh pages per write.
// - load_from_text() is the pure part of load() (no I/O; store_migration.hpp, included here);
//   check_store_file() reports what load would change without changing anything;
//   rewrite_store_file() is load + save. The rebuild after a corrupt file is store_salvage.hpp.
// - reload_if_changed(): the file edited by another program while this object holds it (OpenClaw
//   documents sessions.json as safe to edit by hand). The file's identity (device, inode, size,
//   mtime) as this object last read or wrote it is kept; when the file at the path is another
//   one, its rows are read and merged three ways with the store (merge_store_edit): a row this
//   object's owner changed or erased since the last save (note_changed) keeps the owner's
//   version; every other row takes the file's version (added, changed or removed by hand). Only
//   a complete JSON object is taken: a file that does not parse (or is over a limit) is never
//   taken nor written over; save() refuses until a later check takes a file that parses (the
//   owner's changes wait in memory) or the file is removed. Such a file may be an editor's save
//   in progress (truncate, then write in place: no prefix of an object's text that stops before
//   its closing brace parses), so it is reported (store_merge_report::refused) only when the next
//   check finds it unchanged, and once. A missing file is not an edit (the next save writes it
//   again). The identity compared is the file's as this object's own write left it (fstat of
//   the descriptor it wrote, before and after its rename the same file), so its own saves are
//   never taken for edits.
// The caller owns the serialization of calls (one store actor per file).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "messages/clock.hpp"
#include "messages/json_reader.hpp"
#include "messages/status.hpp"
#include "storage/durable_file.hpp"
#include "storage/fs.hpp"
#include "storage/session_store.hpp"
#include "storage/store_backing.hpp"
#include "storage/store_migration.hpp"

namespace sessionrt::storage {

// The largest sessions.json read (1 GiB): the loader's bound, and any reader's that holds it whole.
inline constexpr std::size_t max_store_file_bytes = std::size_t(1) << 30;

struct store_file_options {
  std::size_t max_bytes = max_store_file_bytes;
  std::size_t max_depth = 64;                    // JSON nesting
  bool durable = true;                           // fsync file and directory on save
  // shed_rows() spills rows to their place in the file last written only once that file is at
  // least this large; a smaller store keeps its rows' text, so its saves read nothing back
  // (spilling is for memory, and below this it would save at most this much per store).
  std::size_t spill_min_bytes = std::size_t(2) << 20;  // 2 MiB

  // The bounds every text of this store is parsed under (the file, a hand edit, a temp file).
  json::parse_limits parse_limits() const {
    json::parse_limits l;
    l.max_bytes = max_bytes;
    l.max_depth = max_depth;
    return l;
  }
};

// A row rebuilt from a transcript header after a corrupt file was set aside.
struct recovered_row {
  std::string key;
  std::string session_id;
  std::string transcript_path;
  std::string key_source;  // "header sessionKey", "corrupt file text" or "fallback"
};

struct store_quarantine {
  std::string quarantined_path;  // where the corrupt bytes are now
  std::string cause;             // why the file could not be used
  std::string temp_base_path;    // the temp file the rows came from; "" when none was usable
  std::vector<std::string> keys_from_temp;
  std::vector<recovered_row> rows_from_headers;
  // Keys the corrupt file named that have no row now. Only readable from a pretty-printed
  // file; a note says so when the corrupt text gave no keys.
  std::vector<std::string> unrecoverable_keys;
  std::vector<store_change> notes;  // conflicts, unusable temp files and transcripts
};

struct store_load_report {
  std::string path;
  bool file_existed = false;
  bool trailing_newline = true;
  std::size_t entry_count = 0;
  std::vector<store_change> changes;  // normalization and migration, one per change
  std::optional<store_quarantine> quarantine;
};

// The bytes save() writes for `store` (to_pretty(): throws where spilled rows cannot be read).
std::string serialize_store(const session_store& store, bool trailing_newline);

// What a hand edit of the file changed, and what the merge kept.
struct store_merge_report {
  std::string path;
  // The edited file does not parse (or is over a limit), and did not change between two checks:
  // nothing of it was taken, and the store writes nothing over it until a check takes a file
  // that parses. ok() when the edit was merged.
  status refused;
  std::vector<std::string> added, changed, removed;  // by the other program, taken
  // Rows the owner changed or erased since its last save: its version stays, whatever the
  // file says of them.
  std::vector<std::string> kept_ours;
  std::vector<store_change> changes;  // normalization of the file's rows (load_from_text)
  bool edited() const { return !added.empty() || !changed.empty() || !removed.empty(); }
};

// The three-way merge of a hand-edited file: `theirs` (the file's rows, in the file's order) with
// `ours` where `unsaved` names the rows changed (present in ours) or erased (absent) since the
// last save. Rows of ours that the file lacks and unsaved does not name were removed by hand.
// `report` gets added / changed / removed / kept_ours; returns the merged store.
session_store merge_store_edit(const session_store& ours, session_store theirs,
                               const std::unordered_set<std::string>& unsaved, store_merge_report& report);

class session_store_file {
 public:
  // `path` is the file, normally "<state>/agents/<agentId>/sessions/sessions.json".
  session_store_file(fs& f, clock& c, std::string path, store_file_options options = {});

  const std::string& path() const { return path_; }
  session_store& store() { return store_; }
  const session_store& store() const { return store_; }
  bool trailing_newline() const { return trailing_newline_; }

  // Replaces store() with the file's rows. See the contract above.
  result<store_load_report> load();
  // Writes store() unless its bytes equal the last bytes read or written.
  status save();
  // Frees the memory of rows not changed since they were saved: each keeps only its place in
  // the file the last save() wrote (session_store::spill_clean_rows) while that file holds the
  // store's current text and has at least spill_min_bytes, else only its text
  // (release_clean_rows). Returns the rows shed.
  std::size_t shed_rows();

  // The owner changed (upsert) or erased the row of `key` since the last save: a hand edit
  // merged before the next save keeps this row as the owner has it.
  void note_changed(std::string_view key) { unsaved_.emplace(key); }
  // See the contract above. nullopt: the file is as this object last read or wrote it (or is
  // missing, or does not parse and is waited on, or was already reported). Errors: the file
  // could not be read or stat'ed.
  result<std::optional<store_merge_report>> reload_if_changed();
  // The size of the file as this object last read or wrote it (0: none yet, or missing).
  std::uint64_t bytes_on_disk() const { return on_disk_ ? on_disk_->size : 0; }
  // Why save() refuses: the file on disk is a hand edit that does not parse (ok() when none).
  status refused_edit() const { return unusable_ ? unusable_->why : status(); }

 private:
  // The file replaced atomically (replace_file_atomic) by what `produce` writes, or by `bytes`.
  status write(const std::function<status(const piece_writer&)>& produce, bool durable, int* keep_fd);
  status write(const std::string& bytes, bool durable, int* keep_fd = nullptr);
  // write() of the store's text, handed on kSavePieceBytes at a time as gathered views of the
  // rows (write_buffer_ holds only rows read back from the old file).
  status write_streamed(bool durable, int* keep_fd);
  static constexpr std::size_t kSavePieceBytes = std::size_t(256) << 10;
  result<store_load_report> quarantine_and_rebuild(std::string corrupt_text, const status& cause);

  fs& fs_;
  clock& clock_;
  std::string path_;
  store_file_options options_;
  session_store store_;
  bool trailing_newline_ = true;
  // The store's text_version() whose bytes are on disk, when known.
  std::optional<std::uint64_t> saved_version_;
  // Size and hash of the bytes read by load() when the store was loaded unchanged; the first
  // save compares against them (the store's text may still differ: other writers format
  // differently).
  std::optional<std::pair<std::size_t, std::size_t>> loaded_fingerprint_;
  // The file the last save() wrote, held open, and the store's text_version() it holds.
  std::pair<std::shared_ptr<const store_backing>, std::uint64_t> backing_;
  // The file as this object last read or wrote it (unset: none yet, or it was missing).
  std::optional<file_info> on_disk_;
  // A hand edit that did not parse: its identity, why, and whether a check reported it (the
  // second check to find it unchanged does). save() refuses while it is set.
  struct unusable_edit {
    file_info file;
    status why;
    bool reported = false;
  };
  std::optional<unusable_edit> unusable_;
  std::unordered_set<std::string> unsaved_;  // note_changed since the last save
  // save()'s piece of text (write_streamed), kept between saves (its capacity, about a piece).
  std::string write_buffer_;
};

struct store_check_report {
  std::string path;
  status parse_status;  // ok, or why the file would be set aside (or refused, for a limit)
  std::size_t entry_count = 0;
  bool trailing_newline = false;
  std::vector<store_change> problems;  // what load would change
  bool canonical = false;              // a rewrite would give back the same bytes
};

// Reads `path` and reports; changes nothing. Errors: the file cannot be read (not_found, ...).
result<store_check_report> check_store_file(fs& f, const std::string& path, const store_file_options& options = {});
// load() then save() of `path`.
result<store_load_report> rewrite_store_file(fs& f, clock& c, const std::string& path,
                                             const store_file_options& options = {});

}  // namespace sessionrt::storage
