// wire_format: one provider API's request body and stream, in one file each
// (wire_openai_completions.cpp, wire_openai_responses.cpp, wire_anthropic_messages.cpp,
// wire_google_generative_ai.cpp), all behind this table. Pure conversions: no I/O, no clock.
//
//   build(call)        the HTTP request for one streamed call: URL from the provider's baseUrl
//                      (or the API's public endpoint), auth and extra headers, and the body made
//                      from the system prompt, the pi-shaped context messages (user / assistant /
//                      toolResult, with text, image, thinking and toolCall blocks, as
//                      storage/context_builder gives them) and the tools. What the API would
//                      refuse (see ../shared/reference/provider-apis.md) is mended here the way
//                      pi-ai mends it (e.g. Anthropic: consecutive tool results merged into one
//                      user message; empty text blocks dropped; tool ids sanitized).
//   decoder(call, b)   a decoder that reads the response's SSE events into the builder.
//   error_text(s, b)   the errorMessage pi-ai stores for a non-2xx response: its SDK's
//                      APIError text, "<status> <the provider's sentence>" (openai SDK: the
//                      body's error.message; Anthropic SDK: the body's message, else the whole
//                      body as JSON), "<status> <body>" for a body that is not JSON (cut to
//                      1 KB), "<status> status code (no body)" for none (a text pi-ai's
//                      overflow table matches for 400 / 413).
//   A decoder's ended() is also true once an error event ended the stream (the builder then
//   holds the provider's error); a decoder ignores what follows an error event.
#pragma once
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/session/model_catalog_settings.hpp"
#include "messages/status.hpp"
#include "runtime/providers/assistant_builder.hpp"
#include "runtime/providers/http_loop.hpp"
#include "runtime/providers/sse_parser.hpp"

namespace sessionrt::providers {

// A tool the model may call: JSON schema parameters (an object schema).
struct tool_spec {
  std::string name;
  std::string description;
  boost::json::object parameters;
};

struct provider_call {
  const actors::provider_config* provider = nullptr;  // never null
  const actors::provider_model* model = nullptr;      // never null
  std::string api;                                     // resolved: model.api, else provider.api
  std::string system_prompt;
  const boost::json::array* messages = nullptr;       // never null
  const std::vector<tool_spec>* tools = nullptr;      // null or empty: no tools sent
  std::int64_t max_tokens = 0;                         // 0 = the model's maxTokens (0 there too: none sent)
};

class stream_decoder {
 public:
  virtual ~stream_decoder() = default;
  virtual void on_event(const sse_event& event) = 0;
  // Whether the API's end-of-stream event arrived ([DONE], message_stop, response.completed;
  // Google: a candidate with finishReason). A body that ends before it is an error.
  virtual bool ended() const = 0;
};

struct wire_format {
  std::string_view api;
  result<http_request> (*build)(const provider_call& call);
  std::unique_ptr<stream_decoder> (*decoder)(const provider_call& call, assistant_builder& out);
  std::string (*error_text)(long status, std::string_view body);
};

// The format for an api name, or nullptr ("openai-completions", "openai-responses",
// "anthropic-messages", "google-generative-ai").
const wire_format* find_wire_format(std::string_view api);
// Every api name find_wire_format knows, for error messages.
std::string known_wire_formats();

// Shared by the formats: the openai SDK's text for an HTTP error, "<status> <error.message>"
// from a JSON error body (the error as JSON when it has no message), else "<status> <body>"
// with the body cut to 1 KB, or "<status> status code (no body)".
std::string json_error_text(long status, std::string_view body);
// baseUrl without trailing '/', or `fallback` when the provider gives none.
std::string base_url_or(const actors::provider_config& p, std::string_view fallback);

}  // namespace sessionrt::providers

namespace sessionrt::providers {
// The four formats (each defined in its own wire_*.cpp; find_wire_format's table in
// wire_format.cpp lists them).
const wire_format& openai_completions_wire();
const wire_format& openai_responses_wire();
const wire_format& anthropic_messages_wire();
const wire_format& google_generative_ai_wire();
}  // namespace sessionrt::providers
