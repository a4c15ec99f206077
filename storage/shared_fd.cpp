#include "storage/shared_fd.hpp"

#include <atomic>

namespace sessionrt::storage {
namespace {
std::atomic<std::uint64_t> next_id{1};
}

shared_fd::shared_fd(fs& f, int fd) : fs_(f), fd_(fd), id_(next_id.fetch_add(1, std::memory_order_relaxed)) {}

result<std::uint64_t> shared_fd::device(fs& f) const {
  if (device_known_.load(std::memory_order_acquire)) return device_.load(std::memory_order_relaxed);
  auto info = f.fstat(fd_);
  if (!info.ok()) return info.error();
  device_.store(info->dev, std::memory_order_relaxed);
  device_known_.store(true, std::memory_order_release);
  return info->dev;
}

shared_fd::~shared_fd() {
  if (fd_ >= 0) (void)fs_.close(fd_);
}

}  // namespace sessionrt::storage
