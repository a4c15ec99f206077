// session.maintenance.coldStorage's cost and gain on one transcript: a generated session of
// about --mb MiB (user questions, assistant answers with thinking and tool calls, tool results
// holding code and file listings, usage objects: the shapes and the variety of a coding agent's
// transcript, words drawn at random so the text does not repeat), written through
// transcript_file; then, --reps times (median):
//   - compress: storage::compress_transcript (temp .zst, fsync, verify by decompressing and
//     comparing, link, fsync dir, unlink the .jsonl, fsync dir), zstd level --level;
//   - read hot / read cold: transcript_reader::open and build_context on the .jsonl, and on the
//     cold transcript (decompressed into memory): what chat.history / sessions tail pay;
//   - restore: storage::restore_transcript (what a cold session's next turn pays first).
// Also the pi vectors (tests/vectors/pi_*.jsonl, real pi transcripts, small) compressed one by
// one. One JSON line on stdout, a table on stderr.
// Usage: cold_transcript_bench [--mb N] [--reps R] [--level L] [--dir DIR] [--vectors DIR]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "storage/cold_transcript.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_file.hpp"
#include "storage/transcript_reader.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using steady = std::chrono::steady_clock;

namespace {

const std::vector<std::string> kWords = {
    "the", "file", "function", "returns", "error", "session", "when", "config", "test", "build", "we", "should",
    "change", "value", "this", "that", "because", "line", "call", "after", "before", "module", "path", "store",
    "transcript", "compact", "token", "model", "reply", "turn", "cache", "write", "read", "index", "check", "fix",
    "branch", "commit", "review", "parse", "json", "stream", "retry", "timeout", "lock", "thread", "queue", "order",
    "user", "agent", "gateway", "bytes", "limit", "offset", "header", "entry", "leaf", "parent", "child", "rename",
    "durable", "fsync", "directory", "archive", "restore", "compress", "measure", "median", "figure", "report"};
const std::vector<std::string> kCode = {
    "  if (!st.ok()) return st.with_context(path);", "  for (const auto& row : rows) total += row.size();",
    "const std::string name = path_basename(file);", "  auto fd = f.open(path, O_RDONLY | O_NOFOLLOW);",
    "export function resolve(opts) { return opts?.value ?? DEFAULT; }", "  } catch (err) { log.warn(String(err)); }",
    "def main(argv):\n    return run(parse(argv))", "  SRT_RETURN_IF_ERROR(fsync_dir(f, dir));"};

struct generator {
  std::mt19937_64 rng{42};
  std::string words(std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      if (i) out += (rng() % 13 == 0) ? ". " : " ";
      out += kWords[rng() % kWords.size()];
      if (rng() % 29 == 0) out += std::to_string(rng() % 100000);
    }
    return out;
  }
  std::string code(std::size_t lines) {
    std::string out;
    for (std::size_t i = 0; i < lines; ++i) {
      out += kCode[rng() % kCode.size()];
      out += "  // " + words(3 + rng() % 5) + "\n";
    }
    return out;
  }
  std::string listing(std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
      out += fmt::format("-rw-r--r-- 1 u u {:>7} Nov 30 0{}:{:02} src/{}_{}.cpp\n", rng() % 90000, rng() % 10, rng() % 60,
                         kWords[rng() % kWords.size()], kWords[rng() % kWords.size()]);
    return out;
  }
};

