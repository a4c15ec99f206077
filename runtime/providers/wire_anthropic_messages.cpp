// wire_anthropic_messages: Anthropic messages (`anthropic-messages`), as pi-ai 0.73.1's
// providers/anthropic.js speaks it through @anthropic-ai/sdk 0.91 with an API key:
//   request   POST {baseUrl|https://api.anthropic.com}/v1/messages, `x-api-key`,
//             `anthropic-version: 2023-06-01`, `anthropic-beta: interleaved-thinking-2025-05-14`
//             (not for the adaptive-thinking 4.6 / 4.7 models); body {model, messages,
//             max_tokens, stream:true, system?, tools?} with pi-ai's convertMessages, and the
//             short-retention prompt cache marks pi-ai adds by default (cache_control
//             ephemeral on the system prompt, the last tool and the last user block);
//   stream    named events; message_start / content_block_start / content_block_delta (text,
//             thinking, signature, input_json) / content_block_stop / message_delta /
//             message_stop are read, `ping` and unknown events skipped, `error` ends the call
//             with its data as errorMessage (pi-ai: `throw new Error(sse.data)`);
//   errors    the SDK's APIError text: "<status> " + the body's message, else the body as JSON.
//
// Deliberate differences from pi-ai:
//   - max_tokens when the model's maxTokens is unknown: min(4096, contextWindow / 4) as
//     @openclaw/ai resolveAnthropicMessagesMaxTokens does (pi-ai would send
//     (maxTokens / 3) | 0 = 0, which the API refuses).
//   - provider_call has no thinking level: the body is pi-ai's at thinking level "off"
//     (`thinking:{type:"disabled"}` for a reasoning model), never budget / adaptive thinking.
//   - API keys only: an OAuth token (sk-ant-oat…, Claude Code identity and tool names) is sent
//     as an ordinary x-api-key. No `temperature`, `metadata`, `tool_choice` (no options), no
//     PI_CACHE_RETENTION / long (1h) cache.
//   - The SDK's browser / stainless headers (anthropic-dangerous-direct-browser-access,
//     x-stainless-*) are not sent.
//   - A user content block that is neither text nor image is skipped (pi-ai sends it as an
//     image with undefined fields).
//   - A body that ends without message_stop is reported through ended() (the runner fails the
//     call; pi-ai's text is "Anthropic stream ended before message_stop"), also when no
//     message_start came (pi-ai then returns an empty successful message).
//   - An unparsable event fails with "Could not parse Anthropic SSE event <name>: <data>"
//     (pi-ai adds JSON.parse's text and the raw lines).
//   - A message that ends "stop" with tool calls in it is stored as "toolUse" (the builder's
//     rule; pi-ai keeps "stop" here, which end_turn after tool_use never produces in practice).
//   - Lone UTF-16 surrogates (sanitizeSurrogates) cannot occur: our strings are valid UTF-8.
#include <algorithm>
#include <boost/json.hpp>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "messages/json_access.hpp"
#include "messages/js_text.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/providers/wire_common.hpp"
#include "runtime/providers/wire_format.hpp"

