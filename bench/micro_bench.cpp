// Micro-benchmarks (Google Benchmark) of the hot paths under the storage figures: building a
// message, serializing it as JavaScript would, skimming a line, formatting a timestamp, rolling
// a session row over for a chat turn.
#include <benchmark/benchmark.h>

#include <optional>
#include <string>

#include "actors/session/session_rollover.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/line_skim.hpp"

using namespace sessionrt;

namespace {
const std::string kText(400, 't');

boost::json::object make_assistant() {
  assistant_fields a;
  a.content.push_back(text_block(kText));
  a.model = "claude-sonnet-4-5";
  a.usage = {1200, 180, 0, 0, 0.0036, 0.0027, 0, 0};
  a.timestamp_ms = 1796000000000;
  return assistant_message(std::move(a));
}

void build_assistant(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(make_assistant());
}
BENCHMARK(build_assistant);

void build_user(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(user_message(kText, 1796000000000));
}
BENCHMARK(build_user);

void stringify_assistant(benchmark::State& st) {
  auto m = make_assistant();
  std::string out;
  for (auto _ : st) {
    out.clear();
    json::append_compact(out, m);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * out.size()));
}
BENCHMARK(stringify_assistant);

void stringify_user(benchmark::State& st) {
  auto m = user_message(kText, 1796000000000);
  std::string out;
  for (auto _ : st) {
    out.clear();
    json::append_compact(out, m);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(stringify_user);

void format_iso(benchmark::State& st) {
  std::string out;
  std::int64_t t = 1796000000000;
  for (auto _ : st) {
    out.clear();
    append_iso_ms(out, ++t);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(format_iso);

void skim_message_line(benchmark::State& st) {
  std::string line = json::to_compact(make_message_entry("0123abcd", "89abcdef", 1796000000000, make_assistant()));
  storage::line_skeleton sk;
  boost::json::object scratch;
  for (auto _ : st) benchmark::DoNotOptimize(storage::skim_line(line, sk, scratch));
}
BENCHMARK(skim_message_line);

// A row after a few days of use (26 keys), as a chat turn finds it.
const char* kUsedRow = R"({
  "sessionId": "3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44", "updatedAt": 1796000000000,
  "sessionStartedAt": 1795900000000, "lastInteractionAt": 1796000000000, "systemSent": true,
  "abortedLastRun": false, "thinkingLevel": "high", "label": "My chat",
  "chatType": "direct",
  "deliveryContext": {"channel": "telegram", "to": "telegram:123456", "accountId": "default"},
  "lastChannel": "telegram", "lastTo": "telegram:123456", "lastAccountId": "default",
  "origin": {"provider": "telegram", "surface": "telegram", "chatType": "direct",
             "from": "telegram:123456", "to": "telegram:123456", "accountId": "default"},
  "sessionFile": "/home/u/.sessionrt/agents/main/sessions/3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44.jsonl",
  "compactionCount": 1, "totalTokens": 48210, "totalTokensFresh": true,
  "inputTokens": 1200, "outputTokens": 180, "cacheRead": 40000, "cacheWrite": 6830,
  "estimatedCostUsd": 0.0421, "contextTokens": 200000, "modelProvider": "anthropic",
  "model": "claude-sonnet-4-5"
})";

// What session_core::inbound_patch builds for a direct Telegram message.
boost::json::object make_inbound_patch() {
  boost::json::object p;
  p["chatType"] = "direct";
  p["deliveryContext"] = boost::json::object{{"channel", "telegram"}, {"to", "telegram:123456"}, {"accountId", "default"}};
  p["lastChannel"] = "telegram";
  p["lastTo"] = "telegram:123456";
  p["lastAccountId"] = "default";
  p["origin"] = boost::json::object{{"provider", "telegram"}, {"surface", "telegram"}, {"chatType", "direct"},
                                    {"from", "telegram:123456"}, {"to", "telegram:123456"}, {"accountId", "default"}};
  return p;
}

std::string bench_path(std::string_view id) { return "/home/u/.sessionrt/agents/main/sessions/" + std::string(id) + ".jsonl"; }

actors::rollover_input bench_turn() {
  actors::rollover_input in;
  in.session_key = "agent:main:telegram:direct:123456";
  in.new_session_id = "0b1c2d3e-4f50-4a61-8b72-9c8d7e6f5a4b";
  in.transcript_path = bench_path;
  in.inbound_patch = make_inbound_patch();
  return in;
}

session_entry used_entry() { return session_entry(json::parse_object(kUsedRow).value()); }

// A chat turn reusing its session, turn after turn (the result replaces the row). In place, as
// session_core::chat calls it (the row moved in), or through the copying roll_session(in).
template <bool InPlace>
void roll_reuse(benchmark::State& st) {
  std::optional<session_entry> row = used_entry();
  const std::size_t keys = row->json().size();
  actors::rollover_input in = bench_turn();
  std::int64_t now = 1796000000000;
  for (auto _ : st) {
    in.now_ms = ++now;
    in.current = &*row;
    actors::rollover_result r = InPlace ? actors::roll_session(in, std::move(*row)) : actors::roll_session(in);
    row = std::move(r.entry);
    benchmark::DoNotOptimize(row->json().size());
  }
  if (row->json().size() != keys) st.SkipWithError("the reused row changed shape");
}
void roll_session_reuse(benchmark::State& st) { roll_reuse<true>(st); }
void roll_session_reuse_copy(benchmark::State& st) { roll_reuse<false>(st); }
BENCHMARK(roll_session_reuse);
BENCHMARK(roll_session_reuse_copy);

// `/new` on the same row: a new session, preferences carried, counters and caches cleared.
void roll_session_new(benchmark::State& st) {
  const session_entry row = used_entry();
  actors::rollover_input in = bench_turn();
  in.current = &row;
  in.trigger = actors::parse_reset_trigger("/new", actors::reset_trigger_options{});
  in.now_ms = 1796000000001;
  for (auto _ : st) {
    actors::rollover_result r = actors::roll_session(in);
    benchmark::DoNotOptimize(r.entry.json().size());
  }
}
BENCHMARK(roll_session_new);
}  // namespace

BENCHMARK_MAIN();
