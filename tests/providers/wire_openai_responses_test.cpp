// openai-responses wire format: the request body and the AssistantMessage from a stream, checked
// against what pi-ai 0.73.1 (streamSimple, thinking off) sends and builds for the same inputs.
// The expected bodies and messages below were produced by running pi-ai itself against a local
// server that captured its request and answered with the stream shown (tests/providers/
// piai_install.sh installs it); known differences are spelled out where a test allows them.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/providers/assistant_builder.hpp"
#include "runtime/providers/sse_parser.hpp"
#include "runtime/providers/wire_format.hpp"

namespace {

namespace bj = boost::json;
using namespace sessionrt::providers;
using sessionrt::json::to_compact;

bj::value parse(std::string_view text) {
  auto r = sessionrt::json::parse(text);
  REQUIRE(r.ok());
  return std::move(*r);
}

// A provider + model + context, and the call over them.
struct fixture {
  sessionrt::actors::provider_config provider;
  sessionrt::actors::provider_model model;
  bj::array messages;
  std::vector<tool_spec> tools;
  std::int64_t max_tokens = 0;
  std::string system_prompt;

  provider_call call() const {
    provider_call c;
    c.provider = &provider;
    c.model = &model;
    c.api = "openai-responses";
    c.system_prompt = system_prompt;
    c.messages = &messages;
    c.tools = &tools;
    c.max_tokens = max_tokens;
    return c;
  }
};

// pi-ai's gpt-5 entry (reasoning, text + image input; its thinkingLevelMap {off: null} is what
// the format knows of gpt-5 models: the reference bodies were made with it).
fixture gpt5() {
  fixture f;
  f.provider.id = "openai";
  f.provider.api = "openai-responses";
  f.provider.api_key = "test-key";
  f.model.id = "gpt-5";
  f.model.reasoning = true;
  f.model.input = {"text", "image"};
  f.model.cost = {1.25, 10, 0.125, 0};
  f.model.context_window = 400000;
  f.model.max_tokens = 128000;
  return f;
}

fixture gpt4o() {
  fixture f = gpt5();
  f.model.id = "gpt-4o";
  f.model.reasoning = false;
  f.model.input = {"text"};
  f.model.cost = {2.5, 10, 1.25, 0};
  f.model.max_tokens = 16384;
  return f;
}

tool_spec bash_tool() {
  return {"bash", "Run a shell command",
          parse(R"({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]})").as_object()};
}

struct streamed {
  bj::object message;
  bool ended = false;
  std::string text;  // what on_text saw, in order
};

// Feeds `sse` through a real sse_parser in pieces of `chunk` bytes (cutting lines, CRLFs and
// UTF-8 characters wherever they fall) into the format's decoder.
streamed run_stream(const fixture& f, std::string_view sse, std::size_t chunk) {
  streamed out;
  const provider_call call = f.call();
  assistant_builder builder(call.api, f.provider.id, f.model.id, f.model.cost,
                            [&](std::string_view piece) { out.text += piece; });
  auto decoder = openai_responses_wire().decoder(call, builder);
  sse_parser parser;
  const sse_parser::sink sink = [&](sse_event&& e) { decoder->on_event(e); };
  for (std::size_t i = 0; i < sse.size(); i += chunk) parser.feed(sse.substr(i, chunk), sink);
  parser.finish(sink);
  out.message = builder.finish(1234);
  out.ended = decoder->ended();
  return out;
}

// The same stream cut in many ways must decode to one message; that message is returned.
streamed run_split(const fixture& f, std::string_view sse) {
  streamed whole = run_stream(f, sse, sse.size() + 1);
  for (std::size_t chunk : {1u, 2u, 3u, 7u, 64u, 1000u}) {
    streamed part = run_stream(f, sse, chunk);
    INFO("chunk size " << chunk);
    CHECK(to_compact(part.message) == to_compact(whole.message));
    CHECK(part.ended == whole.ended);
    CHECK(part.text == whole.text);
  }
  return whole;
}

// pi-ai's message without what it has that ours has not: timestamp (clock) and the text
// blocks' textSignature (assistant_builder keeps none).
// The timestamp goes where pi-ai's output object has it: right after stopReason.
bj::object expected_message(std::string_view pi_ai) {
  bj::object in = parse(pi_ai).as_object();
  bj::object m;
  for (auto& [k, v] : in) {
    if (k == "timestamp") continue;
    m[k] = v;
    if (k == "stopReason") m["timestamp"] = 1234;
  }
  if (auto* content = m.if_contains("content"))
    for (auto& b : content->as_array()) b.as_object().erase("textSignature");
  return m;
}

std::string header(const http_request& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "<none>";
}

constexpr std::string_view kMixedContext = R"JSON([
 {
  "role": "user",
  "content": "List src/ please.",
  "timestamp": 1
 },
 {
  "role": "assistant",
  "content": [
   {
    "type": "thinking",
    "thinking": "**Planning** look at files",
    "thinkingSignature": "{\"id\":\"rs_prev1\",\"type\":\"reasoning\",\"encrypted_content\":\"gAAAAABprev==\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"**Planning** look at files\"}]}"
   },
   {
    "type": "text",
    "text": "Looking.",
    "textSignature": "{\"v\": 1, \"id\": \"msg_prev1\", \"phase\": \"commentary\"}"
   },
   {
    "type": "toolCall",
    "id": "call_A1|fc_A1",
    "name": "bash",
    "arguments": {
     "command": "ls src/"
    }
   }
  ],
  "api": "openai-responses",
  "provider": "openai",
  "model": "gpt-5",
  "usage": {
   "input": 0,
   "output": 0,
   "cacheRead": 0,
   "cacheWrite": 0,
   "totalTokens": 0,
   "cost": {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "total": 0
   }
  },
  "stopReason": "toolUse",
  "timestamp": 2
 },
 {
  "role": "toolResult",
  "toolCallId": "call_A1|fc_A1",
  "toolName": "bash",
  "content": [
   {
    "type": "text",
    "text": "a.cpp"
   },
   {
    "type": "text",
    "text": "b.cpp"
   }
  ],
  "isError": false,
  "timestamp": 3
 },
 {
  "role": "assistant",
  "content": [
   {
    "type": "thinking",
    "thinking": "Read it.",
    "thinkingSignature": "sig-abc123"
   },
   {
    "type": "text",
    "text": "Reading a.cpp."
   },
   {
    "type": "toolCall",
    "id": "toolu_01A",
    "name": "read",
    "arguments": {
     "path": "src/a.cpp"
    }
   }
  ],
  "api": "anthropic-messages",
  "provider": "anthropic",
  "model": "claude-sonnet-4-5",
  "usage": {
   "input": 0,
   "output": 0,
   "cacheRead": 0,
   "cacheWrite": 0,
   "totalTokens": 0,
   "cost": {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "total": 0
   }
  },
  "stopReason": "toolUse",
  "timestamp": 2
 },
 {
  "role": "toolResult",
  "toolCallId": "toolu_01A",
  "toolName": "read",
  "content": [
   {
    "type": "text",
    "text": "see image"
   },
   {
    "type": "image",
    "data": "iVBORw0KGgo=",
    "mimeType": "image/png"
   }
  ],
  "isError": false,
  "timestamp": 4
 },
 {
  "role": "assistant",
  "content": [
   {
    "type": "toolCall",
    "id": "call_X9|item id/with spaces",
    "name": "bash",
    "arguments": {
     "command": "pwd"
    }
   }
  ],
  "api": "openai-completions",
  "provider": "openai",
  "model": "gpt-4o",
  "usage": {
   "input": 0,
   "output": 0,
   "cacheRead": 0,
   "cacheWrite": 0,
   "totalTokens": 0,
   "cost": {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "total": 0
   }
  },
  "stopReason": "toolUse",
  "timestamp": 2
 },
 {
  "role": "toolResult",
  "toolCallId": "call_X9|item id/with spaces",
  "toolName": "bash",
  "content": [
   {
    "type": "text",
    "text": "/work"
   }
  ],
  "isError": false,
  "timestamp": 5
 },
 {
  "role": "user",
  "content": [
   {
    "type": "text",
    "text": "What is in this picture?"
   },
   {
    "type": "image",
    "data": "/9j/4AAQ",
    "mimeType": "image/jpeg"
   }
  ],
  "timestamp": 6
 },
 {
  "role": "assistant",
  "content": [
   {
    "type": "text",
    "text": "partial"
   }
  ],
  "api": "openai-responses",
  "provider": "openai",
  "model": "gpt-5",
  "usage": {
   "input": 0,
   "output": 0,
   "cacheRead": 0,
   "cacheWrite": 0,
   "totalTokens": 0,
   "cost": {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "total": 0
   }
  },
  "stopReason": "error",
  "timestamp": 2
 },
 {
  "role": "assistant",
  "content": [
   {
    "type": "text",
    "text": "Let me check."
   },
   {
    "type": "toolCall",
    "id": "call_B2|fc_B2",
    "name": "bash",
    "arguments": {
     "command": "file x.jpg"
    }
   }
  ],
  "api": "openai-responses",
  "provider": "openai",
  "model": "gpt-4.1",
  "usage": {
   "input": 0,
   "output": 0,
   "cacheRead": 0,
   "cacheWrite": 0,
   "totalTokens": 0,
   "cost": {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "total": 0
   }
  },
  "stopReason": "toolUse",
  "timestamp": 2
 },
 {
  "role": "user",
  "content": "never mind, continue",
  "timestamp": 7
 }
])JSON";
constexpr std::string_view kMixedBodyPiAi = R"JSON({"model":"gpt-5","input":[{"role":"developer","content":"You are a coding agent."},{"role":"user","content":[{"type":"input_text","text":"List src/ please."}]},{"id":"rs_prev1","type":"reasoning","encrypted_content":"gAAAAABprev==","summary":[{"type":"summary_text","text":"**Planning** look at files"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking.","annotations":[]}],"status":"completed","id":"msg_prev1","phase":"commentary"},{"type":"function_call","id":"fc_A1","call_id":"call_A1","name":"bash","arguments":"{\"command\":\"ls src/\"}"},{"type":"function_call_output","call_id":"call_A1","output":"a.cpp\nb.cpp"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Read it.","annotations":[]}],"status":"completed","id":"msg_3"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Reading a.cpp.","annotations":[]}],"status":"completed","id":"msg_3"},{"type":"function_call","call_id":"toolu_01A","name":"read","arguments":"{\"path\":\"src/a.cpp\"}"},{"type":"function_call_output","call_id":"toolu_01A","output":[{"type":"input_text","text":"see image"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,iVBORw0KGgo="}]},{"type":"function_call","id":"fc_1uxrh7g8r00sg","call_id":"call_X9","name":"bash","arguments":"{\"command\":\"pwd\"}"},{"type":"function_call_output","call_id":"call_X9","output":"/work"},{"role":"user","content":[{"type":"input_text","text":"What is in this picture?"},{"type":"input_image","detail":"auto","image_url":"data:image/jpeg;base64,/9j/4AAQ"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me check.","annotations":[]}],"status":"completed","id":"msg_8"},{"type":"function_call","call_id":"call_B2","name":"bash","arguments":"{\"command\":\"file x.jpg\"}"},{"type":"function_call_output","call_id":"call_B2","output":"No result provided"},{"role":"user","content":[{"type":"input_text","text":"never mind, continue"}]}],"stream":true,"store":false,"max_output_tokens":32000,"tools":[{"type":"function","name":"bash","description":"Run a shell command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]},"strict":false}]})JSON";
constexpr std::string_view kFullStream = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_68b1","object":"response","created_at":1756000000,"status":"in_progress","model":"gpt-5-2025-08-07","output":[],"usage":null}}

event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_68b1","object":"response","created_at":1756000000,"status":"in_progress","model":"gpt-5-2025-08-07","output":[],"usage":null}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_68b1","type":"reasoning","encrypted_content":"gAAAAABnew==","summary":[]}}

event: response.reasoning_summary_part.added
data: {"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":"rs_68b1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_68b1","output_index":0,"summary_index":0,"delta":"**Checking","obfuscation":"xY"}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":5,"item_id":"rs_68b1","output_index":0,"summary_index":0,"delta":" the weather**\n\nNeed a","obfuscation":"xY"}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":6,"item_id":"rs_68b1","output_index":0,"summary_index":0,"delta":" tool call.","obfuscation":"xY"}

event: response.reasoning_summary_text.done
data: {"type":"response.reasoning_summary_text.done","sequence_number":7,"item_id":"rs_68b1","output_index":0,"summary_index":0,"text":"**Checking the weather**\n\nNeed a tool call."}

event: response.reasoning_summary_part.done
data: {"type":"response.reasoning_summary_part.done","sequence_number":8,"item_id":"rs_68b1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"**Checking the weather**\n\nNeed a tool call."}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":9,"output_index":0,"item":{"id":"rs_68b1","type":"reasoning","encrypted_content":"gAAAAABnew==","summary":[{"type":"summary_text","text":"**Checking the weather**\n\nNeed a tool call."}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":10,"output_index":1,"item":{"id":"msg_68b1","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":11,"item_id":"msg_68b1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_68b1","output_index":1,"content_index":0,"delta":"Let me","logprobs":[],"obfuscation":"ab"}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":13,"item_id":"msg_68b1","output_index":1,"content_index":0,"delta":" check the weather in Par","logprobs":[],"obfuscation":"ab"}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":14,"item_id":"msg_68b1","output_index":1,"content_index":0,"delta":"is \u2014 \u2600\ufe0f ","logprobs":[],"obfuscation":"ab"}

event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":15,"item_id":"msg_68b1","output_index":1,"content_index":0,"text":"Let me check the weather in Paris \u2014 \u2600\ufe0f ","logprobs":[]}

event: response.content_part.done
data: {"type":"response.content_part.done","sequence_number":16,"item_id":"msg_68b1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"Let me check the weather in Paris \u2014 \u2600\ufe0f "}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":17,"output_index":1,"item":{"id":"msg_68b1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Let me check the weather in Paris \u2014 \u2600\ufe0f "}],"role":"assistant","phase":"commentary"}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":18,"output_index":2,"item":{"id":"fc_68b1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_W3ather","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":19,"item_id":"fc_68b1","output_index":2,"delta":"{\"city\":","obfuscation":"q"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":20,"item_id":"fc_68b1","output_index":2,"delta":"\"Paris\",\"un","obfuscation":"q"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":21,"item_id":"fc_68b1","output_index":2,"delta":"its\":\"c\"}","obfuscation":"q"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":22,"item_id":"fc_68b1","output_index":2,"arguments":"{\"city\":\"Paris\",\"units\":\"c\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":23,"output_index":2,"item":{"id":"fc_68b1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\",\"units\":\"c\"}","call_id":"call_W3ather","name":"get_weather"}}

event: response.completed
data: {"type":"response.completed","sequence_number":24,"response":{"id":"resp_68b1","object":"response","created_at":1756000000,"status":"completed","model":"gpt-5-2025-08-07","output":[],"usage":{"input_tokens":1834,"input_tokens_details":{"cached_tokens":1536},"output_tokens":213,"output_tokens_details":{"reasoning_tokens":128},"total_tokens":2047}}}

)JSON";
constexpr std::string_view kFullStreamMessagePiAi = R"JSON({"role":"assistant","content":[{"type":"thinking","thinking":"**Checking the weather**\n\nNeed a tool call.","thinkingSignature":"{\"id\":\"rs_68b1\",\"type\":\"reasoning\",\"encrypted_content\":\"gAAAAABnew==\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"**Checking the weather**\\n\\nNeed a tool call.\"}]}"},{"type":"text","text":"Let me check the weather in Paris — ☀️ ","textSignature":"{\"v\":1,\"id\":\"msg_68b1\",\"phase\":\"commentary\"}"},{"type":"toolCall","id":"call_W3ather|fc_68b1","name":"get_weather","arguments":{"city":"Paris","units":"c"}}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":298,"output":213,"cacheRead":1536,"cacheWrite":0,"totalTokens":2047,"cost":{"input":0.00037250000000000006,"output":0.0021300000000000004,"cacheRead":0.000192,"cacheWrite":0,"total":0.0026945000000000003}},"stopReason":"toolUse","responseId":"resp_68b1"})JSON";
constexpr std::string_view kTextOnlyModelContext = R"JSON([{"role": "user", "content": [{"type": "text", "text": "Look:"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}, {"type": "image", "data": "BBBB", "mimeType": "image/png"}], "timestamp": 1}, {"role": "assistant", "content": [{"type": "toolCall", "id": "call_Z|été😀", "name": "shot", "arguments": {}}], "api": "azure-openai-responses", "provider": "openai", "model": "gpt-4o", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "toolUse", "timestamp": 2}, {"role": "toolResult", "toolCallId": "call_Z|été😀", "toolName": "shot", "content": [{"type": "text", "text": "see image"}, {"type": "image", "data": "CCCC", "mimeType": "image/png"}], "isError": false, "timestamp": 3}, {"role": "assistant", "content": [{"type": "toolCall", "id": "call_Q", "name": "shot", "arguments": {}}], "api": "openai-responses", "provider": "openai", "model": "gpt-4o", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "toolUse", "timestamp": 2}, {"role": "toolResult", "toolCallId": "call_Q", "toolName": "shot", "content": [{"type": "image", "data": "DDDD", "mimeType": "image/png"}], "isError": true, "timestamp": 4}])JSON";
constexpr std::string_view kStream_error_event = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_e","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_e","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_e","output_index":0,"content_index":0,"delta":"Hel"}

event: error
data: {"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500.","param":null,"sequence_number":4}

)JSON";
constexpr std::string_view kPiAi_error_event = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"Error Code rate_limit_exceeded: Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500."})JSON";
constexpr std::string_view kStream_error_nested = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: error
data: {"type":"error","sequence_number":1,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}

)JSON";
constexpr std::string_view kPiAi_error_nested = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"Your input exceeds the context window of this model. Please adjust your input and try again."})JSON";
constexpr std::string_view kStream_failed_error = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_e","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_e","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_e","output_index":0,"content_index":0,"delta":"Hel"}