namespace sessionrt::providers {

namespace {

namespace bj = boost::json;
using wire::str;

constexpr std::string_view kApi = "anthropic-messages";
constexpr std::string_view kDefaultBaseUrl = "https://api.anthropic.com";
constexpr std::int64_t kDefaultMaxTokens = 4096;

// pi-ai supportsAdaptiveThinking: these models think interleaved without the beta header.
bool adaptive_thinking(std::string_view id) {
  for (std::string_view m : {"opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6"})
    if (id.find(m) != std::string_view::npos) return true;
  return false;
}

std::int64_t max_tokens(const provider_call& call) {
  if (const std::int64_t requested = wire::requested_max_tokens(call); requested > 0) return requested;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(kDefaultMaxTokens, call.model->context_window / 4));
}

// pi-ai normalizeToolCallId: the API's ^[a-zA-Z0-9_-]+$, at most 64 characters.
std::string normalize_tool_call_id(std::string_view id) { return wire::sanitize_id(id, 64); }

bj::object cache_control() { return bj::object{{"type", "ephemeral"}}; }

bj::object image_block(const bj::object& image) {
  bj::object source;
  source["type"] = "base64";
  source["media_type"] = str(image, "mimeType");
  source["data"] = str(image, "data");
  return bj::object{{"type", "image"}, {"source", std::move(source)}};
}

// pi-ai convertContentBlocks (a tool result's content): text only -> one string joined by
// "\n"; with images -> blocks, led by a placeholder text when there is no text at all.
bj::value tool_result_content(const bj::object& msg) {
  const auto* content = wire::content_array(msg);
  bool has_images = false;
  if (content) {
    for (const auto& v : *content)
      if (const auto* b = v.if_object(); b && str(*b, "type") == "image") has_images = true;
  }
  if (!has_images) {
    std::string text;
    bool first = true;
    if (content) {
      for (const auto& v : *content) {
        const auto* b = v.if_object();
        if (!b) continue;
        if (!first) text += '\n';
        text += str(*b, "text");
        first = false;
      }
    }
    return bj::string(text);
  }
  bj::array blocks;
  bool has_text = false;
  for (const auto& v : *content) {
    const auto* b = v.if_object();
    if (!b) continue;
    if (str(*b, "type") == "text") {
      blocks.push_back(bj::object{{"type", "text"}, {"text", str(*b, "text")}});
      has_text = true;
    } else if (str(*b, "type") == "image") {
      blocks.push_back(image_block(*b));
    }
  }
  if (!has_text) blocks.insert(blocks.begin(), bj::object{{"type", "text"}, {"text", "(see attached image)"}});
  return blocks;
}

bj::object tool_result_block(const bj::object& msg) {
  bj::object r;
  r["type"] = "tool_result";
  r["tool_use_id"] = str(msg, "toolCallId");
  r["content"] = tool_result_content(msg);
  // JSON.stringify drops an undefined isError.
  if (const auto* e = json::find(msg, "isError"); e && !e->is_null()) r["is_error"] = *e;
  return r;
}

// Consecutive messages of one role become one (their content blocks in order): the API's rule
// is that roles alternate. It happens after a turn whose tool loop was cut (/stop, a crash, a
// failure) — tool results, then the next user message — or after a failed turn (two user
// messages). The API itself combines consecutive same-role turns; pi-ai sends them apart, and a
// stricter endpoint (or proxy) refuses that, so they are merged here. tool_result blocks stay
// first in a user message, as the API wants.
void merge_same_role_turns(bj::array& params) {
  auto as_blocks = [](bj::value& content) -> bj::array& {
    if (const auto* text = content.if_string()) content = bj::array{bj::object{{"type", "text"}, {"text", *text}}};
    return content.as_array();
  };
  bj::array merged;
  for (auto& v : params) {
    auto& m = v.as_object();
    if (!merged.empty() && str(merged.back().as_object(), "role") == str(m, "role")) {
      auto& into = as_blocks(merged.back().as_object()["content"]);
      for (auto& b : as_blocks(m["content"])) into.push_back(std::move(b));
      continue;
    }
    merged.push_back(std::move(v));
  }
  params = std::move(merged);
}

bj::array convert_messages(const provider_call& call) {
  const auto transformed = wire::transform_messages(call, &normalize_tool_call_id);
  bj::array params;
  for (std::size_t i = 0; i < transformed.size(); ++i) {
    const bj::object& msg = transformed[i];
    const std::string_view role = str(msg, "role");
    if (role == "user") {
      const auto* content_value = json::find(msg, "content");
      if (content_value && content_value->is_string()) {
        // The API refuses empty text.
        if (!is_js_blank(content_value->get_string()))
          params.push_back(bj::object{{"role", "user"}, {"content", content_value->get_string()}});
        continue;
      }
      bj::array blocks;
      if (const auto* content = wire::content_array(msg)) {
        for (const auto& v : *content) {
          const auto* b = v.if_object();
          if (!b) continue;
          if (str(*b, "type") == "text") {
            if (!is_js_blank(str(*b, "text"))) blocks.push_back(bj::object{{"type", "text"}, {"text", str(*b, "text")}});
          } else if (str(*b, "type") == "image") {
            blocks.push_back(image_block(*b));
          }
        }
      }
      if (blocks.empty()) continue;
      params.push_back(bj::object{{"role", "user"}, {"content", std::move(blocks)}});
    } else if (role == "assistant") {
      bj::array blocks;
      if (const auto* content = wire::content_array(msg)) {
        for (const auto& v : *content) {
          const auto* b = v.if_object();
          if (!b) continue;
          const std::string_view type = str(*b, "type");
          if (type == "text") {
            if (is_js_blank(str(*b, "text"))) continue;
            blocks.push_back(bj::object{{"type", "text"}, {"text", str(*b, "text")}});
          } else if (type == "thinking") {
            if (wire::truthy(json::find(*b, "redacted"))) {
              blocks.push_back(bj::object{{"type", "redacted_thinking"}, {"data", str(*b, "thinkingSignature")}});
              continue;
            }
            if (is_js_blank(str(*b, "thinking"))) continue;
            // Thinking without a signature (an aborted stream) would be refused: send it as text.
            if (is_js_blank(str(*b, "thinkingSignature"))) {
              blocks.push_back(bj::object{{"type", "text"}, {"text", str(*b, "thinking")}});
            } else {
              bj::object t;
              t["type"] = "thinking";
              t["thinking"] = str(*b, "thinking");
              t["signature"] = str(*b, "thinkingSignature");
              blocks.push_back(std::move(t));
            }
          } else if (type == "toolCall") {
            bj::object use;
            use["type"] = "tool_use";
            use["id"] = str(*b, "id");
            use["name"] = str(*b, "name");
            const auto* args = json::find(*b, "arguments");
            use["input"] = args && !args->is_null() ? *args : bj::value(bj::object());
            blocks.push_back(std::move(use));
          }
        }
      }
      if (blocks.empty()) continue;
      params.push_back(bj::object{{"role", "assistant"}, {"content", std::move(blocks)}});
    } else if (role == "toolResult") {
      // All consecutive results go in one user message (the API wants every tool_result of a
      // turn right after its tool_use message; z.ai's endpoint refuses them split).
      bj::array results;
      std::size_t j = i;
      for (; j < transformed.size() && str(transformed[j], "role") == "toolResult"; ++j)
        results.push_back(tool_result_block(transformed[j]));
      i = j - 1;
      params.push_back(bj::object{{"role", "user"}, {"content", std::move(results)}});
    }
    // Other roles (custom, bashExecution, ...) are skipped, as pi-ai's convertMessages skips them.
  }
  merge_same_role_turns(params);

  // Cache the conversation up to its last user block.
  if (!params.empty()) {
    auto& last = params.back().as_object();
    if (str(last, "role") == "user") {
      auto& content = last["content"];
      if (auto* blocks = content.if_array(); blocks && !blocks->empty()) {
        if (auto* b = blocks->back().if_object()) {
          const std::string_view type = str(*b, "type");
          if (type == "text" || type == "image" || type == "tool_result") (*b)["cache_control"] = cache_control();
        }
      } else if (const auto* text = content.if_string()) {
        bj::object block{{"type", "text"}, {"text", *text}, {"cache_control", cache_control()}};
        content = bj::array{std::move(block)};
      }
    }
  }
  return params;
}

result<http_request> build(const provider_call& call) {
  bj::object body;
  body["model"] = call.model->id;
  body["messages"] = convert_messages(call);
  body["max_tokens"] = max_tokens(call);
  body["stream"] = true;
  if (!call.system_prompt.empty()) {
    body["system"] = bj::array{
        bj::object{{"type", "text"}, {"text", call.system_prompt}, {"cache_control", cache_control()}}};
  }
  if (call.tools && !call.tools->empty()) {
    bj::array tools;
    for (std::size_t i = 0; i < call.tools->size(); ++i) {
      const tool_spec& t = (*call.tools)[i];
      bj::object schema;
      schema["type"] = "object";
      const auto* props = json::find(t.parameters, "properties");
      schema["properties"] = props && !props->is_null() ? *props : bj::value(bj::object());
      const auto* required = json::find(t.parameters, "required");
      schema["required"] = required && !required->is_null() ? *required : bj::value(bj::array());
      bj::object tool;
      tool["name"] = t.name;
      tool["description"] = t.description;
      tool["eager_input_streaming"] = true;
      tool["input_schema"] = std::move(schema);
      if (i + 1 == call.tools->size()) tool["cache_control"] = cache_control();
      tools.push_back(std::move(tool));
    }
    body["tools"] = std::move(tools);
  }
  // provider_call has no thinking level: we send what pi-ai sends at "off" (streamSimple with
  // no reasoning option sets thinkingEnabled false).
  if (call.model->reasoning) body["thinking"] = bj::object{{"type", "disabled"}};

  http_request req;
  req.url = base_url_or(*call.provider, kDefaultBaseUrl) + "/v1/messages";
  req.headers = {{"content-type", "application/json"}, {"accept", "application/json"}, {"anthropic-version", "2023-06-01"}};
  if (!call.provider->api_key.empty()) wire::set_header(req.headers, "x-api-key", call.provider->api_key);
  if (!adaptive_thinking(call.model->id)) wire::set_header(req.headers, "anthropic-beta", "interleaved-thinking-2025-05-14");
  wire::apply_provider_headers(req.headers, *call.provider);
  req.body = json::to_compact(body);
  return req;
}

// pi-ai mapStopReason (an unknown reason throws there: "Unhandled stop reason: <r>").
std::string_view map_stop_reason(std::string_view r) {
  if (r == "end_turn" || r == "pause_turn" || r == "stop_sequence") return "stop";
  if (r == "max_tokens") return "length";
  if (r == "tool_use") return "toolUse";
  if (r == "refusal" || r == "sensitive") return "error";
  return {};
}

class decoder final : public stream_decoder {
 public:
  explicit decoder(assistant_builder& out) : out_(out) {}

