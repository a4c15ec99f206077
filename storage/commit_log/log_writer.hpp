// log_writer: appends logical records to one commit log file in the format of log_format.hpp.
// add_record() frames a record into a buffer (checksums computed there); write() hands the
// buffer to the file in one write_all through storage::fs. Durability is the caller's: it
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
  // `fd` is open for writing with O_APPEND and holds `length` bytes (0 for a new file). The
  // caller keeps it open while the writer lives; `path` names it in errors.
  log_writer(fs& f, int fd, std::string path, std::uint64_t length);

  void add_record(std::string_view payload);
  status write();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::uint64_t written() const { return written_; }                 // bytes in the file
  std::uint64_t length() const { return written_ + buffer_.size(); }  // ... and buffered
  std::size_t buffered() const { return buffer_.size(); }
  bool broken() const { return broken_; }

 private:
  void emit(std::uint8_t type, const char* data, std::size_t n);

  fs& fs_;
  int fd_;
  std::string path_;
  std::uint64_t written_;
  std::string buffer_;
  std::size_t block_offset_;  // where in its block length() is
  bool broken_ = false;
};

}  // namespace sessionrt::storage::commit_log
