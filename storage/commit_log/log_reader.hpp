// log_reader: reads the logical records of one commit log file (log_format.hpp) front to back
// through storage::fs, checking every fragment's checksum. Unlike LevelDB's reader it never
// skips damage to read on: the first problem ends the log, because a replay must not apply a
// record after a lost one (a file's later bytes would land after a hole). end() says where the
// last whole record ended and why reading stopped:
//   end_of_file  the file ends after a whole record (or after the block trailer that follows it);
//                in a version-3 log also: what follows a whole record is not this log's
//                (preallocated zeros, a previous use's bytes: log_format.hpp);
//   torn_tail    the file ends inside a record, or the rest is zeros (legacy), or a record's
//                fragments stop before its last (version 3): a crash mid-write (the records
//                of that write were never acknowledged);
//   bad_checksum a fragment's checksum does not match its bytes;
//   bad_record   a fragment with an impossible length or type, or out of order
//                (a kMiddle/kLast without a kFirst, a kFirst/kFull inside a record);
//   io_error     a read failed (reason holds the error).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "storage/fs.hpp"

namespace sessionrt::storage::commit_log {

enum class log_end { none, end_of_file, torn_tail, bad_checksum, bad_record, io_error };
const char* log_end_name(log_end e);

struct log_stop {
  log_end how = log_end::none;
  std::uint64_t offset = 0;  // where the last whole logical record ended (the valid log's length)
  std::uint64_t at = 0;      // where the problem is (the damaged fragment's start)
  std::string reason;        // one sentence for a warning
};

class log_reader {
 public:
  // `fd` open for reading; `path` names the file in reasons. Reads from offset 0. The log's
  // number (its file name's) tells its recyclable fragments from a previous use's; without
  // it, the first fragment's is taken (tools reading a file of no known name).
  log_reader(fs& f, int fd, std::string path, std::optional<std::uint64_t> log_number = std::nullopt);

  // The next logical record's payload into `record` (and its start into *offset when given);
  // false when the log ends (then stop() says why).
  bool next(std::string& record, std::uint64_t* offset = nullptr);
  const log_stop& stop() const { return stop_; }

 private:
  // not_ours: a version-3 log's end (a fragment of no log of this number, or zeros).
  enum class fragment { record, end_of_file, torn, bad, not_ours };
  // The next physical record: its type and bytes, or why there is none.
  fragment read_physical(std::uint8_t& type, std::string_view& bytes, std::uint64_t& start);
  bool end(log_end how, std::uint64_t at, std::string reason);

  fs& fs_;
  int fd_;
  std::string path_;
  std::string block_;           // the current block's bytes
  std::size_t pos_ = 0;         // next unread byte in block_
  std::uint64_t block_start_ = 0;
  bool last_block_ = false;     // block_ was short: the file ends in it
  bool started_ = false;
  std::optional<std::uint32_t> number_;  // the log's (low 32 bits)
  std::size_t header_size_ = 0;          // its fragments' (0: not known before the first)
  std::uint64_t good_end_ = 0;  // end of the last whole logical record
  log_stop stop_;
};

}  // namespace sessionrt::storage::commit_log
