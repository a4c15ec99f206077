// google-generative-ai wire format: the request body and the AssistantMessage from a stream,
// checked against what pi-ai 0.73.1 (streamSimple, thinking off, @google/genai's REST body)
// sends and builds for the same inputs. The expected bodies and messages below were produced
// by running pi-ai itself against a local server that captured its request and answered with
// the stream shown (tests/providers/piai_install.sh installs it); known differences are
// spelled out where a test allows them.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/providers/wire_test_support.hpp"

namespace {

namespace bj = boost::json;
using namespace sessionrt::providers;
using namespace sessionrt::providers::wire_test;

constexpr std::int64_t kTimestamp = 1234;  // the decoded messages'

wire_fixture gemini(std::string id = "gemini-2.5-flash") {
  wire_fixture f("google-generative-ai");
  f.provider.id = "google";
  f.provider.api_key = "test-key";
  f.model.id = std::move(id);
  f.model.reasoning = true;
  f.model.input = {"text", "image"};
  f.model.cost = {0.3, 2.5, 0.075, 0};
  f.model.context_window = 1048576;
  f.model.max_tokens = 65536;
  f.timestamp = kTimestamp;
  return f;
}

tool_spec weather_tool() {
  return {"get_weather", "Current weather",
          parse_json(R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]})")
              .as_object()};
}

// Generated tool-call ids differ from run to run (a process-wide counter): they are checked
// for their form and then blanked, so the rest of the message can be compared whole.
bj::object blank_generated_ids(bj::object m, std::vector<std::string>* ids = nullptr) {
  for (auto& b : m.at("content").as_array()) {
    auto& o = b.as_object();
    if (o.at("type") != "toolCall") continue;
    if (ids) ids->emplace_back(o.at("id").as_string());
    o["id"] = "<id>";
  }
  return m;
}

// The same stream cut in many ways, in Google's CRLF framing and in LF, must decode to one
// message (generated ids aside).
decoded run_split(const wire_fixture& f, std::string_view lf_sse) {
  const std::string sse = with_line_ends(lf_sse, "\r\n");
  return decode_split(f, {sse, lf_sse}, [](bj::object m) { return blank_generated_ids(std::move(m)); });
}

// pi-ai's message with what ours cannot have taken out: timestamp (placed where pi-ai's
// output object has it), textSignature and toolCall thoughtSignature (assistant_builder keeps
// neither).
bj::object expected_message(std::string_view pi_ai) {
  return pi_ai_message(pi_ai, kTimestamp, {"textSignature", "thoughtSignature"});
}