double ms_since(steady::time_point t) { return std::chrono::duration<double, std::milli>(steady::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void die(const status& st) {
  std::cerr << st.message() << "\n";
  std::exit(1);
}

// Appends turns until the file is about `bytes` long; returns the number of entries.
std::size_t make_transcript(const std::string& path, std::uint64_t bytes) {
  manual_clock clk(1796000000000);
  header_fields h;
  h.id = "0b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e";
  h.timestamp_ms = clk.now_ms();
  h.cwd = "/home/u/project";
  transcript_options o;
  o.mode = durability::none;
  auto t = transcript_file::create(posix_fs(), clk, path, h, o);
  if (!t.ok()) die(t.error());
  generator g;
  std::size_t entries = 0, written = 0;
  for (int turn = 0; written < bytes; ++turn) {
    clk.advance(1000 + g.rng() % 60000);
    auto add = [&](const boost::json::object& m) {
      auto id = (*t)->append_message(m);
      if (!id.ok()) die(id.error());
      ++entries;
    };
    add(user_message(g.words(10 + g.rng() % 60), clk.now_ms()));
    const int tools = static_cast<int>(g.rng() % 3);
    for (int k = 0; k <= tools; ++k) {
      assistant_fields a;
      a.model = "claude-sonnet-4-5";
      a.timestamp_ms = clk.now_ms();
      a.content.push_back(boost::json::object{{"type", "thinking"}, {"thinking", g.words(20 + g.rng() % 80)}});
      if (k < tools) {
        const std::string call_id = fmt::format("toolu_{:016x}", g.rng());
        a.content.push_back(boost::json::object{
            {"type", "toolCall"}, {"id", call_id}, {"name", k % 2 ? "bash" : "read"},
            {"arguments", boost::json::object{{"path", fmt::format("src/{}.cpp", kWords[g.rng() % kWords.size()])}}}});
        a.stop_reason = "toolUse";
        a.usage.input = 2000 + static_cast<std::int64_t>(g.rng() % 50000);
        a.usage.output = 50 + static_cast<std::int64_t>(g.rng() % 500);
        a.usage.cache_read = static_cast<std::int64_t>(g.rng() % 40000);
        add(assistant_message(a));
        boost::json::array content{text_block(k % 2 ? g.listing(5 + g.rng() % 30) : g.code(10 + g.rng() % 80))};
        add(tool_result_message(call_id, k % 2 ? "bash" : "read", std::move(content), false, clk.now_ms()));
      } else {
        a.content.push_back(text_block(g.words(40 + g.rng() % 200)));
        a.usage.input = 2000 + static_cast<std::int64_t>(g.rng() % 50000);
        a.usage.output = 100 + static_cast<std::int64_t>(g.rng() % 900);
        add(assistant_message(a));
      }
    }
    if (turn % 20 == 0) {
      if (auto st = (*t)->flush(); !st.ok()) die(st);
      written = posix_fs().stat(path)->size;
    }
  }
  if (auto st = (*t)->sync(); !st.ok()) die(st);
  return entries;
}

}  // namespace

int main(int argc, char** argv) {
  double mb = 10;
  int reps = 5, level = 3;
  std::string dir = "/tmp/cold_transcript_bench", vectors = "tests/vectors";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mb") mb = std::atof(argv[i + 1]);
    else if (a == "--reps") reps = std::atoi(argv[i + 1]);
    else if (a == "--level") level = std::atoi(argv[i + 1]);
    else if (a == "--dir") dir = argv[i + 1];
    else if (a == "--vectors") vectors = argv[i + 1];
  }
  if (auto st = ensure_dir(posix_fs(), dir); !st.ok()) die(st);
  const std::string path = dir + "/0b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.jsonl";
  (void)remove_transcript(posix_fs(), path);
  const std::size_t entries = make_transcript(path, static_cast<std::uint64_t>(mb * 1024 * 1024));
  const std::uint64_t raw = posix_fs().stat(path)->size;

  std::vector<double> compress_ms, read_ms, restore_ms, hot_ms;
  std::uint64_t cold = 0;
  std::size_t messages = 0;
  for (int r = 0; r < reps; ++r) {
    auto t = steady::now();
    {
      auto rd = transcript_reader::open(posix_fs(), path);
      if (!rd.ok()) die(rd.error());
      auto ctx = build_context(**rd);
      if (!ctx.ok()) die(ctx.error());
    }
    hot_ms.push_back(ms_since(t));
    compress_options co;
    co.level = level;
    t = steady::now();
    auto m = compress_transcript(posix_fs(), path, co);
    compress_ms.push_back(ms_since(t));
    if (!m.ok()) die(m.error());
    if (!m->done) die(status(errc::internal, m->skipped));
    cold = m->cold_bytes;

    t = steady::now();
    auto rd = transcript_reader::open(posix_fs(), path);
    if (!rd.ok()) die(rd.error());
    auto ctx = build_context(**rd);
    if (!ctx.ok()) die(ctx.error());
    read_ms.push_back(ms_since(t));
    messages = ctx->messages.size();

    t = steady::now();
    auto back = restore_transcript(posix_fs(), path);
    restore_ms.push_back(ms_since(t));
    if (!back.ok()) die(back.error());
    if (posix_fs().stat(path)->size != raw) die(status(errc::internal, "the restored file differs in size"));
  }

  std::string vec_rows;
  std::uint64_t vec_raw = 0, vec_cold = 0;
  for (const char* name : {"pi_01_basic.jsonl", "pi_02_toolcall.jsonl", "pi_03_compaction.jsonl", "pi_04_branch.jsonl"}) {
    auto text = read_file(posix_fs(), vectors + "/" + name, 1 << 20);
    if (!text.ok()) continue;
    const std::string copy = dir + "/" + name;
    (void)remove_transcript(posix_fs(), copy);
    if (auto st = replace_file_atomic(posix_fs(), copy, *text); !st.ok()) die(st);
    auto m = compress_transcript(posix_fs(), copy);
    if (!m.ok() || !m->done) die(m.ok() ? status(errc::internal, m->skipped) : m.error());
    vec_raw += m->raw_bytes;
    vec_cold += m->cold_bytes;
    vec_rows += fmt::format("  {:<24} {:>6} B -> {:>5} B ({:.1f}x)\n", name, m->raw_bytes, m->cold_bytes,
                            double(m->raw_bytes) / double(m->cold_bytes));
  }

  std::cout << fmt::format(
      R"({{"rawBytes":{},"coldBytes":{},"ratio":{:.2f},"entries":{},"contextMessages":{},"level":{},"compressMs":{:.1f},"readHotMs":{:.1f},"readColdMs":{:.1f},"restoreMs":{:.1f},"vectorsRawBytes":{},"vectorsColdBytes":{}}})"
      "\n",
      raw, cold, double(raw) / double(cold), entries, messages, level, median(compress_ms), median(hot_ms), median(read_ms),
      median(restore_ms), vec_raw, vec_cold);
  std::cerr << fmt::format(
      "generated transcript: {} entries, {} bytes -> {} bytes ({:.1f}x, zstd level {})\n"
      "median of {}: compress (verify + 2 dir fsyncs) {:.1f} ms ({:.0f} MB/s), open + build context "
      "({} messages) hot {:.1f} ms, cold {:.1f} ms, restore {:.1f} ms ({:.0f} MB/s)\n"
      "pi vectors:\n{}",
      entries, raw, cold, double(raw) / double(cold), level, reps, median(compress_ms),
      double(raw) / 1e6 / (median(compress_ms) / 1000), messages, median(hot_ms), median(read_ms), median(restore_ms),
      double(raw) / 1e6 / (median(restore_ms) / 1000), vec_rows);
  return 0;
}