event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_e","status":"failed","error":{"code":"server_error","message":"The server had an error while processing your request."},"incomplete_details":null,"usage":null}}

)JSON";
constexpr std::string_view kPiAi_failed_error = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"server_error: The server had an error while processing your request."})JSON";
constexpr std::string_view kStream_failed_details = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_e","status":"failed","error":null,"incomplete_details":{"reason":"max_output_tokens"}}}

)JSON";
constexpr std::string_view kPiAi_failed_details = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"incomplete: max_output_tokens"})JSON";
constexpr std::string_view kStream_failed_none = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_e","status":"failed","error":null,"incomplete_details":null}}

)JSON";
constexpr std::string_view kPiAi_failed_none = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"Unknown error (no error details in response)"})JSON";
constexpr std::string_view kStream_completed_incomplete = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_e","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_e","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_e","output_index":0,"content_index":0,"delta":"Hel"}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"incomplete","usage":{"input_tokens":20,"output_tokens":16,"total_tokens":36}}}

)JSON";
constexpr std::string_view kPiAi_completed_incomplete = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":16,"cacheRead":0,"cacheWrite":0,"totalTokens":36,"cost":{"input":5e-05,"output":0.00016,"cacheRead":0,"cacheWrite":0,"total":0.00021}},"stopReason":"length","responseId":"resp_e"})JSON";
constexpr std::string_view kStream_completed_cancelled = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"cancelled","usage":{"input_tokens":20,"output_tokens":0,"total_tokens":20}}}

)JSON";
constexpr std::string_view kPiAi_completed_cancelled = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":5e-05,"output":0,"cacheRead":0,"cacheWrite":0,"total":5e-05}},"stopReason":"error","responseId":"resp_e","errorMessage":"An unknown error occurred"})JSON";
constexpr std::string_view kStream_completed_weird = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"paused","usage":{"input_tokens":20,"output_tokens":0,"total_tokens":20}}}

)JSON";
constexpr std::string_view kPiAi_completed_weird = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":5e-05,"output":0,"cacheRead":0,"cacheWrite":0,"total":5e-05}},"stopReason":"error","responseId":"resp_e","errorMessage":"Unhandled stop reason: paused"})JSON";
constexpr std::string_view kStream_refusal = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_r","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_r","output_index":0,"content_index":0,"part":{"type":"refusal","refusal":""}}

