// Fuzzes the in-memory hygiene pipeline (actors/session/hygiene). The input's first byte picks
// the provider row, the rest is parsed as JSON: an array is the context, an object with a
// "messages" array (a .context.json vector) gives it, JSONL transcript lines give their
// `message`s. Aborts when a promise breaks:
// - only user / assistant / toolResult messages come out, none of them empty, no blank text;
// - after every assistant with tool calls come exactly its results (same ids, as a multiset);
//   no other toolResult exists;
// - with id sanitizing, ids are of the mode's alphabet / length and unique;
// - with turn validation, no two assistants (Gemini, Anthropic) or users (Anthropic) are adjacent.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "actors/session/hygiene/tool_call_ids.hpp"
#include "messages/json_reader.hpp"

using namespace sessionrt;
using namespace sessionrt::actors::hygiene;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "hygiene_fuzz: %s\n", what);
  std::abort();
}

boost::json::array messages_of(std::string_view text) {
  json::parse_limits limits;
  limits.max_bytes = 1 << 20;
  if (auto v = json::parse(text, limits); v.ok()) {
    if (v->is_array()) return std::move(v->get_array());
    if (v->is_object()) {
      const auto& o = v->get_object();
      for (const auto* key : {"messages", "context"}) {
        const auto* m = o.if_contains(key);
        if (m && m->is_array()) return m->get_array();
        if (m && m->is_object())
          if (const auto* mm = m->get_object().if_contains("messages"); mm && mm->is_array()) return mm->get_array();
      }
    }
  }
  boost::json::array out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    auto line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    auto v = json::parse(line, limits);
    if (!v.ok() || !v->is_object()) continue;
    if (const auto* m = v->get_object().if_contains("message")) out.push_back(*m);
  }
  return out;
}

void check(const boost::json::array& out, const transcript_policy& p) {
  std::set<std::string> ids;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& m = out[i];
    const auto role = role_of(m);
    if (role != "user" && role != "assistant" && role != "toolResult") fail("a non-LLM role came out");
    if (role != "toolResult" && has_no_content(m)) fail("an empty user or assistant turn");
    if (const auto* c = content_array(m))
      for (const auto& b : *c)
        if (is_blank_text_block(b)) fail("a blank text block");
    if (i > 0 && role == "assistant" && role_of(out[i - 1]) == "assistant" && (p.validate_gemini_turns || p.validate_anthropic_turns))
      fail("adjacent assistants");
    if (i > 0 && role == "user" && role_of(out[i - 1]) == "user" && p.validate_anthropic_turns) fail("adjacent users");
    if (role == "toolResult") {
      std::size_t k = i;
      while (k > 0 && role_of(out[k - 1]) == "toolResult") --k;
      if (k == 0 || !has_tool_calls(out[k - 1])) fail("a toolResult without its call");
    }
    if (!has_tool_calls(m)) continue;
    std::multiset<std::string> calls, results;
    for (const auto& b : *content_array(m)) {
      if (!is_tool_call_block(b)) continue;
      auto id = tool_call_id(b);
      if (!id) fail("a tool call without an id");
      calls.insert(std::string(*id));
      if (!p.sanitize_tool_call_ids) continue;
      const bool native = p.preserve_native_anthropic_ids && id->substr(0, 6) == "toolu_";
      const bool kimi = id->substr(0, 10) == "functions.";
      if (!native && !kimi && !is_valid_tool_call_id(*id, p.id_mode)) fail("an id outside the mode's alphabet/length");
      if (!ids.insert(std::string(*id)).second) fail("a repeated tool-call id");
    }
    for (std::size_t k = i + 1; k < out.size() && role_of(out[k]) == "toolResult"; ++k)
      if (auto id = tool_result_id(out[k])) results.insert(*id);
    if (calls != results) fail("calls and results differ");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const transcript_policy policies[] = {
      resolve_transcript_policy("openai", "openai-responses", "gpt-5"),
      resolve_transcript_policy("deepseek", "openai-completions", "deepseek-chat"),
      resolve_transcript_policy("google", "google-generative-ai", "gemini-2.5-pro"),
      resolve_transcript_policy("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
      resolve_transcript_policy("amazon-bedrock", "", "anthropic.claude-3-5-sonnet-20240620-v1:0"),
      resolve_transcript_policy("mistral", "", "mistral-large-latest"),
      resolve_transcript_policy("ollama", "", "llama3"),
  };
  const auto& policy = policies[data[0] % (sizeof policies / sizeof policies[0])];
  auto messages = messages_of(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  hygiene_options opt;
  opt.image_max_dimension_px = 64;  // small, so fuzzed images take the downscale path
  opt.image_max_pixels = 1u << 20;
  sanitize_for_provider(messages, policy, opt);
  check(messages, policy);
  return 0;
}
