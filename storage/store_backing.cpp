#include "storage/store_backing.hpp"

#include <fmt/format.h>

namespace sessionrt::storage {

result<std::shared_ptr<const store_backing>> store_backing::adopt(fs& f, int fd, std::string path) {
  auto info = f.fstat(fd);
  if (!info.ok()) {
    (void)f.close(fd);
    return info.error().with_context(path);
  }
  return std::shared_ptr<const store_backing>(new store_backing(f, fd, std::move(path), *info));
}

store_backing::~store_backing() { (void)fs_.close(fd_); }

status store_backing::check() const {
  auto now = fs_.fstat(fd_);
  if (!now.ok()) return now.error().with_context(path_);
  if (now->size != info_.size)
    return status(errc::corrupt, fmt::format("{} was changed in place by another program since this runtime wrote it "
                                              "(size {} -> {}); rows kept on disk are not read back from it",
                                              path_, info_.size, now->size));
  return {};
}

status store_backing::read(std::uint64_t offset, std::size_t length, std::string& out) const {
  SRT_RETURN_IF_ERROR(check());
  if (offset + length > info_.size)
    return status(errc::corrupt, fmt::format("{}: bytes {}..{} asked, the file has {}", path_, offset, offset + length,
                                             info_.size));
  auto bytes = pread_all(fs_, fd_, length, offset);
  if (!bytes.ok()) return bytes.error().with_context(path_);
  if (bytes->size() != length)
    return status(errc::corrupt, fmt::format("{}: unexpected end of file at byte {}", path_, offset + bytes->size()));
  out += *bytes;
  return {};
}

}  // namespace sessionrt::storage
