// assistant_builder: the pi-ai AssistantMessage one streamed call becomes, built up as a
// wire format's stream decoder reads events (pi-ai types.d.ts AssistantMessage):
//   {role:"assistant", content:[{type:"text",text} | {type:"thinking",thinking,thinkingSignature?,redacted?}
//    | {type:"toolCall",id,name,arguments:{...}}], api, provider, model, responseId?,
//    usage:{input,output,cacheRead,cacheWrite,totalTokens,cost:{input,output,cacheRead,cacheWrite,total}},
//    stopReason: "stop"|"length"|"toolUse"|"error"|"aborted", errorMessage?, timestamp}
// Blocks are addressed by the index the decoder gave them when it opened them. Tool-call
// arguments arrive as JSON text fragments; finish() parses each whole (an unparsable text
// becomes {} as pi-ai's parseStreamingJson does). Cost = tokens × the model's cost per million.
// Text deltas go to on_text as they are added. Not thread-safe: one builder per call.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/session/model_catalog_settings.hpp"

namespace sessionrt::providers {

struct token_usage {
  std::int64_t input = 0, output = 0, cache_read = 0, cache_write = 0;
  std::int64_t total() const { return input + output + cache_read + cache_write; }
};

class assistant_builder {
 public:
  assistant_builder(std::string api, std::string provider, std::string model, actors::model_cost cost,
                    std::function<void(std::string_view)> on_text = {});

  // Opens a block; returns its index (the order of content[]).
  std::size_t open_text();
  std::size_t open_thinking();
  std::size_t open_tool_call(std::string id, std::string name);
  void add_text(std::size_t block, std::string_view piece);       // also streams to on_text
  void add_thinking(std::size_t block, std::string_view piece);
  void set_thinking_signature(std::size_t block, std::string signature);
  void set_redacted_thinking(std::size_t block, std::string data);  // opaque, kept as pi-ai keeps it
  void add_tool_arguments(std::size_t block, std::string_view json_fragment);
  void set_tool_arguments(std::size_t block, boost::json::object args);  // whole (Google)
  void set_tool_call_id(std::size_t block, std::string id);

  void set_response_id(std::string id) { response_id_ = std::move(id); }
  token_usage& usage() { return usage_; }
  void set_stop_reason(std::string reason) { stop_reason_ = std::move(reason); }  // stop|length|toolUse|error|aborted
  const std::string& stop_reason() const { return stop_reason_; }
  // An API error event: stopReason "error" with the provider's text.
  void fail(std::string error_message);
  bool failed() const { return !error_message_.empty(); }
  const std::string& error_message() const { return error_message_; }
  std::size_t blocks() const { return blocks_.size(); }
  bool has_tool_calls() const;

  // The message; timestamp_ms goes in `timestamp`. A stopReason of "stop" with tool calls
  // present becomes "toolUse" (pi-ai does the same for providers that say "stop").
  boost::json::object finish(std::int64_t timestamp_ms) const;

 private:
  struct block {
    enum class kind { text, thinking, tool_call } k;
    std::string text;        // text / thinking / tool-call argument JSON
    std::string id, name;    // tool call
    std::string signature;   // thinking
    bool redacted = false;
    bool has_object_args = false;
    boost::json::object args;
  };
  std::string api_, provider_, model_;
  actors::model_cost cost_;
  std::function<void(std::string_view)> on_text_;
  std::vector<block> blocks_;
  std::string response_id_, stop_reason_ = "stop", error_message_;
  token_usage usage_;
};

}  // namespace sessionrt::providers
