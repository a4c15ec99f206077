// openai-completions: request bodies compared with what pi-ai 0.73.1 sends for the same context
// (the expected bodies were printed by pi-ai's streamSimple through its onPayload hook), and
// stream decoding compared with the AssistantMessage pi-ai builds from the same bytes (printed
// by pi-ai reading them from a local server).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/providers/wire_test_support.hpp"

namespace bj = boost::json;
using namespace sessionrt::providers;
using namespace sessionrt::providers::wire_test;
namespace actors = sessionrt::actors;

namespace {

// qwen3 on a local OpenAI-compatible endpoint.
struct setup : wire_fixture {
  setup() : wire_fixture("openai-completions") {
    provider.id = "local";
    provider.base_url = "http://127.0.0.1:1234/v1/";
    provider.api_key = "sk-local";
    model.id = "qwen3";
    model.max_tokens = 8192;
    model.context_window = 196608;
    model.cost = {0.5, 2, 0.05, 0.625};
  }
  // `model_id` at OpenAI's own endpoint (no baseUrl).
  void at_openai(std::string model_id) {
    provider.id = "openai";
    provider.base_url = "";
    model.id = std::move(model_id);
  }
};

// The two contexts pi-ai was run on.
constexpr std::string_view kSameModelMessages =
    R"J([{"role":"user","content":"List src/ and show me the logo.","timestamp":1},{"role":"assistant","content":[{"type":"thinking","thinking":"Use bash.","thinkingSignature":"reasoning_content"},{"type":"text","text":"Let me look."},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls src/"}},{"type":"toolCall","id":"call_2","name":"read","arguments":{"path":"logo.png"}}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"main.cpp\nsession.cpp"}],"isError":false,"timestamp":3},{"role":"toolResult","toolCallId":"call_2","toolName":"read","content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":false,"timestamp":4},{"role":"assistant","content":[{"type":"text","text":"Here it is."}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":5},{"role":"user","content":[{"type":"text","text":"What about this one?"},{"type":"image","data":"R0lGOD","mimeType":"image/gif"}],"timestamp":6},{"role":"assistant","content":[{"type":"text","text":"partial"}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","errorMessage":"boom","timestamp":7},{"role":"user","content":"continue","timestamp":8}])J";
constexpr std::string_view kTools =
    R"J([{"name":"bash","description":"Run a shell command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}},{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}])J";
constexpr std::string_view kCrossModelMessages =
    R"J([{"role":"user","content":[{"type":"text","text":"Look:"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"image","data":"BBBB","mimeType":"image/png"}],"timestamp":1},{"role":"assistant","content":[{"type":"thinking","thinking":"The user wants a listing.","thinkingSignature":"sig-abc123"},{"type":"text","text":"Let me look."},{"type":"toolCall","id":"toolu_01A","name":"bash","arguments":{"command":"ls src/"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},{"role":"toolResult","toolCallId":"toolu_01A","toolName":"bash","content":[{"type":"text","text":"main.cpp"},{"type":"image","data":"CCCC","mimeType":"image/png"}],"isError":false,"timestamp":3},{"role":"assistant","content":[{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"opaque","redacted":true},{"type":"thinking","thinking":"   ","thinkingSignature":""},{"type":"toolCall","id":"call_abc|fc_123+/=xyz","name":"read","arguments":{"path":"a.txt"}},{"type":"toolCall","id":"call_orphan|fc_9","name":"read","arguments":{"path":"b.txt"}}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":4},{"role":"toolResult","toolCallId":"call_abc|fc_123+/=xyz","toolName":"read","content":[{"type":"text","text":"A"}],"isError":false,"timestamp":5},{"role":"custom","customType":"note","content":"ignored","display":true,"timestamp":6},{"role":"user","content":"next","timestamp":7},{"role":"assistant","content":[],"api":"openai-completions","provider":"openai","model":"gpt-4o-mini","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":8},{"role":"user","content":[],"timestamp":9},{"role":"user","content":"","timestamp":10}])J";

