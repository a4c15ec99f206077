// Fuzzes what a provider's response body goes through: the SSE parser fed in pieces (the
// first input byte picks the piece size), each of the four wire formats' stream decoders, the
// assistant builder (partial tool-call JSON included), and the error-text reader of a non-2xx
// body. Whatever the bytes, nothing may crash, and the message finish() builds must be an
// assistant message with a content array, a known stopReason and whole usage numbers; an error
// never throws across the API. Any violation aborts.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runtime/providers/assistant_builder.hpp"
#include "runtime/providers/sse_parser.hpp"
#include "runtime/providers/wire_format.hpp"

using namespace sessionrt;
using namespace sessionrt::providers;

namespace {

void check_message(const boost::json::object& m) {
  if (m.at("role") != "assistant" || !m.at("content").is_array()) std::abort();
  const auto& stop = m.at("stopReason").as_string();
  if (stop != "stop" && stop != "length" && stop != "toolUse" && stop != "error" && stop != "aborted") std::abort();
  const auto& usage = m.at("usage").as_object();
  for (const char* k : {"input", "output", "cacheRead", "cacheWrite", "totalTokens"})
    if (!usage.at(k).is_int64() && !usage.at(k).is_uint64()) std::abort();
  for (const auto& b : m.at("content").as_array()) {
    const auto& block = b.as_object();
    if (block.at("type") == "toolCall" && !block.at("arguments").is_object()) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  actors::provider_config provider;
  provider.id = "fuzz";
  actors::provider_model model;
  model.id = "m";
  model.cost = {1, 2, 0.5, 0.25};
  const boost::json::array messages{boost::json::object{{"role", "user"}, {"content", "hi"}}};
  for (const char* api : {"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"}) {
    const wire_format* format = find_wire_format(api);
    if (!format) std::abort();
    provider_call call;
    call.provider = &provider;
    call.model = &model;
    call.api = api;
    call.messages = &messages;
    assistant_builder builder(api, provider.id, model.id, model.cost);
    auto decoder = format->decoder(call, builder);
    sse_parser parser;
    for (std::size_t at = 0; at < body.size(); at += piece)
      parser.feed(body.substr(at, piece), [&](sse_event&& e) { decoder->on_event(e); });
    parser.finish([&](sse_event&& e) { decoder->on_event(e); });
    (void)decoder->ended();
    check_message(builder.finish(0));
    (void)format->error_text(400, body);
  }
  return 0;
}