event: response.refusal.delta
data: {"type":"response.refusal.delta","sequence_number":3,"item_id":"msg_r","output_index":0,"content_index":0,"delta":"I can't help"}

event: response.refusal.delta
data: {"type":"response.refusal.delta","sequence_number":4,"item_id":"msg_r","output_index":0,"content_index":0,"delta":" with that."}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"msg_r","type":"message","status":"completed","content":[{"type":"refusal","refusal":"I can't help with that."}],"role":"assistant"}}

event: response.completed
data: {"type":"response.completed","sequence_number":6,"response":{"id":"resp_e","status":"completed","usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":7,"total_tokens":27}}}

)JSON";
constexpr std::string_view kPiAi_refusal = R"JSON({"role":"assistant","content":[{"type":"text","text":"I can't help with that.","textSignature":"{\"v\":1,\"id\":\"msg_r\"}"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":27,"cost":{"input":5e-05,"output":7.000000000000001e-05,"cacheRead":0,"cacheWrite":0,"total":0.00012000000000000002}},"stopReason":"stop","responseId":"resp_e"})JSON";
constexpr std::string_view kStream_args_done_differs = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_d","type":"function_call","status":"in_progress","arguments":"","call_id":"call_d","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_d","output_index":0,"delta":"{\"city\":\"Lyon\""}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":3,"item_id":"fc_d","output_index":0,"arguments":"{\"city\":\"Nice\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"id":"fc_d","type":"function_call","status":"completed","arguments":"{\"city\":\"Nice\"}","call_id":"call_d","name":"get_weather"}}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"completed","usage":{"input_tokens":20,"output_tokens":9,"total_tokens":29}}}

)JSON";
constexpr std::string_view kPiAi_args_done_differs = R"JSON({"role":"assistant","content":[{"type":"toolCall","id":"call_d|fc_d","name":"get_weather","arguments":{"city":"Nice"}}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":9,"cacheRead":0,"cacheWrite":0,"totalTokens":29,"cost":{"input":5e-05,"output":9e-05,"cacheRead":0,"cacheWrite":0,"total":0.00014000000000000001}},"stopReason":"toolUse","responseId":"resp_e"})JSON";
constexpr std::string_view kStream_cut_text = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_e","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_e","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_e","output_index":0,"content_index":0,"delta":"Hel"}

)JSON";
constexpr std::string_view kPiAi_cut_text = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","responseId":"resp_e"})JSON";
constexpr std::string_view kStream_cut_args = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_c","type":"function_call","status":"in_progress","arguments":"","call_id":"call_c","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_c","output_index":0,"delta":"{\"city\":\"Par"}

)JSON";
constexpr std::string_view kPiAi_cut_args = R"JSON({"role":"assistant","content":[{"type":"toolCall","id":"call_c|fc_c","name":"get_weather","arguments":{"city":"Par"},"partialJson":"{\"city\":\"Par"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","responseId":"resp_e"})JSON";
constexpr std::string_view kStream_incomplete_event = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_e","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_e","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_e","output_index":0,"content_index":0,"delta":"Hel"}

event: response.incomplete
data: {"type":"response.incomplete","sequence_number":5,"response":{"id":"resp_e","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":16,"total_tokens":36}}}

)JSON";
constexpr std::string_view kPiAi_incomplete_event = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","responseId":"resp_e"})JSON";

