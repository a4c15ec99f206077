// A hostile client for the gateway's socket tests: a plain TCP socket that sends exactly the
// bytes it is given (a partial HTTP head, one byte at a time, hand-made WebSocket frames) and
// reads what the server sends, with a timeout on every wait. Client frames are masked with a
// zero key (RFC 6455 requires the mask bit, not a random key, from the server's side of view).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sessionrt::gateway::testing {

struct wire_frame {
  std::uint8_t opcode = 0;
  bool fin = true;
  std::string payload;
  std::uint16_t close_code() const;  // a close frame's status (1005 when it has none)
};

class raw_socket {
 public:
  explicit raw_socket(int port);  // connected (FAILs the test otherwise)
  ~raw_socket();
  raw_socket(const raw_socket&) = delete;
  raw_socket& operator=(const raw_socket&) = delete;

  // Sends all of `bytes`; false when the peer reset or closed (EPIPE / ECONNRESET).
  bool send_all(std::string_view bytes);
  // Waits until the server ended the connection (recv returns 0 or an error); what it sent
  // before is appended to received(). False when `timeout` passed with the socket still open.
  bool wait_closed(std::chrono::milliseconds timeout);
  // Reads until `needle` is in received() (true), the connection ends or `timeout` (false).
  bool read_until(std::string_view needle, std::chrono::milliseconds timeout);
  // Upgrades to WebSocket; true once the 101 answer's head was read (it is then dropped from received()).
  bool upgrade(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // The next whole server frame (reads as needed); nullopt on timeout or end.
  std::optional<wire_frame> next_frame(std::chrono::milliseconds timeout);
  bool closed_by_peer() const { return eof_; }
  bool reset_by_peer() const { return reset_; }  // the end was a reset (ECONNRESET), not a FIN
  std::string& received() { return in_; }
  int fd() const { return fd_; }

 private:
  // One read of what is available within `timeout`; false on timeout or end.
  bool read_some(std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::string in_;
  bool eof_ = false, reset_ = false;
};

// A masked client frame (mask key 0): opcode, payload, FIN bit.
std::string client_frame(std::uint8_t opcode, std::string_view payload, bool fin = true);
// Only the header of a masked client frame announcing `payload_length` bytes.
std::string client_frame_header(std::uint8_t opcode, std::uint64_t payload_length, bool fin = true);
// The gateway's connect request text (token "tok" by default), as the CLI sends it.
std::string connect_request(const std::string& token = "tok");

}  // namespace sessionrt::gateway::testing
