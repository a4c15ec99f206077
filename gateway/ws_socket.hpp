// ws_socket: one accepted TCP connection on the loop thread, the lowest of the gateway's layers
// (as h2o keeps its socket apart from the protocols on it): libuv's stream and one deadline
// timer; in HTTP mode the bytes read are handed up as they come; after upgrade() wslay does the
// WebSocket framing — whole text messages handed up, pings answered, binary messages refused
// (close 1003), messages over the payload limit refused by wslay (close 1009; what the peer still
// sends is read and dropped so that the close frame reaches it, no reset).
// Back-pressure: what is unsent (libuv's write queue + wslay's queue, control frames included,
// + what is about to be written) is kept against max_buffered_bytes (output_budget); past it the
// socket closes 1008 "slow consumer" after what is queued, and queues nothing more. Pongs are
// coalesced: at most one unwritten pong, the last one answering the latest ping (RFC 6455
// 5.5.3), so a ping flood from a peer that does not read costs one pending pong.
// Closing: close() queues a close frame after what is queued, then the socket waits for the
// peer's answer for at most the grace; end_after_writes() half-closes once what is queued was
// written (FIN after the last byte) and drops what the peer still sends until it closes too or
// kCloseGraceMs passed (closing while its bytes arrive would answer them with a reset, which can
// destroy the close frame or the HTTP answer in its receive queue); close_now() closes at once.
// Deadlines: one timer for the earliest of the socket's phase deadlines (admission.hpp). The
// socket handles its own (a message begun and not finished within message_timeout_ms: close 1008
// "message timeout"; the close grace: close_now) and hands the others up.
// Contract: loop thread only. The owner receives every callback and frees the socket only after
// on_gone(), which is the last one (both handles closed); never inside another callback.
#pragma once
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/admission.hpp"
#include "gateway/gateway_metrics.hpp"
#include "gateway/output_budget.hpp"

struct wslay_event_context;

namespace sessionrt::gateway {

inline constexpr std::uint64_t kCloseGraceMs = 2000;
inline constexpr std::uint64_t kSlowConsumerGraceMs = 10000;  // a slow consumer may first drain

class ws_socket {
 public:
  enum class mode { http, ws, closing };

  class owner {
   public:
    virtual ~owner() = default;
    virtual void on_bytes(const char* data, std::size_t n) = 0;  // HTTP mode: what was read
    virtual void on_text(std::string_view text) = 0;             // a whole text message
    // request_head, handshake or refusal passed (cleared already).
    virtual void on_deadline(phase_deadlines::kind k) = 0;
    // From now on nothing more is sent: a close frame was queued, or the socket is closing.
    virtual void on_close_begun() = 0;
    // close_now(): the socket is going; what the connection holds is released now (once).
    virtual void on_closed() = 0;
    virtual void on_gone() = 0;  // the last callback: the owner may free the socket
  };

  struct limits {
    std::size_t max_buffered_bytes = 50u << 20;
    std::int64_t message_timeout_ms = 30000;
  };

  ws_socket(uv_loop_t& loop, owner& o, gateway_metrics& metrics, std::uint64_t id, limits l);
  ~ws_socket();
  ws_socket(const ws_socket&) = delete;
  ws_socket& operator=(const ws_socket&) = delete;

  // Takes the listener's next connection; false: it failed and the socket is closing.
  bool accept(uv_stream_t* listener);
  void start_reading();
  void stop_reading();  // one HTTP request per connection: nothing more is read

  // HTTP mode: raw bytes (an answer), then end_after_writes().
  void write_raw(std::string data);
  void end_after_writes();

  // Becomes a WebSocket (after the 101 answer was written): messages up to max_payload bytes.
  // false: wslay could not start (the socket is closing).
  bool upgrade(std::size_t max_payload);
  void set_max_payload(std::size_t n);
  // WebSocket bytes that came with the HTTP request's head.
  void received(const char* data, std::size_t n);
  // Queues a text message (written by flush()); false when nothing more is sent (closing, or
  // over the budget: then the socket closed as a slow consumer).
  bool queue_text(const std::string& text);
  void flush();
  void close(int code, const std::string& reason, std::uint64_t grace_ms = kCloseGraceMs);
  void close_now();

  void set_deadline(phase_deadlines::kind k, std::uint64_t in_ms);
  void clear_deadline(phase_deadlines::kind k);

  std::uint64_t id() const { return id_; }
  mode current() const { return mode_; }
  std::uint64_t now_ms() const;  // the loop's clock

  struct callbacks;  // wslay's and libuv's (ws_socket.cpp)

 private:
  struct write_req;
  void write(std::string data, bool pong);
  void written(bool pong);
  void outbound(const std::uint8_t* data, std::size_t len);
  std::size_t unsent() const;
  void note_unsent();
  void slow_consumer();
  void arm();
  void on_timer();
  void on_read(long n, const char* data);
  void receive();
  void handle_closed();
  void begin_close();

  uv_loop_t& loop_;
  owner& owner_;
  gateway_metrics& metrics_;
  std::uint64_t id_;
  limits limits_;
  uv_tcp_t tcp_{};
  uv_timer_t timer_{};
  int handles_open_ = 0;
  mode mode_ = mode::http;
  bool close_begun_ = false;  // on_close_begun() was called
  bool reading_ = false;
  wslay_event_context* ws_ = nullptr;
  std::string in_;  // read, not yet taken by wslay
  std::size_t in_pos_ = 0;
  std::string out_;  // what one flush produced: one write for all of it
  phase_deadlines deadlines_;
  bool message_open_ = false;  // a data frame began and its message has not ended
  bool oversize_counted_ = false;
  output_budget budget_;
  // Outbound frames as wslay hands them over (header, then payload): what is left of the
  // current frame's payload, and whether that frame is dropped (a coalesced pong).
  std::uint64_t out_left_ = 0;
  bool out_drop_ = false;
  bool out_has_pong_ = false;    // out_ carries a pong
  bool pong_in_flight_ = false;  // a pong was handed to libuv and is not written yet
  bool pong_owed_ = false;       // pongs were dropped meanwhile: one answers last_ping_ once it is
  std::string last_ping_;        // the payload of the latest ping
};

}  // namespace sessionrt::gateway