constexpr std::string_view kTextOnlyModelBodyPiAi = R"JSON({"model":"gpt-4o","input":[{"role":"user","content":[{"type":"input_text","text":"Look:"},{"type":"input_text","text":"(image omitted: model does not support images)"}]},{"type":"function_call","id":"fc_1vgnxeb1xk5byi","call_id":"call_Z","name":"shot","arguments":"{}"},{"type":"function_call_output","call_id":"call_Z","output":"see image\n(tool image omitted: model does not support images)"},{"type":"function_call","call_id":"call_Q","name":"shot","arguments":"{}"},{"type":"function_call_output","call_id":"call_Q","output":"(tool image omitted: model does not support images)"}],"stream":true,"store":false,"max_output_tokens":16384})JSON";

}  // namespace

TEST_CASE("openai-responses request: a mixed-provider context becomes pi-ai's input items", "[wire]") {
  fixture f = gpt5();
  f.messages = parse(kMixedContext).as_array();
  f.tools = {bash_tool()};
  f.system_prompt = "You are a coding agent.";
  auto req = openai_responses_wire().build(f.call());
  REQUIRE(req.ok());
  CHECK(req->method == "POST");
  CHECK(req->url == "https://api.openai.com/v1/responses");
  CHECK(header(*req, "Authorization") == "Bearer test-key");
  CHECK(header(*req, "Content-Type") == "application/json");
  // Byte for byte what pi-ai sent: the developer-role system prompt (reasoning model), the
  // replayed reasoning item and message id from the same model's signatures, call_…|fc_… split
  // into call_id + id, anthropic's thinking turned to text, an image tool result as input
  // parts, a foreign "|" id re-hashed to fc_<shortHash>, the errored turn dropped, gpt-4.1's
  // fc_ id left out, a "No result provided" output for the orphaned call, 32000 max tokens,
  // strict:false tools, and no reasoning key (gpt-5 cannot turn reasoning off).
  CHECK(req->body == kMixedBodyPiAi);
}

