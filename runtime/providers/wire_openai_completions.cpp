// wire_openai_completions: OpenAI chat completions (`openai-completions`), as pi-ai 0.73.1's
// providers/openai-completions.js speaks it through the openai SDK 6.26:
//   request   POST {baseUrl|https://api.openai.com/v1}/chat/completions, `Authorization: Bearer`,
//             body {model, messages, stream:true, stream_options:{include_usage:true}?, store:false?,
//             max_completion_tokens|max_tokens?, tools?} with pi-ai's convertMessages;
//   stream    unnamed `data:` chunks, `data: [DONE]`; text in delta.content, reasoning in the first
//             non-empty of reasoning_content | reasoning | reasoning_text, tool calls keyed by
//             index (else id) with argument fragments, usage in the (last) chunk that has it;
//   errors    a chunk with `error` ends the call with its message (openai SDK APIError).
// Compat flags not in our config are detected from the provider id and base URL as pi-ai's
// detectCompat does.
//
// Deliberate differences from pi-ai:
//   - The developer role needs the public OpenAI endpoint as well as a reasoning model and
//     compat (@openclaw/ai 2026.9.6 resolveOpenAICompletionsCompatDefaults: any other
//     configured endpoint gets supportsDeveloperRole false; pi-ai only excludes known
//     non-standard hosts). compat.supportsDeveloperRole still overrides.
//   - provider_call carries no thinking level: the body is pi-ai's at thinking level "off"
//     (DeepSeek `thinking:{type:"disabled"}`, z.ai `enable_thinking:false`, OpenRouter
//     `reasoning:{effort:"none"}` for reasoning models; no reasoning_effort). No temperature,
//     tool_choice, prompt_cache_key or session headers (no options or session id), and
//     thinkingLevelMap / qwen thinking formats are not configurable.
//   - No `Authorization` header when the provider has no key (local servers); pi-ai refuses
//     the call instead ("OpenAI API key is required").
//   - A user content block that is neither text nor image is skipped (pi-ai sends it as an
//     image_url with "data:undefined;base64,undefined").
//   - The stream counts as ended at `[DONE]` or at a chunk with a finish_reason; pi-ai accepts
//     any end of the body, so a body cut before either is an error here, a success there.
//   - A tool call whose first delta has no function name is opened when the name arrives
//     (the builder cannot rename a block); one that never gets a name is dropped.
//   - Not recorded: responseModel (chunk.model when it differs from the model id) and
//     OpenRouter's reasoning_details (toolCall.thoughtSignature): the builder has no field
//     for them. Replayed toolCall.thoughtSignature values are still sent back as
//     reasoning_details.
//   - A chunk that is not JSON fails the call with "Could not parse message into JSON: <data>"
//     (the SDK throws JSON.parse's SyntaxError text).
//   - finish_reason "stop" with tool calls in the message is stored as "toolUse" (the
//     builder's rule; pi-ai keeps "stop", which some local servers send after tool calls).
//   - Lone UTF-16 surrogates (sanitizeSurrogates) cannot occur: our strings are valid UTF-8.
#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

constexpr std::string_view kApi = "openai-completions";
constexpr std::string_view kDefaultBaseUrl = "https://api.openai.com/v1";

// pi-ai OpenAICompletionsCompat, the fields a request we send depends on.
struct compat_flags {
  bool store = true;
  bool developer_role = true;
  bool usage_in_streaming = true;
  std::string max_tokens_field = "max_completion_tokens";
  bool strict_mode = true;
  bool reasoning_content_on_assistant = false;
  std::string_view thinking_format = "openai";  // openai | deepseek | zai | openrouter
};

bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

