// openai-responses wire format: the request body and the AssistantMessage from a stream, checked
// against what pi-ai 0.73.1 (streamSimple, thinking off) sends and builds for the same inputs.
// The expected bodies and messages below were produced by running pi-ai itself against a local
// server that captured its request and answered with the stream shown (tests/providers/
// piai_install.sh installs it); known differences are spelled out where a test allows them.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "tests/providers/wire_test_support.hpp"

namespace {

namespace bj = boost::json;
using namespace sessionrt::providers;
using namespace sessionrt::providers::wire_test;

constexpr std::int64_t kTimestamp = 1234;  // the decoded messages'

// pi-ai's gpt-5 entry (reasoning, text + image input; its thinkingLevelMap {off: null} is what
// the format knows of gpt-5 models: the reference bodies were made with it).
wire_fixture gpt5() {
  wire_fixture f("openai-responses");
  f.provider.id = "openai";
  f.provider.api_key = "test-key";
  f.model.id = "gpt-5";
  f.model.reasoning = true;
  f.model.input = {"text", "image"};
  f.model.cost = {1.25, 10, 0.125, 0};
  f.model.context_window = 400000;
  f.model.max_tokens = 128000;
  f.timestamp = kTimestamp;
  return f;
}

wire_fixture gpt4o() {
  wire_fixture f = gpt5();
  f.model.id = "gpt-4o";
  f.model.reasoning = false;
  f.model.input = {"text"};
  f.model.cost = {2.5, 10, 1.25, 0};
  f.model.max_tokens = 16384;
  return f;
}

tool_spec bash_tool() {
  return {"bash", "Run a shell command",
          parse_json(R"({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]})").as_object()};
}

// pi-ai's message without what ours has not: its timestamp (clock) and the text blocks'
// textSignature (assistant_builder keeps none).
bj::object expected_message(std::string_view pi_ai) { return pi_ai_message(pi_ai, kTimestamp, {"textSignature"}); }

// The stream, cut anywhere, ends with `stop` and decodes to pi-ai's message.
void check_ends_as_pi_ai(const wire_fixture& f, std::string_view stream, std::string_view pi_ai, std::string_view stop) {
  INFO(pi_ai);
  const decoded s = decode_split(f, {stream});
  CHECK(s.ended);
  CHECK(s.message.at("stopReason").as_string() == stop);
  CHECK(compact(s.message) == compact(expected_message(pi_ai)));
}

constexpr std::string_view kMixedContext = R"JSON([
 {"role":"user","content":"List src/ please.","timestamp":1},
 {"role":"assistant","content":[{"type":"thinking","thinking":"**Planning** look at files","thinkingSignature":"{\"id\":\"rs_prev1\",\"type\":\"reasoning\",\"encrypted_content\":\"gAAAAABprev==\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"**Planning** look at files\"}]}"},{"type":"text","text":"Looking.","textSignature":"{\"v\": 1, \"id\": \"msg_prev1\", \"phase\": \"commentary\"}"},{"type":"toolCall","id":"call_A1|fc_A1","name":"bash","arguments":{"command":"ls src/"}}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},
 {"role":"toolResult","toolCallId":"call_A1|fc_A1","toolName":"bash","content":[{"type":"text","text":"a.cpp"},{"type":"text","text":"b.cpp"}],"isError":false,"timestamp":3},
 {"role":"assistant","content":[{"type":"thinking","thinking":"Read it.","thinkingSignature":"sig-abc123"},{"type":"text","text":"Reading a.cpp."},{"type":"toolCall","id":"toolu_01A","name":"read","arguments":{"path":"src/a.cpp"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},
 {"role":"toolResult","toolCallId":"toolu_01A","toolName":"read","content":[{"type":"text","text":"see image"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":false,"timestamp":4},
 {"role":"assistant","content":[{"type":"toolCall","id":"call_X9|item id/with spaces","name":"bash","arguments":{"command":"pwd"}}],"api":"openai-completions","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},
 {"role":"toolResult","toolCallId":"call_X9|item id/with spaces","toolName":"bash","content":[{"type":"text","text":"/work"}],"isError":false,"timestamp":5},
 {"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","data":"/9j/4AAQ","mimeType":"image/jpeg"}],"timestamp":6},
 {"role":"assistant","content":[{"type":"text","text":"partial"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":2},
 {"role":"assistant","content":[{"type":"text","text":"Let me check."},{"type":"toolCall","id":"call_B2|fc_B2","name":"bash","arguments":{"command":"file x.jpg"}}],"api":"openai-responses","provider":"openai","model":"gpt-4.1","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},
 {"role":"user","content":"never mind, continue","timestamp":7}
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

// What most of the short streams below open with: the response created, then (kHel) a message
// item whose text streams "Hel".
constexpr std::string_view kCreated = R"JSON(event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_e","status":"in_progress","output":[]}}

)JSON";
constexpr std::string_view kHel = R"JSON(event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_e","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":2,"item_id":"msg_e","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_e","output_index":0,"content_index":0,"delta":"Hel"}

)JSON";
const std::string kStream_error_event = concat({kCreated, kHel, R"JSON(event: error
data: {"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500.","param":null,"sequence_number":4}

)JSON"});
constexpr std::string_view kPiAi_error_event = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"Error Code rate_limit_exceeded: Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500."})JSON";
const std::string kStream_error_nested = concat({kCreated, R"JSON(event: error
data: {"type":"error","sequence_number":1,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}

)JSON"});
constexpr std::string_view kPiAi_error_nested = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"Your input exceeds the context window of this model. Please adjust your input and try again."})JSON";
const std::string kStream_failed_error = concat({kCreated, kHel, R"JSON(event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_e","status":"failed","error":{"code":"server_error","message":"The server had an error while processing your request."},"incomplete_details":null,"usage":null}}

)JSON"});
constexpr std::string_view kPiAi_failed_error = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"server_error: The server had an error while processing your request."})JSON";
const std::string kStream_failed_details = concat({kCreated, R"JSON(event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_e","status":"failed","error":null,"incomplete_details":{"reason":"max_output_tokens"}}}

)JSON"});
constexpr std::string_view kPiAi_failed_details = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"incomplete: max_output_tokens"})JSON";
const std::string kStream_failed_none = concat({kCreated, R"JSON(event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_e","status":"failed","error":null,"incomplete_details":null}}

)JSON"});
constexpr std::string_view kPiAi_failed_none = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","responseId":"resp_e","errorMessage":"Unknown error (no error details in response)"})JSON";
const std::string kStream_completed_incomplete = concat({kCreated, kHel, R"JSON(event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"incomplete","usage":{"input_tokens":20,"output_tokens":16,"total_tokens":36}}}

)JSON"});
constexpr std::string_view kPiAi_completed_incomplete = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":16,"cacheRead":0,"cacheWrite":0,"totalTokens":36,"cost":{"input":5e-05,"output":0.00016,"cacheRead":0,"cacheWrite":0,"total":0.00021}},"stopReason":"length","responseId":"resp_e"})JSON";
const std::string kStream_completed_cancelled = concat({kCreated, R"JSON(event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"cancelled","usage":{"input_tokens":20,"output_tokens":0,"total_tokens":20}}}

)JSON"});
constexpr std::string_view kPiAi_completed_cancelled = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":5e-05,"output":0,"cacheRead":0,"cacheWrite":0,"total":5e-05}},"stopReason":"error","responseId":"resp_e","errorMessage":"An unknown error occurred"})JSON";
const std::string kStream_completed_weird = concat({kCreated, R"JSON(event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"paused","usage":{"input_tokens":20,"output_tokens":0,"total_tokens":20}}}

)JSON"});
constexpr std::string_view kPiAi_completed_weird = R"JSON({"role":"assistant","content":[],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":5e-05,"output":0,"cacheRead":0,"cacheWrite":0,"total":5e-05}},"stopReason":"error","responseId":"resp_e","errorMessage":"Unhandled stop reason: paused"})JSON";
const std::string kStream_refusal = concat({kCreated, R"JSON(event: response.output_item.added
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

)JSON"});
constexpr std::string_view kPiAi_refusal = R"JSON({"role":"assistant","content":[{"type":"text","text":"I can't help with that.","textSignature":"{\"v\":1,\"id\":\"msg_r\"}"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":27,"cost":{"input":5e-05,"output":7.000000000000001e-05,"cacheRead":0,"cacheWrite":0,"total":0.00012000000000000002}},"stopReason":"stop","responseId":"resp_e"})JSON";
const std::string kStream_args_done_differs = concat({kCreated, R"JSON(event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_d","type":"function_call","status":"in_progress","arguments":"","call_id":"call_d","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_d","output_index":0,"delta":"{\"city\":\"Lyon\""}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":3,"item_id":"fc_d","output_index":0,"arguments":"{\"city\":\"Nice\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"id":"fc_d","type":"function_call","status":"completed","arguments":"{\"city\":\"Nice\"}","call_id":"call_d","name":"get_weather"}}

event: response.completed
data: {"type":"response.completed","sequence_number":5,"response":{"id":"resp_e","status":"completed","usage":{"input_tokens":20,"output_tokens":9,"total_tokens":29}}}

)JSON"});
constexpr std::string_view kPiAi_args_done_differs = R"JSON({"role":"assistant","content":[{"type":"toolCall","id":"call_d|fc_d","name":"get_weather","arguments":{"city":"Nice"}}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":20,"output":9,"cacheRead":0,"cacheWrite":0,"totalTokens":29,"cost":{"input":5e-05,"output":9e-05,"cacheRead":0,"cacheWrite":0,"total":0.00014000000000000001}},"stopReason":"toolUse","responseId":"resp_e"})JSON";
const std::string kStream_cut_text = concat({kCreated, kHel});
constexpr std::string_view kPiAi_cut_text = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","responseId":"resp_e"})JSON";
const std::string kStream_cut_args = concat({kCreated, R"JSON(event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_c","type":"function_call","status":"in_progress","arguments":"","call_id":"call_c","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_c","output_index":0,"delta":"{\"city\":\"Par"}

)JSON"});
constexpr std::string_view kPiAi_cut_args = R"JSON({"role":"assistant","content":[{"type":"toolCall","id":"call_c|fc_c","name":"get_weather","arguments":{"city":"Par"},"partialJson":"{\"city\":\"Par"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","responseId":"resp_e"})JSON";
const std::string kStream_incomplete_event = concat({kCreated, kHel, R"JSON(event: response.incomplete
data: {"type":"response.incomplete","sequence_number":5,"response":{"id":"resp_e","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":16,"total_tokens":36}}}

)JSON"});
constexpr std::string_view kPiAi_incomplete_event = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-responses","provider":"openai","model":"gpt-4o","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","responseId":"resp_e"})JSON";

constexpr std::string_view kTextOnlyModelBodyPiAi = R"JSON({"model":"gpt-4o","input":[{"role":"user","content":[{"type":"input_text","text":"Look:"},{"type":"input_text","text":"(image omitted: model does not support images)"}]},{"type":"function_call","id":"fc_1vgnxeb1xk5byi","call_id":"call_Z","name":"shot","arguments":"{}"},{"type":"function_call_output","call_id":"call_Z","output":"see image\n(tool image omitted: model does not support images)"},{"type":"function_call","call_id":"call_Q","name":"shot","arguments":"{}"},{"type":"function_call_output","call_id":"call_Q","output":"(tool image omitted: model does not support images)"}],"stream":true,"store":false,"max_output_tokens":16384})JSON";

}  // namespace

