// status / result<T>: how errors cross a layer border (LevelDB-style, no exceptions).
// A status is ok, or a code plus one sentence a user can act on ("what failed, where, why").
// result<T> holds either a T or a non-ok status; reading value() of an error is a bug (asserts).
#pragma once
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace sessionrt {

enum class errc {
  ok = 0,
  invalid_argument,  // bad input from outside: config, chat event, request
  not_found,
  already_exists,
  io_error,          // EIO and other syscall failures
  no_space,          // ENOSPC / EDQUOT
  corrupt,           // a file on disk does not parse / violates its format
  limit_exceeded,    // a size / depth / count limit; the message names the limit
  unsafe_path,       // an id or path that would leave its directory
  locked,            // another holder owns a lock
  timeout,
  cancelled,
  unsupported,
  internal,
  // A session of a shard this node does not serve (another node owns it, or it is moving):
  // the message names the shard; a gateway forwards the request to the shard's owner.
  not_owner,
};

const char* errc_name(errc c) noexcept;

class [[nodiscard]] status {
 public:
  status() = default;
  status(errc code, std::string message) : code_(code), message_(std::move(message)) {}
  static status success() { return {}; }

  bool ok() const noexcept { return code_ == errc::ok; }
  explicit operator bool() const noexcept { return ok(); }
  errc code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  // "<code name>: <message>", or "ok".
  std::string to_string() const;
  // Prefixes context to the message ("saving sessions.json: " + message), keeping the code.
  status with_context(const std::string& context) const;

 private:
  errc code_ = errc::ok;
  std::string message_;
};

template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::move(value)) {}                // NOLINT: implicit by design
  result(status error) : v_(std::move(error)) { assert(!std::get<status>(v_).ok()); }  // NOLINT
  result(errc code, std::string message) : v_(status(code, std::move(message))) {}

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const status& error() const& { assert(!ok()); return std::get<1>(v_); }
  status take_error() && { return ok() ? status() : std::get<1>(std::move(v_)); }
  // The status of this result: ok() or the error.
  status to_status() const { return ok() ? status() : std::get<1>(v_); }

 private:
  std::variant<T, status> v_;
};

}  // namespace sessionrt

// Returns the status of `expr` from the enclosing function if it is not ok.
#define SRT_RETURN_IF_ERROR(expr)                  \
  do {                                             \
    ::sessionrt::status srt_st_ = (expr);          \
    if (!srt_st_.ok()) return srt_st_;             \
  } while (0)