  void on_event(const sse_event& event) override {
    if (stopped_) return;
    if (event.event == "error") {
      stop(event.data);
      return;
    }
    static constexpr std::string_view kRead[] = {"message_start", "message_delta", "message_stop",
                                                 "content_block_start", "content_block_delta", "content_block_stop"};
    if (std::find(std::begin(kRead), std::end(kRead), event.event) == std::end(kRead)) return;  // ping, unknown
    auto parsed = wire::parse_json_with_repair(event.data);
    if (!parsed || !parsed->is_object()) {
      stop("Could not parse Anthropic SSE event " + event.event + ": data=" + wire::cut_utf8(event.data, 1024));
      return;
    }
    const bj::object& e = parsed->get_object();
    const std::string_view type = str(e, "type");
    if (type == "message_start") {
      message_start(e);
    } else if (type == "content_block_start") {
      block_start(e);
    } else if (type == "content_block_delta") {
      block_delta(e);
    } else if (type == "content_block_stop") {
      if (const auto index = json::get_int(e, "index")) open_.erase(*index);
    } else if (type == "message_delta") {
      message_delta(e);
    } else if (type == "message_stop") {
      ended_ = true;
    }
  }

  bool ended() const override { return ended_ || stopped_; }

 private:
  void stop(std::string message) {
    out_.fail(std::move(message));
    stopped_ = true;
  }