TEST_CASE("openai-responses request: a mixed-provider context becomes pi-ai's input items", "[wire]") {
  wire_fixture f = gpt5();
  f.set_messages(kMixedContext);
  f.tools = {bash_tool()};
  f.system_prompt = "You are a coding agent.";
  http_request req = f.request();
  CHECK(req.method == "POST");
  CHECK(req.url == "https://api.openai.com/v1/responses");
  CHECK(header_value(req, "Authorization") == "Bearer test-key");
  CHECK(header_value(req, "Content-Type") == "application/json");
  // Byte for byte what pi-ai sent: the developer-role system prompt (reasoning model), the
  // replayed reasoning item and message id from the same model's signatures, call_…|fc_… split
  // into call_id + id, anthropic's thinking turned to text, an image tool result as input
  // parts, a foreign "|" id re-hashed to fc_<shortHash>, the errored turn dropped, gpt-4.1's
  // fc_ id left out, a "No result provided" output for the orphaned call, 32000 max tokens,
  // strict:false tools, and no reasoning key (gpt-5 cannot turn reasoning off).
  CHECK(req.body == kMixedBodyPiAi);
}

TEST_CASE("openai-responses request: images for a text-only model, system role, a UTF-16 hash", "[wire]") {
  wire_fixture f = gpt4o();
  f.set_messages(kTextOnlyModelContext);
  http_request req = f.request();
  // Two images in a row become one placeholder; the tool result's image a placeholder line; an
  // azure-openai-responses "|" id is foreign: fc_ + pi-ai's shortHash of "été😀" counted in
  // UTF-16 units; max_output_tokens is the model's 16384 (under 32000); no reasoning key.
  CHECK(req.body == kTextOnlyModelBodyPiAi);

  f.system_prompt = "Be brief.";
  http_request with_system = f.request();
  const bj::object body = parse_json(with_system.body).as_object();
  CHECK(compact(body.at("input").as_array().at(0)) == R"({"role":"system","content":"Be brief."})");
  CHECK(!body.contains("reasoning"));
}

