// wire_test_support: what the wire-format tests (wire_*_test.cpp) share: a provider + model +
// context for one format and the call over them, the request the format builds from it, an SSE
// body fed through a real sse_parser in pieces (cut wherever the test says: mid-line, between CR
// and LF, inside a UTF-8 character) into the format's decoder, and pi-ai's printed message made
// comparable with ours.
//
// Header-only. The namespace is not `testing`: inside sessionrt::providers that name would hide
// sessionrt::testing (loopback_server).
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/providers/assistant_builder.hpp"
#include "runtime/providers/sse_parser.hpp"
#include "runtime/providers/wire_format.hpp"

namespace sessionrt::providers::wire_test {

// ---- text -----------------------------------------------------------------------------------

// JSON text parsed; the test stops when it is not JSON.
inline boost::json::value parse_json(std::string_view text) {
  auto r = sessionrt::json::parse(text);
  REQUIRE(r.ok());
  return std::move(r).value();
}

inline std::string compact(const boost::json::value& v) { return sessionrt::json::to_compact(v); }

// The pieces one after the other (SSE bodies built from shared parts).
inline std::string concat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out += p;
  return out;
}

// `text` with every '\n' written as `eol` ("\r\n" or "\r").
inline std::string with_line_ends(std::string_view text, std::string_view eol) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += eol;
    } else {
      out += c;
    }
  }
  return out;
}

// One named SSE event: `event: <name>`, `data: <data>`, a blank line.
inline std::string sse_event_text(std::string_view name, std::string_view data) {
  return "event: " + std::string(name) + "\ndata: " + std::string(data) + "\n\n";
}

// ---- requests -------------------------------------------------------------------------------

// The first header of that exact name, or "<absent>".
inline std::string header_value(const http_request& r, std::string_view name) {
  for (const auto& [n, v] : r.headers)
    if (n == name) return v;
  return "<absent>";
}

// The format for an api, looked up as provider_runner looks it up; the test stops when the
// table lacks it.
inline const wire_format& wire_for(std::string_view api) {
  const wire_format* f = find_wire_format(api);
  REQUIRE(f != nullptr);
  return *f;
}

// A provider, a model and a context for one wire format, and the call over them.
struct wire_fixture {
  std::string api;
  actors::provider_config provider;
  actors::provider_model model;
  boost::json::array messages;
  std::vector<tool_spec> tools;
  std::string system_prompt;
  std::int64_t max_tokens = 0;
  std::int64_t timestamp = 0;  // the decoded message's (assistant_builder::finish)

  explicit wire_fixture(std::string_view api_name) : api(api_name) { provider.api = api; }

  const wire_format& wire() const { return wire_for(api); }
  provider_call call() const {
    provider_call c;
    c.provider = &provider;
    c.model = &model;
    c.api = api;
    c.system_prompt = system_prompt;
    c.messages = &messages;
    c.tools = &tools;
    c.max_tokens = max_tokens;
    return c;
  }
  void set_messages(std::string_view json) { messages = parse_json(json).as_array(); }
  // Tools from [{"name", "description", "parameters"}, ...].
  void set_tools(std::string_view json) {
    const boost::json::value list = parse_json(json);
    for (const auto& t : list.as_array()) {
      const auto& o = t.as_object();
      tools.push_back({std::string(o.at("name").as_string()), std::string(o.at("description").as_string()),
                       o.at("parameters").as_object()});
    }
  }
  // The request the format builds; the test stops when it fails.
  http_request request() const {
    auto req = wire().build(call());
    REQUIRE(req.ok());
    return std::move(req).value();
  }
  boost::json::object body() const { return parse_json(request().body).as_object(); }
};

// ---- streams --------------------------------------------------------------------------------

struct decoded {
  boost::json::object message;
  bool ended = false;
  std::string text;  // what the builder streamed to on_text, in order
};

// Feeds `body` through an sse_parser in pieces cut at the offsets `cuts` (ascending, none past
// the end) into the fixture's decoder, then finishes the parser and the message.
inline decoded decode(const wire_fixture& f, std::string_view body, std::vector<std::size_t> cuts = {}) {
  decoded out;
  const provider_call call = f.call();
  assistant_builder builder(call.api, f.provider.id, f.model.id, f.model.cost,
                            [&](std::string_view piece) { out.text += piece; });
  auto decoder = f.wire().decoder(call, builder);
  sse_parser parser;
  const sse_parser::sink sink = [&](sse_event&& e) { decoder->on_event(e); };
  std::size_t at = 0;
  cuts.push_back(body.size());
  for (std::size_t cut : cuts) {
    parser.feed(body.substr(at, cut - at), sink);
    at = cut;
  }
  parser.finish(sink);
  out.message = builder.finish(f.timestamp);
  out.ended = decoder->ended();
  return out;
}

