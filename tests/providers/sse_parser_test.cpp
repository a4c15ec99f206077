// sse_parser: WHATWG framing over bytes split anywhere — line ends (LF, CRLF, CR), event names,
// multi-line data, comments, ids, the unterminated last event, and every way a chunk boundary
// can fall (mid-line, between CR and LF, inside a UTF-8 character).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/providers/sse_parser.hpp"
#include "tests/providers/wire_test_support.hpp"

using sessionrt::providers::sse_event;
using sessionrt::providers::sse_parser;
using sessionrt::providers::wire_test::with_line_ends;

namespace {

// A parser and the events it has dispatched so far.
class collecting_parser {
 public:
  void feed(std::string_view bytes) { parser_.feed(bytes, sink()); }
  void finish() { parser_.finish(sink()); }
  std::size_t buffered() const { return parser_.buffered(); }
  const std::vector<sse_event>& events() const { return events_; }
  std::vector<sse_event> take() { return std::move(events_); }

 private:
  sse_parser::sink sink() {
    return [this](sse_event&& e) { events_.push_back(std::move(e)); };
  }
  sse_parser parser_;
  std::vector<sse_event> events_;
};

std::vector<sse_event> parse_chunks(const std::vector<std::string>& chunks, bool finish = true) {
  collecting_parser p;
  for (const auto& c : chunks) p.feed(c);
  if (finish) p.finish();
  return p.take();
}

std::vector<sse_event> parse_whole(const std::string& text) { return parse_chunks({text}); }

std::vector<sse_event> parse_bytewise(const std::string& text) {
  std::vector<std::string> chunks;
  for (char c : text) chunks.emplace_back(1, c);
  return parse_chunks(chunks);
}

bool same(const std::vector<sse_event>& a, const std::vector<sse_event>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].event != b[i].event || a[i].data != b[i].data || a[i].id != b[i].id) return false;
  return true;
}

// An Anthropic-shaped stream with a ping, a comment, multi-line data and non-ASCII text.
const std::string kStream =
    "event: message_start\n"
    "data: {\"type\":\"message_start\"}\n"
    "\n"
    ": keep-alive comment\n"
    "event: ping\n"
    "data: {\"type\": \"ping\"}\n"
    "\n"
    "event: content_block_delta\n"
    "id: 7\n"
    "data: {\"text\":\"h\xC3\xA9llo \xF0\x9F\x91\x8B\"}\n"
    "\n"
    "data: first\n"
    "data:second\n"
    "data\n"
    "\n";

}  // namespace

TEST_CASE("sse: events, names, ids, comments and multi-line data", "[sse]") {
  const auto events = parse_whole(kStream);
  REQUIRE(events.size() == 4);
  CHECK(events[0].event == "message_start");
  CHECK(events[0].data == "{\"type\":\"message_start\"}");
  CHECK(events[1].event == "ping");
  CHECK(events[1].data == "{\"type\": \"ping\"}");  // only the one space after the colon goes
  CHECK(events[2].event == "content_block_delta");
  CHECK(events[2].id == "7");
  CHECK(events[2].data == "{\"text\":\"h\xC3\xA9llo \xF0\x9F\x91\x8B\"}");
  // No `event:` line: the name is "" (not kept from the previous event); data lines join
  // with "\n"; a `data` line without colon adds an empty line; the id persists.
  CHECK(events[3].event.empty());
  CHECK(events[3].data == "first\nsecond\n");
  CHECK(events[3].id == "7");
}

TEST_CASE("sse: LF, CRLF and CR line ends frame the same events", "[sse]") {
  const std::string crlf = with_line_ends(kStream, "\r\n"), cr = with_line_ends(kStream, "\r");
  const auto lf_events = parse_whole(kStream);
  REQUIRE(lf_events.size() == 4);
  CHECK(same(parse_whole(crlf), lf_events));
  CHECK(same(parse_whole(cr), lf_events));
  // Mixed in one stream.
  const auto mixed = parse_whole("data: a\r\n\rdata: b\n\r\ndata: c\r\r");
  REQUIRE(mixed.size() == 3);
  CHECK(mixed[0].data == "a");
  CHECK(mixed[1].data == "b");
  CHECK(mixed[2].data == "c");
}