TEST_CASE("openai-responses request: the reasoning key with the thinking level off", "[wire]") {
  wire_fixture f = gpt5();
  f.set_messages(R"([{"role":"user","content":"hi"}])");
  auto reasoning = [&](std::string id, bool is_reasoning) {
    f.model.id = std::move(id);
    f.model.reasoning = is_reasoning;
    http_request req = f.request();
    const bj::object body = parse_json(req.body).as_object();
    return body.contains("reasoning") ? compact(body.at("reasoning")) : std::string("<absent>");
  };
  CHECK(reasoning("my-reasoner", true) == R"({"effort":"none"})");  // pi-ai: thinkingLevelMap.off ?? "none"
  CHECK(reasoning("my-reasoner", false) == "<absent>");
  CHECK(reasoning("gpt-5.2-codex", true) == "<absent>");  // pi-ai's catalog: off is no level
  CHECK(reasoning("o3", true) == "<absent>");             // no "none" effort (pi-ai sends one)
  CHECK(reasoning("o4-mini", true) == "<absent>");
  CHECK(reasoning("omni-x", true) == R"({"effort":"none"})");
}

TEST_CASE("openai-responses request: max tokens, base URL, headers and key", "[wire]") {
  wire_fixture f = gpt5();
  f.set_messages(R"([{"role":"user","content":"hi"}])");
  f.provider.base_url = "http://127.0.0.1:8080/v1/";
  f.provider.headers = {{"authorization", "Bearer proxy"}, {"X-Team", "core"}};

  f.max_tokens = 1000;
  http_request req = f.request();
  CHECK(req.url == "http://127.0.0.1:8080/v1/responses");
  CHECK(header_value(req, "Authorization") == "Bearer proxy");  // the provider's header wins
  CHECK(header_value(req, "X-Team") == "core");
  bj::object body = parse_json(req.body).as_object();
  CHECK(body.at("max_output_tokens") == 1000);
  CHECK(!body.contains("tools"));  // none given: no key at all
  CHECK(body.at("stream") == true);
  CHECK(body.at("store") == false);

  f.max_tokens = 0;
  f.model.max_tokens = 0;
  f.provider.api_key.clear();
  f.provider.headers.clear();
  req = f.request();
  CHECK(!parse_json(req.body).as_object().contains("max_output_tokens"));
  CHECK(header_value(req, "Authorization") == "<absent>");
}

