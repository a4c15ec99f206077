#include "storage/shared_fd.hpp"

#include <atomic>

namespace sessionrt::storage {
namespace {
std::atomic<std::uint64_t> next_id{1};
}

shared_fd::shared_fd(fs& f, int fd) : fs_(f), fd_(fd), id_(next_id.fetch_add(1, std::memory_order_relaxed)) {}

shared_fd::~shared_fd() {
  if (fd_ >= 0) (void)fs_.close(fd_);
}

}  // namespace sessionrt::storage
