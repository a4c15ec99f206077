// Google Generative AI (`google-generative-ai`): POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse,
// the key in x-goog-api-key; each SSE data is one GenerateContentResponse chunk. The reference
// is pi-ai 0.73.1 providers/google.js + google-shared.js (convertMessages, convertTools,
// mapStopReason) with transform-messages.js, called as pi's agent calls streamSimple with the
// thinking level off, and the REST body @google/genai 1.40 makes of those parameters
// (contents, systemInstruction as a user Content, tools, generationConfig).
//
// Deliberate differences from pi-ai (each also noted where it happens):
//  1. A generated tool-call id is "<name>_<responseId>_<n>" (or "<name>_<process salt>_<n>"
//     when the chunk has no responseId) instead of "<name>_<Date.now()>_<n>": wire formats
//     read no clock. Unique in a transcript all the same.
//  2. Text blocks get no textSignature and tool calls no thoughtSignature: assistant_builder
//     keeps only thinking signatures. So that Gemini 3 does not refuse a tool loop over our own
//     turns ("Function call is missing a thought_signature"), a functionCall of this same model
//     with no valid signature is sent with Google's documented placeholder
//     "skip_thought_signature_validator" (Gemini 3 models only; pi-ai keeps the real signature).
//  3. A chunk {"error":{...}} ends the stream as an error with error.message (the @google/genai
//     client only recognises a raw, unframed error chunk, as "got status: ...").
//  4. A finishReason that maps to "error" gives errorMessage "An unknown error occurred
//     (finishReason <reason>)" (pi-ai: "An unknown error occurred").
//  5. usage.totalTokens is input+output+cacheRead+cacheWrite (pi-ai copies totalTokenCount,
//     which also counts toolUsePromptTokenCount).
//  6. error_text is "<status> <error.message>" (json_error_text, as the other formats), also for
//     the array form [{"error":{...}}] some Google endpoints answer with; pi-ai's errorMessage
//     is the whole body as JSON ({"error":{"code":400,"message":...}}).
//  7. Text is taken as UTF-8; lone surrogates cannot occur in it (pi-ai's sanitizeSurrogates).
//  8. No key: no x-goog-api-key header (pi-ai's client refuses to start).
#include <atomic>
#include <boost/json.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <charconv>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "messages/js_regex.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/providers/wire_common.hpp"
#include "runtime/providers/wire_format.hpp"

namespace sessionrt::providers {
namespace {

namespace bj = boost::json;
using sessionrt::json::get_array;
using sessionrt::json::get_bool;
using sessionrt::json::get_object;
using sessionrt::json::get_string;

constexpr std::string_view kDefaultBase = "https://generativelanguage.googleapis.com/v1beta";
constexpr std::string_view kSkipSignature = "skip_thought_signature_validator";

// ---- request ------------------------------------------------------------------------------

// Models behind Google's API that need the tool-call ids in functionCall / functionResponse.
bool requires_tool_call_id(std::string_view model_id) {
  return model_id.rfind("claude-", 0) == 0 || model_id.rfind("gpt-oss-", 0) == 0;
}

// pi-ai's model-id tests are JavaScript regexes over the lower-cased id: the "i" flag here.
std::optional<int> gemini_major_version(std::string_view model_id) {
  static const js_regex re = js_regex::literal("^gemini(?:-live)?-(\\d+)", "i");
  const auto m = re.find(model_id);
  if (!m) return std::nullopt;
  const std::string_view digits = *m->group(model_id, 1);
  int major = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), major);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;  // more digits than an int holds
  return major;
}

bool supports_multimodal_function_response(std::string_view model_id) {
  auto major = gemini_major_version(model_id);
  return major ? *major >= 3 : true;
}

bool is_gemini3(std::string_view model_id) {
  auto major = gemini_major_version(model_id);
  return major && *major == 3;
}

// Thought signatures are base64 (TYPE_BYTES): a length that is a multiple of 4.
bool valid_thought_signature(std::string_view s) {
  if (s.empty() || s.size() % 4 != 0) return false;
  std::size_t i = 0;
  while (i < s.size() && s[i] != '=') {
    char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/')) return false;
    ++i;
  }
  if (i == 0) return false;
  const std::size_t pad = s.size() - i;
  if (pad > 2) return false;
  for (; i < s.size(); ++i)
    if (s[i] != '=') return false;
  return true;
}

bj::object inline_data(const bj::object& image) {
  return bj::object{{"inlineData", bj::object{{"mimeType", wire::str(image, "mimeType")}, {"data", wire::str(image, "data")}}}};
}