TEST_CASE("openai-responses request: tool ids, signatures and tool results in detail", "[wire]") {
  wire_fixture f = gpt5();
  f.set_messages(R"([
    {"role":"user","content":[]},
    {"role":"assistant","api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse",
     "content":[{"type":"thinking","thinking":"x","thinkingSignature":"not json"},
                {"type":"text","text":"A","textSignature":"msg_ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"},
                {"type":"toolCall","id":"call_1|fc_1","name":"bash","arguments":{"command":"ls"}}]},
    {"role":"toolResult","toolCallId":"call_1|fc_1","toolName":"bash","content":[],"isError":false}
  ])");
  http_request req = f.request();
  const bj::array input = parse_json(req.body).as_object().at("input").as_array();
  // The empty user message is skipped (and not counted); the thinking signature that is not
  // JSON is left out (pi-ai would throw); a text id over 64 characters becomes msg_<hash>.
  REQUIRE(input.size() == 3);
  CHECK(input[0].as_object().at("type") == "message");
  CHECK(input[0].as_object().at("id").as_string().starts_with("msg_"));
  CHECK(input[0].as_object().at("id").as_string().size() < 64);
  CHECK(compact(input[1]) ==
        R"({"type":"function_call","id":"fc_1","call_id":"call_1","name":"bash","arguments":"{\"command\":\"ls\"}"})");
  CHECK(compact(input[2]) == R"J({"type":"function_call_output","call_id":"call_1","output":"(see attached image)"})J");
}

