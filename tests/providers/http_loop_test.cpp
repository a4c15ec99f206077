#include "runtime/providers/http_loop.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <optional>
#include <mutex>

#include "runtime/providers/retry_policy.hpp"
#include "tests/providers/loopback_server.hpp"

namespace sessionrt::providers {
namespace {

using namespace std::chrono_literals;
using testing::loopback_server;
using testing::scripted_response;

constexpr auto k_wait = 10s;  // generous: only a failing test waits this long

// Records every callback; tests wait on it instead of sleeping.
class recorder : public http_handler {
 public:
  void on_head(const http_response_head& head) override {
    std::lock_guard lock(mu_);
    ++heads_;
    head_ = head;
    events_.push_back("head");
    cv_.notify_all();
  }
  void on_body(std::string_view bytes) override {
    std::lock_guard lock(mu_);
    body_ += bytes;
    ++pieces_;
    if (events_.empty() || events_.back() != "body") events_.push_back("body");
    cv_.notify_all();
  }
  void on_done(status st) override {
    std::lock_guard lock(mu_);
    ++dones_;
    done_ = std::move(st);
    events_.push_back("done");
    cv_.notify_all();
  }

  bool wait_done(std::chrono::milliseconds timeout = k_wait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return dones_ > 0; });
  }
  bool wait_body(std::size_t bytes, std::chrono::milliseconds timeout = k_wait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return body_.size() >= bytes; });
  }

  int heads() const { std::lock_guard lock(mu_); return heads_; }
  int dones() const { std::lock_guard lock(mu_); return dones_; }
  int pieces() const { std::lock_guard lock(mu_); return pieces_; }
  http_response_head head() const { std::lock_guard lock(mu_); return head_; }
  std::string body() const { std::lock_guard lock(mu_); return body_; }
  status done() const { std::lock_guard lock(mu_); return done_; }
  std::vector<std::string> events() const { std::lock_guard lock(mu_); return events_; }

 protected:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int heads_ = 0, dones_ = 0, pieces_ = 0;
  http_response_head head_;
  std::string body_;
  status done_;
  std::vector<std::string> events_;
};

// Starts `req` on `loop` and waits for its on_done (the test stops when it does not come).
std::shared_ptr<recorder> finished_call(http_loop& loop, const http_request& req) {
  auto rec = std::make_shared<recorder>();
  loop.start_call(req, rec);
  REQUIRE(rec->wait_done());
  return rec;
}

std::unique_ptr<http_loop> make_loop() {
  auto loop = http_loop::start();
  REQUIRE(loop.ok());
  return std::move(loop).value();
}

http_request get(const std::string& url) {
  http_request r;
  r.method = "GET";
  r.url = url;
  return r;
}

// A port nothing listens on (bound, then released).
int closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