TEST_CASE("openai-responses request: images for a text-only model, system role, a UTF-16 hash", "[wire]") {
  fixture f = gpt4o();
  f.messages = parse(kTextOnlyModelContext).as_array();
  auto req = openai_responses_wire().build(f.call());
  REQUIRE(req.ok());
  // Two images in a row become one placeholder; the tool result's image a placeholder line; an
  // azure-openai-responses "|" id is foreign: fc_ + pi-ai's shortHash of "été😀" counted in
  // UTF-16 units; max_output_tokens is the model's 16384 (under 32000); no reasoning key.
  CHECK(req->body == kTextOnlyModelBodyPiAi);

  f.system_prompt = "Be brief.";
  auto with_system = openai_responses_wire().build(f.call());
  REQUIRE(with_system.ok());
  const bj::object body = parse(with_system->body).as_object();
  CHECK(to_compact(body.at("input").as_array().at(0)) == R"({"role":"system","content":"Be brief."})");
  CHECK(!body.contains("reasoning"));
}

TEST_CASE("openai-responses request: the reasoning key with the thinking level off", "[wire]") {
  fixture f = gpt5();
  f.messages = parse(R"([{"role":"user","content":"hi"}])").as_array();
  auto reasoning = [&](std::string id, bool is_reasoning) {
    f.model.id = std::move(id);
    f.model.reasoning = is_reasoning;
    auto req = openai_responses_wire().build(f.call());
    REQUIRE(req.ok());
    const bj::object body = parse(req->body).as_object();
    return body.contains("reasoning") ? to_compact(body.at("reasoning")) : std::string("<none>");
  };
  CHECK(reasoning("my-reasoner", true) == R"({"effort":"none"})");  // pi-ai: thinkingLevelMap.off ?? "none"
  CHECK(reasoning("my-reasoner", false) == "<none>");
  CHECK(reasoning("gpt-5.2-codex", true) == "<none>");  // pi-ai's catalog: off is no level
  CHECK(reasoning("o3", true) == "<none>");             // no "none" effort (pi-ai sends one)
  CHECK(reasoning("o4-mini", true) == "<none>");
  CHECK(reasoning("omni-x", true) == R"({"effort":"none"})");
}

