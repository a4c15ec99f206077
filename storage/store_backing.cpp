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
  const std::size_t start = out.size();
  out.resize(start + length);
  std::size_t done = 0;
  while (done < length) {
    auto n = fs_.pread(fd_, out.data() + start + done, length - done, offset + done);
    if (!n.ok() || *n == 0) {
      out.resize(start);
      return n.ok() ? status(errc::corrupt, fmt::format("{}: unexpected end of file at byte {}", path_, offset + done))
                    : n.error().with_context(path_);
    }
    done += *n;
  }
  return {};
}

}  // namespace sessionrt::storage