// Sets (or, with nullopt, unsets) an environment variable for one scope. Declare it before the
// loop: curl reads the proxy variables on the loop thread while calls start.
class env_var {
 public:
  env_var(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~env_var() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  env_var(const env_var&) = delete;
  env_var& operator=(const env_var&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("http_loop: a body streamed in many pieces arrives whole, in order, after its head", "[http_loop]") {
  std::vector<std::string> pieces;
  std::string expected;
  for (int i = 0; i < 40; ++i) {
    pieces.push_back("data: {\"n\":" + std::to_string(i) + "}\n\n");
    expected += pieces.back();
  }
  pieces.push_back(std::string(200 * 1024, 'x'));  // more than one read buffer
  expected += pieces.back();
  loopback_server server({scripted_response::stream(200, pieces, 2).with_header("Content-Type", "text/event-stream")});
  auto loop = make_loop();
  http_request req;
  req.url = server.url("/v1/chat/completions");
  req.headers = {{"Authorization", "Bearer sk-test"}, {"Content-Type", "application/json"}};
  req.body = "{\"prompt\":\"" + std::string(100 * 1024, 'p') + "\"}";  // large: no Expect: 100-continue wait
  const auto rec = finished_call(*loop, req);
  CHECK(rec->done().ok());
  CHECK(rec->events() == std::vector<std::string>{"head", "body", "done"});
  CHECK(rec->heads() == 1);
  CHECK(rec->dones() == 1);
  CHECK(rec->head().status == 200);
  CHECK(rec->body() == expected);
  CHECK(rec->pieces() > 1);
  CHECK(loop->in_flight() == 0);

  const auto requests = server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].path == "/v1/chat/completions");
  CHECK(requests[0].body == req.body);
  CHECK(requests[0].header("authorization") == "Bearer sk-test");
  CHECK(requests[0].header("content-type") == "application/json");
  CHECK(requests[0].header("expect").empty());
}

TEST_CASE("http_loop: response headers arrive lower-cased and only from the final status line", "[http_loop]") {
  scripted_response r = scripted_response::text(429, "{\"error\":\"rate limited\"}")
                            .with_header("Retry-After", "7")
                            .with_header("X-Request-ID", "req_123")
                            .with_header("Content-Type", "application/json");
  r.preamble = "HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n";
  loopback_server server({r});
  auto loop = make_loop();
  const auto rec = finished_call(*loop, get(server.url("/limited")));
  CHECK(rec->done().ok());
  const http_response_head head = rec->head();
  CHECK(head.status == 429);
  REQUIRE(head.headers.size() >= 3);
  CHECK(head.headers[0] == std::pair<std::string, std::string>{"retry-after", "7"});
  CHECK(head.headers[1] == std::pair<std::string, std::string>{"x-request-id", "req_123"});
  CHECK(head.header("content-type") == "application/json");
  CHECK(head.header("x-interim").empty());
  for (const auto& [name, value] : head.headers) {
    CHECK(std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; }));
  }
  CHECK(parse_retry_after(head, 0) == 7000);
  CHECK(server.requests().at(0).method == "GET");
}

TEST_CASE("http_loop: a non-2xx status gives on_head, the body and an ok on_done", "[http_loop]") {
  const std::string error_body = R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";
  loopback_server server({scripted_response::stream(529, {error_body.substr(0, 20), error_body.substr(20)}, 5)});
  auto loop = make_loop();
  http_request req;
  req.url = server.url("/v1/messages");
  req.body = "{}";
  const auto rec = finished_call(*loop, req);
  CHECK(rec->done().ok());
  CHECK(rec->head().status == 529);
  CHECK(rec->body() == error_body);
  CHECK(rec->events() == std::vector<std::string>{"head", "body", "done"});
}

TEST_CASE("http_loop: a response without a body still gets its on_head before on_done", "[http_loop]") {
  scripted_response r = scripted_response::text(503, "").with_header("Retry-After-Ms", "250");
  r.chunked = false;  // Content-Length: 0
  loopback_server server({r});
  auto loop = make_loop();
  const auto rec = finished_call(*loop, get(server.url()));
  CHECK(rec->done().ok());
  CHECK(rec->events() == std::vector<std::string>{"head", "done"});
  CHECK(rec->head().status == 503);
  CHECK(parse_retry_after(rec->head(), 0) == 250);
}

TEST_CASE("http_loop: connection refused ends the call with io_error naming the host, never a header", "[http_loop]") {
  auto loop = make_loop();
  http_request req;
  req.url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/v1/chat/completions?key=url-secret";
  req.headers = {{"Authorization", "Bearer sk-secret-123"}};
  const auto rec = finished_call(*loop, req);
  const status st = rec->done();
  CHECK(st.code() == errc::io_error);
  CHECK(st.message().find("127.0.0.1") != std::string::npos);
  CHECK(st.message().find("sk-secret") == std::string::npos);
  CHECK(st.message().find("url-secret") == std::string::npos);
  CHECK(rec->heads() == 0);
  CHECK(loop->in_flight() == 0);
}

TEST_CASE("http_loop: a connect that hangs past connect_timeout_ms ends with timeout", "[http_loop]") {
  loopback_server server(std::vector<scripted_response>{}, loopback_server::options{.accept = false});
  auto loop = make_loop();
  http_request req = get(server.url());
  req.connect_timeout_ms = 300;
  const auto rec = finished_call(*loop, req);
  CHECK(rec->done().code() == errc::timeout);
  CHECK(rec->done().message().find("connect") != std::string::npos);
  CHECK(rec->heads() == 0);
}

