// chat.history's cost against the length of the session: transcripts of 1k / 10k / 50k / 200k
// user/assistant entries with no compaction (the worst case: the context is the whole file), one
// page of `limit` messages read
//   - whole:  as chat.history read it first (the whole context built, then cut: build_context);
//   - walk:   as it read it next (build_context(reader, active, limit): the path walked on the
//             index to the root to count, only the page parsed);
//   - cold:   the first page of the file since the process started, when nothing is known
//             (read_context_page with no counts: walks to the root once, leaves counts): a row
//             without the session's count (a session never written by this runtime version);
//   - seeded: the first page since the process started as runtime::history reads it now: the
//             counts seeded with the one the session keeps in its row (actors/session/
//             history_count.hpp), computed beforehand as the session computes it;
//   - warm:   the next pages (read_context_page with the counts a page left);
//   - append: a page after a turn (2 entries) was appended since the counts were left.
// Each measurement opens a fresh reader, as each chat.history call does; median of --reps. The
// pages must be identical (messages and total) or the bench fails. One JSON line per size on
// stdout, a table on stderr.
// Usage: history_bench [--sizes a,b,c] [--limit N] [--reps R] [--dir DIR]
#include <fcntl.h>
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
#include "storage/context_page.hpp"
#include "storage/durable_file.hpp"
#include "storage/fs.hpp"
#include "storage/transcript_reader.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using steady = std::chrono::steady_clock;

