// verified_transcripts: which transcript files this runtime closed whole and clean, and what
// each looked like then (device, inode, size, mtime, ctime), so that reopening one that nobody
// has touched since skips the full damage scan (transcript_damage_scan.hpp: one read of the
// whole file a reopen, however long the file; a session passivated between every turn, as in
// a simulated month, paid it at every turn).
// - note(): the caller states the file ends where its own writer's last complete line ends,
//   nothing is buffered, the whole file would pass the damage scan (the open checked it, and
//   the writer judged its own lines by the same rules: transcript_file::clean_stamp), and the stamp is the
//   file's fstat taken after its last write.
// - take(): whether the file's stamp now equals the one noted; the entry is forgotten either
//   way (the caller opens the file to write it). Any append, truncation, replace (a new
//   inode), removal or chmod by anyone moves one of the five fields. What it cannot see: a
//   writer that overwrites bytes in place, keeping the size, within the filesystem's
//   timestamp granularity (a few ms on ext4) of this runtime's last write; no writer of
//   OpenClaw's or ours does that (they append, or replace the file whole).
// Memory is bounded: at most `capacity` entries (71 B each measured: a hash of the path, not the path;
// two paths with one hash would also need one inode, size and times to be mistaken), kept as
// two generations, the older dropped whole when the newer fills. Held per runtime, never on
// disk: a restart scans every file again. Thread-safe.
#pragma once
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "storage/fs.hpp"

namespace sessionrt::storage {

class verified_transcripts {
 public:
  explicit verified_transcripts(std::size_t capacity = 65536) : half_(capacity < 2 ? 1 : capacity / 2) {}

  void note(std::string_view path, const file_info& stamp);
  bool take(std::string_view path, const file_info& now);
  std::size_t size() const;

 private:
  struct stamp {
    std::uint64_t dev = 0, ino = 0, size = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const stamp&) const = default;
  };
  static stamp of(const file_info& i) { return {i.dev, i.ino, i.size, i.mtime_ns, i.ctime_ns}; }
  static std::uint64_t key(std::string_view path);

  const std::size_t half_;
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, stamp> young_, old_;
};

}  // namespace sessionrt::storage