constexpr std::string_view kContext = R"JSON([
 {"role":"user","content":"Weather in Paris and Lyon?","timestamp":1},
 {"role":"assistant","content":[{"type":"thinking","thinking":"Two cities, two calls.","thinkingSignature":"CiQBAA=="},{"type":"text","text":"Checking both.","textSignature":"Ei0="},{"type":"text","text":"   "},{"type":"toolCall","id":"get_weather_1700000000000_1","name":"get_weather","arguments":{"city":"Paris"},"thoughtSignature":"CqQCAdHt"},{"type":"toolCall","id":"get_weather_1700000000000_2","name":"get_weather","arguments":{"city":"Lyon"}}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},
 {"role":"toolResult","toolCallId":"get_weather_1700000000000_1","toolName":"get_weather","content":[{"type":"text","text":"18C"},{"type":"text","text":"sunny"}],"isError":false,"timestamp":3},
 {"role":"toolResult","toolCallId":"get_weather_1700000000000_2","toolName":"get_weather","content":[{"type":"text","text":"timeout"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":true,"timestamp":4},
 {"role":"assistant","content":[{"type":"thinking","thinking":"Compare them.","thinkingSignature":"{\"id\":\"rs_1\"}"},{"type":"text","text":"Paris is warmer."},{"type":"toolCall","id":"call_77|fc_77","name":"get_weather","arguments":{"city":"Nice"},"thoughtSignature":"CqQCAdHt"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2},
 {"role":"toolResult","toolCallId":"call_77|fc_77","toolName":"get_weather","content":[{"type":"image","data":"R0lGOD==","mimeType":"image/gif"}],"isError":false,"timestamp":5},
 {"role":"user","content":[{"type":"image","data":"/9j/4AAQ","mimeType":"image/jpeg"},{"type":"text","text":"And this?"}],"timestamp":6},
 {"role":"assistant","content":[{"type":"thinking","thinking":"A photo.","thinkingSignature":"not base64!"},{"type":"text","text":"A cat."}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2},
 {"role":"assistant","content":[{"type":"text","text":"broken"}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"aborted","timestamp":2},
 {"role":"user","content":"thanks","timestamp":7}
])JSON";
// `model_id` called with kContext, the weather tool and a system prompt (pi-ai was run so).
wire_fixture weather_bot(std::string model_id) {
  wire_fixture f = gemini(std::move(model_id));
  f.set_messages(kContext);
  f.tools = {weather_tool()};
  f.system_prompt = "You are a weather bot.";
  return f;
}
constexpr std::string_view kBodyPiAi = R"JSON({"contents":[{"parts":[{"text":"Weather in Paris and Lyon?"}],"role":"user"},{"parts":[{"text":"Two cities, two calls.","thought":true,"thoughtSignature":"CiQBAA=="},{"text":"Checking both.","thoughtSignature":"Ei0="},{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"},"thoughtSignature":"CqQCAdHt"},{"functionCall":{"args":{"city":"Lyon"},"name":"get_weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"get_weather","response":{"output":"18C\nsunny"}}},{"functionResponse":{"name":"get_weather","response":{"error":"timeout"}}}],"role":"user"},{"parts":[{"text":"Tool result image:"},{"inlineData":{"data":"iVBORw0KGgo=","mimeType":"image/png"}}],"role":"user"},{"parts":[{"text":"Compare them."},{"text":"Paris is warmer."},{"functionCall":{"args":{"city":"Nice"},"name":"get_weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"get_weather","response":{"output":"(see attached image)"}}}],"role":"user"},{"parts":[{"text":"Tool result image:"},{"inlineData":{"data":"R0lGOD==","mimeType":"image/gif"}}],"role":"user"},{"parts":[{"inlineData":{"data":"/9j/4AAQ","mimeType":"image/jpeg"}},{"text":"And this?"}],"role":"user"},{"parts":[{"text":"A photo.","thought":true},{"text":"A cat."}],"role":"model"},{"parts":[{"text":"thanks"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"You are a weather bot."}],"role":"user"},"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Current weather","parametersJsonSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}],"generationConfig":{"maxOutputTokens":32000,"thinkingConfig":{"thinkingBudget":0}}})JSON";
constexpr std::string_view kBodyGemini3PiAi = R"JSON({"contents":[{"parts":[{"text":"Weather in Paris and Lyon?"}],"role":"user"},{"parts":[{"text":"Two cities, two calls."},{"text":"Checking both."},{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"}},{"functionCall":{"args":{"city":"Lyon"},"name":"get_weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"get_weather","response":{"output":"18C\nsunny"}}},{"functionResponse":{"name":"get_weather","response":{"error":"timeout"},"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]}}],"role":"user"},{"parts":[{"text":"Compare them."},{"text":"Paris is warmer."},{"functionCall":{"args":{"city":"Nice"},"name":"get_weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"get_weather","response":{"output":"(see attached image)"},"parts":[{"inlineData":{"mimeType":"image/gif","data":"R0lGOD=="}}]}}],"role":"user"},{"parts":[{"inlineData":{"data":"/9j/4AAQ","mimeType":"image/jpeg"}},{"text":"And this?"}],"role":"user"},{"parts":[{"text":"A photo."},{"text":"A cat."}],"role":"model"},{"parts":[{"text":"thanks"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"You are a weather bot."}],"role":"user"},"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Current weather","parametersJsonSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}],"generationConfig":{"maxOutputTokens":32000,"thinkingConfig":{"thinkingLevel":"LOW"}}})JSON";
constexpr std::string_view kBodyClaudePiAi = R"JSON({"contents":[{"parts":[{"text":"Weather in Paris and Lyon?"}],"role":"user"},{"parts":[{"text":"Two cities, two calls."},{"text":"Checking both."},{"functionCall":{"id":"get_weather_1700000000000_1","args":{"city":"Paris"},"name":"get_weather"}},{"functionCall":{"id":"get_weather_1700000000000_2","args":{"city":"Lyon"},"name":"get_weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"get_weather","response":{"output":"18C\nsunny"},"id":"get_weather_1700000000000_1"}},{"functionResponse":{"name":"get_weather","response":{"error":"timeout"},"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}],"id":"get_weather_1700000000000_2"}}],"role":"user"},{"parts":[{"text":"Compare them."},{"text":"Paris is warmer."},{"functionCall":{"id":"call_77_fc_77","args":{"city":"Nice"},"name":"get_weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"get_weather","response":{"output":"(see attached image)"},"parts":[{"inlineData":{"mimeType":"image/gif","data":"R0lGOD=="}}],"id":"call_77_fc_77"}}],"role":"user"},{"parts":[{"inlineData":{"data":"/9j/4AAQ","mimeType":"image/jpeg"}},{"text":"And this?"}],"role":"user"},{"parts":[{"text":"A photo."},{"text":"A cat."}],"role":"model"},{"parts":[{"text":"thanks"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"You are a weather bot."}],"role":"user"},"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Current weather","parametersJsonSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}],"generationConfig":{"maxOutputTokens":32000,"thinkingConfig":{"thinkingBudget":0}}})JSON";
constexpr std::string_view kStream = R"JSON(data: {"candidates":[{"content":{"parts":[{"text":"**Looking up** the forecast","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":1200,"totalTokenCount":1240,"thoughtsTokenCount":40},"modelVersion":"gemini-2.5-flash","responseId":"q4ZvaPaNGNS-z7IPg6_T0QE"}

