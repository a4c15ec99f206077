// Micro-benchmarks (Google Benchmark) of the hot paths under the storage figures: building a
// message, serializing it as JavaScript would, skimming a line, formatting a timestamp.
#include <benchmark/benchmark.h>

#include <string>

#include "messages/iso_time.hpp"
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
}  // namespace

BENCHMARK_MAIN();