TEST_CASE("http_loop: a server silent past first_byte_timeout_ms ends the call with timeout", "[http_loop]") {
  loopback_server server({scripted_response::silent()});
  auto loop = make_loop();
  http_request req = get(server.url("/slow"));
  req.first_byte_timeout_ms = 200;
  req.idle_timeout_ms = 5000;
  const auto rec = finished_call(*loop, req);
  CHECK(rec->done().code() == errc::timeout);
  CHECK(rec->done().message() == "HTTP call to 127.0.0.1: no response within 200 ms");
  CHECK(rec->heads() == 0);
  CHECK(server.wait_for_client_aborts(1, k_wait));  // the connection was closed, not left open
}

TEST_CASE("http_loop: a stream idle past idle_timeout_ms ends with timeout after the bytes that came", "[http_loop]") {
  loopback_server server({scripted_response::stream(200, {"data: 1\n\n"}).ending_with(scripted_response::ending::stall)});
  auto loop = make_loop();
  http_request req = get(server.url("/stream"));
  req.first_byte_timeout_ms = 5000;
  req.idle_timeout_ms = 200;
  const auto rec = finished_call(*loop, req);
  CHECK(rec->done().code() == errc::timeout);
  CHECK(rec->done().message() == "HTTP call to 127.0.0.1: stream idle for 200 ms");
  CHECK(rec->events() == std::vector<std::string>{"head", "body", "done"});
  CHECK(rec->body() == "data: 1\n\n");
  CHECK(server.wait_for_client_aborts(1, k_wait));
}

TEST_CASE("http_loop: each byte restarts the idle timer", "[http_loop]") {
  // 6 pieces 100 ms apart: 500 ms in all, longer than the 400 ms idle timeout and the 400 ms
  // first-byte timeout, yet no single gap is.
  loopback_server server({scripted_response::stream(200, {"a", "b", "c", "d", "e", "f"}, 100)});
  auto loop = make_loop();
  http_request req = get(server.url());
  req.first_byte_timeout_ms = 400;
  req.idle_timeout_ms = 400;
  const auto rec = finished_call(*loop, req);
  CHECK(rec->done().ok());
  CHECK(rec->body() == "abcdef");
}

TEST_CASE("http_loop: a reset mid-body ends the call with io_error after the bytes that came", "[http_loop]") {
  loopback_server server({scripted_response::stream(200, {"data: partial\n\n"}).ending_with(scripted_response::ending::reset)});
  auto loop = make_loop();
  const auto rec = finished_call(*loop, get(server.url()));
  CHECK(rec->done().code() == errc::io_error);
  CHECK(rec->done().message().find("HTTP call to 127.0.0.1 failed: ") == 0);
  CHECK(rec->body() == "data: partial\n\n");
  CHECK(rec->events() == std::vector<std::string>{"head", "body", "done"});
}

TEST_CASE("http_loop: cancel mid-stream ends the call as cancelled and the server sees the close", "[http_loop]") {
  loopback_server server({scripted_response::stream(200, {"data: first\n\n"}).ending_with(scripted_response::ending::stall)});
  auto loop = make_loop();
  auto rec = std::make_shared<recorder>();
  const http_loop::call_id id = loop->start_call(get(server.url("/stream")), rec);
  REQUIRE(rec->wait_body(1));
  CHECK(loop->in_flight() == 1);

  loop->cancel(id);
  REQUIRE(rec->wait_done());
  CHECK(rec->done().code() == errc::cancelled);
  CHECK(rec->done().message() == "request cancelled");
  CHECK(loop->in_flight() == 0);
  // The server would stall forever: only the client's close ends this connection.
  CHECK(server.wait_for_client_aborts(1, k_wait));
  loop->cancel(id);  // finished: nothing happens
  loop->cancel(9999);
  loop.reset();
  CHECK(rec->dones() == 1);
}

TEST_CASE("http_loop: cancel from inside on_body stops the deliveries at once", "[http_loop]") {
  class cancelling : public recorder {
   public:
    http_loop* loop = nullptr;
    std::atomic<http_loop::call_id> id{0};
    void on_body(std::string_view bytes) override {
      recorder::on_body(bytes);
      loop->cancel(id.load());
    }
  };
  // Held until the id is stored; then a first piece, the rest 50 ms later.
  loopback_server server({scripted_response::stream(200, {"first", "second", "third"}, 50).held()});
  auto loop = make_loop();
  auto rec = std::make_shared<cancelling>();
  rec->loop = loop.get();
  rec->id = loop->start_call(get(server.url()), rec);
  server.release();

  REQUIRE(rec->wait_done());
  CHECK(rec->done().code() == errc::cancelled);
  CHECK(rec->pieces() == 1);
  CHECK(rec->body() == "first");
  CHECK(server.wait_for_client_aborts(1, k_wait));
}