data: {"candidates":[{"content":{"parts":[{"text":" for Paris.","thought":true,"thoughtSignature":"CtMBAR/MhbZ"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":1200,"totalTokenCount":1280,"thoughtsTokenCount":80},"modelVersion":"gemini-2.5-flash","responseId":"q4ZvaPaNGNS-z7IPg6_T0QE"}

data: {"candidates":[{"content":{"parts":[{"text":"Let me check "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":3,"totalTokenCount":1283,"thoughtsTokenCount":80},"modelVersion":"gemini-2.5-flash","responseId":"q4ZvaPaNGNS-z7IPg6_T0QE"}

data: {"candidates":[{"content":{"parts":[{"text":"\u2014 one moment. \ud83c\udf26"},{"functionCall":{"name":"get_weather","args":{"city":"Paris","days":3}},"thoughtSignature":"CqQCAdHtim9"},{"functionCall":{"name":"get_weather","args":{"city":"Lyon"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":31,"totalTokenCount":1311,"cachedContentTokenCount":1024,"thoughtsTokenCount":80},"modelVersion":"gemini-2.5-flash","responseId":"q4ZvaPaNGNS-z7IPg6_T0QE"}

)JSON";
constexpr std::string_view kStreamMessagePiAi = R"JSON({"role":"assistant","content":[{"type":"thinking","thinking":"**Looking up** the forecast for Paris.","thinkingSignature":"CtMBAR/MhbZ"},{"type":"text","text":"Let me check — one moment. 🌦"},{"type":"toolCall","id":"get_weather_1796430619397_1","name":"get_weather","arguments":{"city":"Paris","days":3},"thoughtSignature":"CqQCAdHtim9"},{"type":"toolCall","id":"get_weather_1796430619397_2","name":"get_weather","arguments":{"city":"Lyon"}}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":176,"output":111,"cacheRead":1024,"cacheWrite":0,"totalTokens":1311,"cost":{"input":5.2799999999999996e-05,"output":0.0002775,"cacheRead":7.68e-05,"cacheWrite":0,"total":0.0004071}},"stopReason":"toolUse","responseId":"q4ZvaPaNGNS-z7IPg6_T0QE"})JSON";
// The stream pi-ai was answered with for each finish reason: a text chunk, then one that
// finishes with `reason`.
std::string finish_stream(std::string_view reason) {
  return concat({R"JSON(data: {"candidates":[{"content":{"parts":[{"text":"Partial answer"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1"}

data: {"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"index":0,"finishReason":")JSON", reason, R"JSON("}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1","usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":4,"totalTokenCount":54}}

)JSON"});
}
// pi-ai's message for it: the same for every reason but the stop reason it maps to (and, for
// "error", pi-ai's errorMessage).
std::string finish_pi_ai(std::string_view stop) {
  return concat({R"JSON({"role":"assistant","content":[{"type":"text","text":"Partial answer."}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":50,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":54,"cost":{"input":1.4999999999999999e-05,"output":1e-05,"cacheRead":0,"cacheWrite":0,"total":2.4999999999999998e-05}},"stopReason":")JSON", stop, R"JSON(","responseId":"resp-g-1")JSON",
                 stop == "error" ? R"JSON(,"errorMessage":"An unknown error occurred")JSON" : "", "}"});
}
constexpr std::string_view kStream_cut = R"JSON(data: {"candidates":[{"content":{"parts":[{"text":"Half"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1","usageMetadata":{"promptTokenCount":50,"totalTokenCount":50}}

)JSON";
constexpr std::string_view kPiAi_cut = R"JSON({"role":"assistant","content":[{"type":"text","text":"Half"}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":50,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":50,"cost":{"input":1.4999999999999999e-05,"output":0,"cacheRead":0,"cacheWrite":0,"total":1.4999999999999999e-05}},"stopReason":"stop","responseId":"resp-g-1"})JSON";
constexpr std::string_view kStream_error_chunk = R"JSON(data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1"}

data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}

)JSON";
constexpr std::string_view kPiAi_error_chunk = R"JSON({"role":"assistant","content":[{"type":"text","text":"Hi"}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","responseId":"resp-g-1"})JSON";
constexpr std::string_view kStream_dup_ids = R"JSON(data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"fc-1","name":"a","args":{}}},{"functionCall":{"id":"fc-1","name":"b","args":{"x":[1,2]}}},{"functionCall":{"id":"fc-2","name":"c"}}],"role":"model"},"index":0,"finishReason":"STOP"}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1","usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":6,"thoughtsTokenCount":2,"totalTokenCount":18}}

)JSON";
constexpr std::string_view kPiAi_dup_ids = R"JSON({"role":"assistant","content":[{"type":"toolCall","id":"fc-1","name":"a","arguments":{}},{"type":"toolCall","id":"b_1796430607454_1","name":"b","arguments":{"x":[1,2]}},{"type":"toolCall","id":"fc-2","name":"c","arguments":{}}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":10,"output":8,"cacheRead":0,"cacheWrite":0,"totalTokens":18,"cost":{"input":3e-06,"output":2e-05,"cacheRead":0,"cacheWrite":0,"total":2.3000000000000003e-05}},"stopReason":"toolUse","responseId":"resp-g-1"})JSON";
constexpr std::string_view kStream_sig_text = R"JSON(data: {"candidates":[{"content":{"parts":[{"text":"Thinking hard","thought":true,"thoughtSignature":"AAAA"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1"}

data: {"candidates":[{"content":{"parts":[{"text":" still","thought":true}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1"}

data: {"candidates":[{"content":{"parts":[{"text":"Answer"},{"text":"","thoughtSignature":"BBBB"}],"role":"model"},"index":0,"finishReason":"STOP"}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1","usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":1,"totalTokenCount":11}}

)JSON";
constexpr std::string_view kPiAi_sig_text = R"JSON({"role":"assistant","content":[{"type":"thinking","thinking":"Thinking hard still","thinkingSignature":"AAAA"},{"type":"text","text":"Answer","textSignature":"BBBB"}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":11,"cost":{"input":3e-06,"output":2.5e-06,"cacheRead":0,"cacheWrite":0,"total":5.5e-06}},"stopReason":"stop","responseId":"resp-g-1"})JSON";
constexpr std::string_view kStream_max_tokens_tool = R"JSON(data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"a","args":{"q":"x"}}}],"role":"model"},"index":0,"finishReason":"MAX_TOKENS"}],"modelVersion":"gemini-2.5-flash","responseId":"resp-g-1","usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":6,"totalTokenCount":16}}

)JSON";
constexpr std::string_view kPiAi_max_tokens_tool = R"JSON({"role":"assistant","content":[{"type":"toolCall","id":"a_1796430610847_1","name":"a","arguments":{"q":"x"}}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":10,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":16,"cost":{"input":3e-06,"output":1.5000000000000002e-05,"cacheRead":0,"cacheWrite":0,"total":1.8000000000000004e-05}},"stopReason":"toolUse","responseId":"resp-g-1"})JSON";

}  // namespace

TEST_CASE("google-generative-ai request: a mixed-provider context becomes pi-ai's contents", "[wire]") {
  const http_request req = weather_bot("gemini-2.5-flash").request();
  CHECK(req.method == "POST");
  CHECK(req.url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  CHECK(header_value(req, "x-goog-api-key") == "test-key");
  CHECK(header_value(req, "Content-Type") == "application/json");
  CHECK(header_value(req, "Authorization") == "<absent>");
  // What @google/genai sent for pi-ai (keys compared as sets): the same model's thought
  // signatures kept where they are base64 (the invalid one dropped), the blank text skipped,
  // both function responses in one user turn ({output} / {error}), Gemini 2.5's tool-result
  // images in a "Tool result image:" turn of their own, another provider's thinking as plain
  // text and its thoughtSignature dropped, the aborted turn left out, systemInstruction as a
  // user Content, parametersJsonSchema, maxOutputTokens 32000 and thinkingBudget 0.
  CHECK(parse_json(req.body) == parse_json(kBodyPiAi));
  // Keys in the order pi-ai builds them where it matters to a reader.
  CHECK(req.body.starts_with(R"({"contents":[{"role":"user","parts":[{"text":"Weather in Paris and Lyon?"}]})"));
}

TEST_CASE("google-generative-ai request: Gemini 3 and models that need tool-call ids", "[wire]") {
  // Another model's turns: thinking as text, no signatures; images inside functionResponse.parts
  // (Gemini 3 takes multimodal function responses); thinkingLevel LOW (3 Pro cannot turn off).
  CHECK(parse_json(weather_bot("gemini-3-pro-preview").request().body) == parse_json(kBodyGemini3PiAi));
  // Claude behind Google's API: ids in functionCall / functionResponse, sanitized ("|" -> "_").
  CHECK(parse_json(weather_bot("claude-sonnet-4-5").request().body) == parse_json(kBodyClaudePiAi));

  wire_fixture flash = gemini("gemini-3-flash-preview");
  flash.set_messages(R"([{"role":"user","content":"hi"}])");
  CHECK(compact(parse_json(flash.request().body).as_object().at("generationConfig")) ==
        R"({"maxOutputTokens":32000,"thinkingConfig":{"thinkingLevel":"MINIMAL"}})");
}

TEST_CASE("google-generative-ai request: Gemini 3's own function calls always carry a signature", "[wire]") {
  // Difference from pi-ai: our transcripts have no toolCall thoughtSignature (assistant_builder
  // keeps none), and Gemini 3 refuses its own function call without one; Google's documented
  // placeholder goes where the signature is missing. A real one is sent as is.
  wire_fixture f = gemini("gemini-3-pro-preview");
  f.set_messages(R"([
    {"role":"user","content":"Weather?"},
    {"role":"assistant","api":"google-generative-ai","provider":"google","model":"gemini-3-pro-preview","stopReason":"toolUse",
     "content":[{"type":"toolCall","id":"get_weather_r_1","name":"get_weather","arguments":{"city":"Paris"}},
                {"type":"toolCall","id":"get_weather_r_2","name":"get_weather","arguments":{"city":"Lyon"},"thoughtSignature":"CqQCAdHt"}]},
    {"role":"toolResult","toolCallId":"get_weather_r_1","toolName":"get_weather","content":[{"type":"text","text":"18C"}],"isError":false}
  ])");
  http_request req = f.request();
  const bj::array contents = parse_json(req.body).as_object().at("contents").as_array();
  REQUIRE(contents.size() == 3);
  const bj::array& parts = contents[1].as_object().at("parts").as_array();
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].as_object().at("thoughtSignature") == "skip_thought_signature_validator");
  CHECK(parts[1].as_object().at("thoughtSignature") == "CqQCAdHt");
  CHECK(!parts[0].as_object().at("functionCall").as_object().contains("id"));  // Gemini: no ids
  // The orphaned second call gets pi-ai's synthetic error result, merged into the same turn.
  const bj::array& results = contents[2].as_object().at("parts").as_array();
  REQUIRE(results.size() == 2);
  CHECK(compact(results[1]) == R"({"functionResponse":{"name":"get_weather","response":{"error":"No result provided"}}})");

  // Gemini 2.5 is not given the placeholder.
  f.model.id = "gemini-2.5-pro";
  for (auto& m : f.messages) {
    auto& o = m.as_object();
    if (o.at("role") == "assistant") o["model"] = "gemini-2.5-pro";
  }
  req = f.request();
  CHECK(req.body.find("skip_thought_signature_validator") == std::string::npos);
}