bj::array convert_contents(const provider_call& call) {
  const auto& provider = *call.provider;
  const auto& model = *call.model;
  const bool images = wire::model_accepts_images(model);
  const bool with_ids = requires_tool_call_id(model.id);
  auto normalize = [&](std::string_view id) { return with_ids ? wire::sanitize_id(id, 64) : std::string(id); };
  std::vector<bj::object> messages = wire::transform_messages(call, normalize);

  bj::array contents;
  for (const bj::object& msg : messages) {
    const std::string_view role = wire::str(msg, "role");
    if (role == "user") {
      const bj::value* content = msg.if_contains("content");
      if (content && content->is_string()) {
        contents.push_back(bj::object{{"role", "user"}, {"parts", bj::array{bj::object{{"text", content->get_string()}}}}});
      } else {
        bj::array parts;
        if (content && content->is_array()) {
          for (const auto& bv : content->get_array()) {
            const bj::object* b = bv.if_object();
            if (!b) continue;
            if (wire::str(*b, "type") == "text") {
              parts.push_back(bj::object{{"text", wire::str(*b, "text")}});
            } else {
              parts.push_back(inline_data(*b));
            }
          }
        }
        if (parts.empty()) continue;
        contents.push_back(bj::object{{"role", "user"}, {"parts", std::move(parts)}});
      }
    } else if (role == "assistant") {
      // Only this provider's same model keeps thinking and signatures (pi-ai leaves api out here).
      const bool same = wire::str(msg, "provider") == provider.id && wire::str(msg, "model") == model.id;
      auto signature = [&](const bj::object& b, std::string_view key) -> std::string {
        const std::string_view s = wire::str(b, key);
        return same && valid_thought_signature(s) ? std::string(s) : std::string();
      };
      bj::array parts;
      if (const bj::array* content = get_array(msg, "content")) {
        for (const auto& bv : *content) {
          const bj::object* b = bv.if_object();
          if (!b) continue;
          const std::string_view type = wire::str(*b, "type");
          if (type == "text") {
            const std::string_view text = wire::str(*b, "text");
            if (is_js_blank(text)) continue;
            bj::object part{{"text", text}};
            if (auto sig = signature(*b, "textSignature"); !sig.empty()) part["thoughtSignature"] = sig;
            parts.push_back(std::move(part));
          } else if (type == "thinking") {
            const std::string_view thinking = wire::str(*b, "thinking");
            if (is_js_blank(thinking)) continue;
            if (same) {
              bj::object part{{"thought", true}, {"text", thinking}};
              if (auto sig = signature(*b, "thinkingSignature"); !sig.empty()) part["thoughtSignature"] = sig;
              parts.push_back(std::move(part));
            } else {
              parts.push_back(bj::object{{"text", thinking}});
            }
          } else if (type == "toolCall") {
            bj::object fc{{"name", wire::str(*b, "name")}};
            const bj::value* args = b->if_contains("arguments");
            fc["args"] = args && !args->is_null() ? *args : bj::value(bj::object{});
            if (with_ids) fc["id"] = wire::str(*b, "id");
            bj::object part{{"functionCall", std::move(fc)}};
            std::string sig = signature(*b, "thoughtSignature");
            // Difference 2: our own turns carry no signature (assistant_builder keeps none);
            // Gemini 3 refuses a function call of its own without one.
            if (sig.empty() && same && is_gemini3(model.id)) sig = kSkipSignature;
            if (!sig.empty()) part["thoughtSignature"] = sig;
            parts.push_back(std::move(part));
          }
        }
      }
      if (parts.empty()) continue;
      contents.push_back(bj::object{{"role", "model"}, {"parts", std::move(parts)}});
    } else if (role == "toolResult") {
      std::string text;
      bool first = true;
      bj::array image_parts;
      if (const bj::array* content = get_array(msg, "content")) {
        for (const auto& bv : *content) {
          const bj::object* b = bv.if_object();
          if (!b) continue;
          const std::string_view type = wire::str(*b, "type");
          if (type == "text") {
            if (!first) text += '\n';
            text += wire::str(*b, "text");
            first = false;
          } else if (type == "image" && images) {
            image_parts.push_back(inline_data(*b));
          }
        }
      }
      const bool has_images = !image_parts.empty();
      const bool multimodal = supports_multimodal_function_response(model.id);
      const std::string value = !text.empty() ? text : has_images ? "(see attached image)" : "";
      bj::object fr{{"name", wire::str(msg, "toolName")}};
      fr["response"] = get_bool(msg, "isError").value_or(false) ? bj::object{{"error", value}} : bj::object{{"output", value}};
      if (has_images && multimodal) fr["parts"] = image_parts;
      if (with_ids) fr["id"] = wire::str(msg, "toolCallId");
      bj::object part{{"functionResponse", std::move(fr)}};
      // All function responses of a turn go in one user content.
      bool merged = false;
      if (!contents.empty()) {
        bj::object& last = contents.back().as_object();
        if (wire::str(last, "role") == "user") {
          if (bj::value* pv = last.if_contains("parts"); pv && pv->is_array()) {
            bool has_response = false;
            for (const auto& p : pv->get_array())
              if (p.is_object() && p.get_object().contains("functionResponse")) has_response = true;
            if (has_response) {
              pv->get_array().push_back(std::move(part));
              merged = true;
            }
          }
        }
      }
      if (!merged) contents.push_back(bj::object{{"role", "user"}, {"parts", bj::array{std::move(part)}}});
      // Gemini before 3: the images follow in a user content of their own.
      if (has_images && !multimodal) {
        bj::array parts{bj::object{{"text", "Tool result image:"}}};
        for (auto& p : image_parts) parts.push_back(std::move(p));
        contents.push_back(bj::object{{"role", "user"}, {"parts", std::move(parts)}});
      }
    }
  }
  return contents;
}

