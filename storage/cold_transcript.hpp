// cold_transcript: a transcript kept compressed as "<transcript>.jsonl.zst" (OpenClaw 2026.9's
// session.maintenance.coldStorage, done for JSONL files), the durable moves between the two
// forms, and the one way every reader finds a transcript in either form. Paths name the
// transcript as a row does ("<dir>/<sessionId>.jsonl"); "<path>.zst" is its cold form.
// - The forms: hot (.jsonl only), cold (.zst only), both, missing. Both is what a crash in the
//   middle of a move leaves: the .jsonl is then the transcript (it is never written after its
//   .zst was made without the .zst being removed first) and the .zst a leftover copy, which
//   readers ignore and the next restore or compression removes.
// - compress_transcript: the .jsonl into "<path>.zst": written to a temp file
//   "<name>.zst.<pid>.<uuid>.tmp" (one zstd frame with content size and checksum), fsync'd,
//   verified against the .jsonl (decompressed and compared), linked into place (a leftover .zst
//   is replaced), the dir fsync'd, then the .jsonl unlinked and the dir fsync'd again. A crash at
//   any point leaves the .jsonl or a complete, durable .zst (or both). The caller holds the
//   transcript's write lock (write_lock.hpp), so no session appends meanwhile; a .jsonl whose
//   size or mtime changed while it was compressed (a writer that ignores the lock) is kept and
//   the .zst removed. `expect` skips a file that changed since it was planned.
// - restore_transcript: the reverse, before the first append: "<path>.zst" decompressed into a
//   temp file "<name>.<pid>.<uuid>.tmp", fsync'd, linked to the .jsonl (never replacing one),
//   the dir fsync'd, then the .zst unlinked and the dir fsync'd. A torn or corrupt .zst is
//   errc::corrupt naming it, and nothing changes. The caller holds the write lock.
// - read_transcript_bytes / read_transcript_head: the content (or its first bytes) of whichever
//   form there is; open_cold_view: the decompressed cold form in an in-memory fs for readers
//   that read through storage::fs (transcript_reader). not_found when neither form exists.
// - remove_transcript: both forms unlinked (not_found when neither existed).
// Every syscall goes through storage::fs.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage {

std::string cold_path_of(std::string_view transcript_path);  // "<path>.zst"
bool is_cold_path(std::string_view path);                    // ends with ".jsonl.zst"

enum class transcript_form { missing, hot, cold, both };
const char* transcript_form_name(transcript_form form) noexcept;
result<transcript_form> transcript_form_of(fs& f, const std::string& path);
// hot, cold or both (a name that cannot be looked at counts as absent, as a failed lstat).
bool transcript_exists(fs& f, const std::string& path);

struct cold_move {
  bool done = false;          // false: nothing moved, `skipped` says why
  std::string skipped;        // one sentence naming the file
  std::uint64_t raw_bytes = 0;   // the .jsonl's size
  std::uint64_t cold_bytes = 0;  // the .zst's size
  bool removed_leftover = false;  // a leftover .zst beside a .jsonl was removed
};

struct compress_options {
  int level = 3;
  bool verify = true;  // decompress the new .zst and compare it with the .jsonl before the unlink
  // Skip unless the .jsonl still has this size and mtime (ms) (what a plan saw).
  std::optional<std::uint64_t> expect_size;
  std::optional<std::int64_t> expect_mtime_ms;
};

inline constexpr std::uint64_t max_restored_bytes = std::uint64_t(4) << 30;

result<cold_move> compress_transcript(fs& f, const std::string& path, const compress_options& options = {});
// done == false, skipped "": the transcript was hot already (a leftover .zst removed, if any).
// not_found: neither form exists.
result<cold_move> restore_transcript(fs& f, const std::string& path, std::uint64_t max_bytes = max_restored_bytes);

result<std::string> read_transcript_bytes(fs& f, const std::string& path, std::size_t max_bytes);
// At most `n` bytes from the start (fewer when the transcript is shorter).
result<std::string> read_transcript_head(fs& f, const std::string& path, std::size_t n);

// The cold form of `path` (or `path` itself when it ends with ".zst") decompressed into an
// in-memory fs, as the file `view_path` there. not_found when there is no .zst.
result<std::unique_ptr<fs>> open_cold_view(fs& f, const std::string& path, const std::string& view_path,
                                           std::uint64_t max_bytes = max_restored_bytes);

status remove_transcript(fs& f, const std::string& path);

}  // namespace sessionrt::storage
