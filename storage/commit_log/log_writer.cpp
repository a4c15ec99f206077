#include "storage/commit_log/log_writer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "storage/commit_log/crc32c.hpp"
#include "storage/commit_log/log_format.hpp"

namespace sessionrt::storage::commit_log {

log_writer::log_writer(fs& f, int fd, std::string path, std::uint64_t length, std::uint64_t log_number)
    : fs_(f),
      fd_(fd),
      path_(std::move(path)),
      written_(length),
      block_offset_(length % kBlockSize),
      log_number_(static_cast<std::uint32_t>(log_number)),
      allocated_(length) {}

void log_writer::preallocate(std::uint64_t chunk, std::uint64_t allocated) {
  chunk_ = chunk;
  allocated_ = std::max(allocated, written_);
}

void log_writer::add_record(std::string_view payload) {
  const char* p = payload.data();
  std::size_t left = payload.size();
  bool begin = true;
  const std::size_t header = legacy_ ? kLegacyHeaderSize : kHeaderSize;
  do {
    const std::size_t leftover = kBlockSize - block_offset_;
    if (leftover < header) {
      buffer_.append(leftover, '\0');  // the block's trailer
      block_offset_ = 0;
    }
    const std::size_t avail = kBlockSize - block_offset_ - header;
    const std::size_t n = left < avail ? left : avail;
    const bool end = n == left;
    const std::uint8_t type = begin && end ? kFullType : begin ? kFirstType : end ? kLastType : kMiddleType;
    emit(type, p, n);
    p += n;
    left -= n;
    begin = false;
  } while (left > 0);
}

void log_writer::emit(std::uint8_t type, const char* data, std::size_t n) {
  char header[kHeaderSize];
  header[6] = static_cast<char>(legacy_ ? type : type + kRecyclableOffset);
  for (int i = 0; i < 4; ++i) header[7 + i] = static_cast<char>((log_number_ >> (8 * i)) & 0xff);
  const std::size_t size = legacy_ ? kLegacyHeaderSize : kHeaderSize;
  // The checksum covers the type, the log field (recyclable) and the payload.
  const std::uint32_t crc = crc32c::mask(crc32c::extend(crc32c::value(header + 6, size - 6), data, n));
  for (int i = 0; i < 4; ++i) header[i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  header[4] = static_cast<char>(n & 0xff);
  header[5] = static_cast<char>(n >> 8);
  buffer_.append(header, size);
  buffer_.append(data, n);
  block_offset_ += size + n;
}

status log_writer::write() {
  if (broken_)
    return status(errc::io_error, fmt::format("commit log {} is unusable after a failed write; a new log is needed", path_));
  if (buffer_.empty()) return {};
  if (chunk_ > 0 && length() > allocated_) {
    const std::uint64_t want = (length() + chunk_ - 1) / chunk_ * chunk_;
    if (fs_.fallocate(fd_, allocated_, want - allocated_).ok())
      allocated_ = want;
    else
      chunk_ = 0;  // (unsupported, or the disk is full: the write says which)
  }
  status st = pwrite_all(fs_, fd_, buffer_.data(), buffer_.size(), written_);
  if (st.ok()) {
    written_ += buffer_.size();
    buffer_.clear();
    return {};
  }
  buffer_.clear();
  block_offset_ = written_ % kBlockSize;
  // The cut drops what the file held past the log (preallocated or old bytes) too.
  if (!fs_.ftruncate(fd_, written_).ok()) broken_ = true;
  allocated_ = written_;
  return st.with_context(fmt::format("writing commit log {}", path_));
}

}  // namespace sessionrt::storage::commit_log