  void message_start(const bj::object& e) {
    const auto* message = json::get_object(e, "message");
    if (!message) return;
    if (const auto id = json::get_string(*message, "id")) out_.set_response_id(std::string(*id));
    if (const auto* u = json::get_object(*message, "usage")) {
      // Counted here too so that a stream cut later still reports its input.
      wire::set_usage(out_, wire::count(*u, "input_tokens"), wire::count(*u, "output_tokens"),
                      wire::count(*u, "cache_read_input_tokens"), wire::count(*u, "cache_creation_input_tokens"));
    }
  }

  void block_start(const bj::object& e) {
    const auto index = json::get_int(e, "index");
    const auto* block = json::get_object(e, "content_block");
    if (!index || !block) return;
    const std::string_view type = str(*block, "type");
    std::size_t b = 0;
    if (type == "text") {
      b = out_.open_text();
    } else if (type == "thinking") {
      b = out_.open_thinking();
    } else if (type == "redacted_thinking") {
      b = out_.open_thinking();
      out_.set_redacted_thinking(b, std::string(str(*block, "data")));
    } else if (type == "tool_use") {
      b = out_.open_tool_call(std::string(str(*block, "id")), std::string(str(*block, "name")));
    } else {
      return;  // server_tool_use and other kinds pi-ai does not keep
    }
    open_.emplace(*index, b);  // pi-ai finds the first open block with this index
  }

