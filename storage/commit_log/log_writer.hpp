// log_writer: appends logical records to one commit log file in the format of log_format.hpp.
// add_record() frames a record into a buffer (checksums computed there); write() hands the
// buffer to the file in one pwrite at its length through storage::fs (the file may hold more:
// preallocated zeros, or a recycled log's old bytes; log_format.hpp). Durability is the caller's: it
// calls fdatasync on fd() when it wants what was written to be durable (group commit).
// A failed write cuts the file back to its length before that write (no torn record stays in
// the middle of a log, where the reader would stop before later good ones) and drops the
// buffer: the records in it are not in the log and the caller reports them failed. If the
// cut fails too, broken() is true: the file's tail is unknown and nothing more may be written
// to it (the caller starts a new log file).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage::commit_log {

class log_writer {
 public:
  // `fd` is open for writing (without O_APPEND: Linux's pwrite appends on such a descriptor)
  // and its log holds `length` bytes (0 for a new file); its fragments carry `log_number`. The
  // caller keeps it open while the writer lives; `path` names it in errors.
  log_writer(fs& f, int fd, std::string path, std::uint64_t length, std::uint64_t log_number = 0);

  // Before a write that would pass `allocated` (the file's size: a recycled file's old length),
  // the file is allocated up to the next multiple of `chunk` (fs::fallocate); if that fails the
  // file grows by its writes from then on.
  void preallocate(std::uint64_t chunk, std::uint64_t allocated);
  // Versions 1 and 2's fragments (no log field): for tests of old logs only.
  void write_legacy_fragments() { legacy_ = true; }

  void add_record(std::string_view payload);
  status write();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::uint64_t written() const { return written_; }                 // bytes in the file
  std::uint64_t length() const { return written_ + buffer_.size(); }  // ... and buffered
  std::size_t buffered() const { return buffer_.size(); }
  bool broken() const { return broken_; }
  std::uint64_t allocated() const { return allocated_; }

 private:
  void emit(std::uint8_t type, const char* data, std::size_t n);

  fs& fs_;
  int fd_;
  std::string path_;
  std::uint64_t written_;
  std::string buffer_;
  std::size_t block_offset_;  // where in its block length() is
  bool broken_ = false;
  std::uint32_t log_number_;  // its low 32 bits, in every fragment
  bool legacy_ = false;
  std::uint64_t chunk_ = 0;      // 0: no preallocation
  std::uint64_t allocated_ = 0;  // the file's bytes (preallocated or old) from 0
};

}  // namespace sessionrt::storage::commit_log