// A llama.cpp-style stream: reasoning_content, text with non-ASCII, two tool calls whose
// argument fragments interleave (keyed by index), finish_reason, a comment, the usage-only
// chunk with empty choices, then [DONE].
const std::string kToolStream =
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"The user \"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"wants files.\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me \"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"look \\u00e9 \\ud83d\\udc4b\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_abc\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"comm\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_def\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"and\\\":\\\"ls src/\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\"a.txt\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
    ": OPENROUTER PROCESSING\n\n"
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen3\",\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":80,\"total_tokens\":1280,\"prompt_tokens_details\":{\"cached_tokens\":1000}}}\n\n"
    "data: [DONE]\n\n";

// pi-ai's message for kToolStream (timestamp set to 0).
constexpr std::string_view kToolStreamMessage =
    R"J({"role":"assistant","content":[{"type":"thinking","thinking":"The user wants files.","thinkingSignature":"reasoning_content"},{"type":"text","text":"Let me look é 👋"},{"type":"toolCall","id":"call_abc","name":"bash","arguments":{"command":"ls src/"}},{"type":"toolCall","id":"call_def","name":"read","arguments":{"path":"a.txt"}}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":200,"output":80,"cacheRead":1000,"cacheWrite":0,"totalTokens":1280,"cost":{"input":0.00009999999999999999,"output":0.00015999999999999999,"cacheRead":0.00005,"cacheWrite":0,"total":0.00031}},"stopReason":"toolUse","timestamp":0,"responseId":"chatcmpl-1"})J";

}  // namespace

TEST_CASE("openai-completions: same-model history, tools, images: pi-ai's body", "[wire]") {
  setup s;
  s.model.reasoning = true;
  s.model.input = {"text", "image"};
  s.system_prompt = "You are a coding agent.";
  s.set_messages(kSameModelMessages);
  s.set_tools(kTools);
  // pi-ai was run with compat.supportsDeveloperRole false; for a local endpoint that is our
  // default (see the file comment of wire_openai_completions.cpp).
  const std::string expected =
      R"J({"model":"qwen3","messages":[{"role":"system","content":"You are a coding agent."},{"role":"user","content":"List src/ and show me the logo."},{"role":"assistant","content":"Let me look.","reasoning_content":"Use bash.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls src/\"}"}},{"id":"call_2","type":"function","function":{"name":"read","arguments":"{\"path\":\"logo.png\"}"}}]},{"role":"tool","content":"main.cpp\nsession.cpp","tool_call_id":"call_1"},{"role":"tool","content":"(see attached image)","tool_call_id":"call_2"},{"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},{"role":"assistant","content":"Here it is."},{"role":"user","content":[{"type":"text","text":"What about this one?"},{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lGOD"}}]},{"role":"user","content":"continue"}],"stream":true,"stream_options":{"include_usage":true},"store":false,"max_completion_tokens":8192,"tools":[{"type":"function","function":{"name":"bash","description":"Run a shell command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]},"strict":false}},{"type":"function","function":{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"strict":false}}]})J";
  http_request req = s.request();
  CHECK(req.body == expected);
  CHECK(req.method == "POST");
  CHECK(req.url == "http://127.0.0.1:1234/v1/chat/completions");  // trailing '/' of baseUrl dropped
  CHECK(header_value(req, "authorization") == "Bearer sk-local");
  CHECK(header_value(req, "content-type") == "application/json");
}

TEST_CASE("openai-completions: another model's history (thinking, ids, images, orphans): pi-ai's body", "[wire]") {
  setup s;
  s.at_openai("gpt-4o-mini");
  s.model.max_tokens = 16384;
  s.system_prompt = "Be brief.";
  s.set_messages(kCrossModelMessages);
  // Anthropic thinking becomes text; `call|fc` ids keep the call part; the orphaned call gets
  // "No result provided"; images a text-only model cannot see become placeholders; the errored
  // turn, the empty assistant turn, the custom message and the empty user array are dropped;
  // tool history without tools sends `tools: []`.
  const std::string expected =
      R"J({"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Look:"},{"type":"text","text":"(image omitted: model does not support images)"}]},{"role":"assistant","content":"The user wants a listing.Let me look.","tool_calls":[{"id":"toolu_01A","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls src/\"}"}}]},{"role":"tool","content":"main.cpp\n(tool image omitted: model does not support images)","tool_call_id":"toolu_01A"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}},{"id":"call_orphan","type":"function","function":{"name":"read","arguments":"{\"path\":\"b.txt\"}"}}]},{"role":"tool","content":"A","tool_call_id":"call_abc"},{"role":"tool","content":"No result provided","tool_call_id":"call_orphan"},{"role":"user","content":"next"},{"role":"user","content":""}],"stream":true,"stream_options":{"include_usage":true},"store":false,"max_completion_tokens":16384,"tools":[]})J";
  http_request req = s.request();
  CHECK(req.body == expected);
  CHECK(req.url == "https://api.openai.com/v1/chat/completions");
}

