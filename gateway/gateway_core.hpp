// gateway_core: what the method handlers share, whatever thread they run on: the runtime, the
// metrics, the chat runs, the remote runners and the frame sink (the transport's thread-safe
// way to send events to one connection or to many). The transport owns the sink and outlives
// every handler call.
#pragma once
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "gateway/gateway_metrics.hpp"
#include "messages/clock.hpp"
#include "runtime/runtime.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::gateway {

class chat_runs;
class control_ui;
class session_messages;
class runner_pool;
class shard_forward;

// Thread-safe: each call posts the frame to the loop thread, which numbers it (seq) per
// connection and writes it. A connection that is gone is skipped.
class frame_sink {
 public:
  enum class audience { operators, sessions_subscribers };
  virtual ~frame_sink() = default;
  virtual void event_to(std::uint64_t conn, std::string name, boost::json::value payload) = 0;
  virtual void broadcast(audience who, std::string name, boost::json::value payload) = 0;
  // Whether a broadcast to `who` would reach anyone now (work for nobody can be skipped).
  virtual bool has_audience(audience who) const = 0;
  // To the connection `origin` and to every connection watching `session_key` (each once).
  virtual void to_session(std::uint64_t origin, std::string session_key, std::string name,
                          boost::json::value payload) = 0;
  // Runs fn on the loop thread once `delay` passed (never, if the transport stops first).
  virtual void after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  // Runs fn on a method worker (never on the loop, never on the caller's thread): for work
  // that asks the runtime and must not block an actor thread or the loop.
  virtual void run_later(std::function<void()> fn) = 0;
};

struct gateway_core {
  runtime::runtime* rt = nullptr;
  gateway_metrics* metrics = nullptr;
  frame_sink* sink = nullptr;
  chat_runs* runs = nullptr;
  runner_pool* runners = nullptr;
  std::string bind;
  int port = 0;
  // The runtime's clock (gateway_options::runtime.time, else the real one): every timestamp and
  // age the gateway shows comes from it, as the runtime's own do.
  const clock* time = &storage::real_clock();
  std::int64_t now_ms() const { return time->now_ms(); }
  std::int64_t started_ms = 0;
  std::string server_version = "sessionrt-0.1.0";
  std::string default_provider, default_model;  // what rows show when they name none
  // The web Control UI (control_ui.hpp): the transport asks it for the GETs it does not serve
  // itself and whether a WebSocket upgrade's Origin may connect. Null: no UI, no Origin check.
  const control_ui* ui = nullptr;
  // sessions.messages.subscribe's subscribers (session_messages.hpp); null: none kept.
  session_messages* messages = nullptr;
  // Calls for sessions whose shard another node owns go there (shard_forward.hpp); null: every
  // call is served here (no cluster). Set and read on the loop thread.
  shard_forward* forward = nullptr;
};

}  // namespace sessionrt::gateway
