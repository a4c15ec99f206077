// chat.history's cost against the length of the session: transcripts of 1k / 10k / 50k
// user/assistant entries with no compaction (the worst case: the context is the whole file),
// one page of `limit` messages read the way chat.history read it before (the whole context
// built, then cut: build_context(reader)) and the way it reads it now (build_context(reader,
// active, limit): the path walked on the index, only the page parsed). Each measurement opens
// a fresh reader, as each chat.history call does; median of --reps. One JSON line per size on
// stdout, a table on stderr.
// Usage: history_bench [--sizes a,b,c] [--limit N] [--reps R] [--dir DIR]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/fs.hpp"
#include "storage/transcript_reader.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using steady = std::chrono::steady_clock;

namespace {

std::string make_transcript(const std::string& dir, int entries) {
  const std::string path = fmt::format("{}/history-{}.jsonl", dir, entries);
  std::string text = R"({"type":"session","version":3,"id":"h1","timestamp":"2026-11-30T01:00:00.000Z","cwd":"/w"})" "\n";
  const std::string words(380, 'w');
  for (int i = 0; i < entries; ++i) {
    const bool user = i % 2 == 0;
    const std::string parent = i ? fmt::format("\"{:08x}\"", i) : "null";
    const std::string content = user ? fmt::format("\"{} {}\"", i, words)
                                     : fmt::format(R"([{{"type":"text","text":"{} {}"}}])", i, words);
    text += fmt::format(R"({{"type":"message","id":"{:08x}","parentId":{},"timestamp":"2026-11-30T01:00:00.000Z",)"
                        R"("message":{{"role":"{}","content":{},"timestamp":{}}}}})" "\n",
                        i + 1, parent, user ? "user" : "assistant", content, 1796000000000LL + i);
  }
  if (auto st = replace_file_atomic(posix_fs(), path, text); !st.ok()) {
    std::cerr << st.message() << "\n";
    std::exit(1);
  }
  return path;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One chat.history page: a fresh reader, then the page. Returns ms; `parsed` = lines parsed.
double time_page(const std::string& path, std::size_t limit, bool whole, std::size_t& parsed, std::size_t& got) {
  const auto t0 = steady::now();
  auto rd = transcript_reader::open(posix_fs(), path);
  if (!rd.ok()) std::exit(1);
  auto ctx = whole ? build_context(**rd) : build_context(**rd, leaf_selector::active(), limit);
  if (!ctx.ok()) std::exit(1);
  boost::json::array page;
  const std::size_t n = ctx->messages.size();
  for (std::size_t i = whole && n > limit ? n - limit : 0; i < n; ++i) page.push_back(ctx->messages[i]);
  const double ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
  parsed = (*rd)->stats().lines_parsed;
  got = page.size();
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{1000, 10000, 50000};
  std::size_t limit = 200;
  int reps = 7;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--sizes") {
      sizes.clear();
      std::stringstream ss(next());
      for (std::string s; std::getline(ss, s, ',');) sizes.push_back(std::stoi(s));
    } else if (a == "--limit") {
      limit = std::stoul(next());
    } else if (a == "--reps") {
      reps = std::stoi(next());
    } else if (a == "--dir") {
      dir = next();
    } else {
      std::cerr << "usage: history_bench [--sizes a,b,c] [--limit N] [--reps R] [--dir DIR]\n";
      return a == "--help" ? 0 : 2;
    }
  }
  if (dir.empty()) {
    char tmpl[] = "/tmp/history-bench-XXXXXX";
    if (!::mkdtemp(tmpl)) return 1;
    dir = tmpl;
  }
  std::cerr << fmt::format("{:>8} {:>14} {:>14} {:>10} {:>14} {:>14}\n", "entries", "whole ms p50", "page ms p50", "ratio",
                           "whole parsed", "page parsed");
  for (int n : sizes) {
    const std::string path = make_transcript(dir, n);
    std::vector<double> whole_ms, page_ms;
    std::size_t whole_parsed = 0, page_parsed = 0, got = 0;
    for (int r = 0; r < reps; ++r) {
      whole_ms.push_back(time_page(path, limit, true, whole_parsed, got));
      page_ms.push_back(time_page(path, limit, false, page_parsed, got));
    }
    const double w = median(whole_ms), p = median(page_ms);
    std::cerr << fmt::format("{:>8} {:>14.2f} {:>14.2f} {:>10.1f} {:>14} {:>14}\n", n, w, p, w / p, whole_parsed, page_parsed);
    std::cout << fmt::format(R"({{"bench":"history_page","entries":{},"limit":{},"whole_ms_p50":{:.3f},"page_ms_p50":{:.3f},)"
                             R"("whole_lines_parsed":{},"page_lines_parsed":{},"page_messages":{}}})" "\n",
                             n, limit, w, p, whole_parsed, page_parsed, got);
    ::unlink(path.c_str());
  }
  ::rmdir(dir.c_str());
  return 0;
}
