#include "storage/commit_log/log_reader.hpp"

#include <fmt/format.h>

#include "storage/commit_log/crc32c.hpp"
#include "storage/commit_log/log_format.hpp"

namespace sessionrt::storage::commit_log {

const char* log_end_name(log_end e) {
  switch (e) {
    case log_end::none: return "none";
    case log_end::end_of_file: return "end of file";
    case log_end::torn_tail: return "torn tail";
    case log_end::bad_checksum: return "bad checksum";
    case log_end::bad_record: return "bad record";
    case log_end::io_error: return "read error";
  }
  return "?";
}

log_reader::log_reader(fs& f, int fd, std::string path, std::optional<std::uint64_t> log_number)
    : fs_(f), fd_(fd), path_(std::move(path)) {
  if (log_number) number_ = static_cast<std::uint32_t>(*log_number);
}

namespace {
std::uint32_t u32_at(const char* p) {
  return std::uint32_t(static_cast<unsigned char>(p[0])) | std::uint32_t(static_cast<unsigned char>(p[1])) << 8 |
         std::uint32_t(static_cast<unsigned char>(p[2])) << 16 | std::uint32_t(static_cast<unsigned char>(p[3])) << 24;
}
}  // namespace

bool log_reader::end(log_end how, std::uint64_t at, std::string reason) {
  stop_.how = how;
  stop_.offset = good_end_;
  stop_.at = at;
  stop_.reason = std::move(reason);
  return false;
}

log_reader::fragment log_reader::read_physical(std::uint8_t& type, std::string_view& bytes, std::uint64_t& start) {
  for (;;) {
    // The trailer's size depends on the fragments; before the first one is read, the block
    // is at its start (nothing is a trailer yet).
    const std::size_t header_size = header_size_ ? header_size_ : kLegacyHeaderSize;
    if (block_.size() - pos_ < header_size) {
      // What is left of this block is its trailer (or the file's end).
      if (last_block_) {
        // The file ends here: at a record's end, or inside a header (a torn write).
        start = block_start_ + pos_;
        return pos_ == block_.size() ? fragment::end_of_file : fragment::torn;
      }
      block_start_ = started_ ? block_start_ + block_.size() : 0;
      started_ = true;
      auto got = pread_all(fs_, fd_, kBlockSize, block_start_);
      if (!got.ok()) {
        stop_.reason = got.error().message();
        block_.clear();
        pos_ = 0;
        last_block_ = true;
        start = block_start_;
        return fragment::bad;  // the caller reads stop_.reason (io)
      }
      block_ = std::move(*got);
      pos_ = 0;
      last_block_ = block_.size() < kBlockSize;
      continue;
    }
    start = block_start_ + pos_;
    const char* h = block_.data() + pos_;
    const std::uint32_t masked = u32_at(h);
    const std::size_t length = std::size_t(static_cast<unsigned char>(h[4])) | std::size_t(static_cast<unsigned char>(h[5])) << 8;
    type = static_cast<std::uint8_t>(h[6]);
    if (header_size_ == 0)  // the first fragment says which fragments the file holds
      header_size_ = type >= kRecyclableFullType && type <= kMaxRecyclableType ? kHeaderSize : kLegacyHeaderSize;
    if (header_size_ == kHeaderSize) {
      // Version 3: the log ends where a fragment is not this log's (zeros, another use's).
      if (block_.size() - pos_ < kHeaderSize) return last_block_ ? fragment::torn : fragment::not_ours;
      const std::uint32_t number = u32_at(h + 7);
      if (!number_ && start == 0) number_ = number;
      if (type < kRecyclableFullType || type > kMaxRecyclableType || number != *number_) return fragment::not_ours;
      if (kHeaderSize + length > block_.size() - pos_) return last_block_ ? fragment::torn : fragment::bad;
      if (crc32c::value(h + 6, 1 + 4 + length) != crc32c::unmask(masked)) {
        type = 0xff;  // tells the caller it was the checksum
        return fragment::bad;
      }
      type = static_cast<std::uint8_t>(type - kRecyclableOffset);
      bytes = std::string_view(h + kHeaderSize, length);
      pos_ += kHeaderSize + length;
      return fragment::record;
    }
    if (masked == 0 && length == 0 && type == kZeroType) {
      // Zeros where a header belongs: the rest of a write that never reached the disk.
      for (std::size_t i = pos_; i < block_.size(); ++i)
        if (block_[i] != '\0') return fragment::bad;
      return fragment::torn;
    }
    if (kLegacyHeaderSize + length > block_.size() - pos_) return last_block_ ? fragment::torn : fragment::bad;
    if (type == kZeroType || type > kMaxPhysicalType) return fragment::bad;
    const std::uint32_t actual = crc32c::value(h + 6, 1 + length);
    if (actual != crc32c::unmask(masked)) {
      type = 0xff;  // tells the caller it was the checksum
      return fragment::bad;
    }
    bytes = std::string_view(h + kLegacyHeaderSize, length);
    pos_ += kLegacyHeaderSize + length;
    return fragment::record;
  }
}

bool log_reader::next(std::string& record, std::uint64_t* offset) {
  if (stop_.how != log_end::none) return false;
  record.clear();
  bool inside = false;
  std::uint64_t record_start = 0;
  for (;;) {
    std::uint8_t type = 0;
    std::string_view bytes;
    std::uint64_t start = 0;
    switch (read_physical(type, bytes, start)) {
      case fragment::end_of_file:
        if (inside)
          return end(log_end::torn_tail, record_start,
                     fmt::format("{} ends inside a record that starts at byte {}", path_, record_start));
        return end(log_end::end_of_file, start, "");
      case fragment::not_ours:
        if (inside)
          return end(log_end::torn_tail, record_start,
                     fmt::format("{} ends inside a record that starts at byte {} (what follows is not this log's)",
                                 path_, record_start));
        return end(log_end::end_of_file, start, "");
      case fragment::torn:
        return end(log_end::torn_tail, inside ? record_start : start,
                   fmt::format("{} ends with a torn record at byte {}", path_, inside ? record_start : start));
      case fragment::bad:
        if (!stop_.reason.empty()) return end(log_end::io_error, start, stop_.reason);
        if (type == 0xff)
          return end(log_end::bad_checksum, start, fmt::format("{}: checksum mismatch in the record at byte {}", path_, start));
        return end(log_end::bad_record, start, fmt::format("{}: malformed record at byte {}", path_, start));
      case fragment::record: break;
    }
    switch (type) {
      case kFullType:
      case kFirstType:
        if (inside)
          return end(log_end::bad_record, start,
                     fmt::format("{}: a record starts at byte {} inside the record at byte {}", path_, start, record_start));
        record_start = start;
        record.assign(bytes.data(), bytes.size());
        if (type == kFirstType) {
          inside = true;
          break;
        }
        good_end_ = block_start_ + pos_;
        if (offset) *offset = record_start;
        return true;
      case kMiddleType:
      case kLastType:
        if (!inside)
          return end(log_end::bad_record, start,
                     fmt::format("{}: a record continues at byte {} without its start", path_, start));
        record.append(bytes.data(), bytes.size());
        if (type == kMiddleType) break;
        good_end_ = block_start_ + pos_;
        if (offset) *offset = record_start;
        return true;
      default: break;
    }
  }
}

}  // namespace sessionrt::storage::commit_log
