// output_budget: what one socket has not sent yet, against its bound (gateway.maxBufferedBytes),
// and its share of the gateway-wide gauge (gateway_metrics::buffered_bytes). No I/O: ws_socket
// sets the figure after each write and change of its queues, adds the returned change to the
// gauge, and closes the socket as a slow consumer once over() holds.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sessionrt::gateway {

class output_budget {
 public:
  explicit output_budget(std::size_t max_bytes) : max_(max_bytes) {}

  // The unsent bytes now; returns how much this socket's share of the gauge changed.
  std::int64_t set(std::size_t unsent) {
    const auto change = static_cast<std::int64_t>(unsent) - static_cast<std::int64_t>(unsent_);
    unsent_ = unsent;
    return change;
  }
  // The socket closed: its share leaves the gauge (returned negated, as set(0) would).
  std::int64_t release() { return set(0); }

  std::size_t unsent() const { return unsent_; }
  std::size_t max() const { return max_; }
  bool over() const { return unsent_ > max_; }

 private:
  std::size_t max_;
  std::size_t unsent_ = 0;
};

}  // namespace sessionrt::gateway