// pi-ai detectCompat + getCompat, with OpenClaw's developer-role rule (see the file comment).
compat_flags resolve_compat(const provider_call& call, std::string_view base_url) {
  const std::string_view provider = call.provider->id;
  const bool zai = provider == "zai" || contains(base_url, "api.z.ai");
  const bool moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || contains(base_url, "api.moonshot.");
  const bool cf_workers = provider == "cloudflare-workers-ai" || contains(base_url, "api.cloudflare.com");
  const bool cf_gateway = provider == "cloudflare-ai-gateway" || contains(base_url, "gateway.ai.cloudflare.com");
  const bool non_standard = provider == "cerebras" || contains(base_url, "cerebras.ai") || provider == "xai" ||
                            contains(base_url, "api.x.ai") || contains(base_url, "chutes.ai") ||
                            contains(base_url, "deepseek.com") || zai || moonshot || provider == "opencode" ||
                            contains(base_url, "opencode.ai") || cf_workers || cf_gateway;
  const bool use_max_tokens = contains(base_url, "chutes.ai") || moonshot || cf_gateway;
  const bool deepseek = provider == "deepseek" || contains(base_url, "deepseek.com");

  compat_flags c;
  c.store = !non_standard;
  c.developer_role = !non_standard && contains(base_url, "api.openai.com");
  c.usage_in_streaming = true;
  c.max_tokens_field = use_max_tokens ? "max_tokens" : "max_completion_tokens";
  c.strict_mode = !moonshot && !cf_gateway;
  c.reasoning_content_on_assistant = deepseek;
  c.thinking_format = deepseek                                                        ? "deepseek"
                      : zai                                                           ? "zai"
                      : provider == "openrouter" || contains(base_url, "openrouter.ai") ? "openrouter"
                                                                                      : "openai";

  const auto& configured = call.model->compat;
  if (configured.supports_developer_role) c.developer_role = *configured.supports_developer_role;
  if (configured.supports_usage_in_streaming) c.usage_in_streaming = *configured.supports_usage_in_streaming;
  if (!configured.max_tokens_field.empty()) c.max_tokens_field = configured.max_tokens_field;
  return c;
}

// pi-ai normalizeToolCallId (openai-completions.js convertMessages).
std::string normalize_tool_call_id(std::string_view id, std::string_view provider) {
  if (const auto bar = id.find('|'); bar != std::string_view::npos) return wire::sanitize_id(id.substr(0, bar), 40);
  if (provider == "openai") return wire::utf16_prefix(id, 40);
  return std::string(id);
}

bj::object image_url_part(const bj::object& image) {
  std::string url = "data:";
  url += str(image, "mimeType");
  url += ";base64,";
  url += str(image, "data");
  return bj::object{{"type", "image_url"}, {"image_url", bj::object{{"url", std::move(url)}}}};
}

bj::object assistant_message(const bj::object& msg, const provider_call& call, const compat_flags& compat) {
  bj::object out;
  out["role"] = "assistant";
  out["content"] = nullptr;
  std::string text;
  std::vector<const bj::object*> thinking;
  bj::array tool_calls;
  bj::array reasoning_details;
  if (const auto* content = wire::content_array(msg)) {
    for (const auto& v : *content) {
      const auto* b = v.if_object();
      if (!b) continue;
      const std::string_view type = str(*b, "type");
      if (type == "text" && !is_js_blank(str(*b, "text"))) {
        text += str(*b, "text");
      } else if (type == "thinking" && !is_js_blank(str(*b, "thinking"))) {
        thinking.push_back(b);
      } else if (type == "toolCall") {
        const auto* args = json::find(*b, "arguments");
        bj::object fn;
        fn["name"] = str(*b, "name");
        fn["arguments"] = args ? json::to_compact(*args) : std::string("{}");
        bj::object tc;
        tc["id"] = str(*b, "id");
        tc["type"] = "function";
        tc["function"] = std::move(fn);
        tool_calls.push_back(std::move(tc));
        if (const auto sig = json::get_string(*b, "thoughtSignature"); sig && !sig->empty()) {
          if (auto detail = json::parse(*sig); detail && !detail->is_null()) reasoning_details.push_back(std::move(*detail));
        }
      }
    }
  }
  if (!text.empty()) out["content"] = text;
  if (!thinking.empty()) {
    // llama.cpp / gpt-oss: the reasoning goes back in the field it came in (its name is the
    // thinking block's signature, see the decoder).
    const std::string_view field = str(*thinking.front(), "thinkingSignature");
    if (!field.empty()) {
      std::string joined;
      for (std::size_t i = 0; i < thinking.size(); ++i) {
        if (i) joined += '\n';
        joined += str(*thinking[i], "thinking");
      }
      json::set(out, field, bj::string(joined));
    }
  }
  if (!tool_calls.empty()) {
    out["tool_calls"] = std::move(tool_calls);
    if (!reasoning_details.empty()) out["reasoning_details"] = std::move(reasoning_details);
  }
  if (compat.reasoning_content_on_assistant && call.model->reasoning && !out.contains("reasoning_content"))
    out["reasoning_content"] = "";
  return out;
}

