// OpenAI Responses (`openai-responses`): POST {baseUrl}/responses, streamed as named SSE events.
// The reference is pi-ai 0.73.1 providers/openai-responses.js + openai-responses-shared.js
// (convertResponsesMessages, convertResponsesTools, processResponsesStream) with
// transform-messages.js for the context, called as pi's agent calls streamSimple with the
// thinking level off.
//
// Deliberate differences from pi-ai (each also noted where it happens):
//  1. No session id: no prompt_cache_key / session_id / x-client-request-id (provider_call has
//     none), no temperature, no service_tier; the thinking level is always off: a reasoning
//     model gets reasoning:{effort:"none"} as pi-ai sends then, except where pi-ai's catalog
//     says off is no level (gpt-5*: no reasoning key, as pi-ai) and the o-series (o1/o3/o4…,
//     which have no "none" effort: no reasoning key either, where pi-ai sends "none").
//  2. No API key: the request goes without an Authorization header (pi-ai refuses to start).
//  3. A thinkingSignature that is not JSON is left out of the input (pi-ai's JSON.parse throws
//     and the call fails).
//  4. Text blocks get no textSignature (the message item id and phase): assistant_builder keeps
//     none, so a replayed text item gets pi-ai's fallback id msg_<index>.
//  5. A reasoning item's thinking goes into the message when its output_item.done arrives
//     (pi-ai streams it into the block as it comes, then replaces it with the summary text); a
//     stream cut inside a reasoning item loses that item's partial thinking (an error event
//     or a next item keeps it).
//  6. `response.incomplete` is read as the final event (usage, stopReason "length"); pi-ai
//     ignores it and reports stopReason "stop" with no usage.
//  7. Service-tier pricing (flex 0.5x, priority 2x) is not applied: cost is the model's price.
//  8. usage.totalTokens is input+output+cacheRead+cacheWrite (pi-ai copies total_tokens, the
//     same number for this API).
//  9. Text is taken as UTF-8; lone surrogates cannot occur in it (pi-ai's sanitizeSurrogates).
#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"
#include "runtime/providers/wire_common.hpp"
#include "runtime/providers/wire_format.hpp"