TEST_CASE("sse: a chunk boundary anywhere (mid-line, mid-CRLF, mid-UTF-8) changes nothing", "[sse]") {
  const std::string crlf = with_line_ends(kStream, "\r\n");
  for (const std::string* text : std::vector<const std::string*>{&kStream, &crlf}) {
    const auto whole = parse_whole(*text);
    REQUIRE(whole.size() == 4);
    CHECK(same(parse_bytewise(*text), whole));
    for (std::size_t cut = 0; cut <= text->size(); ++cut) {
      for (std::size_t cut2 = cut; cut2 <= text->size(); cut2 += 7) {
        const auto split = parse_chunks({text->substr(0, cut), text->substr(cut, cut2 - cut), text->substr(cut2)});
        INFO("cuts at " << cut << ", " << cut2);
        REQUIRE(same(split, whole));
      }
    }
  }
  // The streamed greeting comes out whole even when each byte is its own chunk.
  const auto bytewise = parse_bytewise("data: h\xC3\xA9llo \xF0\x9F\x91\x8B\r\n\r\n");
  REQUIRE(bytewise.size() == 1);
  CHECK(bytewise[0].data == "h\xC3\xA9llo \xF0\x9F\x91\x8B");
}

TEST_CASE("sse: a CR at the end of a chunk and an LF starting the next are one line end", "[sse]") {
  collecting_parser p;
  const std::vector<sse_event>& out = p.events();
  p.feed("data: x\r");
  CHECK(out.empty());
  p.feed("\n\r");  // LF completes the CRLF; CR is the blank line
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "x");
  p.feed("\ndata: y\n\n");  // this LF ends that blank CR line's CRLF, not another line
  REQUIRE(out.size() == 2);
  CHECK(out[1].data == "y");
}

TEST_CASE("sse: the last event without a trailing blank line is dispatched by finish()", "[sse]") {
  collecting_parser p;
  const std::vector<sse_event>& out = p.events();
  p.feed("event: message_stop\ndata: {\"type\":\"message_stop\"}");
  CHECK(out.empty());
  CHECK(p.buffered() == std::string("data: {\"type\":\"message_stop\"}").size());
  p.finish();
  REQUIRE(out.size() == 1);
  CHECK(out[0].event == "message_stop");
  CHECK(out[0].data == "{\"type\":\"message_stop\"}");
  CHECK(p.buffered() == 0);

  // Terminated data line, no blank line.
  const auto events = parse_whole("data: [DONE]\n");
  REQUIRE(events.size() == 1);
  CHECK(events[0].data == "[DONE]");
  // Without finish() nothing is dispatched.
  CHECK(parse_chunks({"data: [DONE]\n"}, false).empty());
}

TEST_CASE("sse: events without data, comments and unknown fields dispatch nothing", "[sse]") {
  CHECK(parse_whole(": comment only\n\n").empty());
  CHECK(parse_whole("event: ping\n\n").empty());
  CHECK(parse_whole("retry: 1000\nfoo: bar\n\n").empty());
  CHECK(parse_whole("\n\n\n").empty());
  // An empty data line is still data; data with a colon inside keeps it (only the first colon
  // splits); leading spaces beyond the first are kept.
  const std::pair<std::string, std::string> one_event[] = {
      {"data:\n\n", ""}, {"data: a: b\n\n", "a: b"}, {"data:   x\n\n", "  x"}};
  for (const auto& [text, data] : one_event) {
    const auto events = parse_whole(text);
    INFO(text);
    REQUIRE(events.size() == 1);
    CHECK(events[0].data == data);
  }
}

TEST_CASE("sse: buffered() counts the unfinished line only", "[sse]") {
  collecting_parser p;
  const std::vector<sse_event>& out = p.events();
  p.feed("data: abc\n");
  CHECK(p.buffered() == 0);
  p.feed("data: 12345");
  CHECK(p.buffered() == 11);
  p.feed("\n\n");
  CHECK(p.buffered() == 0);
  REQUIRE(out.size() == 1);
  CHECK(out[0].data == "abc\n12345");
}
