// wire_format: the table of formats by api name, and the helpers the formats share for URLs
// and error bodies (see the header).
#include "runtime/providers/wire_format.hpp"

#include <array>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/providers/wire_common.hpp"

namespace sessionrt::providers {

namespace {

using format_getter = const wire_format& (*)();

constexpr std::array kFormats{
    &openai_completions_wire,
    &anthropic_messages_wire,
    &openai_responses_wire,
    &google_generative_ai_wire,
};

}  // namespace

const wire_format* find_wire_format(std::string_view api) {
  for (format_getter get : kFormats) {
    const wire_format& f = get();
    if (f.api == api) return &f;
  }
  return nullptr;
}

std::string known_wire_formats() {
  std::string out;
  for (format_getter get : kFormats) {
    if (!out.empty()) out += ", ";
    out += get().api;
  }
  return out;
}

// The openai SDK's APIError message for an HTTP error (pi-ai's errorMessage then): the body's
// `error` member is the error; its message (a non-string one as JSON), else the error as JSON.
// A body that is not JSON is the message itself; no message at all reads
// "<status> status code (no body)" (which pi-ai's overflow table matches for 400 / 413).
std::string json_error_text(long status, std::string_view body) {
  constexpr std::size_t kMaxBody = 1024;
  const std::string prefix = std::to_string(status) + " ";
  auto parsed = json::parse(body);
  if (!parsed) {
    if (body.empty()) return prefix + "status code (no body)";
    return prefix + wire::cut_utf8(body, kMaxBody);
  }
  const boost::json::value* error = nullptr;
  if (const auto* o = parsed->if_object()) error = json::find(*o, "error");
  if (!wire::truthy(error)) return prefix + "status code (no body)";
  if (const auto* e = error->if_object()) {
    const auto* message = json::find(*e, "message");
    if (wire::truthy(message)) {
      if (const auto* s = message->if_string()) return prefix + std::string(*s);
      return prefix + wire::cut_utf8(json::to_compact(*message), kMaxBody);
    }
  }
  return prefix + wire::cut_utf8(json::to_compact(*error), kMaxBody);
}

std::string base_url_or(const actors::provider_config& p, std::string_view fallback) {
  std::string_view url = p.base_url;
  while (!url.empty() && url.back() == '/') url.remove_suffix(1);
  return std::string(url.empty() ? fallback : url);
}

}  // namespace sessionrt::providers
