// http_loop: curl's multi-socket interface on one libuv loop (the pattern of curl's
// docs/examples/multi-uv.c). Everything below the public methods runs on the loop thread; the
// only state shared with other threads is the command queue (under `mu`), the `stopping` /
// `accepting` flags (under `mu`) and two atomics (ids, the in-flight count).
//
// Lifetimes: a call is heap-allocated when its start command reaches the loop, indexed in
// `calls` until it finishes, and freed in the close callback of its timer (libuv closes handles
// asynchronously, so the memory must outlive finish()). A socket context lives from curl's first
// interest in the socket to the close callback after CURL_POLL_REMOVE.
#include "runtime/providers/http_loop.hpp"

#include <curl/curl.h>
#include <spdlog/spdlog.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "messages/ascii_text.hpp"

namespace sessionrt::providers {

std::string_view http_response_head::header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (ascii_iequals(n, name)) return v;
  }
  return {};
}

namespace {

// SSE events are small; curl's 16 KiB default read buffer x 10,000 streams would be 160 MB.
constexpr long kReadBufferBytes = 8 * 1024;
// The smallest curl accepts (default 64 KiB), used when a request body is sent in pieces.
constexpr long kUploadBufferBytes = 16 * 1024;

bool global_init_ok() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] { ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; });
  return ok;
}

// "HTTP/1.1 200 OK" / "HTTP/2 429" -> the status code, or 0.
long parse_status_line(std::string_view line) {
  const auto sp = line.find(' ');
  if (sp == std::string_view::npos) return 0;
  long code = 0;
  std::size_t i = sp + 1;
  for (int digits = 0; i < line.size() && digits < 3; ++i, ++digits) {
    if (line[i] < '0' || line[i] > '9') return 0;
    code = code * 10 + (line[i] - '0');
  }
  return code;
}

// The host of `url`, or nullopt when curl cannot parse it. Error messages name only the host:
// a URL may carry a key in its query (Google's ?key=), headers always do.
std::optional<std::string> url_host(const std::string& url) {
  CURLU* u = curl_url();
  if (u == nullptr) return std::nullopt;
  std::optional<std::string> host;
  char* part = nullptr;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_HOST, &part, 0) == CURLUE_OK) {
    host = part;
  }
  curl_free(part);
  curl_url_cleanup(u);
  return host;
}

// The environment's no_proxy list plus the loopback addresses: proxies from the environment
// stay in use, but a local model server (http://127.0.0.1:1234/v1) is never sent through one.
// (Setting CURLOPT_NOPROXY replaces curl's own reading of no_proxy, hence the copy.)
std::string loopback_no_proxy() {
  const char* env = std::getenv("no_proxy");
  if (env == nullptr || *env == '\0') env = std::getenv("NO_PROXY");
  std::string list = env != nullptr ? env : "";
  if (list == "*") return list;  // curl's "no proxy at all" only works as the whole value
  if (!list.empty()) list += ",";
  return list + "localhost,127.0.0.1,::1";
}

bool has_line_break(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

// Runs a handler callback; a callback that throws must not unwind through curl or libuv (C).
template <class F>
bool guarded(const char* what, F&& f) noexcept {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    spdlog::error("http_loop: the handler's {} threw: {}", what, e.what());
  } catch (...) {
    spdlog::error("http_loop: the handler's {} threw", what);
  }
  return false;
}

}  // namespace

struct http_loop::impl {
  // Why a transfer is being aborted from inside a curl callback (returning 0 from it).
  enum class abort_kind : std::uint8_t { none, cancelled, handler_threw };

  struct call {
    impl* owner = nullptr;
    call_id id = 0;
    CURL* easy = nullptr;
    bool added = false;  // easy is in the multi handle
    curl_slist* headers = nullptr;
    std::shared_ptr<http_handler> handler;
    std::string body;  // curl sends the request body from here (CURLOPT_POSTFIELDS: no copy)
    std::string host;  // for messages only
    std::int64_t first_byte_timeout_ms = 0;
    std::int64_t idle_timeout_ms = 0;
    http_response_head head;
    bool responded = false;  // a response byte arrived (first-byte timer -> idle timer)
    bool head_sent = false;
    abort_kind abort = abort_kind::none;
    uv_timer_t timer;  // the first-byte / idle timer
    char error[CURL_ERROR_SIZE] = {};
  };

  struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    impl* owner;
    int events = 0;       // what curl asked for (UV_READABLE | UV_WRITABLE)
    bool closed = false;  // CURL_POLL_REMOVE came; freed in the close callback
  };

  struct command {
    enum class kind : std::uint8_t { start, cancel } what;
    call_id id = 0;
    http_request request;
    std::shared_ptr<http_handler> handler;
  };

  uv_loop_t loop;
  uv_async_t wake;
  uv_timer_t curl_timer;
  CURLM* multi = nullptr;
  std::thread thread;  // assigned before start() returns, so every later reader sees it

  std::mutex mu;
  std::vector<command> queue;  // under mu
  bool stopping = false;       // under mu: the destructor asked the loop to end
  bool accepting = true;       // under mu: false once `wake` is closed
  std::atomic<call_id> next_id{1};
  std::atomic<std::size_t> in_flight{0};

  std::unordered_map<call_id, call*> calls;  // loop thread only
  std::string no_proxy;                      // CURLOPT_NOPROXY for every call (set in init)

  // ---- setup and teardown (caller's thread) ----

  status init(const options& opt) {
    no_proxy = loopback_no_proxy();
    if (int rc = uv_loop_init(&loop); rc != 0) {
      return status(errc::io_error, std::string("http loop: uv_loop_init failed: ") + uv_strerror(rc));
    }
    loop.data = this;
    if (int rc = uv_async_init(&loop, &wake, on_wake); rc != 0) {
      uv_loop_close(&loop);
      return status(errc::io_error, std::string("http loop: uv_async_init failed: ") + uv_strerror(rc));
    }
    wake.data = this;
    uv_timer_init(&loop, &curl_timer);
    curl_timer.data = this;
    multi = curl_multi_init();
    if (multi == nullptr) {
      abandon_unstarted();
      return status(errc::internal, "http loop: curl_multi_init failed");
    }
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    if (opt.max_host_connections > 0) {
      curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(opt.max_host_connections));
    }
    return {};
  }

  status start_thread() {
    try {
      thread = std::thread([this] { uv_run(&loop, UV_RUN_DEFAULT); });
    } catch (const std::exception& e) {
      abandon_unstarted();
      return status(errc::internal, std::string("http loop: cannot start its thread: ") + e.what());
    }
    return {};
  }

  // Tears down a loop whose thread never ran: the shutdown path, on this thread.
  void abandon_unstarted() {
    {
      std::lock_guard lock(mu);
      stopping = true;
      uv_async_send(&wake);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }

  // The destructor's half: ask the loop to cancel everything and end, then wait for it.
  void stop() {
    // Joining from the loop thread (a handler destroying its own loop) would deadlock.
    assert(std::this_thread::get_id() != thread.get_id());
    {
      std::lock_guard lock(mu);
      stopping = true;
      if (accepting) uv_async_send(&wake);
    }
    thread.join();
    if (int rc = uv_loop_close(&loop); rc != 0) {
      spdlog::error("http_loop: uv_loop_close: {}", uv_strerror(rc));
    }
  }

  // ---- the public side (any thread) ----

  call_id submit_start(http_request request, std::shared_ptr<http_handler> handler) {
    const call_id id = next_id.fetch_add(1);
    in_flight.fetch_add(1);
    {
      std::lock_guard lock(mu);
      if (accepting) {
        queue.push_back(command{command::kind::start, id, std::move(request), handler});
        // Under the lock: the loop closes `wake` only after clearing `accepting` under it.
        uv_async_send(&wake);
        return id;
      }
    }
    // Only reachable from a handler's on_done during the destructor's shutdown.
    in_flight.fetch_sub(1);
    guarded("on_done", [&] { handler->on_done(status(errc::cancelled, "request cancelled: the http loop is shutting down")); });
    return id;
  }

  void submit_cancel(call_id id) {
    if (std::this_thread::get_id() == thread.get_id()) {
      // From a handler callback: stop delivering now, even inside curl's current read.
      if (auto it = calls.find(id); it != calls.end() && it->second->abort == abort_kind::none) {
        it->second->abort = abort_kind::cancelled;
      }
    }
    std::lock_guard lock(mu);
    if (!accepting) return;
    queue.push_back(command{command::kind::cancel, id, {}, nullptr});
    uv_async_send(&wake);
  }

  // ---- the loop thread ----

  static void on_wake(uv_async_t* handle) { static_cast<impl*>(handle->data)->drain(); }

  void drain() {
    std::vector<command> commands;
    bool stop_now = false;
    {
      std::lock_guard lock(mu);
      commands.swap(queue);
      stop_now = stopping;
    }
    if (stop_now) {
      shutdown(std::move(commands));
      return;
    }
    for (command& c : commands) {
      if (c.what == command::kind::start) {
        begin(c);
      } else if (auto it = calls.find(c.id); it != calls.end()) {
        finish(it->second, status(errc::cancelled, "request cancelled"));
      }
    }
  }

  void begin(command& cmd) {
    auto* c = new call();
    c->owner = this;
    c->id = cmd.id;
    c->handler = std::move(cmd.handler);
    c->first_byte_timeout_ms = std::max<std::int64_t>(0, cmd.request.first_byte_timeout_ms);
    c->idle_timeout_ms = std::max<std::int64_t>(0, cmd.request.idle_timeout_ms);
    uv_timer_init(&loop, &c->timer);
    c->timer.data = c;
    calls.emplace(c->id, c);

    status st = configure(*c, cmd.request);
    if (st.ok()) {
      if (CURLMcode mc = curl_multi_add_handle(multi, c->easy); mc != CURLM_OK) {
        st = status(errc::internal, "HTTP call to " + c->host + ": curl_multi_add_handle: " + curl_multi_strerror(mc));
      } else {
        c->added = true;
      }
    }
    if (!st.ok()) {
      finish(c, std::move(st));
      return;
    }
    if (c->first_byte_timeout_ms > 0) {
      uv_timer_start(&c->timer, on_call_timer, static_cast<std::uint64_t>(c->first_byte_timeout_ms), 0);
    }
  }

  static status configure_method(call& c, const std::string& method) {
    CURL* e = c.easy;
    if (method == "GET" && c.body.empty()) {
      curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else if (method == "HEAD") {
      curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else {
      if (method.empty() || has_line_break(method) || method.find(' ') != std::string::npos) {
        return status(errc::invalid_argument, "HTTP call to " + c.host + ": invalid method");
      }
      if (method != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method.c_str());
      if (method == "POST" || !c.body.empty()) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(c.body.size()));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, c.body.data());
      }
    }
    return {};
  }

  static status configure_headers(call& c, const http_headers& headers) {
    bool has_expect = false;
    for (const auto& [name, value] : headers) {
      if (name.empty() || has_line_break(name) || name.find(':') != std::string::npos || has_line_break(value)) {
        // Names only: a value may be a key.
        return status(errc::invalid_argument, "HTTP call to " + c.host + ": request header \"" +
                                                  (has_line_break(name) ? std::string("?") : name) +
                                                  "\" is malformed");
      }
      has_expect = has_expect || ascii_lower(name) == "expect";
      // "Name;" is curl's way to send an empty value ("Name:" would delete the header).
      const std::string line = value.empty() ? name + ";" : name + ": " + value;
      curl_slist* next = curl_slist_append(c.headers, line.c_str());
      if (next == nullptr) return status(errc::internal, "HTTP call: out of memory for headers");
      c.headers = next;
    }
    // A large POST would otherwise wait for "100 Continue" first (a round trip, or 1 s).
    if (!has_expect) {
      curl_slist* next = curl_slist_append(c.headers, "Expect:");
      if (next == nullptr) return status(errc::internal, "HTTP call: out of memory for headers");
      c.headers = next;
    }
    return {};
  }

  status configure(call& c, http_request& r) {
    std::optional<std::string> host = url_host(r.url);
    if (!host) return status(errc::invalid_argument, "HTTP call: the request URL does not parse");
    c.host = std::move(*host);
    c.body = std::move(r.body);
    c.easy = curl_easy_init();
    if (c.easy == nullptr) return status(errc::internal, "HTTP call to " + c.host + ": curl_easy_init failed");
    CURL* e = c.easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, &c);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c.error);
    if (curl_easy_setopt(e, CURLOPT_URL, r.url.c_str()) != CURLE_OK) {
      return status(errc::invalid_argument, "HTTP call to " + c.host + ": the request URL is not accepted");
    }
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOPROXY, no_proxy.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    // Falls back to HTTP/1.1 when this libcurl lacks HTTP/2 (setopt fails, nothing else changes).
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    // Over TLS, wait for a connection being set up to learn whether it multiplexes instead of
    // opening one per concurrent call. Not over plain http: that would hold every other call
    // until the first response's head (a plain http connection never multiplexes here).
    if (r.url.size() >= 8 && ascii_lower(std::string_view(r.url).substr(0, 8)) == "https://") {
      curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    }
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 60L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 30L);
    curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, kReadBufferBytes);
    curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, kUploadBufferBytes);
    if (r.connect_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout_ms));
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &c);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &c);
    SRT_RETURN_IF_ERROR(configure_method(c, r.method));
    SRT_RETURN_IF_ERROR(configure_headers(c, r.headers));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, c.headers);
    return {};
  }

  // Ends a call: detaches it from curl, tells its handler, frees it once its timer closed.
  void finish(call* c, status st) {
    calls.erase(c->id);
    uv_timer_stop(&c->timer);
    long code = 0;
    if (c->easy != nullptr) {
      curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &code);
      if (c->added) curl_multi_remove_handle(multi, c->easy);  // closes the socket mid-response
      curl_easy_cleanup(c->easy);
      c->easy = nullptr;
    }
    curl_slist_free_all(c->headers);
    c->headers = nullptr;
    std::shared_ptr<http_handler> handler = std::move(c->handler);
    // A response without body bytes (204, an empty 429) still gets its on_head.
    if (st.ok() && !c->head_sent) {
      c->head_sent = true;
      if (c->head.status == 0) c->head.status = code;
      guarded("on_head", [&] { handler->on_head(c->head); });
    }
    in_flight.fetch_sub(1);
    guarded("on_done", [&] { handler->on_done(std::move(st)); });
    uv_close(reinterpret_cast<uv_handle_t*>(&c->timer), on_call_closed);
  }

  static void on_call_closed(uv_handle_t* handle) { delete static_cast<call*>(handle->data); }

  status transfer_status(const call& c, CURLcode rc) const {
    if (rc == CURLE_OK) return {};
    if (c.abort == abort_kind::cancelled) return status(errc::cancelled, "request cancelled");
    if (c.abort == abort_kind::handler_threw) {
      return status(errc::internal, "HTTP call to " + c.host + ": the response handler threw");
    }
    const std::string text = c.error[0] != '\0' ? std::string(c.error) : std::string(curl_easy_strerror(rc));
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return status(errc::timeout, "HTTP call to " + c.host + ": connect timed out (" + text + ")");
    }
    return status(errc::io_error, "HTTP call to " + c.host + " failed: " + text);
  }

  void check_done() {
    int pending = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &pending)) {
      if (m->msg != CURLMSG_DONE) continue;
      // Read everything first: remove_handle (in finish) invalidates m.
      CURL* easy = m->easy_handle;
      const CURLcode rc = m->data.result;
      char* priv = nullptr;
      curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
      auto* c = reinterpret_cast<call*>(priv);
      finish(c, transfer_status(*c, rc));
    }
  }

  // Any response byte: the first-byte timer gives way to the idle timer (or none).
  static void note_progress(call& c) {
    c.responded = true;
    if (c.idle_timeout_ms > 0) {
      uv_timer_start(&c.timer, on_call_timer, static_cast<std::uint64_t>(c.idle_timeout_ms), 0);
    } else {
      uv_timer_stop(&c.timer);
    }
  }

  static void on_call_timer(uv_timer_t* timer) {
    auto* c = static_cast<call*>(timer->data);
    const std::string what = c->responded
                                 ? "stream idle for " + std::to_string(c->idle_timeout_ms) + " ms"
                                 : "no response within " + std::to_string(c->first_byte_timeout_ms) + " ms";
    c->owner->finish(c, status(errc::timeout, "HTTP call to " + c->host + ": " + what));
  }

  static size_t on_header(char* data, size_t size, size_t count, void* userp) {
    auto* c = static_cast<call*>(userp);
    const size_t len = size * count;
    if (c->abort != abort_kind::none) return 0;
    note_progress(*c);
    if (c->head_sent) return len;  // trailers: the head was delivered already
    std::string_view line(data, len);
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
    if (line.starts_with("HTTP/")) {
      // Each status line starts a new head (after "100 Continue", a proxy's CONNECT reply).
      c->head = http_response_head{};
      c->head.status = parse_status_line(line);
    } else if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
      if (!c->head.headers.empty()) {  // obsolete line folding: continues the previous value
        c->head.headers.back().second += ' ';
        c->head.headers.back().second += ascii_trim_line(line);
      }
    } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
      c->head.headers.emplace_back(ascii_lower(ascii_trim_line(line.substr(0, colon))),
                                   std::string(ascii_trim_line(line.substr(colon + 1))));
    }
    return len;
  }

  static size_t on_write(char* data, size_t size, size_t count, void* userp) {
    auto* c = static_cast<call*>(userp);
    const size_t len = size * count;
    if (c->abort != abort_kind::none) return 0;  // != len: curl ends the transfer (write error)
    note_progress(*c);
    if (!c->head_sent) {
      c->head_sent = true;
      if (!guarded("on_head", [&] { c->handler->on_head(c->head); })) c->abort = abort_kind::handler_threw;
    }
    if (c->abort == abort_kind::none &&
        !guarded("on_body", [&] { c->handler->on_body(std::string_view(data, len)); })) {
      c->abort = abort_kind::handler_threw;
    }
    return c->abort == abort_kind::none ? len : 0;
  }

  static int on_curl_socket(CURL*, curl_socket_t fd, int what, void* userp, void* socketp) {
    auto* self = static_cast<impl*>(userp);
    auto* ctx = static_cast<sock_ctx*>(socketp);
    if (what == CURL_POLL_REMOVE) {
      if (ctx != nullptr) {
        ctx->closed = true;
        uv_poll_stop(&ctx->poll);
        uv_close(reinterpret_cast<uv_handle_t*>(&ctx->poll), on_sock_closed);
        curl_multi_assign(self->multi, fd, nullptr);
      }
      return 0;
    }
    if (ctx == nullptr) {
      ctx = new sock_ctx{{}, fd, self, 0, false};
      if (int rc = uv_poll_init_socket(&self->loop, &ctx->poll, fd); rc != 0) {
        spdlog::error("http_loop: uv_poll_init_socket: {}", uv_strerror(rc));
        delete ctx;
        return -1;  // curl aborts the transfers on this socket
      }
      ctx->poll.data = ctx;
      curl_multi_assign(self->multi, fd, ctx);
    }
    int events = 0;
    if (what & CURL_POLL_IN) events |= UV_READABLE;
    if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
    ctx->events = events;
    uv_poll_start(&ctx->poll, events, on_poll);
    return 0;
  }

  static void on_sock_closed(uv_handle_t* handle) { delete static_cast<sock_ctx*>(handle->data); }

  static void on_poll(uv_poll_t* poll, int st, int events) {
    auto* ctx = static_cast<sock_ctx*>(poll->data);
    impl* self = ctx->owner;
    int flags = 0;
    if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    if (st < 0) {
      // POLLERR (e.g. an RST): libuv reports it without events and stops the handle. Let curl
      // read what arrived before the error and find the error itself; ERR alone would make it
      // drop those bytes ("select/poll returned error").
      flags = CURL_CSELECT_IN | CURL_CSELECT_OUT | CURL_CSELECT_ERR;
    }
    int running = 0;
    curl_multi_socket_action(self->multi, ctx->fd, flags, &running);
    // curl re-announces a socket only when its wish changes: re-arm the stopped handle if curl
    // still uses the socket. (ctx is freed only in a later close callback: readable here.)
    if (st < 0 && !ctx->closed) uv_poll_start(&ctx->poll, ctx->events, on_poll);
    self->check_done();
  }

  static int on_curl_timer(CURLM*, long timeout_ms, void* userp) {
    auto* self = static_cast<impl*>(userp);
    if (timeout_ms < 0) {
      uv_timer_stop(&self->curl_timer);
    } else {
      // 0 means "now"; curl must not be re-entered from this callback, so on the next turn.
      uv_timer_start(&self->curl_timer, on_curl_timeout, timeout_ms == 0 ? 1 : static_cast<std::uint64_t>(timeout_ms), 0);
    }
    return 0;
  }

  static void on_curl_timeout(uv_timer_t* timer) {
    auto* self = static_cast<impl*>(timer->data);
    int running = 0;
    curl_multi_socket_action(self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    self->check_done();
  }

  // Cancels everything (also calls started by handlers meanwhile), then closes every handle
  // so uv_run returns.
  void shutdown(std::vector<command> commands) {
    const status cancelled(errc::cancelled, "request cancelled: the http loop is shutting down");
    for (;;) {
      for (command& c : commands) {
        if (c.what != command::kind::start) continue;
        in_flight.fetch_sub(1);
        guarded("on_done", [&] { c.handler->on_done(cancelled); });
      }
      std::vector<call_id> ids;
      ids.reserve(calls.size());
      for (const auto& [id, c] : calls) ids.push_back(id);
      for (call_id id : ids) {
        if (auto it = calls.find(id); it != calls.end()) finish(it->second, cancelled);
      }
      std::lock_guard lock(mu);
      commands.clear();
      commands.swap(queue);
      if (commands.empty() && calls.empty()) {
        accepting = false;
        break;
      }
    }
    curl_multi_cleanup(multi);  // closes cached connections (CURL_POLL_REMOVE for each)
    multi = nullptr;
    uv_walk(&loop, close_handle, nullptr);
  }

  static void close_handle(uv_handle_t* handle, void*) {
    if (uv_is_closing(handle)) return;
    uv_close(handle, handle->type == UV_POLL ? on_sock_closed : nullptr);
  }
};

http_loop::http_loop(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

http_loop::~http_loop() {
  if (impl_) impl_->stop();
}

result<std::unique_ptr<http_loop>> http_loop::start() { return start(options{}); }

result<std::unique_ptr<http_loop>> http_loop::start(options opt) {
  if (!global_init_ok()) return status(errc::internal, "http loop: curl_global_init failed");
  auto p = std::make_unique<impl>();
  SRT_RETURN_IF_ERROR(p->init(opt));
  SRT_RETURN_IF_ERROR(p->start_thread());
  return std::unique_ptr<http_loop>(new http_loop(std::move(p)));
}

http_loop::call_id http_loop::start_call(http_request request, std::shared_ptr<http_handler> handler) {
  assert(handler != nullptr);
  return impl_->submit_start(std::move(request), std::move(handler));
}

void http_loop::cancel(call_id id) { impl_->submit_cancel(id); }

std::size_t http_loop::in_flight() const { return impl_->in_flight.load(); }

}  // namespace sessionrt::providers