TEST_CASE("google-generative-ai request: URL, headers, key and generation config", "[wire]") {
  wire_fixture f = gemini();
  f.set_messages(R"([{"role":"user","content":[{"type":"text","text":"Describe"},{"type":"image","data":"AAAA","mimeType":"image/webp"}]}])");
  f.provider.base_url = "https://proxy.example/google/v1beta//";
  f.provider.headers = {{"X-Goog-Api-Key", "proxy-key"}, {"X-Trace", "1"}};
  f.model.reasoning = false;
  f.max_tokens = 777;
  http_request req = f.request();
  CHECK(req.url == "https://proxy.example/google/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  CHECK(header_value(req, "x-goog-api-key") == "proxy-key");  // the provider's header wins
  CHECK(header_value(req, "X-Trace") == "1");
  bj::object body = parse_json(req.body).as_object();
  CHECK(compact(body.at("generationConfig")) == R"({"maxOutputTokens":777})");  // no thinkingConfig
  CHECK(!body.contains("systemInstruction"));
  CHECK(!body.contains("tools"));
  CHECK(compact(body.at("contents")) ==
        R"([{"role":"user","parts":[{"text":"Describe"},{"inlineData":{"mimeType":"image/webp","data":"AAAA"}}]}])");

  f.model.id = "models/gemini-2.0-flash";
  f.model.max_tokens = 0;
  f.max_tokens = 0;
  f.provider.api_key.clear();
  f.provider.headers.clear();
  f.model.input = {"text"};
  req = f.request();
  CHECK(req.url == "https://proxy.example/google/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse");
  CHECK(header_value(req, "x-goog-api-key") == "<absent>");
  body = parse_json(req.body).as_object();
  CHECK(compact(body.at("generationConfig")) == "{}");
  CHECK(compact(body.at("contents")) ==
        R"J([{"role":"user","parts":[{"text":"Describe"},{"text":"(image omitted: model does not support images)"}]}])J");
}

TEST_CASE("google-generative-ai stream: thinking, text and function calls, cut anywhere", "[wire]") {
  wire_fixture f = gemini();
  decoded s = run_split(f, kStream);
  CHECK(s.ended);
  std::vector<std::string> ids;
  bj::object ours = blank_generated_ids(s.message, &ids);
  // pi-ai's message but for the generated ids and the toolCall's thoughtSignature: thinking
  // from the thought parts with the last signature kept, the text, both calls with their args,
  // toolUse, usage input = prompt - cached, output = candidates + thoughts, calculateCost's
  // doubles, the first responseId.
  CHECK(compact(ours) == compact(blank_generated_ids(expected_message(kStreamMessagePiAi))));
  REQUIRE(ids.size() == 2);
  CHECK(ids[0].starts_with("get_weather_q4ZvaPaNGNS-z7IPg6_T0QE_"));
  CHECK(ids[1].starts_with("get_weather_q4ZvaPaNGNS-z7IPg6_T0QE_"));
  CHECK(ids[0] != ids[1]);
  CHECK(s.text == "Let me check — one moment. 🌦");
  const bj::object& usage = s.message.at("usage").as_object();
  CHECK(usage.at("input") == 1200 - 1024);
  CHECK(usage.at("output") == 31 + 80);
  CHECK(usage.at("cacheRead") == 1024);
  CHECK(usage.at("cost").as_object().at("total").as_double() == (0.3 / 1e6) * 176 + (2.5 / 1e6) * 111 + (0.075 / 1e6) * 1024);

  // Another run of the same stream gets other ids: unique across a transcript.
  std::vector<std::string> again;
  blank_generated_ids(decode_in_pieces(f, with_line_ends(kStream, "\r\n"), 100).message, &again);
  REQUIRE(again.size() == 2);
  CHECK(std::set<std::string>{ids[0], ids[1], again[0], again[1]}.size() == 4);
}

TEST_CASE("google-generative-ai stream: finish reasons", "[wire]") {
  wire_fixture f = gemini();
  const std::pair<std::string_view, const char*> rows[] = {
      {"STOP", "stop"},        {"MAX_TOKENS", "length"},
      {"SAFETY", "error"},     {"RECITATION", "error"},
      {"OTHER", "error"},      {"MALFORMED_FUNCTION_CALL", "error"},
      {"FINISH_REASON_UNSPECIFIED", "error"},
  };
  for (const auto& [reason, stop] : rows) {
    INFO(reason);
    decoded s = run_split(f, finish_stream(reason));
    CHECK(s.ended);
    CHECK(s.message.at("stopReason").as_string() == stop);
    bj::object expected = expected_message(finish_pi_ai(stop));
    if (std::string_view(stop) == "error") {
      // Difference from pi-ai: the finish reason is named after its "An unknown error occurred".
      CHECK(expected.at("errorMessage") == "An unknown error occurred");
      expected["errorMessage"] = "An unknown error occurred (finishReason " + std::string(reason) + ")";
    }
    CHECK(compact(s.message) == compact(expected));
  }

  // A function call makes it toolUse whatever the finish reason said.
  decoded tool = run_split(f, kStream_max_tokens_tool);
  CHECK(tool.message.at("stopReason") == "toolUse");
  CHECK(compact(blank_generated_ids(tool.message)) == compact(blank_generated_ids(expected_message(kPiAi_max_tokens_tool))));
}

TEST_CASE("google-generative-ai stream: given ids, duplicates and signatures", "[wire]") {
  wire_fixture f = gemini();
  decoded dup = run_split(f, kStream_dup_ids);
  std::vector<std::string> ids;
  CHECK(compact(blank_generated_ids(dup.message, &ids)) == compact(blank_generated_ids(expected_message(kPiAi_dup_ids))));
  REQUIRE(ids.size() == 3);
  CHECK(ids[0] == "fc-1");                       // the API's own id is kept
  CHECK(ids[1].starts_with("b_resp-g-1_"));      // a repeated one is replaced
  CHECK(ids[2] == "fc-2");
  CHECK(dup.message.at("usage").as_object().at("output") == 6 + 2);  // thoughts count as output

  // The thought signature comes on the first delta only: it is kept; the empty text part that
  // carries the text's signature adds no block (its signature is not kept: a known difference).
  decoded sig = run_split(f, kStream_sig_text);
  CHECK(compact(sig.message) == compact(expected_message(kPiAi_sig_text)));
  CHECK(compact(sig.message.at("content")) ==
        R"([{"type":"thinking","thinking":"Thinking hard still","thinkingSignature":"AAAA"},{"type":"text","text":"Answer"}])");
}

TEST_CASE("google-generative-ai stream: an early end and an error chunk", "[wire]") {
  wire_fixture f = gemini();
  decoded cut = run_split(f, kStream_cut);
  CHECK(!cut.ended);  // no finishReason: the body ended early (pi-ai would call it "stop")
  CHECK(compact(cut.message) == compact(expected_message(kPiAi_cut)));

  // Difference from pi-ai, which ignores an error chunk inside the SSE stream and reports a
  // truncated "stop": the error ends the message with Google's own sentence.
  decoded error = run_split(f, kStream_error_chunk);
  CHECK(error.ended);
  CHECK(error.message.at("stopReason") == "error");
  CHECK(error.message.at("errorMessage") == "The model is overloaded. Please try again later.");
  CHECK(error.message.at("content") == expected_message(kPiAi_error_chunk).at("content"));
  CHECK(error.text == "Hi");
}

TEST_CASE("google-generative-ai error_text: the body's error.message, else status and body", "[wire]") {
  const auto& w = google_generative_ai_wire();
  check_listed(w, "google-generative-ai");
  const std::string overflow =
      "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"The input token count (1200000) exceeds the maximum number "
      "of tokens allowed (1048576).\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n";
  CHECK(w.error_text(400, overflow) == "400 The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).");
  CHECK(w.error_text(429, R"([{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}])") ==
        "429 Resource has been exhausted (e.g. check quota).");
  CHECK(w.error_text(503, "upstream connect error") == "503 upstream connect error");
}
