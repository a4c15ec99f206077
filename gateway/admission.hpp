// admission: which sockets the gateway keeps and how long a socket may stay in each phase, with
// no I/O (the transport asks, then acts). Three budgets, all checked as a socket moves on:
//   - file descriptors: a socket accepted while fewer than `fd_reserve` descriptors would stay
//     free under RLIMIT_NOFILE is refused (closed at once), so the runtime can still open its
//     transcripts and stores and the loop can still accept (and refuse) instead of spinning on
//     EMFILE. Counting /proc/self/fd costs O(open descriptors), so the count is an estimate
//     (the last count plus the sockets accepted minus those closed since), counted again when
//     it comes within twice the reserve of the limit, or a second after the last count;
//   - unauthenticated sockets: from accept until `connect` succeeded (the HTTP request, the
//     upgrade, the WebSocket handshake) at most `max_unauthenticated`; past it a new socket is
//     refused at accept. Idle or trickling sockets therefore cannot crowd out the others;
//   - WebSocket connections (before or after connect): at most `max_connections`; past it the
//     upgrade is refused (the transport says why with a close frame).
// An accepted socket therefore costs one descriptor for at most
// max_unauthenticated + max_connections sockets at once.
// phase_deadlines: the deadlines of one socket (request head, handshake, an unfinished message,
// the close grace, a delayed refusal); ws_socket arms one timer for the earliest.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

namespace sessionrt::gateway {

struct admission_limits {
  std::size_t max_connections = 1024;
  std::size_t max_unauthenticated = 64;
  std::size_t fd_reserve = 64;
};

// What the descriptor check reads; real_fd_probe() reads the process's.
struct fd_probe {
  std::function<std::size_t()> limit;  // RLIMIT_NOFILE's soft limit
  std::function<std::size_t()> open;   // descriptors open now
};
fd_probe real_fd_probe();

// Raises RLIMIT_NOFILE's soft limit to the hard limit, at most to `cap`; returns the soft limit
// in force afterwards.
std::size_t raise_fd_limit(std::size_t cap = 1u << 20);

class connection_admission {
 public:
  enum class verdict { admit, fd_reserve, too_many_unauthenticated };
  connection_admission(admission_limits limits, fd_probe fds);

  // A socket was just accepted (its descriptor is open). admit: it counts as unauthenticated
  // until authenticated() or closed(); otherwise the caller closes it at once.
  verdict accepted(std::uint64_t now_ms);
  // An admitted socket asks to upgrade: false past max_connections (it stays unauthenticated).
  bool upgraded();
  void authenticated();
  // An admitted socket closed; ws: upgraded() said yes for it; authed: authenticated() was called.
  void closed(bool ws, bool authed);

  std::size_t unauthenticated() const { return unauthenticated_; }
  std::size_t websockets() const { return websockets_; }
  std::size_t open_fds_estimate() const { return fds_estimate_; }
  const admission_limits& limits() const { return limits_; }

 private:
  admission_limits limits_;
  fd_probe fds_;
  std::size_t unauthenticated_ = 0, websockets_ = 0;
  std::size_t fds_estimate_ = 0;
  std::optional<std::uint64_t> counted_at_;
};

class phase_deadlines {
 public:
  enum class kind { request_head, handshake, message, close_grace, refusal, count_ };
  void set(kind k, std::uint64_t at_ms) { at_[static_cast<std::size_t>(k)] = at_ms; }
  void clear(kind k) { at_[static_cast<std::size_t>(k)].reset(); }
  bool armed(kind k) const { return at_[static_cast<std::size_t>(k)].has_value(); }
  // The earliest deadline set.
  std::optional<std::uint64_t> next() const;
  // The deadline set that passed first, if any passed by now_ms (the caller clears it).
  std::optional<kind> due(std::uint64_t now_ms) const;

 private:
  std::array<std::optional<std::uint64_t>, static_cast<std::size_t>(kind::count_)> at_{};
};

}  // namespace sessionrt::gateway
