// sse_parser: the WHATWG event-stream interpretation (html.spec.whatwg.org, "Interpreting an
// event stream") over bytes that may arrive split anywhere. Lines split only at the ASCII bytes
// CR and LF, so a multi-byte UTF-8 character cut between two chunks is simply carried over in
// the line buffer and comes out whole.
// Differences from the spec, each on purpose: the event name is "" when none was given (not
// "message"), an unterminated last event is dispatched by finish() (as pi-ai's Anthropic reader
// does; the spec drops it), `retry:` is ignored (reconnection is not ours) and a leading BOM is
// not stripped (no provider sends one, and the header leaves no state for it).
#include "runtime/providers/sse_parser.hpp"

#include <utility>

namespace sessionrt::providers {

void sse_parser::feed(std::string_view bytes, const sink& out) {
  std::size_t i = 0;
  // A CR ended the previous chunk: an LF starting this one belongs to that CRLF.
  if (after_cr_ && !bytes.empty()) {
    after_cr_ = false;
    if (bytes[0] == '\n') i = 1;
  }
  while (i < bytes.size()) {
    const std::size_t end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      line_.append(bytes.substr(i));
      return;
    }
    std::string_view piece = bytes.substr(i, end - i);
    if (line_.empty()) {
      line(piece, out);
    } else {
      line_.append(piece);
      std::string whole = std::move(line_);
      line_.clear();
      line(whole, out);
    }
    i = end + 1;
    if (bytes[end] == '\r') {
      if (i == bytes.size()) after_cr_ = true;
      else if (bytes[i] == '\n') ++i;
    }
  }
}

void sse_parser::finish(const sink& out) {
  after_cr_ = false;
  if (!line_.empty()) {
    std::string last = std::move(line_);
    line_.clear();
    line(last, out);
  }
  line("", out);  // the blank line the body did not send
}

void sse_parser::line(std::string_view text, const sink& out) {
  if (text.empty()) {
    if (has_data_) {
      // The id persists across events (the spec's "last event ID"); name and data do not.
      sse_event ev{std::move(pending_.event), std::move(pending_.data), pending_.id};
      out(std::move(ev));
    }
    pending_.event.clear();
    pending_.data.clear();
    has_data_ = false;
    return;
  }
  if (text.front() == ':') return;  // comment (keep-alives such as ": OPENROUTER PROCESSING")
  const std::size_t colon = text.find(':');
  std::string_view field = text.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "event") {
    pending_.event.assign(value);
  } else if (field == "data") {
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) pending_.id.assign(value);
  }
  // "retry" and unknown fields are ignored, as the spec says.
}

}  // namespace sessionrt::providers