namespace {

std::string entry_line(int i, const std::string& words) {
  const bool user = i % 2 == 0;
  const std::string parent = i ? fmt::format("\"{:08x}\"", i) : "null";
  const std::string content = user ? fmt::format("\"{} {}\"", i, words)
                                   : fmt::format(R"([{{"type":"text","text":"{} {}"}}])", i, words);
  return fmt::format(R"({{"type":"message","id":"{:08x}","parentId":{},"timestamp":"2026-11-30T01:00:00.000Z",)"
                     R"("message":{{"role":"{}","content":{},"timestamp":{}}}}})" "\n",
                     i + 1, parent, user ? "user" : "assistant", content, 1796000000000LL + i);
}

const std::string kWords(380, 'w');

std::string make_transcript(const std::string& dir, int entries) {
  const std::string path = fmt::format("{}/history-{}.jsonl", dir, entries);
  std::string text = R"({"type":"session","version":3,"id":"h1","timestamp":"2026-11-30T01:00:00.000Z","cwd":"/w"})" "\n";
  for (int i = 0; i < entries; ++i) text += entry_line(i, kWords);
  if (auto st = replace_file_atomic(posix_fs(), path, text); !st.ok()) {
    std::cerr << st.message() << "\n";
    std::exit(1);
  }
  return path;
}

void append_lines(const std::string& path, const std::string& lines) {
  auto fd = posix_fs().open(path, O_WRONLY | O_APPEND);
  if (!fd.ok() || !write_all(posix_fs(), *fd, lines.data(), lines.size()).ok()) std::exit(1);
  (void)posix_fs().close(*fd);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct measured {
  double ms = 0;
  std::size_t parsed = 0, indexed = 0, total = 0;
  boost::json::array page;
};

// The count a session keeps in its row: its leaf's {id, offset, total} (history_count.hpp).
struct row_count {
  std::string id;
  std::uint64_t offset = 0;
  std::int64_t total = 0;
};

// The leaf's count, as the session keeps it in its row (untimed: the session learns it from
// building its context when it opens the transcript, then counts what each turn appends).
row_count count_of(const std::string& path) {
  auto rd = transcript_reader::open(posix_fs(), path);
  if (!rd.ok()) std::exit(1);
  auto counts = std::make_shared<context_counts::file>();
  auto page = read_context_page(**rd, {1, 0}, counts);
  if (!page.ok() || !page->leaf_id) std::exit(1);
  auto at = (*rd)->locate(*page->leaf_id);
  if (!at.ok() || !*at) std::exit(1);
  return {*page->leaf_id, (*rd)->index().at(**at).offset, static_cast<std::int64_t>(page->total)};
}

enum class way { whole, walk, memo };

// One chat.history page: a fresh reader, then the page.
measured time_page(const std::string& path, std::size_t limit, way how, context_counts* counts,
                   const row_count* seed = nullptr) {
  measured m;
  const auto t0 = steady::now();
  auto rd = transcript_reader::open(posix_fs(), path);
  if (!rd.ok()) std::exit(1);
  if (how == way::memo) {
    std::shared_ptr<context_counts::file> file;
    if (counts) {
      auto info = posix_fs().fstat((*rd)->fd());
      if (!info.ok()) std::exit(1);
      file = counts->of({path, info->dev, info->ino}, (*rd)->data_end());
      if (seed) file->remember({{seed->id, {seed->offset, seed->total}}});
    }
    auto page = read_context_page(**rd, {limit, 0}, file);
    if (!page.ok()) std::exit(1);
    for (auto& item : page->items) m.page.push_back(std::move(item.message));
    m.total = page->total;
  } else {
    auto ctx = how == way::whole ? build_context(**rd) : build_context(**rd, leaf_selector::active(), limit);
    if (!ctx.ok()) std::exit(1);
    const std::size_t n = ctx->messages.size();
    for (std::size_t i = how == way::whole && n > limit ? n - limit : 0; i < n; ++i) m.page.push_back(ctx->messages[i]);
    m.total = ctx->total_messages;
  }
  m.ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
  m.parsed = (*rd)->stats().lines_parsed;
  m.indexed = (*rd)->stats().lines_indexed;
  return m;
}

void same_or_die(const measured& a, const measured& b, const char* what) {
  if (a.page != b.page || a.total != b.total) {
    std::cerr << "history_bench: the " << what << " page differs from the whole context's\n";
    std::exit(1);
  }
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
  std::cerr << fmt::format("{:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9}\n", "entries",
                           "whole ms", "walk ms", "cold ms", "seeded ms", "warm ms", "append ms", "walk idx", "seed idx",
                           "warm idx", "app idx");
  for (int n : sizes) {
    const std::string path = make_transcript(dir, n);
    std::vector<double> whole_ms, walk_ms, cold_ms, seeded_ms, warm_ms, append_ms;
    measured whole, walk, cold, seeded, warm, appended;
    const row_count seed = count_of(path);
    for (int r = 0; r < reps; ++r) {
      whole = time_page(path, limit, way::whole, nullptr);
      walk = time_page(path, limit, way::walk, nullptr);
      context_counts counts;  // a process that has read no page of this file yet
      cold = time_page(path, limit, way::memo, &counts);
      warm = time_page(path, limit, way::memo, &counts);
      context_counts after_start;  // a process started since the session wrote its row
      seeded = time_page(path, limit, way::memo, &after_start, &seed);
      same_or_die(whole, walk, "walk");
      same_or_die(whole, cold, "cold");
      same_or_die(whole, warm, "warm");
      same_or_die(whole, seeded, "seeded");
      seeded_ms.push_back(seeded.ms);
      whole_ms.push_back(whole.ms);
      walk_ms.push_back(walk.ms);
      cold_ms.push_back(cold.ms);
      warm_ms.push_back(warm.ms);
    }
    // A turn appended after the counts were left: the page walks the new entries, then counts.
    {
      context_counts counts;
      time_page(path, limit, way::memo, &counts);
      for (int r = 0; r < reps; ++r) {
        const int at = n + 2 * r;
        append_lines(path, entry_line(at, kWords) + entry_line(at + 1, kWords));
        appended = time_page(path, limit, way::memo, &counts);
        append_ms.push_back(appended.ms);
      }
      same_or_die(time_page(path, limit, way::whole, nullptr), appended, "append");
    }
    const double w = median(whole_ms), k = median(walk_ms), c = median(cold_ms), sd = median(seeded_ms),
                 h = median(warm_ms), a = median(append_ms);
    std::cerr << fmt::format("{:>8} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.3f} {:>10.3f} {:>10.3f} {:>9} {:>9} {:>9} {:>9}\n", n,
                             w, k, c, sd, h, a, walk.indexed, seeded.indexed, warm.indexed, appended.indexed);
    std::cout << fmt::format(R"({{"bench":"history_page","entries":{},"limit":{},"whole_ms_p50":{:.3f},"walk_ms_p50":{:.3f},)"
                             R"("cold_ms_p50":{:.3f},"seeded_ms_p50":{:.3f},"warm_ms_p50":{:.3f},"append_ms_p50":{:.3f},)"
                             R"("walk_lines_indexed":{},"seeded_lines_indexed":{},"warm_lines_indexed":{},)"
                             R"("append_lines_indexed":{},"warm_lines_parsed":{},"page_messages":{}}})" "\n",
                             n, limit, w, k, c, sd, h, a, walk.indexed, seeded.indexed, warm.indexed, appended.indexed,
                             warm.parsed, warm.page.size());
    ::unlink(path.c_str());
  }
  ::rmdir(dir.c_str());
  return 0;
}
