// Hygiene of a 2,000-message context (tool calls, thinking, images) per provider row: µs per
// message, and what that adds to a turn at runtime_bench's 1,000 sessions x 100 turns shape
// (a context of ~100 messages on average, ~200 µs of core time a turn, BENCHMARKS.md).
//   hygiene_bench [--messages N] [--rounds R]
#include <stb_image_write.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "actors/session/hygiene/image_sanitizer.hpp"
#include "messages/transcript_entry.hpp"

using namespace sessionrt;
using namespace sessionrt::actors::hygiene;

namespace {

void append(void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size); }

std::string png(int w, int h) {
  std::vector<unsigned char> px(static_cast<std::size_t>(w) * h * 3);
  for (std::size_t k = 0; k < px.size(); ++k) px[k] = static_cast<unsigned char>((k * 31) ^ (k >> 7));
  std::string bytes;
  stbi_write_png_to_func(append, &bytes, w, h, 3, px.data(), w * 3);
  return encode_base64(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

boost::json::object image_block(const std::string& data) {
  return boost::json::object{{"type", "image"}, {"data", data}, {"mimeType", "image/png"}};
}

// user -> assistant(thinking, text, toolCall) -> toolResult, repeated; every 100th user turn
// has a small image (probed only), `large` of them a 1600x1200 one (downscaled every time).
boost::json::array context(std::size_t n, int large) {
  const std::string small = png(256, 256), big = large ? png(1600, 1200) : std::string();
  boost::json::array out;
  std::int64_t ts = 1796000000000;
  int big_left = large;
  for (std::size_t i = 0; out.size() < n; ++i) {
    boost::json::array content;
    content.push_back(text_block("Please look at item " + std::to_string(i) + " and run the checks again."));
    if (i % 100 == 7) content.push_back(image_block(small));
    if (big_left > 0 && i % 300 == 11) {
      content.push_back(image_block(big));
      --big_left;
    }
    out.push_back(boost::json::object{{"role", "user"}, {"content", std::move(content)}, {"timestamp", ts++}});
    const std::string id = "toolu_" + std::to_string(i % 17);  // repeated ids, as some providers send
    boost::json::array a;
    a.push_back(boost::json::object{{"type", "thinking"}, {"thinking", "Consider the request."}, {"thinkingSignature", "c2lnbmF0dXJl"}});
    a.push_back(text_block("Running the checks."));
    a.push_back(boost::json::object{{"type", "toolCall"}, {"id", id}, {"name", "bash"},
                                    {"arguments", boost::json::object{{"command", "make check"}}}});
    out.push_back(boost::json::object{{"role", "assistant"}, {"content", std::move(a)}, {"api", "anthropic-messages"},
                                      {"provider", "anthropic"}, {"model", "claude-sonnet-4-5"},
                                      {"usage", boost::json::object{{"input", 100}, {"output", 20}, {"totalTokens", 120}}},
                                      {"stopReason", "toolUse"}, {"timestamp", ts++}});
    boost::json::array r;
    r.push_back(text_block("ok: 12 checks passed"));
    out.push_back(boost::json::object{{"role", "toolResult"}, {"toolCallId", id}, {"toolName", "bash"}, {"content", std::move(r)},
                                      {"details", boost::json::object{{"exitCode", 0}}}, {"isError", false}, {"timestamp", ts++}});
  }
  out.resize(n);
  return out;
}

double run_us(const boost::json::array& ctx, const transcript_policy& p, int rounds) {
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    auto copy = ctx;  // the caller's copy (not timed)
    auto t0 = std::chrono::steady_clock::now();
    sanitize_for_provider(copy, p);
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 2000;
  int rounds = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--messages")) n = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  const struct {
    const char* name;
    transcript_policy policy;
  } rows[] = {
      {"openai-responses", resolve_transcript_policy("openai", "openai-responses", "gpt-5")},
      {"openai-completions", resolve_transcript_policy("deepseek", "openai-completions", "deepseek-chat")},
      {"google", resolve_transcript_policy("google", "google-generative-ai", "gemini-2.5-pro")},
      {"anthropic", resolve_transcript_policy("anthropic", "anthropic-messages", "claude-sonnet-4-5")},
      {"mistral", resolve_transcript_policy("mistral", "", "mistral-large-latest")},
      {"other", resolve_transcript_policy("ollama", "", "llama3")},
  };
  const auto plain = context(n, 0), with_large = context(n, 2);
  constexpr double kTurnUs = 200, kAvgContext = 100;  // runtime_bench 1,000 x 100 (BENCHMARKS.md)
  std::printf("hygiene of a %zu-message context (tool calls, thinking, %zu small images), median of %d rounds\n", n,
              n / 300 + 1, rounds);
  std::printf("%-20s %12s %12s %14s %22s\n", "policy", "total us", "us/message", "+2 large imgs", "share of a 1000x100 turn");
  for (const auto& row : rows) {
    const double us = run_us(plain, row.policy, rounds);
    const double us_large = run_us(with_large, row.policy, std::max(3, rounds / 5));
    const double per = us / static_cast<double>(n);
    const double per_turn = per * kAvgContext;
    std::printf("%-20s %12.0f %12.3f %12.0f us %14.1f us = %4.0f%%\n", row.name, us, per, us_large, per_turn,
                100.0 * per_turn / (kTurnUs + per_turn));
  }
  return 0;
}