TEST_CASE("openai-completions: system vs developer role, by endpoint and compat", "[wire]") {
  setup s;
  s.system_prompt = "Rules.";
  s.set_messages(R"J([{"role":"user","content":"hi","timestamp":1}])J");
  auto first_role = [&] { return std::string(s.body().at("messages").as_array()[0].as_object().at("role").as_string()); };
  CHECK(first_role() == "system");  // not a reasoning model
  s.model.reasoning = true;
  CHECK(first_role() == "system");  // a reasoning model on a local endpoint (OpenClaw's rule)
  s.provider.base_url = "https://api.openai.com/v1";
  CHECK(first_role() == "developer");
  s.provider.base_url = "";  // the default endpoint is OpenAI's
  CHECK(first_role() == "developer");
  s.model.compat.supports_developer_role = false;
  CHECK(first_role() == "system");
  s.provider.base_url = "http://127.0.0.1:1234/v1";
  s.model.compat.supports_developer_role = true;
  CHECK(first_role() == "developer");
  s.provider.base_url = "https://api.x.ai/v1";  // non-standard host: pi-ai says no
  s.model.compat.supports_developer_role.reset();
  CHECK(first_role() == "system");
  // No system prompt, no system message.
  s.system_prompt.clear();
  CHECK(s.body().at("messages").as_array()[0].as_object().at("role") == "user");
}

TEST_CASE("openai-completions: max tokens field, usage in streaming, store, per compat and host", "[wire]") {
  setup s;
  s.set_messages(R"J([{"role":"user","content":"hi","timestamp":1}])J");
  auto b = s.body();
  CHECK(b.at("max_completion_tokens") == 8192);
  CHECK_FALSE(b.contains("max_tokens"));
  CHECK(compact(b.at("stream_options")) == R"({"include_usage":true})");
  CHECK(b.at("store") == false);
  CHECK_FALSE(b.contains("tools"));  // no tools and no tool history

  s.model.compat.max_tokens_field = "max_tokens";
  s.model.compat.supports_usage_in_streaming = false;
  b = s.body();
  CHECK(b.at("max_tokens") == 8192);
  CHECK_FALSE(b.contains("max_completion_tokens"));
  CHECK_FALSE(b.contains("stream_options"));

  s.model.compat = {};
  s.model.max_tokens = 100000;  // pi-ai's streamSimple caps the model's maxTokens at 32000
  CHECK(s.body().at("max_completion_tokens") == 32000);
  s.max_tokens = 50000;  // an explicit request is sent as is
  CHECK(s.body().at("max_completion_tokens") == 50000);
  s.max_tokens = 0;
  s.model.max_tokens = 0;  // unknown: no max field at all
  b = s.body();
  CHECK_FALSE(b.contains("max_completion_tokens"));
  CHECK_FALSE(b.contains("max_tokens"));

  s.model.max_tokens = 1000;
  s.provider.base_url = "https://llm.chutes.ai/v1";  // chutes: max_tokens, non-standard: no store
  b = s.body();
  CHECK(b.at("max_tokens") == 1000);
  CHECK_FALSE(b.contains("store"));
}