// The offsets that cut `size` bytes into pieces of `chunk` bytes (1: byte by byte).
inline std::vector<std::size_t> cuts_every(std::size_t chunk, std::size_t size) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = chunk; at < size; at += chunk) cuts.push_back(at);
  return cuts;
}

inline decoded decode_in_pieces(const wire_fixture& f, std::string_view body, std::size_t chunk) {
  return decode(f, body, cuts_every(chunk, body.size()));
}

// A stream cut anywhere decodes as it does whole: `lf_body` and its CRLF twin, each cut at every
// `step`-th offset (and, with `gap` > 0, again `gap` bytes further), must give `expected` and
// end; then `lf_body` fed byte by byte.
inline void check_cut_anywhere(const wire_fixture& f, std::string_view lf_body, std::string_view expected,
                               std::size_t step, std::size_t gap = 0) {
  const std::string crlf = with_line_ends(lf_body, "\r\n");
  for (std::string_view body : {lf_body, std::string_view(crlf)}) {
    for (std::size_t cut = 0; cut <= body.size(); cut += step) {
      std::vector<std::size_t> cuts{cut};
      if (gap > 0) cuts.push_back(std::min(body.size(), cut + gap));
      const decoded d = decode(f, body, cuts);
      INFO("cut at " << cut);
      REQUIRE(compact(d.message) == expected);
      REQUIRE(d.ended);
    }
  }
  CHECK(compact(decode_in_pieces(f, lf_body, 1).message) == expected);
}

// How a decoded stream ended: ended() true, the stop reason, and the errorMessage (none when
// `error` is null).
inline void check_stop(const decoded& d, const char* stop, const char* error) {
  CHECK(d.ended);
  CHECK(d.message.at("stopReason") == stop);
  if (error) {
    CHECK(d.message.at("errorMessage") == error);
  } else {
    CHECK_FALSE(d.message.contains("errorMessage"));
  }
}

using message_view = std::function<boost::json::object(boost::json::object)>;

// One stream in each of `framings` (the same events, e.g. CRLF and LF) cut into pieces of many
// sizes must decode to the message the first framing gives whole (compared as `view` shows
// them, when given), with the same ended() and streamed text. Returns that whole decode.
inline decoded decode_split(const wire_fixture& f, std::initializer_list<std::string_view> framings,
                            const message_view& view = {}) {
  auto shown = [&](const boost::json::object& m) { return compact(view ? view(m) : m); };
  decoded whole = decode(f, *framings.begin());
  const std::string whole_json = shown(whole.message);
  for (std::size_t chunk : {1u, 2u, 3u, 7u, 64u, 1000u}) {
    std::size_t framing = 0;
    for (std::string_view body : framings) {
      INFO("chunk size " << chunk << ", framing " << framing++);
      const decoded part = decode_in_pieces(f, body, chunk);
      CHECK(shown(part.message) == whole_json);
      CHECK(part.ended == whole.ended);
      CHECK(part.text == whole.text);
    }
  }
  return whole;
}

// pi-ai's printed message as ours is compared with it: its timestamp (pi-ai's clock) replaced
// by `timestamp`, placed where pi-ai's object has it (right after stopReason), and the block
// keys in `dropped` (signatures assistant_builder keeps none of) taken out.
inline boost::json::object pi_ai_message(std::string_view pi_ai, std::int64_t timestamp,
                                         std::initializer_list<std::string_view> dropped) {
  boost::json::object in = parse_json(pi_ai).as_object();
  boost::json::object m;
  for (auto& [k, v] : in) {
    if (k == "timestamp") continue;
    m[k] = v;
    if (k == "stopReason") m["timestamp"] = timestamp;
  }
  if (auto* content = m.if_contains("content"))
    for (auto& b : content->as_array())
      for (std::string_view key : dropped) b.as_object().erase(key);
  return m;
}

// ---- the table ------------------------------------------------------------------------------

// The format is find_wire_format's entry for its api and named among the known ones.
inline void check_listed(const wire_format& w, std::string_view api) {
  CHECK(w.api == api);
  CHECK(find_wire_format(api) == &w);
  CHECK(known_wire_formats().find(api) != std::string::npos);
}

}  // namespace sessionrt::providers::wire_test