bj::array convert_messages(const provider_call& call, const compat_flags& compat) {
  const std::string provider = call.provider->id;
  const auto transformed =
      wire::transform_messages(call, [&](std::string_view id) { return normalize_tool_call_id(id, provider); });
  const bool images = wire::model_accepts_images(*call.model);

  bj::array params;
  if (!call.system_prompt.empty()) {
    const bool developer = call.model->reasoning && compat.developer_role;
    params.push_back(bj::object{{"role", developer ? "developer" : "system"}, {"content", call.system_prompt}});
  }
  for (std::size_t i = 0; i < transformed.size(); ++i) {
    const bj::object& msg = transformed[i];
    const std::string_view role = str(msg, "role");
    if (role == "user") {
      const auto* content_value = json::find(msg, "content");
      if (content_value && content_value->is_string()) {
        params.push_back(bj::object{{"role", "user"}, {"content", content_value->get_string()}});
        continue;
      }
      bj::array content;
      if (const auto* blocks = wire::content_array(msg)) {
        for (const auto& v : *blocks) {
          const auto* b = v.if_object();
          if (!b) continue;
          if (str(*b, "type") == "text") content.push_back(bj::object{{"type", "text"}, {"text", str(*b, "text")}});
          else if (str(*b, "type") == "image") content.push_back(image_url_part(*b));
        }
      }
      if (content.empty()) continue;
      params.push_back(bj::object{{"role", "user"}, {"content", std::move(content)}});
    } else if (role == "assistant") {
      bj::object out = assistant_message(msg, call, compat);
      const auto& content = out.at("content");
      const bool has_content = content.is_string() && !content.get_string().empty();
      // Providers refuse an assistant message with neither content nor tool calls (an
      // aborted turn that produced nothing).
      if (!has_content && !out.contains("tool_calls")) continue;
      params.push_back(std::move(out));
    } else if (role == "toolResult") {
      bj::array image_parts;
      std::size_t j = i;
      for (; j < transformed.size() && str(transformed[j], "role") == "toolResult"; ++j) {
        const bj::object& tr = transformed[j];
        std::string text;
        bool first = true, has_images = false;
        if (const auto* blocks = wire::content_array(tr)) {
          for (const auto& v : *blocks) {
            const auto* b = v.if_object();
            if (!b) continue;
            if (str(*b, "type") == "text") {
              if (!first) text += '\n';
              text += str(*b, "text");
              first = false;
            } else if (str(*b, "type") == "image") {
              has_images = true;
            }
          }
        }
        bj::object tool;
        tool["role"] = "tool";
        tool["content"] = text.empty() ? std::string("(see attached image)") : text;
        tool["tool_call_id"] = str(tr, "toolCallId");
        params.push_back(std::move(tool));
        if (has_images && images) {
          for (const auto& v : *wire::content_array(tr)) {
            const auto* b = v.if_object();
            if (b && str(*b, "type") == "image") image_parts.push_back(image_url_part(*b));
          }
        }
      }
      i = j - 1;
      if (!image_parts.empty()) {
        // Tool messages carry only text: the images follow in a user message.
        bj::array content{bj::object{{"type", "text"}, {"text", "Attached image(s) from tool result:"}}};
        for (auto& p : image_parts) content.push_back(std::move(p));
        params.push_back(bj::object{{"role", "user"}, {"content", std::move(content)}});
      }
    }
    // Other roles (custom, bashExecution, ...) are skipped, as pi-ai's convertMessages skips them.
  }
  return params;
}

bool has_tool_history(const bj::array& messages) {
  for (const auto& v : messages) {
    const auto* m = v.if_object();
    if (!m) continue;
    if (str(*m, "role") == "toolResult") return true;
    if (str(*m, "role") != "assistant") continue;
    if (const auto* content = wire::content_array(*m)) {
      for (const auto& b : *content)
        if (const auto* o = b.if_object(); o && str(*o, "type") == "toolCall") return true;
    }
  }
  return false;
}

