// anthropic-messages: request bodies compared with what pi-ai 0.73.1 sends for the same context
// (printed by pi-ai's streamSimple through its onPayload hook), and stream decoding compared
// with the AssistantMessage pi-ai builds from the same bytes (pi-ai reading them from a local
// server), plus the stop-reason table, usage updates, errors and cut-off streams.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/providers/wire_test_support.hpp"

namespace bj = boost::json;
using namespace sessionrt::providers;
using namespace sessionrt::providers::wire_test;

namespace {

// Claude Sonnet 4.5 at Anthropic.
struct setup : wire_fixture {
  setup() : wire_fixture("anthropic-messages") {
    provider.id = "anthropic";
    provider.api_key = "sk-ant-test";
    model.id = "claude-sonnet-4-5";
    model.reasoning = true;
    model.input = {"text", "image"};
    model.max_tokens = 64000;
    model.context_window = 200000;
    model.cost = {3, 15, 0.3, 3.75};
  }
};

constexpr auto* ev = &sse_event_text;

// The shape Anthropic streams: message_start with usage, a signed thinking block, a ping, a
// redacted thinking block, text with non-ASCII, a tool_use whose input arrives as
// input_json_delta fragments, message_delta with the stop reason and output tokens, message_stop.
const std::string kToolStream =
    ev("message_start",
       R"({"type":"message_start","message":{"id":"msg_01XYZ","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":2}}})") +
    ev("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})") +
    ev("ping", R"({"type": "ping"})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"I should list "}})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the directory."}})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":0})") +
    ev("content_block_start", R"({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":1})") +
    ev("content_block_start", R"({"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Let me "}})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"check h\u00e9llo \ud83d\udc4b"}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":2})") +
    ev("content_block_start", R"({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"bash","input":{}}})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":""}})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ls"}})") +
    ev("content_block_delta", R"({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":" src/\"}"}})") +
    ev("content_block_stop", R"({"type":"content_block_stop","index":3})") +
    ev("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}})") +
    ev("message_stop", R"({"type":"message_stop"})");

// pi-ai's message for kToolStream (timestamp set to 0).
constexpr std::string_view kToolStreamMessage =
    R"J({"role":"assistant","content":[{"type":"thinking","thinking":"I should list the directory.","thinkingSignature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP","redacted":true},{"type":"text","text":"Let me check héllo 👋"},{"type":"toolCall","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"bash","arguments":{"command":"ls src/"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":472,"output":89,"cacheRead":2000,"cacheWrite":100,"totalTokens":2661,"cost":{"input":0.001416,"output":0.001335,"cacheRead":0.0006,"cacheWrite":0.000375,"total":0.0037259999999999997}},"stopReason":"toolUse","timestamp":0,"responseId":"msg_01XYZ"})J";

constexpr std::string_view kSameModelMessages =
    R"J([{"role":"user","content":"List src/ and read the logo.","timestamp":1},{"role":"assistant","content":[{"type":"thinking","thinking":"Use bash.","thinkingSignature":"sig-abc123"},{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"EncryptedBlob==","redacted":true},{"type":"thinking","thinking":"unsigned thought","thinkingSignature":""},{"type":"text","text":"Let me look."},{"type":"text","text":"  "},{"type":"toolCall","id":"toolu_01A","name":"bash","arguments":{"command":"ls src/"}},{"type":"toolCall","id":"toolu_01B","name":"read","arguments":{"path":"logo.png"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},{"role":"toolResult","toolCallId":"toolu_01A","toolName":"bash","content":[{"type":"text","text":"main.cpp"},{"type":"text","text":"session.cpp"}],"isError":false,"timestamp":3},{"role":"toolResult","toolCallId":"toolu_01B","toolName":"read","content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":true,"timestamp":4},{"role":"assistant","content":[{"type":"text","text":"Here it is."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":5},{"role":"user","content":[{"type":"text","text":" "},{"type":"image","data":"R0lGOD","mimeType":"image/gif"},{"type":"text","text":"And this?"}],"timestamp":6}])J";
constexpr std::string_view kTools =
    R"J([{"name":"bash","description":"Run a shell command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}])J";
constexpr std::string_view kCrossModelMessages =
    R"J([{"role":"user","content":"   ","timestamp":1},{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"timestamp":1},{"role":"assistant","content":[{"type":"thinking","thinking":"Reasoning text.","thinkingSignature":"reasoning_content"},{"type":"text","text":"Checking."},{"type":"toolCall","id":"call_abc|fc_123+/=xyz","name":"read","arguments":{"path":"a.txt"}},{"type":"toolCall","id":"call_2","name":"read","arguments":{"path":"b.txt"}}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},{"role":"toolResult","toolCallId":"call_abc|fc_123+/=xyz","toolName":"read","content":[{"type":"text","text":"A"}],"isError":false,"timestamp":3},{"role":"assistant","content":[{"type":"text","text":"half"}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"aborted","errorMessage":"Request was aborted","timestamp":4},{"role":"user","content":"go on","timestamp":5}])J";

}  // namespace

