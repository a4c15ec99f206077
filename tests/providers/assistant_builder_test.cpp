// assistant_builder: the AssistantMessage pi-ai builds — key order, block shapes, tool-call
// arguments parsed whole or partially (pi-ai parseStreamingJson), usage and the cost arithmetic
// of calculateCost, stop reasons and errors.
#include <catch2/catch.hpp>

#include <string>

#include "messages/json_writer.hpp"
#include "runtime/providers/assistant_builder.hpp"
#include "runtime/providers/wire_common.hpp"

namespace bj = boost::json;
using sessionrt::actors::model_cost;
using sessionrt::providers::assistant_builder;
namespace wire = sessionrt::providers::wire;

TEST_CASE("builder: a message with every block kind, in pi-ai's key order", "[wire]") {
  std::string streamed;
  assistant_builder b("anthropic-messages", "anthropic", "claude-sonnet-4-5", model_cost{3, 15, 0.3, 3.75},
                      [&](std::string_view piece) { streamed += piece; });
  const auto thinking = b.open_thinking();
  b.add_thinking(thinking, "Let me ");
  b.add_thinking(thinking, "think.");
  b.set_thinking_signature(thinking, "sig-1");
  const auto redacted = b.open_thinking();
  b.set_redacted_thinking(redacted, "opaque==");
  const auto text = b.open_text();
  b.add_text(text, "h\xC3\xA9llo ");
  b.add_text(text, "\xF0\x9F\x91\x8B");
  const auto tool = b.open_tool_call("toolu_1", "bash");
  b.add_tool_arguments(tool, "{\"command\":");
  b.add_tool_arguments(tool, "\"ls src/\"}");
  b.set_response_id("msg_01");
  b.usage() = {1500, 60, 200, 100};
  b.set_stop_reason("toolUse");
  CHECK(streamed == "h\xC3\xA9llo \xF0\x9F\x91\x8B");
  CHECK(b.blocks() == 4);
  CHECK(b.has_tool_calls());

  const bj::object m = b.finish(1789041609000);
  // calculateCost: (cost / 1e6) * tokens per field, total = the four summed in order.
  const double in = (3.0 / 1000000) * 1500, out = (15.0 / 1000000) * 60, cr = (0.3 / 1000000) * 200,
               cw = (3.75 / 1000000) * 100;
  bj::object expected_cost{{"input", in}, {"output", out}, {"cacheRead", cr}, {"cacheWrite", cw}, {"total", in + out + cr + cw}};
  const std::string expected =
      R"({"role":"assistant","content":[)"
      R"({"type":"thinking","thinking":"Let me think.","thinkingSignature":"sig-1"},)"
      R"({"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"opaque==","redacted":true},)"
      "{\"type\":\"text\",\"text\":\"h\xC3\xA9llo \xF0\x9F\x91\x8B\"},"
      R"({"type":"toolCall","id":"toolu_1","name":"bash","arguments":{"command":"ls src/"}}],)"
      R"("api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",)"
      R"("usage":{"input":1500,"output":60,"cacheRead":200,"cacheWrite":100,"totalTokens":1860,"cost":)" +
      sessionrt::json::to_compact(expected_cost) +
      R"(},"stopReason":"toolUse","timestamp":1789041609000,"responseId":"msg_01"})";
  CHECK(sessionrt::json::to_compact(m) == expected);
  // The doubles JavaScript prints for pi_02's first turn ($3 / $15 per million).
  CHECK(sessionrt::json::to_compact(bj::value(in)) == "0.0045000000000000005");
  CHECK(sessionrt::json::to_compact(bj::value(out)) == "0.0009");
}

TEST_CASE("builder: thinkingSignature is kept empty for Anthropic, absent elsewhere until set", "[wire]") {
  assistant_builder a("anthropic-messages", "anthropic", "m", {});
  a.open_thinking();
  CHECK(sessionrt::json::to_compact(a.finish(1).at("content")) == R"([{"type":"thinking","thinking":"","thinkingSignature":""}])");
  assistant_builder g("google-generative-ai", "google", "m", {});
  g.add_thinking(g.open_thinking(), "x");
  CHECK(sessionrt::json::to_compact(g.finish(1).at("content")) == R"([{"type":"thinking","thinking":"x"}])");
}

TEST_CASE("builder: stop with tool calls becomes toolUse, and errors carry their message", "[wire]") {
  assistant_builder b("openai-completions", "local", "m", {});
  b.open_tool_call("call_1", "read");
  CHECK(b.stop_reason() == "stop");
  CHECK(b.finish(0).at("stopReason") == "toolUse");

  assistant_builder e("openai-completions", "local", "m", {});
  e.add_text(e.open_text(), "partial");
  CHECK_FALSE(e.failed());
  e.fail("Provider finish_reason: content_filter");
  CHECK(e.failed());
  const auto m = e.finish(5);
  CHECK(m.at("stopReason") == "error");
  CHECK(m.at("errorMessage") == "Provider finish_reason: content_filter");
  CHECK(m.at("content").as_array().size() == 1);  // partial content is kept
  CHECK_FALSE(m.contains("responseId"));

  assistant_builder empty_error("openai-completions", "local", "m", {});
  empty_error.fail("");
  CHECK(empty_error.finish(0).at("errorMessage") == "An unknown error occurred");

  // A length stop with tool calls stays length.
  assistant_builder len("openai-completions", "local", "m", {});
  len.open_tool_call("c", "x");
  len.set_stop_reason("length");
  CHECK(len.finish(0).at("stopReason") == "length");
}

