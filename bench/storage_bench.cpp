// sessionrt storage figures, one JSON line per measurement on stdout (progress on stderr):
//   append      — N user/assistant pairs (~400 B text, as peer-bench's pi_append) per durability
//                 mode; appends/s = entries / (time until the last one is acknowledged);
//   open_build  — transcripts of 1k/10k/50k entries with a compaction 100 entries before the
//                 end: open + build context, median of reps. Two variants: the compaction as
//                 sessionrt writes it, and as pi writes it (no sessionrt note: the walk skims
//                 to the root). The files are kept in --dir so bench/pi_open_build.mjs can time
//                 pi's SessionManager on the very same files;
//   store       — sessions.json of 500/5k/50k rows shaped like peer-bench's store_entry.mjs:
//                 load (median), and single-row updates each saved durably (temp + fsync +
//                 rename + dir fsync), as OpenClaw's updateSessionStoreEntry does per update.
// Usage: storage_bench [--quick] [--dir DIR] [--pairs N] [--sizes a,b,c] [--store-sizes a,b,c] [--reps R]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_file.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using steady = std::chrono::steady_clock;

namespace {

struct args {
  bool quick = false;
  std::string dir;
  int pairs = 10000;
  std::vector<int> sizes{1000, 10000, 50000};
  std::vector<int> store_sizes{500, 5000, 50000};
  int reps = 5;
  std::string only;  // "" = every part; append | store | open
};

double ms_since(steady::time_point t0) {
  return std::chrono::duration<double, std::milli>(steady::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::vector<std::string> make_texts() {
  static const char* words[] = {"the", "session", "store", "keeps", "transcript", "entries", "append", "only", "tree",
                                "parent", "leaf", "context", "model", "tool", "call", "result", "assistant", "user"};
  std::vector<std::string> texts;
  unsigned seed = 42;
  for (int i = 0; i < 64; ++i) {
    std::string s;
    while (s.size() < 400) {
      seed = seed * 1103515245 + 12345;
      if (!s.empty()) s += ' ';
      s += words[(seed >> 16) % 18];
    }
    texts.push_back(s.substr(0, 400));
  }
  return texts;
}

boost::json::object user_msg(const std::string& text, std::int64_t ts) { return user_message(text, ts); }
boost::json::object assistant_msg(const std::string& text, std::int64_t ts) {
  assistant_fields a;
  a.content.push_back(text_block(text));
  a.model = "claude-sonnet-4-5";
  a.usage = {1200, 180, 0, 0, 0.0036, 0.0027, 0, 0};
  a.timestamp_ms = ts;
  return assistant_message(std::move(a));
}

header_fields header(const std::string& id) {
  header_fields h;
  h.id = id;
  h.timestamp_ms = real_clock().now_ms();
  h.cwd = "/home/bench/project";
  return h;
}

void bench_append(const args& a, const std::vector<std::string>& texts, durability mode) {
  std::vector<double> runs;
  std::uint64_t syncs = 0, writes = 0, bytes = 0;
  const int reps = a.quick ? 2 : 3;
  const int pairs = mode == durability::sync ? std::min(a.pairs, a.quick ? 500 : 2000) : a.pairs;
  for (int r = 0; r < reps; ++r) {
    const std::string path = fmt::format("{}/append-{}-{}.jsonl", a.dir, durability_name(mode), r);
    transcript_options o;
    o.mode = mode;
    auto t = transcript_file::create(posix_fs(), real_clock(), path, header("bench"), o);
    if (!t.ok()) throw std::runtime_error(t.error().message());
    auto& f = **t;
    const auto t0 = steady::now();
    for (int i = 0; i < pairs; ++i) {
      const std::int64_t ts = real_clock().now_ms();
      for (int k = 0; k < 2; ++k) {
        const auto& text = texts[(2 * i + k) % 64];
        auto id = f.append_message(k == 0 ? user_msg(text, ts) : assistant_msg(text, ts));
        if (!id.ok()) throw std::runtime_error(id.error().message());
        if (!f.commit().ok()) throw std::runtime_error("commit failed");
        if (f.sync_due() && !f.sync().ok()) throw std::runtime_error("sync failed");
      }
    }
    if (!f.sync().ok()) throw std::runtime_error("sync failed");
    runs.push_back(ms_since(t0));
    syncs = f.stats().syncs;
    writes = f.stats().writes;
    bytes = f.stats().bytes_written;
    t->reset();
    (void)posix_fs().unlink(path);
  }
  const double med = median(runs);
  const int entries = 2 * pairs;
  std::cout << fmt::format(
                   R"({{"bench":"append","mode":"{}","entries":{},"reps":{},"total_ms_median":{:.2f},"appends_per_s":{:.0f},"us_per_append":{:.3f},"fdatasyncs":{},"write_syscalls":{},"bytes_per_entry":{:.1f}}})",
                   durability_name(mode), entries, reps, med, entries / (med / 1000), med * 1000 / entries, syncs, writes,
                   static_cast<double>(bytes) / entries)
            << std::endl;
}

// A transcript of `n` entries whose last compaction sits 100 entries before the end.
std::string make_long(const args& a, const std::vector<std::string>& texts, int n, bool pi_style) {
  const std::string path = fmt::format("{}/long-{}-{}.jsonl", a.dir, n, pi_style ? "pi-compaction" : "sessionrt-compaction");
  transcript_options o;
  o.mode = durability::none;
  auto t = transcript_file::create(posix_fs(), real_clock(), path, header(fmt::format("long{}", n)), o);
  if (!t.ok()) throw std::runtime_error(t.error().message());
  auto& f = **t;
  const int before = n - 101;  // entries before the compaction
  std::string keep;
  const int keep_at = before - 20;  // the compaction keeps the last 20 entries before it
  for (int i = 0; i < before; ++i) {
    auto id = f.append_message(i % 2 == 0 ? user_msg(texts[i % 64], i) : assistant_msg(texts[i % 64], i));
    if (i == keep_at) keep = *id;
  }
  const std::string summary(2000, 's');
  if (pi_style) {
    // What pi's appendCompaction writes: no details.sessionrt note.
    if (!f.flush().ok()) throw std::runtime_error("flush");
    auto id = fmt::format("{:08x}", 0xc0000000u + static_cast<unsigned>(n));
    auto line = json::to_compact(make_compaction_entry(id, *f.leaf_id(), real_clock().now_ms(), summary, keep, n * 180));
    t->reset();
    std::string text = line + "\n";
    auto fd = posix_fs().open(path, O_WRONLY | O_APPEND);
    if (!fd.ok() || !write_all(posix_fs(), *fd, text.data(), text.size()).ok()) throw std::runtime_error("append");
    (void)posix_fs().close(*fd);
    auto re = transcript_file::open(posix_fs(), real_clock(), path, o);
    if (!re.ok()) throw std::runtime_error(re.error().message());
    t = std::move(re);
  } else if (!f.append_compaction(summary, keep, n * 180).ok()) {
    throw std::runtime_error("compaction");
  }
  for (int i = 0; i < 100; ++i)
    (void)(*t)->append_message(i % 2 == 0 ? user_msg(texts[i % 64], i) : assistant_msg(texts[i % 64], i));
  if (!(*t)->flush().ok()) throw std::runtime_error("flush");
  return path;
}

void bench_open_build(const args& a, const std::vector<std::string>& texts, int n, bool pi_style) {
  const std::string path = make_long(a, texts, n, pi_style);
  std::vector<double> times;
  std::size_t msgs = 0;
  reader_stats stats;
  for (int r = 0; r < a.reps; ++r) {
    const auto t0 = steady::now();
    auto rd = transcript_reader::open(posix_fs(), path);
    if (!rd.ok()) throw std::runtime_error(rd.error().message());
    auto ctx = build_context(**rd);
    if (!ctx.ok()) throw std::runtime_error(ctx.error().message());
    times.push_back(ms_since(t0));
    msgs = ctx->messages.size();
    stats = (*rd)->stats();
  }
  auto size = posix_fs().stat(path)->size;
  std::cout << fmt::format(
                   R"({{"bench":"open_build","variant":"{}","entries":{},"file":"{}","file_bytes":{},"open_build_ms_median":{:.3f},"ctx_messages":{},"bytes_read":{},"lines_indexed":{},"lines_parsed":{}}})",
                   pi_style ? "pi-compaction" : "sessionrt-compaction", n, path, size, median(times), msgs,
                   stats.bytes_read, stats.lines_indexed, stats.lines_parsed)
            << std::endl;
}

// peer-bench/bench/store_entry.mjs makeEntry(i, now, rand), field for field.
session_entry bench_entry(int i, std::int64_t now, unsigned& seed) {
  auto rnd = [&](int mod) {
    seed = seed * 1103515245 + 12345;
    return static_cast<std::int64_t>((seed >> 8) % static_cast<unsigned>(mod));
  };
  session_entry e;
  const std::string n4 = fmt::format("{:04d}", i % 10000);
  e.set_session_id(fmt::format("5e55{}-0000-4000-8000-{:012d}", n4, i));
  e.set_updated_at(now - i * 1000LL);
  e.set_session_started_at(now - i * 1000LL - 60000);
  e.set_last_interaction_at(now - i * 1000LL);
  e.set_chat_type("direct");
  e.set_display_name(fmt::format("bench session {}", i));
  e.set_thinking_level("medium");
  e.set_input_tokens(rnd(100000));
  e.set_output_tokens(rnd(20000));
  e.set_total_tokens(0);
  e.set_context_tokens(200000);
  e.set_compaction_count(0);
  return e;
}

void bench_store(const args& a, int n) {
  const std::string path = fmt::format("{}/store-{}/sessions.json", a.dir, n);
  unsigned seed = 45u + static_cast<unsigned>(n);
  const std::int64_t now = real_clock().now_ms();
  {
    session_store_file f(posix_fs(), real_clock(), path);
    f.store().reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) f.store().upsert(fmt::format("agent:store{}:direct:u{}", n, i), bench_entry(i, now, seed));
    if (!f.save().ok()) throw std::runtime_error("seed save failed");
  }
  std::vector<double> loads;
  for (int r = 0; r < a.reps; ++r) {
    session_store_file f(posix_fs(), real_clock(), path);
    const auto t0 = steady::now();
    auto rep = f.load();
    loads.push_back(ms_since(t0));
    if (!rep.ok() || rep->entry_count != static_cast<std::size_t>(n)) throw std::runtime_error("load failed");
  }
  session_store_file f(posix_fs(), real_clock(), path);
  if (!f.load().ok()) throw std::runtime_error("load failed");
  const int updates = a.quick ? 50 : (n >= 50000 ? 200 : 1000);
  std::vector<double> lat;
  const auto t0 = steady::now();
  for (int u = 0; u < updates; ++u) {
    const auto s0 = steady::now();
    seed = seed * 1103515245 + 12345;
    auto* e = f.store().find_for_update(fmt::format("agent:store{}:direct:u{}", n, (seed >> 8) % static_cast<unsigned>(n)));
    e->set_updated_at(real_clock().now_ms());
    e->set_input_tokens(e->input_tokens().value_or(0) + 1200);
    e->set_output_tokens(e->output_tokens().value_or(0) + 180);
    e->set_total_tokens(e->total_tokens().value_or(0) + 1380);
    if (!f.save().ok()) throw std::runtime_error("save failed");
    lat.push_back(ms_since(s0));
  }
  const double total = ms_since(t0);
  std::sort(lat.begin(), lat.end());
  std::cout << fmt::format(
                   R"({{"bench":"store","entries":{},"file_bytes":{},"load_ms_median":{:.2f},"updates":{},"updates_per_s":{:.1f},"update_ms_median":{:.3f},"update_ms_p99":{:.3f}}})",
                   n, posix_fs().stat(path)->size, median(loads), updates, updates / (total / 1000), median(lat),
                   lat[std::min(lat.size() - 1, lat.size() * 99 / 100)])
            << std::endl;
}

std::vector<int> parse_sizes(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) out.push_back(std::stoi(part));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value for " + k);
      return argv[++i];
    };
    if (k == "--quick") {
      a.quick = true;
      a.pairs = 2000;
      a.sizes = {1000, 10000};
      a.store_sizes = {500, 5000};
      a.reps = 3;
    } else if (k == "--dir") a.dir = next();
    else if (k == "--pairs") a.pairs = std::stoi(next());
    else if (k == "--sizes") a.sizes = parse_sizes(next());
    else if (k == "--store-sizes") a.store_sizes = parse_sizes(next());
    else if (k == "--reps") a.reps = std::stoi(next());
    else if (k == "--only") a.only = next();
    else if (k == "--help" || k == "-h") {
      std::cout << "usage: storage_bench [--quick] [--dir DIR] [--pairs N] [--sizes 1000,10000,50000]\n"
                   "                     [--store-sizes 500,5000,50000] [--reps R] [--only append|store|open]\n";
      return 0;
    } else {
      std::cerr << "storage_bench: unknown argument " << k << "\n";
      return 2;
    }
  }
  if (a.dir.empty()) {
    char tmpl[] = "/tmp/sessionrt-bench-XXXXXX";
    a.dir = mkdtemp(tmpl);
  } else {
    // Files of an earlier run in the same directory would make create() refuse.
    auto names = posix_fs().list_dir(a.dir);
    if (names.ok())
      for (const auto& name : *names)
        if (name.rfind("append-", 0) == 0 || name.rfind("long-", 0) == 0) (void)posix_fs().unlink(a.dir + "/" + name);
    for (int n : a.store_sizes) (void)posix_fs().unlink(fmt::format("{}/store-{}/sessions.json", a.dir, n));
  }
  if (!a.only.empty() && a.only != "append" && a.only != "store" && a.only != "open") {
    std::cerr << "storage_bench: --only takes append, store or open, not " << a.only << "\n";
    return 2;
  }
  const auto texts = make_texts();
  auto wanted = [&](const char* part) { return a.only.empty() || a.only == part; };
  if (wanted("append")) {
    for (auto mode : {durability::none, durability::batch, durability::sync}) {
      std::cerr << "[storage_bench] append " << durability_name(mode) << "\n";
      bench_append(a, texts, mode);
    }
  }
  if (wanted("store")) {
    for (int n : a.store_sizes) {
      std::cerr << "[storage_bench] store " << n << " rows\n";
      bench_store(a, n);
    }
  }
  if (wanted("open")) {
    for (int n : a.sizes)
      for (bool pi_style : {false, true}) {
        std::cerr << "[storage_bench] open+build " << n << (pi_style ? " (pi-style compaction)" : "") << "\n";
        bench_open_build(a, texts, n, pi_style);
      }
  }
  return 0;
}