TEST_CASE("anthropic-messages: same-model history, signatures, merged tool results, images: pi-ai's body", "[wire]") {
  setup s;
  s.system_prompt = "You are a coding agent.";
  s.set_messages(kSameModelMessages);
  s.set_tools(kTools);
  // Signed thinking replayed, redacted thinking as redacted_thinking, unsigned thinking as
  // text, blank text dropped; both tool results in one user message (the image one with a
  // placeholder text); cache marks on the system prompt, the last tool and the last user block;
  // max_tokens min(64000, 32000); thinking disabled (thinking level off).
  const std::string expected =
      R"J({"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"List src/ and read the logo."},{"role":"assistant","content":[{"type":"thinking","thinking":"Use bash.","signature":"sig-abc123"},{"type":"redacted_thinking","data":"EncryptedBlob=="},{"type":"text","text":"unsigned thought"},{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_01A","name":"bash","input":{"command":"ls src/"}},{"type":"tool_use","id":"toolu_01B","name":"read","input":{"path":"logo.png"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":"main.cpp\nsession.cpp","is_error":false},{"type":"tool_result","tool_use_id":"toolu_01B","content":[{"type":"text","text":"(see attached image)"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}],"is_error":true}]},{"role":"assistant","content":[{"type":"text","text":"Here it is."}]},{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGOD"}},{"type":"text","text":"And this?","cache_control":{"type":"ephemeral"}}]}],"max_tokens":32000,"stream":true,"system":[{"type":"text","text":"You are a coding agent.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"bash","description":"Run a shell command","eager_input_streaming":true,"input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},{"name":"read","description":"Read a file","eager_input_streaming":true,"input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":[]},"cache_control":{"type":"ephemeral"}}],"thinking":{"type":"disabled"}})J";
  http_request req = s.request();
  CHECK(req.body == expected);
  CHECK(req.url == "https://api.anthropic.com/v1/messages");
  CHECK(header_value(req, "x-api-key") == "sk-ant-test");
  CHECK(header_value(req, "anthropic-version") == "2023-06-01");
  CHECK(header_value(req, "content-type") == "application/json");
  CHECK(header_value(req, "anthropic-beta") == "interleaved-thinking-2025-05-14");
  CHECK(header_value(req, "authorization") == "<absent>");
}

TEST_CASE("anthropic-messages: another model's history (ids, thinking, orphans, aborted turn): pi-ai's body, turns merged", "[wire]") {
  setup s;
  s.model.id = "claude-haiku-4-5";
  s.model.reasoning = false;
  s.model.input = {"text"};
  s.model.max_tokens = 4096;
  s.set_messages(kCrossModelMessages);
  // Blank user text dropped; the image a text-only model cannot see becomes a placeholder;
  // OpenAI thinking becomes text; `call|fc+/=` ids sanitized to ^[a-zA-Z0-9_-]+$ (and the result
  // follows); call_2 has no result: a synthetic error result is merged with the real one; the
  // aborted turn is dropped; no system prompt, no tools, no thinking member. One difference from
  // pi-ai's body: the tool results and the next user text are one user turn (pi-ai sends two
  // user messages in a row; roles must alternate, merge_same_role_turns).
  const std::string expected =
      R"J({"model":"claude-haiku-4-5","messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"text","text":"(image omitted: model does not support images)"}]},{"role":"assistant","content":[{"type":"text","text":"Reasoning text."},{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_abc_fc_123___xyz","name":"read","input":{"path":"a.txt"}},{"type":"tool_use","id":"call_2","name":"read","input":{"path":"b.txt"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_abc_fc_123___xyz","content":"A","is_error":false},{"type":"tool_result","tool_use_id":"call_2","content":"No result provided","is_error":true},{"type":"text","text":"go on","cache_control":{"type":"ephemeral"}}]}],"max_tokens":4096,"stream":true})J";
  http_request req = s.request();
  CHECK(req.body == expected);
}