  void block_delta(const bj::object& e) {
    const auto index = json::get_int(e, "index");
    const auto* delta = json::get_object(e, "delta");
    if (!index || !delta) return;
    auto it = open_.find(*index);
    if (it == open_.end()) return;
    const std::size_t b = it->second;
    const std::string_view type = str(*delta, "type");
    // The builder ignores a piece meant for a block of another kind, as pi-ai does.
    if (type == "text_delta") {
      out_.add_text(b, str(*delta, "text"));
    } else if (type == "thinking_delta") {
      out_.add_thinking(b, str(*delta, "thinking"));
    } else if (type == "input_json_delta") {
      out_.add_tool_arguments(b, str(*delta, "partial_json"));
    } else if (type == "signature_delta") {
      std::string& signature = signatures_[b];
      signature += str(*delta, "signature");
      out_.set_thinking_signature(b, signature);
    }
  }

  void message_delta(const bj::object& e) {
    std::string_view reason;
    if (const auto* d = json::get_object(e, "delta")) reason = str(*d, "stop_reason");
    const std::string_view mapped = reason.empty() ? std::string_view() : map_stop_reason(reason);
    if (!reason.empty() && mapped.empty()) {
      // pi-ai throws before it reads this event's usage.
      stop("Unhandled stop reason: " + std::string(reason));
      return;
    }
    if (const auto* u = json::get_object(e, "usage")) {
      // Only fields present and non-null overwrite: proxies omit input_tokens here.
      auto& usage = out_.usage();
      auto take = [&](std::string_view key, std::int64_t& field) {
        if (const auto* v = json::find(*u, key); v && !v->is_null()) field = wire::count(*u, key);
      };
      take("input_tokens", usage.input);
      take("output_tokens", usage.output);
      take("cache_read_input_tokens", usage.cache_read);
      take("cache_creation_input_tokens", usage.cache_write);
    }
    if (reason.empty() || out_.failed()) return;
    if (mapped == "error") {
      // pi-ai reads on to the end, then throws this for an error stop reason.
      out_.fail("An unknown error occurred");
    } else {
      out_.set_stop_reason(std::string(mapped));
    }
  }

  assistant_builder& out_;
  bool ended_ = false, stopped_ = false;
  std::map<std::int64_t, std::size_t> open_;         // the API's block index -> the builder's
  std::map<std::size_t, std::string> signatures_;    // thinking signatures so far, by block
};

std::unique_ptr<stream_decoder> make_decoder(const provider_call&, assistant_builder& out) {
  return std::make_unique<decoder>(out);
}

// @anthropic-ai/sdk APIError.makeMessage with the whole body as the error (unlike openai's
// SDK, which takes body.error): its `message` when truthy, else the body as JSON.
std::string error_text(long status, std::string_view body) {
  constexpr std::size_t kMaxBody = 1024;
  const std::string prefix = std::to_string(status) + " ";
  auto parsed = json::parse(body);
  if (!parsed || !wire::truthy(&*parsed)) {
    if (body.empty()) return prefix + "status code (no body)";
    return prefix + wire::cut_utf8(body, kMaxBody);
  }
  if (const auto* o = parsed->if_object()) {
    if (const auto* message = json::find(*o, "message"); wire::truthy(message)) {
      if (const auto* s = message->if_string()) return prefix + std::string(*s);
      return prefix + wire::cut_utf8(json::to_compact(*message), kMaxBody);
    }
  }
  return prefix + wire::cut_utf8(json::to_compact(*parsed), kMaxBody);
}

}  // namespace

const wire_format& anthropic_messages_wire() {
  static const wire_format format{kApi, &build, &make_decoder, &error_text};
  return format;
}

}  // namespace sessionrt::providers
