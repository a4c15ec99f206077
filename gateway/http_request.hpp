// http_request: one HTTP/1.1 request as the gateway reads it, with libhttp-parser: the method,
// the URL, the headers (names lower-cased; a repeated header keeps its last value) and whether
// the request is complete or asks for an upgrade. No I/O: the transport feeds it what it read.
// Bounds: libhttp-parser refuses a head over HTTP_MAX_HEADER_SIZE (80 KiB) as an error, so
// the URL and the headers kept stay within that; a body is skipped, not kept (the gateway
// serves GET only), and how long it may take is the transport's request timeout.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace sessionrt::gateway {

class http_request {
 public:
  enum class state { partial, complete, upgrade, error };
  http_request();
  ~http_request();
  http_request(const http_request&) = delete;
  http_request& operator=(const http_request&) = delete;

  // Feeds the next bytes. `used`: how many belong to the request (after an upgrade the rest
  // are the WebSocket's). Once complete, upgrade or error, later calls change nothing.
  state feed(const char* data, std::size_t len, std::size_t& used);
  state current() const { return state_; }

  std::string method() const;  // "GET", ...
  const std::string& url() const { return url_; }
  std::string path() const { return url_.substr(0, url_.find('?')); }
  std::string header(const std::string& lower_name) const;
  const std::map<std::string, std::string>& headers() const { return headers_; }
  std::string error() const;  // libhttp-parser's description of the error (state::error)

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  state state_ = state::partial;
  std::string url_, field_, value_;
  bool last_was_value_ = false, complete_ = false;
  std::map<std::string, std::string> headers_;
};

}  // namespace sessionrt::gateway