bool is_gemma4(std::string_view id) {
  static const js_regex re = js_regex::literal("gemma-?4", "i");
  return re.search(id);
}
bool is_gemini3_pro(std::string_view id) {
  static const js_regex re = js_regex::literal("gemini-3(?:\\.\\d+)?-pro", "i");
  return re.search(id);
}
bool is_gemini3_flash(std::string_view id) {
  static const js_regex re = js_regex::literal("gemini-3(?:\\.\\d+)?-flash", "i");
  return re.search(id);
}

result<http_request> build(const provider_call& call) {
  const auto& provider = *call.provider;
  const auto& model = *call.model;
  bj::object body;
  body["contents"] = convert_contents(call);
  if (!call.system_prompt.empty())
    body["systemInstruction"] = bj::object{{"role", "user"}, {"parts", bj::array{bj::object{{"text", call.system_prompt}}}}};
  if (call.tools && !call.tools->empty()) {
    bj::array decls;
    for (const auto& t : *call.tools)
      decls.push_back(bj::object{{"name", t.name}, {"description", t.description}, {"parametersJsonSchema", t.parameters}});
    body["tools"] = bj::array{bj::object{{"functionDeclarations", std::move(decls)}}};
  }
  bj::object generation;
  const std::int64_t max_tokens = wire::requested_max_tokens(call);
  if (max_tokens > 0) generation["maxOutputTokens"] = max_tokens;
  // pi-ai with the thinking level off: thinking turned off, or as low as the model allows.
  if (model.reasoning) {
    if (is_gemini3_pro(model.id)) {
      generation["thinkingConfig"] = bj::object{{"thinkingLevel", "LOW"}};
    } else if (is_gemini3_flash(model.id) || is_gemma4(model.id)) {
      generation["thinkingConfig"] = bj::object{{"thinkingLevel", "MINIMAL"}};
    } else {
      generation["thinkingConfig"] = bj::object{{"thinkingBudget", 0}};
    }
  }
  body["generationConfig"] = std::move(generation);  // @google/genai sends {} when empty too

  http_request req;
  std::string model_path = model.id;
  if (model_path.rfind("models/", 0) != 0 && model_path.rfind("tunedModels/", 0) != 0) model_path = "models/" + model_path;
  req.url = base_url_or(provider, kDefaultBase) + "/" + model_path + ":streamGenerateContent?alt=sse";
  req.headers.emplace_back("Content-Type", "application/json");
  if (!provider.api_key.empty()) req.headers.emplace_back("x-goog-api-key", provider.api_key);
  wire::apply_provider_headers(req.headers, provider);  // the provider's win, as pi-ai's do
  req.body = sessionrt::json::to_compact(body);
  return req;
}

// ---- stream -------------------------------------------------------------------------------
std::string stop_reason_of(std::string_view finish_reason) {
  if (finish_reason == "STOP") return "stop";
  if (finish_reason == "MAX_TOKENS") return "length";
  return "error";
}

