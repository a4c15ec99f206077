// Fixtures for the hygiene tests, written as transcripts: the items become the lines of a
// <sessionId>.jsonl (a message object becomes a message entry; an object with "type" is an
// entry as it is), chained by parentId with ids e0, e1, ... (an item's own id wins), then the
// context is built from that file as the session would build it.
#pragma once
#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace sessionrt::testing::hygiene_fixture {

inline constexpr std::int64_t kBaseMs = 1796000000000;  // entry i is stamped kBaseMs + 1000 * i

boost::json::value j(std::string_view json);  // parses (REQUIREs success)
// The transcript text for `items` (header line included).
std::string transcript_of(const std::vector<std::string>& items);
// The context built from that transcript.
boost::json::array context_of(const std::vector<std::string>& items);

std::vector<std::string> roles(const boost::json::array& messages);
// The text blocks (or string content) of a message, joined by "|".
std::string texts(const boost::json::value& message);
std::vector<std::string> block_types(const boost::json::value& message);
// A base64 PNG / JPEG of w x h pixels (a gradient, so it is not trivially compressible).
std::string png_base64(int w, int h, int channels = 3);
std::string jpeg_base64(int w, int h);

// Message JSON snippets (pi-ai shapes).
inline std::string user(const std::string& text) { return R"({"role":"user","content":")" + text + R"("})"; }
inline std::string user_blocks(const std::string& blocks) { return R"({"role":"user","content":[)" + blocks + "]}"; }
inline std::string text(const std::string& t) { return R"({"type":"text","text":")" + t + R"("})"; }
inline std::string thinking(const std::string& t, const std::string& signature) {
  return R"({"type":"thinking","thinking":")" + t + R"(","thinkingSignature":")" + signature + R"("})";
}
inline std::string call(const std::string& id, const std::string& name = "bash") {
  return R"({"type":"toolCall","id":")" + id + R"(","name":")" + name + R"(","arguments":{"command":"ls"}})";
}
inline std::string image(const std::string& base64, const std::string& mime = "image/png") {
  return R"({"type":"image","data":")" + base64 + R"(","mimeType":")" + mime + R"("})";
}
inline std::string assistant(const std::string& blocks, const std::string& stop = "stop", const std::string& extra = "") {
  return R"({"role":"assistant","content":[)" + blocks +
         R"(],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":")" +
         stop + "\"" + extra + "}";
}
inline std::string result(const std::string& id, const std::string& t = "ok", const std::string& name = "bash") {
  return R"({"role":"toolResult","toolCallId":")" + id + R"(","toolName":")" + name + R"(","content":[{"type":"text","text":")" +
         t + R"("}],"isError":false})";
}

}  // namespace sessionrt::testing::hygiene_fixture
