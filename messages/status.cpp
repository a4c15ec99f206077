#include "messages/status.hpp"

namespace sessionrt {

const char* errc_name(errc c) noexcept {
  switch (c) {
    case errc::ok: return "ok";
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::already_exists: return "already_exists";
    case errc::io_error: return "io_error";
    case errc::no_space: return "no_space";
    case errc::corrupt: return "corrupt";
    case errc::limit_exceeded: return "limit_exceeded";
    case errc::unsafe_path: return "unsafe_path";
    case errc::locked: return "locked";
    case errc::timeout: return "timeout";
    case errc::cancelled: return "cancelled";
    case errc::unsupported: return "unsupported";
    case errc::internal: return "internal";
    case errc::not_owner: return "not_owner";
  }
  return "unknown";
}

std::string status::to_string() const {
  if (ok()) return "ok";
  return std::string(errc_name(code_)) + ": " + message_;
}

status status::with_context(const std::string& context) const {
  if (ok()) return *this;
  return status(code_, context + ": " + message_);
}

}  // namespace sessionrt