TEST_CASE("http_loop: destroying the loop cancels the calls in flight, each gets one on_done", "[http_loop]") {
  loopback_server server({scripted_response::silent()});
  auto loop = make_loop();
  std::vector<std::shared_ptr<recorder>> started;
  for (int i = 0; i < 5; ++i) {
    started.push_back(std::make_shared<recorder>());
    loop->start_call(get(server.url("/" + std::to_string(i))), started.back());
  }
  REQUIRE(server.wait_for_requests(5, k_wait));
  // These may not have reached the loop yet: they are cancelled all the same.
  for (int i = 0; i < 3; ++i) {
    started.push_back(std::make_shared<recorder>());
    loop->start_call(get(server.url("/late")), started.back());
  }
  CHECK(loop->in_flight() == 8);

  loop.reset();
  for (const auto& rec : started) {
    CHECK(rec->dones() == 1);
    CHECK(rec->done().code() == errc::cancelled);
    CHECK(rec->heads() == 0);
  }
  CHECK(server.wait_for_client_aborts(5, k_wait));
}

TEST_CASE("http_loop: 200 concurrent calls on one loop all complete with their own bodies", "[http_loop]") {
  constexpr int k_calls = 200;
  loopback_server server([](const testing::recorded_request& request, std::size_t) {
    return scripted_response::stream(200, {"reply ", "to ", request.path}, 1).held();
  });
  auto loop = make_loop();
  std::vector<std::shared_ptr<recorder>> recs;
  for (int i = 0; i < k_calls; ++i) {
    recs.push_back(std::make_shared<recorder>());
    loop->start_call(get(server.url("/call/" + std::to_string(i))), recs.back());
  }
  // Every response is held until all requests arrived: the calls are truly concurrent.
  REQUIRE(server.wait_for_requests(k_calls, 30s));
  CHECK(loop->in_flight() == k_calls);
  server.release();

  for (int i = 0; i < k_calls; ++i) {
    REQUIRE(recs[i]->wait_done(30s));
    CHECK(recs[i]->done().ok());
    CHECK(recs[i]->body() == "reply to /call/" + std::to_string(i));
  }
  CHECK(loop->in_flight() == 0);
}

TEST_CASE("http_loop: an unparsable URL or a header with a line break is rejected", "[http_loop]") {
  auto loop = make_loop();
  const auto bad_url = finished_call(*loop, get("not a url"));
  CHECK(bad_url->done().code() == errc::invalid_argument);

  http_request req = get("http://127.0.0.1:1/");
  req.headers = {{"X-Api-Key", "secret\r\nX-Injected: 1"}};
  const auto bad_header = finished_call(*loop, req);
  CHECK(bad_header->done().code() == errc::invalid_argument);
  CHECK(bad_header->done().message().find("secret") == std::string::npos);
  CHECK(loop->in_flight() == 0);
}

}  // namespace sessionrt::providers

namespace sessionrt::providers {

TEST_CASE("http_loop: proxies come from the environment, loopback hosts bypass them", "[http_loop]") {
  loopback_server proxy({scripted_response::text(200, "via proxy")});
  loopback_server direct({scripted_response::text(200, "direct")});
  const env_var no_proxy_lower("no_proxy", std::nullopt);
  const env_var no_proxy_upper("NO_PROXY", std::nullopt);
  const env_var http_proxy("http_proxy", proxy.url(""));
  auto loop = make_loop();

  const auto remote = finished_call(*loop, get("http://models.example/v1/models"));
  CHECK(remote->done().ok());
  CHECK(remote->body() == "via proxy");
  REQUIRE(proxy.requests().size() == 1);
  CHECK(proxy.requests()[0].path == "http://models.example/v1/models");  // absolute form: a proxy request

  const auto local = finished_call(*loop, get(direct.url("/v1/models")));
  CHECK(local->done().ok());
  CHECK(local->body() == "direct");
  CHECK(proxy.requests().size() == 1);
}

}  // namespace sessionrt::providers