TEST_CASE("openai-completions: DeepSeek, z.ai and OpenRouter reasoning models at thinking off", "[wire]") {
  setup s;
  s.model.reasoning = true;
  s.set_messages(R"J([{"role":"user","content":"hi","timestamp":1},{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"openai-completions","provider":"deepseek","model":"qwen3","stopReason":"stop","timestamp":2}])J");
  s.provider.id = "deepseek";
  s.provider.base_url = "https://api.deepseek.com/v1";
  auto b = s.body();
  CHECK(compact(b.at("thinking")) == R"({"type":"disabled"})");
  CHECK(compact(b.at("messages").as_array()[1]) == R"({"role":"assistant","content":"yo","reasoning_content":""})");
  CHECK_FALSE(b.contains("store"));
  s.provider.id = "zai";
  s.provider.base_url = "https://api.z.ai/api/paas/v4";
  CHECK(s.body().at("enable_thinking") == false);
  s.provider.id = "openrouter";
  s.provider.base_url = "https://openrouter.ai/api/v1";
  CHECK(compact(s.body().at("reasoning")) == R"({"effort":"none"})");
  s.model.reasoning = false;
  b = s.body();
  CHECK_FALSE(b.contains("reasoning"));
  CHECK_FALSE(b.contains("thinking"));
}

TEST_CASE("openai-completions: headers: bearer key, provider headers override, no key no auth", "[wire]") {
  setup s;
  s.set_messages(R"J([{"role":"user","content":"hi","timestamp":1}])J");
  s.provider.headers = {{"X-Title", "sessionrt"}, {"Authorization", "Bearer override"}};
  http_request req = s.request();
  CHECK(header_value(req, "authorization") == "Bearer override");  // replaced in place, case-insensitively
  CHECK(header_value(req, "X-Title") == "sessionrt");
  int auth = 0;
  for (const auto& h : req.headers) auth += (h.first == "authorization" || h.first == "Authorization");
  CHECK(auth == 1);
  s.provider.headers.clear();
  s.provider.api_key.clear();
  req = s.request();
  CHECK(header_value(req, "authorization") == "<absent>");
}

TEST_CASE("openai-completions: assistant replay details", "[wire]") {
  setup s;
  s.at_openai("gpt-4o");
  // Same model: a long id is cut to 40 only when it comes from another model; thinking with
  // a field-name signature goes back in that field; thoughtSignature becomes reasoning_details.
  s.set_messages(R"J([
    {"role":"user","content":"hi","timestamp":1},
    {"role":"assistant","content":[{"type":"thinking","thinking":"a","thinkingSignature":"reasoning"},{"type":"thinking","thinking":"b","thinkingSignature":"x"},{"type":"text","text":"one "},{"type":"text","text":"two"},{"type":"toolCall","id":"call_0123456789012345678901234567890123456789XYZ","name":"t","arguments":{},"thoughtSignature":"{\"type\":\"reasoning.encrypted\",\"id\":\"c\",\"data\":\"d\"}"}],"api":"openai-completions","provider":"openai","model":"gpt-4o","stopReason":"toolUse","timestamp":2},
    {"role":"toolResult","toolCallId":"call_0123456789012345678901234567890123456789XYZ","toolName":"t","content":[],"isError":false,"timestamp":3},
    {"role":"assistant","content":[{"type":"toolCall","id":"call_0123456789012345678901234567890123456789ABC","name":"t","arguments":{"k":[1,2.5,"s"]}}],"api":"anthropic-messages","provider":"anthropic","model":"claude","stopReason":"toolUse","timestamp":4},
    {"role":"toolResult","toolCallId":"call_0123456789012345678901234567890123456789ABC","toolName":"t","content":[{"type":"text","text":"r1"},{"type":"text","text":"r2"}],"isError":false,"timestamp":5}
  ])J");
  const auto msgs = s.body().at("messages").as_array();
  REQUIRE(msgs.size() == 5);
  CHECK(compact(msgs[1]) ==
        R"J({"role":"assistant","content":"one two","reasoning":"a\nb","tool_calls":[{"id":"call_0123456789012345678901234567890123456789XYZ","type":"function","function":{"name":"t","arguments":"{}"}}],"reasoning_details":[{"type":"reasoning.encrypted","id":"c","data":"d"}]})J");
  CHECK(compact(msgs[2]) == R"J({"role":"tool","content":"(see attached image)","tool_call_id":"call_0123456789012345678901234567890123456789XYZ"})J");
  CHECK(compact(msgs[3]) ==
        R"J({"role":"assistant","content":null,"tool_calls":[{"id":"call_01234567890123456789012345678901234","type":"function","function":{"name":"t","arguments":"{\"k\":[1,2.5,\"s\"]}"}}]})J");
  CHECK(compact(msgs[4]) == R"J({"role":"tool","content":"r1\nr2","tool_call_id":"call_01234567890123456789012345678901234"})J");
}

