// Fuzzes what the gateway parses from a client before any method runs: the HTTP request head
// (gateway/http_request.hpp, libhttp-parser) and the text frames of a connection
// (connection_state: the request frame, connect params, then a method's params checked as
// sessions.patch checks them). The input's first byte picks the part and how the bytes are
// split into reads; the rest is the input. Aborts when a promise breaks:
// - HTTP: `used` never exceeds what was fed; the state only moves from partial, once; an
//   upgrade or a complete request has a method; header names are lower-case;
// - frames: a request has a non-empty id and method; an error or a close after an error has
//   a non-empty code and message (OpenClaw's client drops the frame otherwise); a close code
//   is 1002 or 1008; after a successful connect the phase is open and the scopes are among the
//   operator scopes; a params refusal names the method ("invalid sessions.patch params: ...");
// - every error serializes (to_json) with its code and message.
#include <boost/json.hpp>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gateway/connection_state.hpp"
#include "gateway/http_request.hpp"
#include "gateway/param_check.hpp"

using namespace sessionrt::gateway;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "gateway_frames_fuzz: %s\n", what);
  std::abort();
}

void check_error(const frame_error& e) {
  if (e.code.empty() || e.message.empty()) fail("an error without code or message");
  const auto o = e.to_json();
  if (!o.contains("code") || !o.contains("message")) fail("an error's JSON lacks code or message");
}

void fuzz_http(std::string_view in, std::size_t piece) {
  http_request r;
  auto before = r.current();
  std::size_t pos = 0;
  while (pos < in.size()) {
    const std::size_t n = std::min(piece, in.size() - pos);
    std::size_t used = 0;
    const auto st = r.feed(in.data() + pos, n, used);
    if (used > n) fail("http_request used more bytes than it was given");
    if (before != http_request::state::partial && st != before) fail("http_request left a final state");
    before = st;
    if (st != http_request::state::partial) break;
    pos += n;
  }
  if (r.current() == http_request::state::complete || r.current() == http_request::state::upgrade)
    if (r.method().empty()) fail("a complete request without a method");
  for (const auto& [name, value] : r.headers())
    for (char ch : name)
      if (std::isupper(static_cast<unsigned char>(ch))) fail("a header name not lower-cased");
  if (r.current() == http_request::state::error && r.error().empty()) fail("an HTTP error without a description");
}

void fuzz_frames(std::string_view in) {
  connection_state st;
  std::size_t pos = 0;
  while (pos <= in.size()) {
    const auto nl = in.find('\n', pos);
    const auto frame = in.substr(pos, (nl == std::string_view::npos ? in.size() : nl) - pos);
    pos = nl == std::string_view::npos ? in.size() + 1 : nl + 1;
    if (st.current() == connection_state::phase::closed) break;
    const auto f = st.on_text(frame);
    switch (f.what) {
      case inbound_frame::kind::close:
        if (f.close.code != close_code::policy && f.close.code != close_code::protocol_error) fail("a close code not 1002/1008");
        if (f.respond_first) check_error(f.error);
        st.mark_closed();
        continue;
      case inbound_frame::kind::error: check_error(f.error); continue;
      case inbound_frame::kind::request: break;
    }
    if (f.id.empty() || f.method.empty()) fail("a request without id or method");
    if (f.method == "connect") {
      if (st.current() != connection_state::phase::awaiting_connect) fail("connect dispatched after the handshake");
      const auto v = st.check_connect(f.params, "tok");
      if (!v.ok) {
        check_error(v.error);
        if (v.close.code != close_code::policy && v.close.code != close_code::protocol_error) fail("a refused connect's close code");
        st.mark_closed();
        continue;
      }
      if (st.current() != connection_state::phase::open) fail("a connect accepted without opening");
      for (const auto& s : st.scopes())
        if (s.rfind("operator.", 0) != 0) fail("a scope granted beyond operator.*");
      continue;
    }
    if (st.current() != connection_state::phase::open) fail("a method dispatched before connect");
    if (!f.params.is_object()) continue;
    const auto e = check_params("sessions.patch", f.params.get_object(),
                                {{"key", ptype::nonempty_string, true, 512},
                                 {"label", ptype::nullable_string, false, 64},
                                 {"model", ptype::nullable_string},
                                 {"limit", ptype::positive_integer},
                                 {"deliver", ptype::boolean},
                                 {"attachments", ptype::array}},
                                true);
    if (e) {
      check_error(*e);
      if (e->message.rfind("invalid sessions.patch params: ", 0) != 0) fail("a params refusal that does not name the method");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) fuzz_frames(in);
  else fuzz_http(in, 1 + (data[0] >> 1));  // reads of 1 to 128 bytes
  return 0;
}
