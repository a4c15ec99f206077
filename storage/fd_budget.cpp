#include "storage/fd_budget.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace sessionrt::storage {

fd_budget plan_fd_budget(std::uint64_t soft, std::uint64_t hard, std::size_t configured) {
  fd_budget b;
  b.soft_before = soft;
  b.hard = hard;
  b.max_live_sessions = configured;
  const std::uint64_t needed = static_cast<std::uint64_t>(configured) + kFdReserve;
  b.soft_after = std::max(soft, std::min(hard, needed));
  if (b.soft_after < needed) {
    const std::uint64_t fits = b.soft_after > kFdReserve * 2 ? b.soft_after - kFdReserve : b.soft_after / 2;
    b.max_live_sessions = static_cast<std::size_t>(std::max<std::uint64_t>(1, fits));
    b.lowered = true;
  }
  return b;
}

result<fd_budget> apply_fd_budget(std::size_t configured) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0)
    return status(errc::io_error, std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  const auto as_u64 = [](rlim_t v) {
    return v == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(v);
  };
  fd_budget b = plan_fd_budget(as_u64(lim.rlim_cur), as_u64(lim.rlim_max), configured);
  if (b.soft_after != b.soft_before) {
    lim.rlim_cur = static_cast<rlim_t>(b.soft_after);
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      // Not allowed here: plan again under the limit as it is.
      b = plan_fd_budget(b.soft_before, b.soft_before, configured);
    }
  }
  return b;
}

}  // namespace sessionrt::storage