TEST_CASE("openai-completions: a realistic tool-call stream decodes to pi-ai's message", "[wire]") {
  setup s;
  s.model.reasoning = true;
  const auto d = decode(s, kToolStream);
  CHECK(d.ended);
  CHECK(compact(d.message) == kToolStreamMessage);
}

TEST_CASE("openai-completions: the same stream cut at every byte gives the same message", "[wire]") {
  setup s;
  check_cut_anywhere(s, kToolStream, kToolStreamMessage, 1);
}

TEST_CASE("openai-completions: finish_reason mapping", "[wire]") {
  setup s;
  struct row {
    const char* finish;
    const char* stop;
    const char* error;
  };
  const row rows[] = {{"stop", "stop", nullptr},
                      {"end", "stop", nullptr},
                      {"length", "length", nullptr},
                      {"tool_calls", "toolUse", nullptr},
                      {"function_call", "toolUse", nullptr},
                      {"content_filter", "error", "Provider finish_reason: content_filter"},
                      {"network_error", "error", "Provider finish_reason: network_error"},
                      {"weird", "error", "Provider finish_reason: weird"}};
  for (const auto& r : rows) {
    const std::string body = std::string("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"") +
                             r.finish + "\"}]}\n\ndata: [DONE]\n\n";
    INFO(r.finish);
    check_stop(decode(s, body), r.stop, r.error);
  }
  // null finish_reason and no finish chunk at all: stop.
  const auto d = decode(s, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\ndata: [DONE]\n\n");
  CHECK(d.message.at("stopReason") == "stop");
}

TEST_CASE("openai-completions: content_filter keeps reading usage (pi-ai's message)", "[wire]") {
  setup s;
  const std::string body =
      "data: {\"id\":\"gen-1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Some\"},\"finish_reason\":null}]}\n\n"
      "data: {\"id\":\"gen-1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n"
      "data: {\"id\":\"gen-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":60,\"cache_write_tokens\":20}}}\n\n"
      "data: [DONE]\n\n";
  // OpenRouter counts this request's cache writes in cached_tokens: cacheRead = 60 - 20.
  CHECK(compact(decode(s, body).message) ==
        R"J({"role":"assistant","content":[{"type":"text","text":"Some"}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":40,"output":3,"cacheRead":40,"cacheWrite":20,"totalTokens":103,"cost":{"input":0.000019999999999999998,"output":0.000006,"cacheRead":0.0000020000000000000003,"cacheWrite":0.0000125,"total":0.0000405}},"stopReason":"error","timestamp":0,"responseId":"gen-1","errorMessage":"Provider finish_reason: content_filter"})J");
}

TEST_CASE("openai-completions: DeepSeek cache hits and usage inside the finishing chunk", "[wire]") {
  setup s;
  const std::string body =
      "data: {\"id\":\"ds-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":500,\"completion_tokens\":7,\"prompt_cache_hit_tokens\":300,\"prompt_cache_miss_tokens\":200}}\n\n"
      "data: [DONE]\n\n";
  CHECK(compact(decode(s, body).message) ==
        R"J({"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":200,"output":7,"cacheRead":300,"cacheWrite":0,"totalTokens":507,"cost":{"input":0.00009999999999999999,"output":0.000014,"cacheRead":0.000015000000000000002,"cacheWrite":0,"total":0.000129}},"stopReason":"stop","timestamp":0,"responseId":"ds-1"})J");
  // Moonshot: usage in the choice.
  const auto m = decode(s, "data: {\"id\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\",\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}]}\n\n");
  CHECK(m.message.at("usage").as_object().at("input") == 9);
  CHECK(m.message.at("usage").as_object().at("output") == 4);
}

