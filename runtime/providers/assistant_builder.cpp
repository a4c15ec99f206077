// assistant_builder: see the header. The message's keys come in the order pi-ai's output object
// gets them (role, content, api, provider, model, usage, stopReason, timestamp, then responseId
// and errorMessage as the stream adds them), so a transcript line reads like pi-ai's.
// Block shapes are pi-ai's after a stream: text {type,text}; thinking {type,thinking,
// thinkingSignature?,redacted?}; toolCall {type,id,name,arguments}. Cost is calculateCost's
// arithmetic, term by term, so the doubles are the same bits JavaScript gets.
#include "runtime/providers/assistant_builder.hpp"

#include <algorithm>
#include <utility>

#include "runtime/providers/wire_common.hpp"

namespace sessionrt::providers {

namespace bj = boost::json;

assistant_builder::assistant_builder(std::string api, std::string provider, std::string model, actors::model_cost cost,
                                     std::function<void(std::string_view)> on_text)
    : api_(std::move(api)), provider_(std::move(provider)), model_(std::move(model)), cost_(cost), on_text_(std::move(on_text)) {}

std::size_t assistant_builder::open_text() {
  blocks_.push_back(block{block::kind::text, {}, {}, {}, {}, false, false, {}});
  return blocks_.size() - 1;
}

std::size_t assistant_builder::open_thinking() {
  blocks_.push_back(block{block::kind::thinking, {}, {}, {}, {}, false, false, {}});
  return blocks_.size() - 1;
}

std::size_t assistant_builder::open_tool_call(std::string id, std::string name) {
  blocks_.push_back(block{block::kind::tool_call, {}, std::move(id), std::move(name), {}, false, false, {}});
  return blocks_.size() - 1;
}

// Out-of-range indexes and pieces for a block of another kind are ignored: a decoder bug or a
// confused stream must not crash the runner (pi-ai ignores them the same way).
void assistant_builder::add_text(std::size_t b, std::string_view piece) {
  if (b >= blocks_.size() || blocks_[b].k != block::kind::text) return;
  blocks_[b].text.append(piece);
  if (on_text_ && !piece.empty()) on_text_(piece);
}

void assistant_builder::add_thinking(std::size_t b, std::string_view piece) {
  if (b >= blocks_.size() || blocks_[b].k != block::kind::thinking || blocks_[b].redacted) return;
  blocks_[b].text.append(piece);
}

void assistant_builder::set_thinking_signature(std::size_t b, std::string signature) {
  if (b >= blocks_.size() || blocks_[b].k != block::kind::thinking) return;
  blocks_[b].signature = std::move(signature);
}

void assistant_builder::set_redacted_thinking(std::size_t b, std::string data) {
  if (b >= blocks_.size() || blocks_[b].k != block::kind::thinking) return;
  // pi-ai (anthropic.js, redacted_thinking): a placeholder text, the opaque data as signature.
  blocks_[b].text = "[Reasoning redacted]";
  blocks_[b].signature = std::move(data);
  blocks_[b].redacted = true;
}

void assistant_builder::add_tool_arguments(std::size_t b, std::string_view json_fragment) {
  if (b >= blocks_.size() || blocks_[b].k != block::kind::tool_call) return;
  blocks_[b].text.append(json_fragment);
}

void assistant_builder::set_tool_arguments(std::size_t b, bj::object args) {
  if (b >= blocks_.size() || blocks_[b].k != block::kind::tool_call) return;
  blocks_[b].args = std::move(args);
  blocks_[b].has_object_args = true;
}

void assistant_builder::set_tool_call_id(std::size_t b, std::string id) {
  if (b >= blocks_.size() || blocks_[b].k != block::kind::tool_call) return;
  blocks_[b].id = std::move(id);
}

void assistant_builder::fail(std::string error_message) {
  error_message_ = error_message.empty() ? "An unknown error occurred" : std::move(error_message);
  stop_reason_ = "error";
}

bool assistant_builder::has_tool_calls() const {
  return std::any_of(blocks_.begin(), blocks_.end(), [](const block& b) { return b.k == block::kind::tool_call; });
}

bj::object assistant_builder::finish(std::int64_t timestamp_ms) const {
  bj::array content;
  for (const auto& b : blocks_) {
    bj::object o;
    switch (b.k) {
      case block::kind::text:
        o["type"] = "text";
        o["text"] = b.text;
        break;
      case block::kind::thinking:
        o["type"] = "thinking";
        o["thinking"] = b.text;
        // pi-ai's Anthropic reader starts every thinking block with thinkingSignature "" (so
        // its transcripts carry the key even when no signature_delta came); the other readers
        // leave it undefined until a signature exists.
        if (!b.signature.empty() || api_ == "anthropic-messages") o["thinkingSignature"] = b.signature;
        if (b.redacted) o["redacted"] = true;
        break;
      case block::kind::tool_call: {
        o["type"] = "toolCall";
        o["id"] = b.id;
        o["name"] = b.name;
        if (b.has_object_args) {
          o["arguments"] = b.args;
        } else {
          bj::value parsed = wire::parse_streaming_json(b.text);
          // A tool's arguments are an object; JSON text of another kind is no call anyone can run.
          o["arguments"] = parsed.is_object() ? std::move(parsed) : bj::value(bj::object());
        }
        break;
      }
    }
    content.push_back(std::move(o));
  }

  const double cost_input = (cost_.input / 1000000) * static_cast<double>(usage_.input);
  const double cost_output = (cost_.output / 1000000) * static_cast<double>(usage_.output);
  const double cost_cache_read = (cost_.cache_read / 1000000) * static_cast<double>(usage_.cache_read);
  const double cost_cache_write = (cost_.cache_write / 1000000) * static_cast<double>(usage_.cache_write);
  bj::object cost;
  cost["input"] = cost_input;
  cost["output"] = cost_output;
  cost["cacheRead"] = cost_cache_read;
  cost["cacheWrite"] = cost_cache_write;
  cost["total"] = cost_input + cost_output + cost_cache_read + cost_cache_write;

  bj::object usage;
  usage["input"] = usage_.input;
  usage["output"] = usage_.output;
  usage["cacheRead"] = usage_.cache_read;
  usage["cacheWrite"] = usage_.cache_write;
  usage["totalTokens"] = usage_.total();
  usage["cost"] = std::move(cost);

  std::string stop = stop_reason_;
  if (stop == "stop" && has_tool_calls()) stop = "toolUse";

  bj::object m;
  m["role"] = "assistant";
  m["content"] = std::move(content);
  m["api"] = api_;
  m["provider"] = provider_;
  m["model"] = model_;
  m["usage"] = std::move(usage);
  m["stopReason"] = stop;
  m["timestamp"] = timestamp_ms;
  if (!response_id_.empty()) m["responseId"] = response_id_;
  if (!error_message_.empty()) m["errorMessage"] = error_message_;
  return m;
}

}  // namespace sessionrt::providers