namespace sessionrt::providers {
namespace {

namespace bj = boost::json;
using sessionrt::json::get_array;
using sessionrt::json::get_int;
using sessionrt::json::get_object;
using sessionrt::json::get_string;

constexpr std::string_view kDefaultBase = "https://api.openai.com/v1";

// wire::str as an owned string, for building text.
std::string str_of(const bj::object& o, std::string_view key) { return std::string(wire::str(o, key)); }

// ---- pi-ai utils/hash.js shortHash, over the UTF-16 code units JavaScript sees -------------
std::string to_base36(std::uint32_t v) {
  if (v == 0) return "0";
  std::string s;
  while (v) {
    s.insert(s.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
    v /= 36;
  }
  return s;
}

std::string short_hash(std::string_view text) {
  std::uint32_t h1 = 0xdeadbeefu, h2 = 0x41c6ce57u;
  auto mix = [&](std::uint32_t ch) {
    h1 = (h1 ^ ch) * 2654435761u;
    h2 = (h2 ^ ch) * 1597334677u;
  };
  for (std::size_t i = 0; i < text.size();) {
    code_point cp = decode_utf8_at(text, i);
    char32_t c = cp.length ? cp.value : U'\uFFFD';
    i += cp.length ? cp.length : 1;
    if (c >= 0x10000) {
      char32_t v = c - 0x10000;
      mix(0xD800u + static_cast<std::uint32_t>(v >> 10));
      mix(0xDC00u + static_cast<std::uint32_t>(v & 0x3FF));
    } else {
      mix(static_cast<std::uint32_t>(c));
    }
  }
  h1 = ((h1 ^ (h1 >> 16)) * 2246822507u) ^ ((h2 ^ (h2 >> 13)) * 3266489909u);
  h2 = ((h2 ^ (h2 >> 16)) * 2246822507u) ^ ((h1 ^ (h1 >> 13)) * 3266489909u);
  return to_base36(h2) + to_base36(h1);
}

// ---- request ------------------------------------------------------------------------------
// pi-ai normalizeIdPart: [^a-zA-Z0-9_-] -> '_', at most 64 characters, trailing '_' removed.
std::string normalize_id_part(std::string_view part) {
  std::string s = wire::sanitize_id(part, 64);
  while (!s.empty() && s.back() == '_') s.pop_back();
  return s;
}

std::pair<std::string, std::optional<std::string>> split_tool_id(std::string_view id) {
  auto bar = id.find('|');
  if (bar == std::string_view::npos) return {std::string(id), std::nullopt};
  std::string_view rest = id.substr(bar + 1);
  auto bar2 = rest.find('|');  // JavaScript's split("|") then [a, b]: a third part is dropped
  if (bar2 != std::string_view::npos) rest = rest.substr(0, bar2);
  return {std::string(id.substr(0, bar)), std::string(rest)};
}

bj::object input_image(const bj::object& block) {
  return bj::object{{"type", "input_image"},
                    {"detail", "auto"},
                    {"image_url", "data:" + str_of(block, "mimeType") + ";base64," + str_of(block, "data")}};
}

// pi-ai parseTextSignature: {"v":1,"id",phase?} JSON, else the whole text is the id.
std::pair<std::string, std::string> parse_text_signature(std::string_view signature) {
  if (signature.empty()) return {};
  if (signature.front() == '{') {
    auto parsed = sessionrt::json::parse_object(signature);
    if (parsed.ok() && get_int(*parsed, "v") == 1) {
      if (auto id = get_string(*parsed, "id")) {
        std::string phase = str_of(*parsed, "phase");
        if (phase != "commentary" && phase != "final_answer") phase.clear();
        return {std::string(*id), phase};
      }
    }
  }
  return {std::string(signature), ""};
}

bool is_openai_tool_call_provider(std::string_view provider) {
  return provider == "openai" || provider == "openai-codex" || provider == "opencode";
}

bj::array convert_input(const provider_call& call) {
  const auto& provider = *call.provider;
  const auto& model = *call.model;
  const bool images = wire::model_accepts_images(model);
  // pi-ai's normalizer also sees the assistant message the tool call came from; wire_common's
  // passes the id only, so each tool-call id's source (provider, api) is looked up here.
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> sources;
  for (const auto& mv : *call.messages) {
    const bj::object* m = mv.if_object();
    if (!m || wire::str(*m, "role") != "assistant") continue;
    if (const bj::array* content = wire::content_array(*m))
      for (const auto& bv : *content)
        if (const bj::object* b = bv.if_object(); b && wire::str(*b, "type") == "toolCall")
          sources[std::string(wire::str(*b, "id"))] = {str_of(*m, "provider"), str_of(*m, "api")};
  }
  const bool openai_ids = is_openai_tool_call_provider(provider.id);
  auto normalize = [&](std::string_view id) -> std::string {
    if (!openai_ids || id.find('|') == std::string_view::npos) return normalize_id_part(id);
    auto [call_id, item_id] = split_tool_id(id);
    auto source = sources.find(id);
    const bool foreign = source == sources.end() || source->second.first != provider.id || source->second.second != call.api;
    std::string item;
    if (foreign) {
      item = "fc_" + short_hash(item_id.value_or(""));
      if (item.size() > 64) item.resize(64);
    } else {
      item = normalize_id_part(item_id.value_or(""));
    }
    if (item.rfind("fc_", 0) != 0) item = normalize_id_part("fc_" + item);
    return normalize_id_part(call_id) + "|" + item;
  };
  std::vector<bj::object> messages = wire::transform_messages(call, normalize);

  bj::array input;
  if (!call.system_prompt.empty())
    input.push_back(bj::object{{"role", model.reasoning ? "developer" : "system"}, {"content", call.system_prompt}});

  std::size_t msg_index = 0;
  for (const bj::object& msg : messages) {
    const std::string_view role = wire::str(msg, "role");
    if (role == "user") {
      const bj::value* content = msg.if_contains("content");
      if (content && content->is_string()) {
        input.push_back(bj::object{
            {"role", "user"},
            {"content", bj::array{bj::object{{"type", "input_text"}, {"text", content->get_string()}}}}});
      } else {
        bj::array parts;
        if (content && content->is_array()) {
          for (const auto& bv : content->get_array()) {
            const bj::object* b = bv.if_object();
            if (!b) continue;
            if (wire::str(*b, "type") == "text") {
              parts.push_back(bj::object{{"type", "input_text"}, {"text", wire::str(*b, "text")}});
            } else {
              parts.push_back(input_image(*b));
            }
          }
        }
        if (parts.empty()) continue;  // pi-ai skips it before counting it
        input.push_back(bj::object{{"role", "user"}, {"content", std::move(parts)}});
      }
    } else if (role == "assistant") {
      bj::array output;
      const bool different_model = wire::str(msg, "model") != model.id && wire::str(msg, "provider") == provider.id &&
                                   wire::str(msg, "api") == call.api;
      if (const bj::array* content = get_array(msg, "content")) {
        for (const auto& bv : *content) {
          const bj::object* b = bv.if_object();
          if (!b) continue;
          const std::string_view type = wire::str(*b, "type");
          if (type == "thinking") {
            const std::string_view signature = wire::str(*b, "thinkingSignature");
            if (signature.empty()) continue;
            // Difference 3: pi-ai's JSON.parse would throw on a signature that is not JSON.
            auto item = sessionrt::json::parse(signature);
            if (item.ok()) output.push_back(std::move(*item));
          } else if (type == "text") {
            auto [id, phase] = parse_text_signature(wire::str(*b, "textSignature"));
            if (id.empty()) {
              id = "msg_" + std::to_string(msg_index);
            } else if (utf16_length(id) > 64) {
              id = "msg_" + short_hash(id);
            }
            bj::object item{{"type", "message"},
                            {"role", "assistant"},
                            {"content", bj::array{bj::object{{"type", "output_text"},
                                                             {"text", wire::str(*b, "text")},
                                                             {"annotations", bj::array{}}}}},
                            {"status", "completed"},
                            {"id", id}};
            if (!phase.empty()) item["phase"] = phase;
            output.push_back(std::move(item));
          } else if (type == "toolCall") {
            auto [call_id, item_id] = split_tool_id(wire::str(*b, "id"));
            // Another model of this provider: no item id (OpenAI pairs fc_ ids with rs_ items).
            if (different_model && item_id && item_id->rfind("fc_", 0) == 0) item_id.reset();
            bj::object item{{"type", "function_call"}};
            if (item_id) item["id"] = *item_id;
            item["call_id"] = call_id;
            item["name"] = wire::str(*b, "name");
            const bj::value* args = b->if_contains("arguments");
            item["arguments"] = args ? sessionrt::json::to_compact(*args) : std::string("{}");
            output.push_back(std::move(item));
          }
        }
      }
      if (output.empty()) continue;
      for (auto& item : output) input.push_back(std::move(item));
    } else if (role == "toolResult") {
      std::string text;
      bool first = true, has_images = false;
      const bj::array* content = get_array(msg, "content");
      if (content) {
        for (const auto& bv : *content) {
          const bj::object* b = bv.if_object();
          if (!b) continue;
          const std::string_view type = wire::str(*b, "type");
          if (type == "text") {
            if (!first) text += '\n';
            text += wire::str(*b, "text");
            first = false;
          } else if (type == "image") {
            has_images = true;
          }
        }
      }
      auto [call_id, item_id] = split_tool_id(wire::str(msg, "toolCallId"));
      (void)item_id;
      bj::value output;
      if (has_images && images) {
        bj::array parts;
        if (!text.empty()) parts.push_back(bj::object{{"type", "input_text"}, {"text", text}});
        for (const auto& bv : *content)
          if (const bj::object* b = bv.if_object(); b && wire::str(*b, "type") == "image") parts.push_back(input_image(*b));
        output = std::move(parts);
      } else {
        output = text.empty() ? std::string("(see attached image)") : text;
      }
      input.push_back(bj::object{{"type", "function_call_output"}, {"call_id", call_id}, {"output", std::move(output)}});
    }
    ++msg_index;
  }
  return input;
}

// Models that cannot turn reasoning off: pi-ai's catalog gives every gpt-5 model
// thinkingLevelMap {off: null}; o1 / o3 / o4 have no "none" effort.
bool reasoning_cannot_be_off(std::string_view model_id) {
  const std::string id = js_lowercase(model_id);
  if (id.rfind("gpt-5", 0) == 0) return true;
  return id.size() >= 2 && id[0] == 'o' && id[1] >= '1' && id[1] <= '9';
}

result<http_request> build(const provider_call& call) {
  const auto& provider = *call.provider;
  const auto& model = *call.model;
  bj::object body;
  body["model"] = model.id;
  body["input"] = convert_input(call);
  body["stream"] = true;
  body["store"] = false;
  const std::int64_t max_tokens = wire::requested_max_tokens(call);
  if (max_tokens > 0) body["max_output_tokens"] = max_tokens;
  if (call.tools && !call.tools->empty()) {
    bj::array tools;
    for (const auto& t : *call.tools)
      tools.push_back(bj::object{{"type", "function"},
                                 {"name", t.name},
                                 {"description", t.description},
                                 {"parameters", t.parameters},
                                 {"strict", false}});
    body["tools"] = std::move(tools);
  }
  // pi-ai with the thinking level off: a reasoning model is asked for effort
  // thinkingLevelMap.off ?? "none", and for none at all where its catalog says off is not a level
  // (off: null, every gpt-5 model). Difference 1: the o-series, which have no "none" effort, get
  // no reasoning key either (pi-ai sends "none").
  if (model.reasoning && !reasoning_cannot_be_off(model.id)) body["reasoning"] = bj::object{{"effort", "none"}};

  http_request req;
  req.url = base_url_or(provider, kDefaultBase) + "/responses";
  req.headers.emplace_back("Content-Type", "application/json");
  // Difference 2: no key, no Authorization header.
  if (!provider.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + provider.api_key);
  wire::apply_provider_headers(req.headers, provider);  // the provider's win, as pi-ai's do
  req.body = sessionrt::json::to_compact(body);
  return req;
}

// ---- stream -------------------------------------------------------------------------------
std::string stop_reason_of(std::string_view status) {
  if (status.empty() || status == "completed" || status == "in_progress" || status == "queued") return "stop";
  if (status == "incomplete") return "length";
  if (status == "failed" || status == "cancelled") return "error";
  return "";  // pi-ai throws "Unhandled stop reason: <status>"
}

class responses_decoder final : public stream_decoder {
 public:
  explicit responses_decoder(assistant_builder& out) : out_(out) {}

  void on_event(const sse_event& event) override {
    if (done_) return;  // an error ended the stream (pi-ai throws out of its loop)
    auto parsed = sessionrt::json::parse_object(event.data);
    if (!parsed.ok()) return;
    const bj::object& e = *parsed;
    std::string_view type = wire::str(e, "type");
    if (type.empty()) type = event.event;
    // The OpenAI client throws on any event whose data has a truthy `error`, with
    // error.message (or the error as JSON) as the text.
    if (const bj::value* error = e.if_contains("error"); wire::truthy(error)) {
      const bj::object* eo = error->if_object();
      const bj::value* m = eo ? eo->if_contains("message") : nullptr;
      if (wire::truthy(m)) {
        fail(m->is_string() ? std::string(m->get_string()) : sessionrt::json::to_compact(*m));
      } else {
        fail(sessionrt::json::to_compact(*error));
      }
      return;
    }

    if (type == "response.created") {
      if (const bj::object* r = get_object(e, "response"))
        if (auto id = get_string(*r, "id")) out_.set_response_id(std::string(*id));
    } else if (type == "response.output_item.added") {
      const bj::object* item = get_object(e, "item");
      if (!item) return;
      const std::string_view kind = wire::str(*item, "type");
      if (kind == "reasoning") {
        start_item(item_kind::reasoning);
        summary_parts_ = 0;
      } else if (kind == "message") {
        start_item(item_kind::message);
        block_ = out_.open_text();
        parts_.clear();
      } else if (kind == "function_call") {
        start_item(item_kind::function_call);
        block_ = out_.open_tool_call(str_of(*item, "call_id") + "|" + str_of(*item, "id"), str_of(*item, "name"));
        arguments_ = str_of(*item, "arguments");
        if (!arguments_.empty()) out_.add_tool_arguments(*block_, arguments_);
      }
    } else if (type == "response.reasoning_summary_part.added") {
      if (item_ == item_kind::reasoning) ++summary_parts_;
    } else if (type == "response.reasoning_summary_text.delta") {
      if (item_ == item_kind::reasoning && summary_parts_ > 0) thinking_ += wire::str(e, "delta");
    } else if (type == "response.reasoning_summary_part.done") {
      if (item_ == item_kind::reasoning && summary_parts_ > 0) thinking_ += "\n\n";
    } else if (type == "response.reasoning_text.delta") {
      if (item_ == item_kind::reasoning) thinking_ += wire::str(e, "delta");
    } else if (type == "response.content_part.added") {
      if (item_ != item_kind::message) return;
      const bj::object* part = get_object(e, "part");
      const std::string kind = part ? str_of(*part, "type") : "";
      if (kind == "output_text" || kind == "refusal") parts_.push_back(kind);
    } else if (type == "response.output_text.delta" || type == "response.refusal.delta") {
      const std::string want = type == "response.output_text.delta" ? "output_text" : "refusal";
      if (item_ != item_kind::message || !block_ || parts_.empty() || parts_.back() != want) return;
      const std::string_view delta = wire::str(e, "delta");
      text_ += delta;
      out_.add_text(*block_, delta);
    } else if (type == "response.function_call_arguments.delta") {
      if (item_ != item_kind::function_call || !block_) return;
      const std::string_view delta = wire::str(e, "delta");
      arguments_ += delta;
      out_.add_tool_arguments(*block_, delta);
    } else if (type == "response.function_call_arguments.done") {
      if (item_ != item_kind::function_call || !block_) return;
      // The whole text replaces the fragments (what they missed is streamed on).
      const std::string whole = str_of(e, "arguments");
      if (whole.size() > arguments_.size() && whole.compare(0, arguments_.size(), arguments_) == 0)
        out_.add_tool_arguments(*block_, std::string_view(whole).substr(arguments_.size()));
      arguments_ = whole;
    } else if (type == "response.output_item.done") {
      const bj::object* item = get_object(e, "item");
      if (!item) return;
      const std::string_view kind = wire::str(*item, "type");
      if (kind == "reasoning" && item_ == item_kind::reasoning && !block_) {
        // pi-ai: the summary parts joined by a blank line, else the reasoning text, else what
        // the deltas gave; the whole item is the signature replayed in the next request.
        std::string summary = join_texts(get_array(*item, "summary"));
        std::string content = join_texts(get_array(*item, "content"));
        std::string thinking = !summary.empty() ? summary : !content.empty() ? content : thinking_;
        std::size_t b = out_.open_thinking();
        if (!thinking.empty()) out_.add_thinking(b, thinking);
        out_.set_thinking_signature(b, sessionrt::json::to_compact(*item));
        end_item();
      } else if (kind == "message" && item_ == item_kind::message && block_) {
        // pi-ai takes the item's own text; the deltas normally spelled it already.
        std::string final_text;
        if (const bj::array* content = get_array(*item, "content"))
          for (const auto& cv : *content)
            if (const bj::object* c = cv.if_object())
              final_text += wire::str(*c, wire::str(*c, "type") == "output_text" ? "text" : "refusal");
        if (final_text.size() > text_.size() && final_text.compare(0, text_.size(), text_) == 0)
          out_.add_text(*block_, std::string_view(final_text).substr(text_.size()));
        end_item();
      } else if (kind == "function_call" && item_ == item_kind::function_call && block_) {
        // pi-ai: parseStreamingJson of the streamed text, else of the item's own.
        std::string text = !arguments_.empty() ? arguments_ : str_of(*item, "arguments");
        bj::value args = wire::parse_streaming_json(text.empty() ? std::string_view("{}") : std::string_view(text));
        out_.set_tool_arguments(*block_, args.is_object() ? std::move(args.get_object()) : bj::object{});
        end_item();
      }
    } else if (type == "response.completed" || type == "response.incomplete") {
      // Difference 6: pi-ai reads only response.completed.
      const bj::object* r = get_object(e, "response");
      if (r) {
        if (auto id = get_string(*r, "id"); id && !id->empty()) out_.set_response_id(std::string(*id));
        if (const bj::object* usage = get_object(*r, "usage")) {
          const bj::object* details = get_object(*usage, "input_tokens_details");
          const std::int64_t cached = details ? wire::count(*details, "cached_tokens") : 0;
          // OpenAI counts cached tokens in input_tokens.
          wire::set_usage(out_, wire::count(*usage, "input_tokens") - cached, wire::count(*usage, "output_tokens"), cached, 0);
        }
      }
      const std::string status = r ? str_of(*r, "status") : std::string();
      const std::string reason = stop_reason_of(status);
      ended_ = true;
      if (reason.empty()) {
        fail("Unhandled stop reason: " + status);
      } else if (reason == "error") {
        fail("An unknown error occurred");  // pi-ai's words for a stream that ends "failed"
      } else {
        out_.set_stop_reason(reason);  // the builder turns "stop" with tool calls into toolUse
      }
    } else if (type == "error") {
      // pi-ai: `Error Code ${code}: ${message}`.
      fail("Error Code " + scalar_text(e, "code") + ": " + scalar_text(e, "message"));
    } else if (type == "response.failed") {
      const bj::object* r = get_object(e, "response");
      const bj::object* error = r ? get_object(*r, "error") : nullptr;
      const bj::object* details = r ? get_object(*r, "incomplete_details") : nullptr;
      std::string message;
      if (error) {
        std::string code = str_of(*error, "code"), text = str_of(*error, "message");
        message = (code.empty() ? "unknown" : code) + ": " + (text.empty() ? "no message" : text);
      } else if (details && !str_of(*details, "reason").empty()) {
        message = "incomplete: " + str_of(*details, "reason");
      } else {
        message = "Unknown error (no error details in response)";
      }
      fail(message);
    }
  }

  bool ended() const override { return ended_; }

 private:
  enum class item_kind { none, reasoning, message, function_call };

  static std::string join_texts(const bj::array* parts) {
    std::string out;
    if (!parts) return out;
    bool first = true;
    for (const auto& pv : *parts) {
      const bj::object* p = pv.if_object();
      if (!p) continue;
      if (!first) out += "\n\n";
      out += wire::str(*p, "text");
      first = false;
    }
    return out;
  }

  // A JavaScript template literal's view of a field: strings as they are, numbers printed,
  // absent as "undefined".
  static std::string scalar_text(const bj::object& o, std::string_view key) {
    const bj::value* v = o.if_contains(key);
    if (!v) return "undefined";
    if (v->is_string()) return std::string(v->get_string());
    if (v->is_null()) return "null";
    return sessionrt::json::to_compact(*v);
  }

  void start_item(item_kind k) {
    flush_thinking();
    item_ = k;
    block_.reset();
    thinking_.clear();
    text_.clear();
    arguments_.clear();
  }
  void end_item() {
    item_ = item_kind::none;
    block_.reset();
  }

  // A reasoning item cut off by an error keeps what its deltas gave (pi-ai keeps the block).
  void flush_thinking() {
    if (item_ != item_kind::reasoning || block_) return;
    std::size_t b = out_.open_thinking();
    if (!thinking_.empty()) out_.add_thinking(b, thinking_);
    block_ = b;
  }

  void fail(std::string message) {
    flush_thinking();
    out_.fail(std::move(message));
    done_ = true;
    ended_ = true;
  }

  assistant_builder& out_;
  item_kind item_ = item_kind::none;
  std::optional<std::size_t> block_;
  std::string thinking_, text_, arguments_;
  int summary_parts_ = 0;
  std::vector<std::string> parts_;
  bool ended_ = false, done_ = false;
};

std::unique_ptr<stream_decoder> make_decoder(const provider_call&, assistant_builder& out) {
  return std::make_unique<responses_decoder>(out);
}

std::string error_text(long status, std::string_view body) { return json_error_text(status, body); }

}  // namespace

const wire_format& openai_responses_wire() {
  static const wire_format format{"openai-responses", &build, &make_decoder, &error_text};
  return format;
}

}  // namespace sessionrt::providers
