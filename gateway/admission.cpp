#include "gateway/admission.hpp"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>

namespace sessionrt::gateway {

namespace {

std::size_t soft_fd_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 1u << 20;
  return static_cast<std::size_t>(r.rlim_cur);
}

std::size_t count_open_fds() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return 0;  // no procfs: the estimate then only counts the sockets
  std::size_t n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n > 0 ? n - 1 : 0;  // the directory's own descriptor
}

}  // namespace

fd_probe real_fd_probe() { return {soft_fd_limit, count_open_fds}; }

std::size_t raise_fd_limit(std::size_t cap) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return soft_fd_limit();
  rlim_t want = r.rlim_max == RLIM_INFINITY ? static_cast<rlim_t>(cap) : std::min<rlim_t>(r.rlim_max, cap);
  if (want > r.rlim_cur) {
    r.rlim_cur = want;
    (void)::setrlimit(RLIMIT_NOFILE, &r);
  }
  return soft_fd_limit();
}

connection_admission::connection_admission(admission_limits limits, fd_probe fds)
    : limits_(limits), fds_(std::move(fds)) {}

connection_admission::verdict connection_admission::accepted(std::uint64_t now_ms) {
  ++fds_estimate_;
  const std::size_t limit = fds_.limit();
  const bool near = fds_estimate_ + 2 * limits_.fd_reserve >= limit;
  if (near || !counted_at_ || now_ms >= *counted_at_ + 1000) {
    fds_estimate_ = fds_.open();
    counted_at_ = now_ms;
  }
  // The new socket is open: with it, at least fd_reserve descriptors must stay free.
  if (fds_estimate_ + limits_.fd_reserve > limit) {
    --fds_estimate_;
    return verdict::fd_reserve;
  }
  if (unauthenticated_ >= limits_.max_unauthenticated) {
    --fds_estimate_;
    return verdict::too_many_unauthenticated;
  }
  ++unauthenticated_;
  return verdict::admit;
}

bool connection_admission::upgraded() {
  if (websockets_ >= limits_.max_connections) return false;
  ++websockets_;
  return true;
}

void connection_admission::authenticated() {
  if (unauthenticated_ > 0) --unauthenticated_;
}

void connection_admission::closed(bool ws, bool authed) {
  if (fds_estimate_ > 0) --fds_estimate_;
  if (!authed && unauthenticated_ > 0) --unauthenticated_;
  if (ws && websockets_ > 0) --websockets_;
}

std::optional<std::uint64_t> phase_deadlines::next() const {
  std::optional<std::uint64_t> out;
  for (const auto& at : at_)
    if (at && (!out || *at < *out)) out = at;
  return out;
}

std::optional<phase_deadlines::kind> phase_deadlines::due(std::uint64_t now_ms) const {
  std::optional<kind> out;
  std::uint64_t best = 0;
  for (std::size_t i = 0; i < at_.size(); ++i)
    if (at_[i] && *at_[i] <= now_ms && (!out || *at_[i] < best)) {
      out = static_cast<kind>(i);
      best = *at_[i];
    }
  return out;
}

}  // namespace sessionrt::gateway