TEST_CASE("openai-responses request: max tokens, base URL, headers and key", "[wire]") {
  fixture f = gpt5();
  f.messages = parse(R"([{"role":"user","content":"hi"}])").as_array();
  f.provider.base_url = "http://127.0.0.1:8080/v1/";
  f.provider.headers = {{"authorization", "Bearer proxy"}, {"X-Team", "core"}};

  f.max_tokens = 1000;
  auto req = openai_responses_wire().build(f.call());
  REQUIRE(req.ok());
  CHECK(req->url == "http://127.0.0.1:8080/v1/responses");
  CHECK(header(*req, "Authorization") == "Bearer proxy");  // the provider's header wins
  CHECK(header(*req, "X-Team") == "core");
  bj::object body = parse(req->body).as_object();
  CHECK(body.at("max_output_tokens") == 1000);
  CHECK(!body.contains("tools"));  // none given: no key at all
  CHECK(body.at("stream") == true);
  CHECK(body.at("store") == false);

  f.max_tokens = 0;
  f.model.max_tokens = 0;
  f.provider.api_key.clear();
  f.provider.headers.clear();
  req = openai_responses_wire().build(f.call());
  REQUIRE(req.ok());
  CHECK(!parse(req->body).as_object().contains("max_output_tokens"));
  CHECK(header(*req, "Authorization") == "<none>");
}