result<http_request> build(const provider_call& call) {
  const std::string base = base_url_or(*call.provider, kDefaultBaseUrl);
  const compat_flags compat = resolve_compat(call, base);

  bj::object body;
  body["model"] = call.model->id;
  body["messages"] = convert_messages(call, compat);
  body["stream"] = true;
  if (compat.usage_in_streaming) body["stream_options"] = bj::object{{"include_usage", true}};
  if (compat.store) body["store"] = false;
  if (const std::int64_t max = wire::requested_max_tokens(call); max > 0) {
    body[compat.max_tokens_field == "max_tokens" ? "max_tokens" : "max_completion_tokens"] = max;
  }
  if (call.tools && !call.tools->empty()) {
    bj::array tools;
    for (const auto& t : *call.tools) {
      bj::object fn;
      fn["name"] = t.name;
      fn["description"] = t.description;
      fn["parameters"] = t.parameters;
      if (compat.strict_mode) fn["strict"] = false;
      tools.push_back(bj::object{{"type", "function"}, {"function", std::move(fn)}});
    }
    body["tools"] = std::move(tools);
  } else if (has_tool_history(*call.messages)) {
    // LiteLLM-style proxies in front of Anthropic refuse tool history without a tools member.
    body["tools"] = bj::array();
  }
  if (call.model->reasoning) {
    // Thinking off, in each format's words (pi-ai buildParams with no reasoningEffort).
    if (compat.thinking_format == "zai") body["enable_thinking"] = false;
    else if (compat.thinking_format == "deepseek") body["thinking"] = bj::object{{"type", "disabled"}};
    else if (compat.thinking_format == "openrouter") body["reasoning"] = bj::object{{"effort", "none"}};
  }

  http_request req;
  req.url = base + "/chat/completions";
  req.headers = {{"content-type", "application/json"}, {"accept", "application/json"}};
  if (!call.provider->api_key.empty()) wire::set_header(req.headers, "authorization", "Bearer " + call.provider->api_key);
  wire::apply_provider_headers(req.headers, *call.provider);
  req.body = json::to_compact(body);
  return req;
}

// pi-ai mapStopReason; the error cases carry the sentence pi-ai stores as errorMessage.
struct mapped_stop {
  std::string_view reason;
  std::string error;
};
mapped_stop map_finish_reason(std::string_view r) {
  if (r == "stop" || r == "end") return {"stop", {}};
  if (r == "length") return {"length", {}};
  if (r == "function_call" || r == "tool_calls") return {"toolUse", {}};
  return {"error", "Provider finish_reason: " + std::string(r)};
}

class decoder final : public stream_decoder {
 public:
  explicit decoder(assistant_builder& out) : out_(out) {}

  void on_event(const sse_event& event) override {
    if (done_ || stopped_) return;  // the SDK reads nothing after [DONE] or a thrown error
    if (event.data.rfind("[DONE]", 0) == 0) {
      done_ = true;
      return;
    }
    auto parsed = json::parse(event.data);
    if (!parsed) {
      stop("Could not parse message into JSON: " + wire::cut_utf8(event.data, 1024));
      return;
    }
    const auto* chunk = parsed->if_object();
    if (!chunk) return;
    if (const auto* error = json::find(*chunk, "error"); wire::truthy(error)) {
      stop(stream_error_text(*error));
      return;
    }
    if (const auto id = json::get_string(*chunk, "id"); id && !id->empty() && !have_id_) {
      out_.set_response_id(std::string(*id));
      have_id_ = true;
    }
    const auto* usage = json::get_object(*chunk, "usage");
    if (usage) read_usage(*usage);
    const auto* choices = json::get_array(*chunk, "choices");
    const bj::object* choice = choices && !choices->empty() ? (*choices)[0].if_object() : nullptr;
    if (!choice) return;
    if (!usage) {
      // Moonshot puts usage in the choice.
      if (const auto* u = json::get_object(*choice, "usage")) read_usage(*u);
    }
    if (const auto* fr = json::find(*choice, "finish_reason"); wire::truthy(fr) && fr->is_string()) {
      finished_ = true;
      mapped_stop m = map_finish_reason(fr->get_string());
      if (!out_.failed()) {
        if (m.error.empty()) out_.set_stop_reason(std::string(m.reason));
        else out_.fail(std::move(m.error));
      }
    }
    const auto* delta = json::get_object(*choice, "delta");
    if (!delta) return;
    if (const auto text = json::get_string(*delta, "content"); text && !text->empty()) {
      if (!text_block_) text_block_ = out_.open_text();
      out_.add_text(*text_block_, *text);
    }
    for (std::string_view field : {"reasoning_content", "reasoning", "reasoning_text"}) {
      const auto piece = json::get_string(*delta, field);
      if (!piece || piece->empty()) continue;
      if (!thinking_block_) {
        thinking_block_ = out_.open_thinking();
        // The field's name is the signature pi-ai stores: it says where replay puts the text.
        out_.set_thinking_signature(*thinking_block_, std::string(field));
      }
      out_.add_thinking(*thinking_block_, *piece);
      break;  // chutes.ai sends the same text in two fields
    }
    if (const auto* calls = json::get_array(*delta, "tool_calls")) {
      for (const auto& v : *calls)
        if (const auto* tc = v.if_object()) tool_call_delta(*tc);
    }
  }

  bool ended() const override { return done_ || finished_ || stopped_; }