TEST_CASE("openai-completions: an error chunk ends the call with its message", "[wire]") {
  setup s;
  const std::string body =
      "data: {\"id\":\"gen-2\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
      "data: {\"error\":{\"message\":\"Upstream error\",\"code\":502,\"metadata\":{\"raw\":\"{\\\"detail\\\":\\\"overloaded\\\"}\",\"provider_name\":\"X\"}}}\n\n"
      "data: {\"id\":\"gen-2\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n\n"
      "data: [DONE]\n\n";
  const auto d = decode(s, body);
  CHECK(d.ended);
  CHECK(compact(d.message) ==
        R"J({"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"openai-completions","provider":"local","model":"qwen3","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":0,"responseId":"gen-2","errorMessage":"Upstream error\n{\"detail\":\"overloaded\"}"})J");
  // `event: error` and an error without a message.
  const auto e = decode(s, "event: error\ndata: {\"error\":{\"code\":\"server_error\"}}\n\n");
  CHECK(e.message.at("errorMessage") == R"({"code":"server_error"})");
  // Not JSON.
  const auto g = decode(s, "data: {oops\n\n");
  CHECK(g.ended);
  CHECK(g.message.at("stopReason") == "error");
  CHECK(g.message.at("errorMessage") == "Could not parse message into JSON: {oops");
}

TEST_CASE("openai-completions: a body cut before finish_reason and [DONE] has not ended", "[wire]") {
  setup s;
  const auto d = decode(s, "data: {\"id\":\"x-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut\"},\"finish_reason\":null}]}\n\n");
  CHECK_FALSE(d.ended);
  CHECK(d.message.at("content").as_array().size() == 1);  // the partial text is kept for the runner
  CHECK_FALSE(decode(s, "").ended);
  // Mid tool call: the arguments so far, partially parsed.
  const auto t = decode(s,
                        "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls -\"}}]}}]}\n\n");
  CHECK_FALSE(t.ended);
  CHECK(compact(t.message.at("content")) == R"J([{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls -"}}])J");
  // A finish_reason without [DONE] counts as ended (servers that close right after it).
  CHECK(decode(s, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}").ended);
}

TEST_CASE("openai-completions: tool calls keyed by id without index, names arriving late", "[wire]") {
  setup s;
  const std::string body =
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"arguments\":\"{\\\"x\\\":\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"first\",\"arguments\":\"1}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"second\",\"arguments\":\"{}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"reasoning\":\"r\",\"reasoning_content\":\"\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
  const auto d = decode(s, body);
  CHECK(compact(d.message.at("content")) ==
        R"J([{"type":"toolCall","id":"a","name":"first","arguments":{"x":1}},{"type":"toolCall","id":"b","name":"second","arguments":{}},{"type":"thinking","thinking":"r","thinkingSignature":"reasoning"}])J");
  CHECK(d.message.at("stopReason") == "toolUse");  // "stop" with tool calls
  CHECK_FALSE(d.message.contains("responseId"));
}

TEST_CASE("openai-completions: error bodies read as the openai SDK words them", "[wire]") {
  const auto& w = wire_for("openai-completions");
  CHECK(w.error_text(400, R"({"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})") ==
        "400 This model's maximum context length is 128000 tokens.");
  CHECK(w.error_text(413, "") == "413 status code (no body)");
  CHECK(w.error_text(502, "<html>Bad gateway</html>") == "502 <html>Bad gateway</html>");
  CHECK(w.error_text(500, R"({"error":{"code":500}})") == R"(500 {"code":500})");
  CHECK(w.error_text(429, R"({"error":"rate limited"})") == R"(429 "rate limited")");
  CHECK(w.error_text(400, R"({"detail":"no error member"})") == "400 status code (no body)");
  const std::string big(5000, 'x');
  CHECK(w.error_text(503, big) == "503 " + std::string(1024, 'x'));
}

TEST_CASE("wire formats: the table, names and base URLs", "[wire]") {
  check_listed(openai_completions_wire(), "openai-completions");
  check_listed(anthropic_messages_wire(), "anthropic-messages");
  CHECK(find_wire_format("bedrock-converse-stream") == nullptr);
  CHECK(find_wire_format("") == nullptr);
  actors::provider_config p;
  CHECK(base_url_or(p, "https://api.openai.com/v1") == "https://api.openai.com/v1");
  p.base_url = "http://h:1/v1//";
  CHECK(base_url_or(p, "x") == "http://h:1/v1");
}