TEST_CASE("openai-responses request: tool ids, signatures and tool results in detail", "[wire]") {
  fixture f = gpt5();
  f.messages = parse(R"([
    {"role":"user","content":[]},
    {"role":"assistant","api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse",
     "content":[{"type":"thinking","thinking":"x","thinkingSignature":"not json"},
                {"type":"text","text":"A","textSignature":"msg_ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"},
                {"type":"toolCall","id":"call_1|fc_1","name":"bash","arguments":{"command":"ls"}}]},
    {"role":"toolResult","toolCallId":"call_1|fc_1","toolName":"bash","content":[],"isError":false}
  ])").as_array();
  auto req = openai_responses_wire().build(f.call());
  REQUIRE(req.ok());
  const bj::array input = parse(req->body).as_object().at("input").as_array();
  // The empty user message is skipped (and not counted); the thinking signature that is not
  // JSON is left out (pi-ai would throw); a text id over 64 characters becomes msg_<hash>.
  REQUIRE(input.size() == 3);
  CHECK(input[0].as_object().at("type") == "message");
  CHECK(input[0].as_object().at("id").as_string().starts_with("msg_"));
  CHECK(input[0].as_object().at("id").as_string().size() < 64);
  CHECK(to_compact(input[1]) ==
        R"({"type":"function_call","id":"fc_1","call_id":"call_1","name":"bash","arguments":"{\"command\":\"ls\"}"})");
  CHECK(to_compact(input[2]) == R"J({"type":"function_call_output","call_id":"call_1","output":"(see attached image)"})J");
}

TEST_CASE("openai-responses stream: reasoning, text and a tool call, cut anywhere", "[wire]") {
  fixture f = gpt5();
  streamed s = run_split(f, kFullStream);
  CHECK(s.ended);
  // pi-ai's message (but for textSignature): the summary as thinking with the reasoning item
  // as signature, the text, the call_…|fc_… id, toolUse, usage with cached tokens taken out of
  // input, and calculateCost's doubles bit for bit.
  CHECK(to_compact(s.message) == to_compact(expected_message(kFullStreamMessagePiAi)));
  CHECK(s.text == "Let me check the weather in Paris — ☀️ ");
  const bj::object& usage = s.message.at("usage").as_object();
  CHECK(usage.at("input") == 1834 - 1536);
  CHECK(usage.at("cacheRead") == 1536);
  CHECK(usage.at("totalTokens") == 2047);
  CHECK(usage.at("cost").as_object().at("total").as_double() == (1.25 / 1e6) * 298 + (10.0 / 1e6) * 213 + (0.125 / 1e6) * 1536);
}