TEST_CASE("anthropic-messages: tool ids longer than 64 or with other characters are normalized", "[wire]") {
  setup s;
  const std::string long_id = "fc_" + std::string(100, 'a') + "+x";
  s.set_messages(R"J([{"role":"user","content":"hi","timestamp":1},
    {"role":"assistant","content":[{"type":"toolCall","id":")J" + long_id + R"J(","name":"t","arguments":{}}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse","timestamp":2},
    {"role":"toolResult","toolCallId":")J" + long_id + R"J(","toolName":"t","content":[{"type":"text","text":"ok"}],"timestamp":3}])J");
  const auto msgs = s.body().at("messages").as_array();
  REQUIRE(msgs.size() == 3);
  const std::string id(msgs[1].as_object().at("content").as_array()[0].as_object().at("id").as_string());
  CHECK(id == "fc_" + std::string(61, 'a'));
  // The result follows the call's new id; isError absent stays absent.
  CHECK(compact(msgs[2]) == R"J({"role":"user","content":[{"type":"tool_result","tool_use_id":")J" + id +
                                R"J(","content":"ok","cache_control":{"type":"ephemeral"}}]})J");
}

TEST_CASE("anthropic-messages: max_tokens is always sent", "[wire]") {
  setup s;
  s.set_messages(R"J([{"role":"user","content":"hi","timestamp":1}])J");
  CHECK(s.body().at("max_tokens") == 32000);
  s.model.max_tokens = 8192;
  CHECK(s.body().at("max_tokens") == 8192);
  s.max_tokens = 1234;
  CHECK(s.body().at("max_tokens") == 1234);
  s.max_tokens = 0;
  s.model.max_tokens = 0;  // unknown: min(4096, contextWindow / 4)
  CHECK(s.body().at("max_tokens") == 4096);
  s.model.context_window = 8000;
  CHECK(s.body().at("max_tokens") == 2000);
  s.model.context_window = 2;
  CHECK(s.body().at("max_tokens") == 1);
  // A last user message with string content gets the cache mark as a text block.
  CHECK(compact(s.body().at("messages")) ==
        R"J([{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}])J");
}

TEST_CASE("anthropic-messages: headers: base URL, adaptive models, provider headers", "[wire]") {
  setup s;
  s.set_messages(R"J([{"role":"user","content":"hi","timestamp":1}])J");
  s.provider.base_url = "https://proxy.example/anthropic/";
  s.model.id = "claude-opus-4-6";
  s.provider.headers = {{"anthropic-beta", "custom-beta"}, {"X-Extra", "1"}};
  http_request req = s.request();
  CHECK(req.url == "https://proxy.example/anthropic/v1/messages");
  CHECK(header_value(req, "anthropic-beta") == "custom-beta");
  CHECK(header_value(req, "X-Extra") == "1");
  s.provider.headers.clear();
  req = s.request();
  CHECK(header_value(req, "anthropic-beta") == "<absent>");  // adaptive thinking needs no beta
  s.provider.api_key.clear();
  req = s.request();
  CHECK(header_value(req, "x-api-key") == "<absent>");
}

TEST_CASE("anthropic-messages: a realistic stream decodes to pi-ai's message", "[wire]") {
  setup s;
  const auto d = decode(s, kToolStream);
  CHECK(d.ended);
  CHECK(compact(d.message) == kToolStreamMessage);
}

TEST_CASE("anthropic-messages: the same stream cut anywhere (LF and CRLF) gives the same message", "[wire]") {
  setup s;
  check_cut_anywhere(s, kToolStream, kToolStreamMessage, 3, 1);
}

TEST_CASE("anthropic-messages: an overloaded_error event mid-stream (pi-ai's message)", "[wire]") {
  setup s;
  const std::string body =
      ev("message_start",
         R"({"type":"message_start","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}})") +
      ev("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})") +
      ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial"}})") +
      ev("error", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})") +
      ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" ignored"}})");
  const auto d = decode(s, body);
  CHECK(d.ended);  // the error ended it
  CHECK(compact(d.message) ==
        R"J({"role":"assistant","content":[{"type":"text","text":"Partial"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":11,"cost":{"input":0.00003,"output":0.000015,"cacheRead":0,"cacheWrite":0,"total":0.000045}},"stopReason":"error","timestamp":0,"responseId":"msg_02","errorMessage":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"})J");
}