std::string process_salt() {
  static const std::string salt = [] {
    std::random_device rd;
    std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    std::string s;
    do {
      s.push_back("0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
      v /= 36;
    } while (v);
    return s;
  }();
  return salt;
}

std::atomic<std::uint64_t> g_tool_call_counter{0};

class google_decoder final : public stream_decoder {
 public:
  explicit google_decoder(assistant_builder& out) : out_(out) {}

  void on_event(const sse_event& event) override {
    if (done_) return;
    auto parsed = sessionrt::json::parse_object(event.data);
    if (!parsed.ok()) return;
    const bj::object& chunk = *parsed;
    // Difference 3: an error chunk inside the stream.
    if (const bj::object* error = get_object(chunk, "error")) {
      std::string message(wire::str(*error, "message"));
      if (message.empty()) message = sessionrt::json::to_compact(*error);
      out_.fail(std::move(message));
      done_ = ended_ = true;
      return;
    }
    if (response_id_.empty()) {
      if (auto id = get_string(chunk, "responseId"); id && !id->empty()) {
        response_id_ = std::string(*id);
        out_.set_response_id(response_id_);
      }
    }
    const bj::object* candidate = nullptr;
    if (const bj::array* candidates = get_array(chunk, "candidates"); candidates && !candidates->empty())
      candidate = candidates->front().if_object();
    if (candidate) {
      const bj::object* content = get_object(*candidate, "content");
      const bj::array* parts = content ? get_array(*content, "parts") : nullptr;
      if (parts)
        for (const auto& pv : *parts)
          if (const bj::object* part = pv.if_object()) on_part(*part);
      if (auto reason = get_string(*candidate, "finishReason"); reason && !reason->empty()) {
        ended_ = true;
        std::string stop = stop_reason_of(*reason);
        if (has_tool_calls_) {
          stop = "toolUse";
        }
        if (stop == "error") {
          // Difference 4: the finish reason is named.
          out_.fail("An unknown error occurred (finishReason " + std::string(*reason) + ")");
        } else {
          out_.set_stop_reason(stop);
        }
      }
    }
    if (const bj::object* usage = get_object(chunk, "usageMetadata")) {
      // Google counts cached tokens in promptTokenCount, and thinking apart from the answer.
      const std::int64_t cached = wire::count(*usage, "cachedContentTokenCount");
      wire::set_usage(out_, wire::count(*usage, "promptTokenCount") - cached,
                      wire::count(*usage, "candidatesTokenCount") + wire::count(*usage, "thoughtsTokenCount"), cached, 0);
    }
  }

  bool ended() const override { return ended_; }

 private:
  enum class kind { none, text, thinking };

  void on_part(const bj::object& part) {
    if (const bj::value* tv = part.if_contains("text"); tv && tv->is_string()) {
      const bool thinking = get_bool(part, "thought") == true;
      const kind want = thinking ? kind::thinking : kind::text;
      if (current_ != want) {
        block_ = thinking ? out_.open_thinking() : out_.open_text();
        current_ = want;
      }
      const std::string_view text = tv->get_string();
      if (thinking) {
        if (!text.empty()) out_.add_thinking(block_, text);
        // Some backends send the signature only on the first delta of a part: keep the last
        // non-empty one.
        if (auto sig = get_string(part, "thoughtSignature"); sig && !sig->empty())
          out_.set_thinking_signature(block_, std::string(*sig));
      } else if (!text.empty()) {
        out_.add_text(block_, text);
        // Difference 2: a text part's thoughtSignature (pi-ai's textSignature) is not kept.
      }
    }
    if (const bj::object* fc = get_object(part, "functionCall")) {
      current_ = kind::none;
      const std::string name(wire::str(*fc, "name"));
      std::string id(wire::str(*fc, "id"));
      if (id.empty() || ids_.count(id)) {
        // Difference 1: pi-ai's "<name>_<Date.now()>_<counter>" without the clock.
        id = name + "_" + (response_id_.empty() ? process_salt() : response_id_) + "_" +
             std::to_string(++g_tool_call_counter);
      }
      ids_.insert(id);
      const std::size_t b = out_.open_tool_call(id, name);
      const bj::object* args = get_object(*fc, "args");
      out_.set_tool_arguments(b, args ? *args : bj::object{});
      has_tool_calls_ = true;
    }
  }

  assistant_builder& out_;
  kind current_ = kind::none;
  std::size_t block_ = 0;
  std::set<std::string> ids_;
  std::string response_id_;
  bool has_tool_calls_ = false;
  bool ended_ = false, done_ = false;
};

std::unique_ptr<stream_decoder> make_decoder(const provider_call&, assistant_builder& out) {
  return std::make_unique<google_decoder>(out);
}

std::string error_text(long status, std::string_view body) {
  // Difference 6: [{"error":{...}}] is read as its first element.
  auto parsed = sessionrt::json::parse(body);
  if (parsed.ok() && parsed->is_array() && !parsed->get_array().empty() && parsed->get_array()[0].is_object()) {
    if (const bj::object* error = get_object(parsed->get_array()[0].get_object(), "error"))
      if (auto message = get_string(*error, "message"); message && !message->empty())
        return std::to_string(status) + " " + std::string(*message);
  }
  return json_error_text(status, body);
}

}  // namespace

const wire_format& google_generative_ai_wire() {
  static const wire_format format{"google-generative-ai", &build, &make_decoder, &error_text};
  return format;
}

}  // namespace sessionrt::providers