TEST_CASE("openai-responses stream: stop reasons and usage from the final event", "[wire]") {
  fixture f = gpt4o();
  struct row {
    std::string_view stream, pi_ai;
    std::string_view stop;
  };
  const row rows[] = {
      {kStream_completed_incomplete, kPiAi_completed_incomplete, "length"},
      {kStream_completed_cancelled, kPiAi_completed_cancelled, "error"},
      {kStream_completed_weird, kPiAi_completed_weird, "error"},  // "Unhandled stop reason: paused"
      {kStream_refusal, kPiAi_refusal, "stop"},                    // the refusal is the text
      {kStream_args_done_differs, kPiAi_args_done_differs, "toolUse"},  // .done's text wins
  };
  for (const auto& r : rows) {
    INFO(r.pi_ai);
    streamed s = run_split(f, r.stream);
    CHECK(s.ended);
    CHECK(s.message.at("stopReason").as_string() == r.stop);
    CHECK(to_compact(s.message) == to_compact(expected_message(r.pi_ai)));
  }

  // in_progress / queued (pi-ai: "wonky") read as stop.
  for (std::string_view status : {"in_progress", "queued", "completed"}) {
    std::string sse = std::string("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"") +
                      std::string(status) + "\"}}\n\n";
    streamed s = run_stream(f, sse, 5);
    CHECK(s.message.at("stopReason") == "stop");
    CHECK(s.ended);
  }
}

TEST_CASE("openai-responses stream: response.incomplete ends the stream with length", "[wire]") {
  // Difference from pi-ai (which ignores the event: stopReason stop, no usage).
  fixture f = gpt4o();
  streamed s = run_split(f, kStream_incomplete_event);
  CHECK(s.ended);
  CHECK(s.message.at("stopReason") == "length");
  CHECK(s.message.at("usage").as_object().at("output") == 16);
  bj::object pi = expected_message(kPiAi_incomplete_event);
  CHECK(pi.at("stopReason") == "stop");
  CHECK(s.message.at("content") == pi.at("content"));
}

TEST_CASE("openai-responses stream: a body that ends early is not ended", "[wire]") {
  fixture f = gpt4o();
  streamed text = run_split(f, kStream_cut_text);
  CHECK(!text.ended);
  CHECK(text.message.at("content") == expected_message(kPiAi_cut_text).at("content"));  // "Hel" kept
  CHECK(text.text == "Hel");

  // Arguments cut inside a string: parsed as far as they go, as pi-ai's parseStreamingJson does
  // (pi-ai also leaks its partialJson scratch buffer into the block; we do not).
  streamed args = run_split(f, kStream_cut_args);
  CHECK(!args.ended);
  CHECK(to_compact(args.message.at("content")) ==
        R"([{"type":"toolCall","id":"call_c|fc_c","name":"get_weather","arguments":{"city":"Par"}}])");

  // Cut inside a reasoning item: its thinking is not in the message (a known difference).
  fixture g = gpt5();
  std::string full(kFullStream);
  streamed reasoning = run_stream(g, full.substr(0, full.find("event: response.reasoning_summary_text.done")), 9);
  CHECK(!reasoning.ended);
  CHECK(reasoning.message.at("content").as_array().empty());
}

TEST_CASE("openai-responses stream: API errors end the message as pi-ai words them", "[wire]") {
  fixture f = gpt4o();
  for (auto [stream, pi_ai] : {std::pair{kStream_error_event, kPiAi_error_event},
                               std::pair{kStream_error_nested, kPiAi_error_nested},
                               std::pair{kStream_failed_error, kPiAi_failed_error},
                               std::pair{kStream_failed_details, kPiAi_failed_details},
                               std::pair{kStream_failed_none, kPiAi_failed_none}}) {
    INFO(pi_ai);
    streamed s = run_split(f, stream);
    CHECK(s.ended);  // the API ended it: the error is the message's, not a cut body
    CHECK(s.message.at("stopReason") == "error");
    CHECK(to_compact(s.message) == to_compact(expected_message(pi_ai)));
  }

  // After an error nothing more is read (pi-ai throws out of its loop).
  std::string sse = std::string(kStream_error_event) +
                    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"lo\"}\n\n"
                    "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n";
  streamed s = run_stream(f, sse, 11);
  CHECK(s.message.at("stopReason") == "error");
  CHECK(s.text == "Hel");
}

TEST_CASE("openai-responses error_text: the body's error.message, else status and body", "[wire]") {
  const auto& w = openai_responses_wire();
  CHECK(w.error_text(401, R"({"error":{"message":"Incorrect API key provided: sk-xx.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})") ==
        "401 Incorrect API key provided: sk-xx.");
  CHECK(w.error_text(400, R"({"error":{"message":"Your input exceeds the context window of this model.","code":"context_length_exceeded"}})") ==
        "400 Your input exceeds the context window of this model.");
  CHECK(w.error_text(502, "<html>Bad gateway</html>") == "502 <html>Bad gateway</html>");
  CHECK(w.error_text(500, "") == "500 status code (no body)");
  CHECK(std::string(w.api) == "openai-responses");
  CHECK(find_wire_format("openai-responses") == &w);  // listed in the table
  CHECK(known_wire_formats().find("openai-responses") != std::string::npos);
}