 private:
  struct pending_call {
    std::optional<std::size_t> block;  // the builder's block, once it has a name
    std::string id, name, args;        // what arrived before it was opened
  };

  void stop(std::string message) {
    out_.fail(std::move(message));
    stopped_ = true;
  }

  // The openai SDK's APIError message without a status, plus OpenRouter's metadata.raw
  // (pi-ai appends it on a new line).
  static std::string stream_error_text(const bj::value& error) {
    std::string text;
    const auto* e = error.if_object();
    const auto* message = e ? json::find(*e, "message") : nullptr;
    if (wire::truthy(message)) text = message->is_string() ? std::string(message->get_string()) : json::to_compact(*message);
    else text = json::to_compact(error);
    if (e) {
      if (const auto* meta = json::get_object(*e, "metadata")) {
        if (const auto* raw = json::find(*meta, "raw"); wire::truthy(raw)) {
          text += '\n';
          text += raw->is_string() ? std::string(raw->get_string()) : json::to_compact(*raw);
        }
      }
    }
    return text;
  }

  // pi-ai parseChunkUsage.
  void read_usage(const bj::object& u) {
    const std::int64_t prompt = wire::count(u, "prompt_tokens");
    const auto* details = json::get_object(u, "prompt_tokens_details");
    const bj::value* cached = details ? json::find(*details, "cached_tokens") : nullptr;
    if (!cached || cached->is_null()) cached = json::find(u, "prompt_cache_hit_tokens");  // DeepSeek
    std::int64_t reported_cached = 0;
    if (cached && !cached->is_null()) reported_cached = json::as_number(*cached) ? static_cast<std::int64_t>(*json::as_number(*cached)) : 0;
    const std::int64_t cache_write = details ? wire::count(*details, "cache_write_tokens") : 0;
    // OpenRouter counts this request's writes in cached_tokens too.
    const std::int64_t cache_read = cache_write > 0 ? std::max<std::int64_t>(0, reported_cached - cache_write) : reported_cached;
    const std::int64_t input = std::max<std::int64_t>(0, prompt - cache_read - cache_write);
    wire::set_usage(out_, input, wire::count(u, "completion_tokens"), cache_read, cache_write);
  }

  void tool_call_delta(const bj::object& tc) {
    std::optional<std::int64_t> index;
    if (const auto* iv = json::find(tc, "index"); iv && iv->is_number()) index = json::as_int(*iv);
    const std::string_view id = str(tc, "id");
    const auto* fn = json::get_object(tc, "function");
    const std::string_view name = fn ? str(*fn, "name") : std::string_view();
    const std::string_view args = fn ? str(*fn, "arguments") : std::string_view();

    pending_call* call = nullptr;
    if (index) {
      if (auto it = by_index_.find(*index); it != by_index_.end()) call = &calls_[it->second];
    }
    if (!call && !id.empty()) {
      if (auto it = by_id_.find(std::string(id)); it != by_id_.end()) call = &calls_[it->second];
    }
    if (!call) {
      calls_.push_back(pending_call{});
      call = &calls_.back();
    }
    const std::size_t slot = static_cast<std::size_t>(call - calls_.data());
    if (index) by_index_.emplace(*index, slot);
    if (!id.empty()) by_id_[std::string(id)] = slot;

    if (call->id.empty() && !id.empty()) {
      call->id = id;
      if (call->block) out_.set_tool_call_id(*call->block, call->id);
    }
    if (call->name.empty() && !name.empty()) call->name = name;
    if (!call->block && !call->name.empty()) {
      call->block = out_.open_tool_call(call->id, call->name);
      if (!call->args.empty()) out_.add_tool_arguments(*call->block, call->args);
      call->args.clear();
    }
    if (!args.empty()) {
      if (call->block) out_.add_tool_arguments(*call->block, args);
      else call->args += args;
    }
  }

  assistant_builder& out_;
  bool done_ = false, finished_ = false, stopped_ = false, have_id_ = false;
  std::optional<std::size_t> text_block_, thinking_block_;
  std::vector<pending_call> calls_;
  std::map<std::int64_t, std::size_t> by_index_;
  std::map<std::string, std::size_t> by_id_;
};

std::unique_ptr<stream_decoder> make_decoder(const provider_call&, assistant_builder& out) {
  return std::make_unique<decoder>(out);
}

std::string error_text(long status, std::string_view body) { return json_error_text(status, body); }

}  // namespace

const wire_format& openai_completions_wire() {
  static const wire_format format{kApi, &build, &make_decoder, &error_text};
  return format;
}

}  // namespace sessionrt::providers