TEST_CASE("anthropic-messages: stop_reason mapping", "[wire]") {
  setup s;
  struct row {
    const char* reason;
    const char* stop;
    const char* error;
  };
  const row rows[] = {{"end_turn", "stop", nullptr},
                      {"pause_turn", "stop", nullptr},
                      {"stop_sequence", "stop", nullptr},
                      {"max_tokens", "length", nullptr},
                      {"tool_use", "toolUse", nullptr},
                      {"refusal", "error", "An unknown error occurred"},
                      {"sensitive", "error", "An unknown error occurred"},
                      {"model_context_window_exceeded", "error", "Unhandled stop reason: model_context_window_exceeded"}};
  for (const auto& r : rows) {
    const std::string body =
        ev("message_start", R"({"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":0}}})") +
        ev("message_delta", std::string(R"({"type":"message_delta","delta":{"stop_reason":")") + r.reason +
                                R"("},"usage":{"output_tokens":3}})") +
        ev("message_stop", R"({"type":"message_stop"})");
    const auto d = decode(s, body);
    INFO(r.reason);
    check_stop(d, r.stop, r.error);
    // An unknown reason fails before that event's usage is read (pi-ai throws there).
    CHECK(d.message.at("usage").as_object().at("output") == (r.error && r.error[0] == 'U' ? 0 : 3));
  }
}

TEST_CASE("anthropic-messages: usage from message_start, overwritten by message_delta's non-null fields", "[wire]") {
  setup s;
  const std::string body =
      ev("message_start",
         R"({"type":"message_start","message":{"id":"m","usage":{"input_tokens":100,"cache_read_input_tokens":50,"cache_creation_input_tokens":null,"output_tokens":1}}})") +
      ev("message_delta",
         R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":null,"output_tokens":40,"cache_read_input_tokens":60,"cache_creation_input_tokens":7}})") +
      ev("message_stop", R"({"type":"message_stop"})");
  const auto d = decode(s, body);
  const auto& u = d.message.at("usage").as_object();
  CHECK(u.at("input") == 100);  // null in message_delta keeps message_start's
  CHECK(u.at("output") == 40);
  CHECK(u.at("cacheRead") == 60);
  CHECK(u.at("cacheWrite") == 7);
  CHECK(u.at("totalTokens") == 207);
  const double in = (3.0 / 1000000) * 100, out = (15.0 / 1000000) * 40, cr = (0.3 / 1000000) * 60, cw = (3.75 / 1000000) * 7;
  CHECK(u.at("cost").as_object().at("total").as_double() == in + out + cr + cw);
}

TEST_CASE("anthropic-messages: a stream cut before message_stop has not ended", "[wire]") {
  setup s;
  const std::string body =
      ev("message_start", R"({"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":0}}})") +
      ev("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"write","input":{}}})") +
      ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.txt\",\"content\":\"hel"}})");
  const auto d = decode(s, body);
  CHECK_FALSE(d.ended);
  // What arrived is kept, arguments parsed as far as they go (the runner marks the error).
  CHECK(compact(d.message.at("content")) == R"J([{"type":"toolCall","id":"toolu_9","name":"write","arguments":{"path":"a.txt","content":"hel"}}])J");
  CHECK_FALSE(decode(s, "").ended);
  CHECK_FALSE(decode(s, ev("ping", R"({"type":"ping"})")).ended);
}

TEST_CASE("anthropic-messages: unknown events, blocks and deltas are skipped, and bad JSON fails", "[wire]") {
  setup s;
  const std::string body =
      ev("message_start", R"({"type":"message_start","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":0}}})") +
      ev("some_future_event", R"({"type":"some_future_event"})") +
      ev("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search"}})") +
      ev("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}})") +
      ev("content_block_start", R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})") +
      ev("content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}})") +
      ev("content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}})") +
      ev("content_block_stop", R"({"type":"content_block_stop","index":1})") +
      ev("content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" after stop"}})") +
      ev("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}})") +
      ev("message_stop", R"({"type":"message_stop"})");
  const auto d = decode(s, body);
  CHECK(d.ended);
  CHECK(compact(d.message.at("content")) == R"J([{"type":"text","text":"ok"}])J");
  CHECK(d.message.at("stopReason") == "stop");

  const auto bad = decode(s, ev("message_start", "{not json"));
  CHECK(bad.ended);
  CHECK(bad.message.at("stopReason") == "error");
  CHECK(bad.message.at("errorMessage") == "Could not parse Anthropic SSE event message_start: data={not json");
  // A raw control character inside a string is repaired, as pi-ai's parseJsonWithRepair does.
  const auto repaired = decode(s, ev("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"a\tb\",\"usage\":{}}}"));
  CHECK(repaired.message.at("responseId") == "a\tb");
}

TEST_CASE("anthropic-messages: error bodies read as the Anthropic SDK words them", "[wire]") {
  const auto& w = wire_for("anthropic-messages");
  CHECK(w.error_text(400, R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"},"request_id":"req_011"})") ==
        R"(400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"},"request_id":"req_011"})");
  CHECK(w.error_text(413, "") == "413 status code (no body)");
  CHECK(w.error_text(529, R"({"message":"Overloaded"})") == "529 Overloaded");
  CHECK(w.error_text(502, "upstream connect error") == "502 upstream connect error");
}