TEST_CASE("openai-responses stream: reasoning, text and a tool call, cut anywhere", "[wire]") {
  wire_fixture f = gpt5();
  decoded s = decode_split(f, {kFullStream});
  CHECK(s.ended);
  // pi-ai's message (but for textSignature): the summary as thinking with the reasoning item
  // as signature, the text, the call_…|fc_… id, toolUse, usage with cached tokens taken out of
  // input, and calculateCost's doubles bit for bit.
  CHECK(compact(s.message) == compact(expected_message(kFullStreamMessagePiAi)));
  CHECK(s.text == "Let me check the weather in Paris — ☀️ ");
  const bj::object& usage = s.message.at("usage").as_object();
  CHECK(usage.at("input") == 1834 - 1536);
  CHECK(usage.at("cacheRead") == 1536);
  CHECK(usage.at("totalTokens") == 2047);
  CHECK(usage.at("cost").as_object().at("total").as_double() == (1.25 / 1e6) * 298 + (10.0 / 1e6) * 213 + (0.125 / 1e6) * 1536);
}

TEST_CASE("openai-responses stream: stop reasons and usage from the final event", "[wire]") {
  wire_fixture f = gpt4o();
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
  for (const auto& r : rows) check_ends_as_pi_ai(f, r.stream, r.pi_ai, r.stop);

  // in_progress / queued (pi-ai: "wonky") read as stop.
  for (std::string_view status : {"in_progress", "queued", "completed"}) {
    std::string sse = std::string("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"") +
                      std::string(status) + "\"}}\n\n";
    decoded s = decode_in_pieces(f, sse, 5);
    CHECK(s.message.at("stopReason") == "stop");
    CHECK(s.ended);
  }
}

TEST_CASE("openai-responses stream: response.incomplete ends the stream with length", "[wire]") {
  // Difference from pi-ai (which ignores the event: stopReason stop, no usage).
  wire_fixture f = gpt4o();
  decoded s = decode_split(f, {kStream_incomplete_event});
  CHECK(s.ended);
  CHECK(s.message.at("stopReason") == "length");
  CHECK(s.message.at("usage").as_object().at("output") == 16);
  bj::object pi = expected_message(kPiAi_incomplete_event);
  CHECK(pi.at("stopReason") == "stop");
  CHECK(s.message.at("content") == pi.at("content"));
}

TEST_CASE("openai-responses stream: a body that ends early is not ended", "[wire]") {
  wire_fixture f = gpt4o();
  decoded text = decode_split(f, {kStream_cut_text});
  CHECK(!text.ended);
  CHECK(text.message.at("content") == expected_message(kPiAi_cut_text).at("content"));  // "Hel" kept
  CHECK(text.text == "Hel");

  // Arguments cut inside a string: parsed as far as they go, as pi-ai's parseStreamingJson does
  // (pi-ai also leaks its partialJson scratch buffer into the block; we do not).
  decoded args = decode_split(f, {kStream_cut_args});
  CHECK(!args.ended);
  CHECK(compact(args.message.at("content")) ==
        R"([{"type":"toolCall","id":"call_c|fc_c","name":"get_weather","arguments":{"city":"Par"}}])");

  // Cut inside a reasoning item: its thinking is not in the message (a known difference).
  wire_fixture g = gpt5();
  std::string full(kFullStream);
  decoded reasoning = decode_in_pieces(g, full.substr(0, full.find("event: response.reasoning_summary_text.done")), 9);
  CHECK(!reasoning.ended);
  CHECK(reasoning.message.at("content").as_array().empty());
}

TEST_CASE("openai-responses stream: API errors end the message as pi-ai words them", "[wire]") {
  wire_fixture f = gpt4o();
  // The API ended each: the error is the message's, not a cut body.
  check_ends_as_pi_ai(f, kStream_error_event, kPiAi_error_event, "error");
  check_ends_as_pi_ai(f, kStream_error_nested, kPiAi_error_nested, "error");
  check_ends_as_pi_ai(f, kStream_failed_error, kPiAi_failed_error, "error");
  check_ends_as_pi_ai(f, kStream_failed_details, kPiAi_failed_details, "error");
  check_ends_as_pi_ai(f, kStream_failed_none, kPiAi_failed_none, "error");

  // After an error nothing more is read (pi-ai throws out of its loop).
  std::string sse = std::string(kStream_error_event) +
                    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"lo\"}\n\n"
                    "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n";
  decoded s = decode_in_pieces(f, sse, 11);
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
  check_listed(w, "openai-responses");
}
