// sse_parser: Server-Sent Events as the WHATWG spec frames them, fed in arbitrary byte chunks
// (a chunk may end mid-line, mid-CRLF or mid-UTF-8 character). Lines end in LF, CRLF or CR;
// `event:` names the event, each `data:` line is joined to the event's data with "\n", `id:`
// is kept, lines starting with ':' are comments; a blank line dispatches the event (an event
// with no data line is not dispatched, as in browsers). One leading space after the colon is
// dropped. A parser belongs to one stream; it is not thread-safe.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace sessionrt::providers {

struct sse_event {
  std::string event;  // "" when the stream named none (OpenAI's chat completions)
  std::string data;
  std::string id;
};

class sse_parser {
 public:
  using sink = std::function<void(sse_event&&)>;
  // Parses what `bytes` completes; each whole event goes to `out` in order.
  void feed(std::string_view bytes, const sink& out);
  // End of the body: an event not yet closed by a blank line is dispatched (servers that end
  // the body right after the last data line).
  void finish(const sink& out);
  // Bytes fed so far that were not yet parsed into a whole line (for idle / size limits).
  std::size_t buffered() const { return line_.size(); }

 private:
  void line(std::string_view text, const sink& out);
  std::string line_;
  bool after_cr_ = false;
  bool has_data_ = false;
  sse_event pending_;
};

}  // namespace sessionrt::providers
