#include "gateway/http_front.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>

#include "gateway/connection_state.hpp"
#include "gateway/control_ui.hpp"
#include "gateway/disk_usage.hpp"
#include "messages/ascii_text.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

std::string websocket_accept(const std::string& key) {
  const std::string in = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(in.data()), in.size(), digest);
  unsigned char out[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
  return std::string(reinterpret_cast<char*>(out), static_cast<std::size_t>(n));
}

// The runtime's figures for /metrics (on a method worker: they ask the runtime and the disk).
runtime_sample sample_runtime(gateway_core& core, storage::fs& files, const method_runner& workers) {
  runtime_sample s;
  auto calls = core.rt->model_calls();
  s.model_running = calls.running;
  s.model_waiting = calls.waiting;
  // -1: unknown (the router did not answer, or the runtime stopped).
  const auto stats = core.rt->stats();
  const bool known = !stats.stopped && stats.router_error.empty();
  s.live_sessions = known ? static_cast<std::int64_t>(stats.live) : -1;
  s.trimmed_sessions = known ? static_cast<std::int64_t>(stats.trimmed) : -1;
  if (auto rows = core.rt->sessions(); rows.ok()) s.stored_sessions = static_cast<std::int64_t>(rows->size());
  s.disk_bytes = bytes_under(files, core.rt->state_dir() + "/agents");
  s.disk_budget_bytes = core.rt->settings().maintenance.max_disk_bytes;
  s.methods_running = workers.running();
  s.methods_waiting = workers.waiting();
  s.methods_peak_running = workers.peak_running();
  s.methods_peak_waiting = workers.peak_waiting();
  return s;
}

}  // namespace

void http_reply(ws_socket& sock, int code, const char* reason, const std::string& type, const std::string& body,
                const std::string& extra_headers) {
  std::string out = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers +
                    "Connection: close\r\n\r\n" + body;
  sock.write_raw(std::move(out));
  sock.end_after_writes();
}

http_front::http_front(http_front_options opt, gateway_core& core, method_runner& workers, storage::fs& files,
                       http_host& host)
    : opt_(std::move(opt)), core_(core), workers_(workers), files_(files), host_(host) {}

void http_front::on_bytes(ws_socket& sock, http_request& req, const char* data, std::size_t n) {
  std::size_t used = 0;
  const auto st = req.feed(data, n, used);
  switch (st) {
    case http_request::state::partial: return;
    case http_request::state::error:
      core_.metrics->refused(refusal::bad_http);
      http_reply(sock, 400, "Bad Request", "text/plain", "bad HTTP request: " + req.error() + "\n");
      return;
    case http_request::state::complete: route(sock, req); return;
    case http_request::state::upgrade:
      route(sock, req);
      // What came after the request's head is the WebSocket's.
      if (sock.current() == ws_socket::mode::ws && used < n) sock.received(data + used, n - used);
      return;
  }
}

void http_front::request_timeout(ws_socket& sock) {
  // Slow or endless request heads and bodies (one byte a second) end here.
  if (sock.current() != ws_socket::mode::http) return;
  count_refusal(*core_.metrics, refusal::request_timeout,
                fmt::format("connection {}: no complete HTTP request within {} ms", sock.id(), opt_.request_timeout_ms));
  http_reply(sock, 408, "Request Timeout", "text/plain", "the HTTP request took too long\n");
}

void http_front::route(ws_socket& sock, http_request& req) {
  sock.clear_deadline(phase_deadlines::kind::request_head);
  if (req.current() == http_request::state::upgrade) {
    upgrade(sock, req);
    return;
  }
  const std::string method = req.method();
  const std::string path = req.path();
  if (method != "GET") {
    core_.metrics->refused(refusal::bad_http);
    http_reply(sock, 405, "Method Not Allowed", "text/plain", "only GET is served\n");
    return;
  }
  if (path == "/healthz") {
    bj::object o{{"ok", !core_.rt->stopped()},
                 {"uptimeMs", core_.now_ms() - core_.started_ms},
                 {"connections", static_cast<std::int64_t>(host_.websockets())},
                 {"port", core_.port},
                 {"protocol", kGatewayProtocol}};
    http_reply(sock, 200, "OK", "application/json", json::to_compact(o) + "\n");
    return;
  }
  if (path == "/metrics") {
    metrics(sock, req);
    return;
  }
  // The web Control UI serves the other GETs it knows.
  if (auto r = core_.ui ? core_.ui->serve(method, req.url(), req.headers()) : std::nullopt) {
    sock.write_raw(r->wire());
    sock.end_after_writes();
    return;
  }
  core_.metrics->refused(refusal::bad_http);
  http_reply(sock, 404, "Not Found", "text/plain", "not found: GET /healthz, GET /metrics, or a WebSocket upgrade\n");
}

void http_front::metrics(ws_socket& sock, http_request& req) {
  if (req.header("authorization") != "Bearer " + opt_.token) {
    core_.metrics->refused(refusal::bad_http);
    http_reply(sock, 401, "Unauthorized", "text/plain", "/metrics needs Authorization: Bearer <gateway token>\n");
    return;
  }
  sock.stop_reading();  // one request per connection
  // The runtime's figures are asked for on a worker, then the answer goes out on the loop.
  const std::uint64_t id = sock.id();
  std::function<void()> job = [this, id] {
    auto text = std::make_shared<std::string>(core_.metrics->render(sample_runtime(core_, files_, workers_)));
    host_.to_loop([this, id, text] {
      if (ws_socket* s = host_.socket_of(id)) http_reply(*s, 200, "OK", "text/plain; version=0.0.4", *text);
    });
  };
  if (!workers_.try_post(job, id)) {
    core_.metrics->refused(refusal::busy_queue);
    const std::int64_t seconds = std::max<std::int64_t>(1, (opt_.busy_retry_after_ms + 999) / 1000);
    http_reply(sock, 503, "Service Unavailable", "text/plain",
               "gateway busy: the method workers' queue is full (gateway.maxQueuedRequests)\n",
               "Retry-After: " + std::to_string(seconds) + "\r\n");
  }
}

void http_front::upgrade(ws_socket& sock, http_request& req) {
  const std::string key = req.header("sec-websocket-key");
  if (ascii_lower(req.header("upgrade")).find("websocket") == std::string::npos || key.empty() ||
      req.header("sec-websocket-version") != "13") {
    core_.metrics->refused(refusal::bad_http);
    http_reply(sock, 400, "Bad Request", "text/plain",
               "a WebSocket upgrade needs Upgrade: websocket, Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n");
    return;
  }
  sock.write_raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
                 websocket_accept(key) + "\r\n\r\n");
  if (!sock.upgrade(kPreHandshakeMaxPayload)) return;
  host_.upgraded(sock);
}

}  // namespace sessionrt::gateway
