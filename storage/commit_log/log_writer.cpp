#include "storage/commit_log/log_writer.hpp"

#include <fmt/format.h>

#include "storage/commit_log/crc32c.hpp"
#include "storage/commit_log/log_format.hpp"

namespace sessionrt::storage::commit_log {

log_writer::log_writer(fs& f, int fd, std::string path, std::uint64_t length)
    : fs_(f), fd_(fd), path_(std::move(path)), written_(length), block_offset_(length % kBlockSize) {}

void log_writer::add_record(std::string_view payload) {
  const char* p = payload.data();
  std::size_t left = payload.size();
  bool begin = true;
  do {
    const std::size_t leftover = kBlockSize - block_offset_;
    if (leftover < kHeaderSize) {
      buffer_.append(leftover, '\0');  // the block's trailer
      block_offset_ = 0;
    }
    const std::size_t avail = kBlockSize - block_offset_ - kHeaderSize;
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
  const char t = static_cast<char>(type);
  const std::uint32_t crc = crc32c::mask(crc32c::extend(crc32c::value(&t, 1), data, n));
  char header[kHeaderSize];
  for (int i = 0; i < 4; ++i) header[i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  header[4] = static_cast<char>(n & 0xff);
  header[5] = static_cast<char>(n >> 8);
  header[6] = t;
  buffer_.append(header, kHeaderSize);
  buffer_.append(data, n);
  block_offset_ += kHeaderSize + n;
}

status log_writer::write() {
  if (broken_)
    return status(errc::io_error, fmt::format("commit log {} is unusable after a failed write; a new log is needed", path_));
  if (buffer_.empty()) return {};
  status st = write_all(fs_, fd_, buffer_.data(), buffer_.size());
  if (st.ok()) {
    written_ += buffer_.size();
    buffer_.clear();
    return {};
  }
  buffer_.clear();
  block_offset_ = written_ % kBlockSize;
  if (!fs_.ftruncate(fd_, written_).ok()) broken_ = true;
  return st.with_context(fmt::format("writing commit log {}", path_));
}

}  // namespace sessionrt::storage::commit_log