TEST_CASE("builder: zero cost table gives zero costs, and totals add up", "[wire]") {
  assistant_builder b("openai-completions", "local", "m", {});
  b.usage() = {10, 5, 0, 0};
  const auto m = b.finish(0);
  CHECK(sessionrt::json::to_compact(m.at("usage")) ==
        R"({"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}})");
}

TEST_CASE("builder: tool arguments as pi-ai parseStreamingJson reads them", "[wire]") {
  auto args = [](std::string_view text) {
    assistant_builder b("anthropic-messages", "p", "m", {});
    const auto t = b.open_tool_call("id", "n");
    b.add_tool_arguments(t, text);
    return sessionrt::json::to_compact(b.finish(0).at("content").as_array()[0].as_object().at("arguments"));
  };
  CHECK(args("") == "{}");
  CHECK(args("   ") == "{}");
  CHECK(args(R"({"a":1,"b":[true,null]})") == R"({"a":1,"b":[true,null]})");
  // Cut-off streams (partial-json): strings, arrays and objects closed where they stop.
  CHECK(args(R"({"command":"ls sr)") == R"({"command":"ls sr"})");
  CHECK(args(R"({"a":[1,2)") == R"({"a":[1,2]})");
  CHECK(args(R"({"a":{"b":"c"},"d)") == R"({"a":{"b":"c"}})");
  CHECK(args(R"({"a":tr)") == R"({"a":true})");
  CHECK(args(R"({"a":)") == "{}");
  CHECK(args(R"({"path":"C:\x"})") == R"({"path":"C:\\x"})");  // repaired invalid escape
  CHECK(args(R"({"path":"C:\x")") == "{}");  // partial-json gives up on it, and pi-ai keeps that {}
  CHECK(args("{\"text\":\"line1\nline2\"}") == R"({"text":"line1\nline2"})");  // raw newline repaired
  CHECK(args(R"({"s":"caf\u00)") == R"({"s":"caf"})");  // escape cut mid-way dropped
  CHECK(args("[1,2]") == "{}");                          // not an object: no usable call
  CHECK(args("garbage") == "{}");

  // Whole arguments (Google) win over fragments.
  assistant_builder b("google-generative-ai", "p", "m", {});
  const auto t = b.open_tool_call("id", "n");
  b.set_tool_arguments(t, bj::object{{"q", "x"}});
  b.set_tool_call_id(t, "id2");
  const bj::object m = b.finish(0);
  CHECK(sessionrt::json::to_compact(m.at("content").as_array()[0]) == R"({"type":"toolCall","id":"id2","name":"n","arguments":{"q":"x"}})");
}

TEST_CASE("builder: pieces for a block of another kind or a bad index are ignored", "[wire]") {
  assistant_builder b("openai-completions", "p", "m", {});
  const auto text = b.open_text();
  b.add_thinking(text, "nope");
  b.add_tool_arguments(text, "nope");
  b.add_text(99, "nope");
  b.add_text(text, "yes");
  CHECK(sessionrt::json::to_compact(b.finish(0).at("content")) == R"([{"type":"text","text":"yes"}])");
}

TEST_CASE("wire common: partial JSON and repair helpers", "[wire]") {
  CHECK(wire::repair_json("{\"a\":\"x\ty\"}") == "{\"a\":\"x\\ty\"}");
  CHECK(wire::repair_json(R"({"a":"\d"})") == R"({"a":"\\d"})");
  CHECK(wire::repair_json(R"({"a":"\u00e9"})") == R"({"a":"\u00e9"})");
  CHECK(wire::parse_json_with_repair("{\"a\":\"\x01\"}").ok());
  CHECK_FALSE(wire::parse_json_with_repair("{").ok());
  CHECK(sessionrt::json::to_compact(wire::parse_streaming_json("{\"n\": -12")) == R"({"n":-12})");
  CHECK(sessionrt::json::to_compact(wire::parse_streaming_json("{\"n\": 1.5e")) == R"({"n":1.5})");
  CHECK(sessionrt::json::to_compact(wire::parse_streaming_json("{\"x\": NaN}")) == R"({"x":null})");
  CHECK(wire::sanitize_id("call_abc|fc+/=x", 64) == "call_abc_fc___x");
  CHECK(wire::sanitize_id("a\xF0\x9F\x91\x8B" "b\xC3\xA9", 64) == "a__b_");
  CHECK(wire::sanitize_id(std::string(100, 'x'), 64).size() == 64);
  CHECK(wire::utf16_prefix("ab\xF0\x9F\x91\x8B" "c", 3) == "ab");  // a pair is not split
  CHECK(wire::utf16_prefix("ab\xF0\x9F\x91\x8B" "c", 4) == "ab\xF0\x9F\x91\x8B");
  CHECK(wire::cut_utf8("h\xC3\xA9", 2) == "h");
}
