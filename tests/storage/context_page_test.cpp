// A history page (storage/context_page.hpp) holds what the whole context build gives, on branchy
// transcripts with compactions (sessionrt's and foreign, firstKeptEntryId on and off the path),
// forks, leaf controls, side appends, branch summaries, custom messages, unreadable lines and
// parent cycles; pages tile the context; and with counts left by an earlier page, a page of a
// long session reads only its end.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fcntl.h>

#include <random>

#include "messages/json_writer.hpp"
#include "storage/context_builder.hpp"
#include "storage/context_page.hpp"
#include "storage/fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
namespace bj = boost::json;

namespace {

const char* kHeader = R"({"type":"session","version":3,"id":"s1","timestamp":"2026-11-30T01:00:00.000Z","cwd":"/w"})";
constexpr const char* kTs = "2026-11-30T01:00:00.000Z";

std::unique_ptr<transcript_reader> open_reader(const std::string& path) {
  auto r = transcript_reader::open(posix_fs(), path);
  REQUIRE(r.ok());
  return std::move(*r);
}

std::shared_ptr<context_counts::file> counts_of(context_counts& counts, const std::string& path, transcript_reader& rd) {
  auto info = posix_fs().fstat(rd.fd());
  REQUIRE(info.ok());
  return counts.of({path, info->dev, info->ino}, rd.data_end());
}

std::string parent_json(const std::string& parent) { return parent.empty() ? "null" : "\"" + parent + "\""; }

std::string message_line(const std::string& id, const std::string& parent, const char* role, const std::string& text,
                         bool side = false) {
  return fmt::format(R"({{"type":"message","id":"{}","parentId":{},"timestamp":"{}",{}"message":{{"role":"{}","content":"{}","timestamp":1}}}})",
                     id, parent_json(parent), kTs, side ? R"("appendMode":"side",)" : "", role, text);
}

// Random transcripts: mostly a growing chain, sometimes a fork from an earlier entry, a
// compaction (with or without sessionrt's note, its firstKeptEntryId an ancestor, another entry
// or missing), a branch summary (empty or not), a custom message, a model change, a leaf control,
// a side append, an unreadable line.
struct transcript_maker {
  std::mt19937 rng;
  std::vector<std::string> ids;      // in file order
  std::vector<std::string> parents;  // parents[i] of ids[i]
  std::string tip;                   // the entry new ones hang under
  int next = 0;

  explicit transcript_maker(unsigned seed) : rng(seed) {}
  int roll(int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }

  std::string ancestor_of(const std::string& id) {  // a random entry on id's path
    std::vector<std::string> path;
    for (std::string cur = id; !cur.empty();) {
      path.push_back(cur);
      auto it = std::find(ids.begin(), ids.end(), cur);
      if (it == ids.end()) break;
      cur = parents[static_cast<std::size_t>(it - ids.begin())];
      if (path.size() > ids.size()) break;
    }
    return path.empty() ? std::string() : path[static_cast<std::size_t>(roll(static_cast<int>(path.size())))];
  }

  std::string line() {
    const std::string id = fmt::format("e{:05d}", next++);
    std::string parent = tip;
    if (!ids.empty() && roll(12) == 0) parent = ids[static_cast<std::size_t>(roll(static_cast<int>(ids.size())))];  // a fork
    const int kind = roll(40);
    std::string out;
    bool moves_tip = true;
    if (kind == 0 && !tip.empty()) {
      std::string kept;
      const int how = roll(4);
      if (how <= 1) kept = fmt::format(R"("firstKeptEntryId":"{}",)", ancestor_of(parent));
      if (how == 2 && !ids.empty()) kept = fmt::format(R"("firstKeptEntryId":"{}",)", ids[static_cast<std::size_t>(roll(static_cast<int>(ids.size())))]);
      const std::string note = roll(2) ? R"(,"details":{"sessionrt":{"thinkingLevel":"low","model":null}})" : "";
      out = fmt::format(R"({{"type":"compaction","id":"{}","parentId":{},"timestamp":"{}","summary":"summary {}",{}"tokensBefore":10{}}})",
                        id, parent_json(parent), kTs, id, kept, note);
    } else if (kind == 1) {
      out = fmt::format(R"({{"type":"branch_summary","id":"{}","parentId":{},"timestamp":"{}","fromId":"x","summary":"{}"}})", id,
                        parent_json(parent), kTs, roll(2) ? "" : "went elsewhere");
    } else if (kind == 2) {
      out = fmt::format(R"({{"type":"custom_message","id":"{}","parentId":{},"timestamp":"{}","customType":"note","content":"c {}","display":true}})",
                        id, parent_json(parent), kTs, id);
    } else if (kind == 3) {
      out = fmt::format(R"({{"type":"model_change","id":"{}","parentId":{},"timestamp":"{}","provider":"p","modelId":"m"}})", id,
                        parent_json(parent), kTs);
    } else if (kind == 4 && !ids.empty()) {
      const std::string target = ids[static_cast<std::size_t>(roll(static_cast<int>(ids.size())))];
      out = fmt::format(R"({{"type":"leaf","id":"{}","parentId":{},"timestamp":"{}","targetId":"{}"}})", id, parent_json(parent), kTs,
                        target);
      parent = target;  // the leaf control moves the active leaf there
    } else if (kind == 5) {
      out = message_line(id, parent, "assistant", "side " + id, true);
      moves_tip = false;
    } else if (kind == 6) {
      out = R"({"type":"message","id":")" + id + R"(" this line does not parse)";
      moves_tip = false;
    } else if (kind == 7) {
      // a message entry whose message is not an object: in the page as an unreadable entry
      out = fmt::format(R"({{"type":"message","id":"{}","parentId":{},"timestamp":"{}","message":"?"}})", id, parent_json(parent), kTs);
    } else {
      out = message_line(id, parent, roll(2) ? "user" : "assistant", "m " + id);
    }
    if (kind != 6) {
      ids.push_back(id);
      parents.push_back(kind == 4 ? std::string() : parent);
    }
    if (moves_tip) tip = kind == 4 ? parent : id;
    return out;
  }
};

std::string to_text(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return text;
}

int g_counted_pages = 0;  // pages whose total came from the counts (the early stop taken)

// The page of read_context_page, checked against build_context on the same file: the newest page
// equals build_context's page, pages tile the whole context in order, seqs count places.
void check_pages(const std::string& path, std::size_t limit, context_counts* counts) {
  auto whole_rd = open_reader(path);
  auto whole = build_context(*whole_rd);
  REQUIRE(whole.ok());
  auto old_rd = open_reader(path);
  auto old_page = build_context(*old_rd, leaf_selector::active(), limit);
  REQUIRE(old_page.ok());

  bj::array tiled;
  std::int64_t last_seq = 0;
  std::size_t offset = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    auto rd = open_reader(path);
    auto page = read_context_page(*rd, {limit, offset}, counts ? counts_of(*counts, path, *rd) : nullptr);
    REQUIRE(page.ok());
    CHECK(page->total == whole->total_messages);
    if (page->counted_from_memo) ++g_counted_pages;
    CHECK(page->cycle_detected == whole->cycle_detected);
    CHECK(page->leaf_id == whole->leaf_id);
    bj::array msgs;
    for (const auto& item : page->items) msgs.push_back(item.message);
    if (offset == 0) CHECK(msgs == old_page->messages);
    bj::array joined = msgs;
    for (const auto& m : tiled) joined.push_back(m);
    tiled = std::move(joined);
    for (std::size_t i = 0; i + 1 < page->items.size(); ++i) CHECK(page->items[i].seq < page->items[i + 1].seq);
    if (!page->items.empty()) {
      CHECK(page->items.front().seq > static_cast<std::int64_t>(page->older));
      CHECK(page->items.back().seq <= static_cast<std::int64_t>(page->total - offset));
      if (last_seq) CHECK(page->items.back().seq < last_seq);
      last_seq = page->items.front().seq;
    }
    if (page->older == 0) break;
    offset = page->total - page->older;
  }
  CHECK(tiled == whole->messages);
  // Every item at once.
  auto rd = open_reader(path);
  auto all = read_context_page(*rd, {0, 0}, counts ? counts_of(*counts, path, *rd) : nullptr);
  REQUIRE(all.ok());
  bj::array msgs;
  for (const auto& item : all->items) msgs.push_back(item.message);
  CHECK(msgs == whole->messages);
}

}  // namespace

TEST_CASE("history page: random branchy transcripts give build_context's pages, cold and with counts") {
  testing::temp_dir dir;
  int compacted = 0, with_summary_pages = 0;
  g_counted_pages = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    INFO("seed " << seed);
    transcript_maker mk(seed);
    std::vector<std::string> lines{kHeader};
    const int n = 20 + static_cast<int>(seed * 7 % 180);
    for (int i = 0; i < n; ++i) lines.push_back(mk.line());
    const std::string path = dir.file(fmt::format("t{}.jsonl", seed));
    testing::write_text(path, to_text(lines));
    context_counts counts;
    for (std::size_t limit : {1u, 3u, 7u, 50u}) {
      check_pages(path, limit, nullptr);
      check_pages(path, limit, &counts);  // the first pass leaves counts, the others use them
    }
    // The file grows (appends, forks, compactions): the counts left before still give the truth.
    for (int round = 0; round < 3; ++round) {
      std::string more;
      for (int i = 0; i < 15; ++i) more += mk.line() + "\n";
      auto fd = posix_fs().open(path, O_WRONLY | O_APPEND);
      REQUIRE(fd.ok());
      REQUIRE(write_all(posix_fs(), *fd, more.data(), more.size()).ok());
      REQUIRE(posix_fs().close(*fd).ok());
      check_pages(path, 5, &counts);
    }
    auto rd = open_reader(path);
    auto ctx = build_context(*rd);
    REQUIRE(ctx.ok());
    if (!ctx->messages.empty() && ctx->messages[0].at("role") == "compactionSummary") ++with_summary_pages;
    if (to_text(lines).find("\"compaction\"") != std::string::npos) ++compacted;
  }
  CHECK(compacted > 20);           // the generator made the cases it is meant to
  CHECK(with_summary_pages > 3);
  CHECK(g_counted_pages > 1000);   // and the pages used the counts the earlier ones left
}

TEST_CASE("history page: the summary and the entries carry their entry ids, a parent cycle is cut as build_context cuts it") {
  testing::temp_dir dir;
  const std::string path = dir.file("c.jsonl");
  testing::write_text(path, to_text({kHeader, message_line("a", "", "user", "one"), message_line("b", "a", "assistant", "two"),
                                     message_line("c", "b", "user", "three"),
                                     R"({"type":"compaction","id":"k","parentId":"c","timestamp":"2026-11-30T01:00:00.000Z","summary":"S","firstKeptEntryId":"b","tokensBefore":5})",
                                     message_line("d", "k", "assistant", "four")}));
  auto rd = open_reader(path);
  auto page = read_context_page(*rd, {0, 0});
  REQUIRE(page.ok());
  REQUIRE(page->items.size() == 4);
  CHECK(page->total == 4);
  CHECK(page->items[0].entry_id == "k");
  CHECK(page->items[0].message.at("role") == "compactionSummary");
  CHECK(page->items[1].entry_id == "b");
  CHECK(page->items[2].entry_id == "c");
  CHECK(page->items[3].entry_id == "d");
  for (std::size_t i = 0; i < 4; ++i) CHECK(page->items[i].seq == static_cast<std::int64_t>(i + 1));

  const std::string cyc = dir.file("cycle.jsonl");
  testing::write_text(cyc, to_text({kHeader, message_line("x", "z", "user", "x"), message_line("y", "x", "assistant", "y"),
                                    message_line("z", "y", "user", "z")}));
  auto crd = open_reader(cyc);
  auto whole = build_context(*crd);
  REQUIRE(whole.ok());
  REQUIRE(whole->cycle_detected);
  check_pages(cyc, 2, nullptr);
  context_counts counts;
  check_pages(cyc, 2, &counts);
}

TEST_CASE("history page: with the counts an earlier page left, a page of a long session reads only its end") {
  testing::temp_dir dir;
  const std::string path = dir.file("long.jsonl");
  std::vector<std::string> lines{kHeader};
  std::string parent;
  for (int i = 0; i < 6000; ++i) {
    const std::string id = fmt::format("m{:05d}", i);
    lines.push_back(message_line(id, parent, i % 2 ? "assistant" : "user", std::string(200, 'w')));
    parent = id;
  }
  testing::write_text(path, to_text(lines));
  context_counts counts;
  {
    auto rd = open_reader(path);
    auto cold = read_context_page(*rd, {50, 0}, counts_of(counts, path, *rd));
    REQUIRE(cold.ok());
    CHECK(cold->total == 6000);
    CHECK_FALSE(cold->counted_from_memo);
    CHECK(rd->stats().lines_indexed == 6000);  // the first page walks to the root once
  }
  auto rd = open_reader(path);
  auto warm = read_context_page(*rd, {50, 0}, counts_of(counts, path, *rd));
  REQUIRE(warm.ok());
  CHECK(warm->total == 6000);
  CHECK(warm->counted_from_memo);
  CHECK(warm->entries_walked == 50);
  CHECK(rd->stats().lines_indexed < 1500);  // a block or two from the end, not 6,000
  CHECK(rd->stats().lines_parsed == 50);
  CHECK(warm->items.back().entry_id == "m05999");
  CHECK(warm->items.front().seq == 5951);
  // A turn appended since: the walk reads it, then the count.
  {
    auto fd = posix_fs().open(path, O_WRONLY | O_APPEND);
    REQUIRE(fd.ok());
    const std::string more = message_line("n1", "m05999", "user", "new") + "\n" + message_line("n2", "n1", "assistant", "reply") + "\n";
    REQUIRE(write_all(posix_fs(), *fd, more.data(), more.size()).ok());
    REQUIRE(posix_fs().close(*fd).ok());
  }
  auto rd2 = open_reader(path);
  auto after = read_context_page(*rd2, {50, 0}, counts_of(counts, path, *rd2));
  REQUIRE(after.ok());
  CHECK(after->total == 6002);
  CHECK(after->counted_from_memo);
  CHECK(rd2->stats().lines_indexed < 1500);
  CHECK(after->items.back().entry_id == "n2");
  // An older page from the counts: it reads back as far as it reaches, no further.
  auto rd3 = open_reader(path);
  auto older = read_context_page(*rd3, {50, 1000}, counts_of(counts, path, *rd3));
  REQUIRE(older.ok());
  CHECK(older->counted_from_memo);
  CHECK(older->items.front().seq == 6002 - 1000 - 50 + 1);
  CHECK(rd3->stats().lines_indexed < 3000);
  // Another file at the same path (replaced by a rename) whose leaf has the same id at the same
  // offset: the old counts are not trusted (they would say 6,000).
  const std::string before_leaf = to_text(std::vector<std::string>(lines.begin(), lines.end() - 1));
  const std::string head = std::string(kHeader) + "\n";
  const std::size_t filler_len = before_leaf.size() - head.size() - 1;
  std::string filler = message_line("x", "", "user", "");
  filler = message_line("x", "", "user", std::string(filler_len - filler.size(), 'p'));
  REQUIRE(filler.size() == filler_len);
  testing::write_text(path + ".tmp", head + filler + "\n" +
                                         message_line("m05999", "x", "assistant", std::string(200, 'w')) + "\n");
  REQUIRE(std::rename((path + ".tmp").c_str(), path.c_str()) == 0);
  auto rd4 = open_reader(path);
  auto replaced = read_context_page(*rd4, {1, 0}, counts_of(counts, path, *rd4));
  REQUIRE(replaced.ok());
  CHECK(rd4->index().at(*rd4->index().find("m05999")).offset == before_leaf.size());
  CHECK(replaced->total == 2);
  CHECK_FALSE(replaced->counted_from_memo);
}

TEST_CASE("history page: the counts are bounded per file and in files, and a file that shrank starts over") {
  context_counts counts;
  for (int i = 0; i < 130; ++i) counts.of({fmt::format("/f{}", i), 1, static_cast<std::uint64_t>(i)}, 100);
  CHECK(counts.files() == context_counts::kMaxFiles);
  auto f = counts.of({"/big", 1, 7}, 1000);
  std::vector<std::pair<std::string, std::pair<std::uint64_t, std::int64_t>>> many;
  for (int i = 0; i < 1100; ++i) many.emplace_back(fmt::format("e{}", i), std::make_pair(static_cast<std::uint64_t>(i), i + 1));
  f->remember(many);
  CHECK(f->size() == context_counts::kMaxPerFile);
  CHECK_FALSE(f->total_at("e0", 0));         // the oldest went first
  CHECK(f->total_at("e1099", 1099) == 1100);
  CHECK_FALSE(f->total_at("e1099", 1098));   // another offset: another entry
  CHECK(counts.of({"/big", 1, 7}, 1000)->total_at("e1099", 1099) == 1100);
  CHECK_FALSE(counts.of({"/big", 1, 7}, 999)->total_at("e1099", 1099));  // shorter: cut and rewritten
  f = counts.of({"/big", 1, 7}, 2000);
  f->remember({{"e5", {5, 6}}});
  CHECK_FALSE(counts.of({"/big", 1, 8}, 3000)->total_at("e5", 5));  // another inode
}

// A session counts its context after every turn (actors/session/history_count): a count-only
// page gives build_context's total and the page's leaf, cold and from the counts it left, but
// parses no item (a plain chain: none of its lines; a compaction on the path is still read for
// its firstKeptEntryId).
TEST_CASE("history page: a count-only page gives build_context's total and reads no line") {
  testing::temp_dir dir;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    transcript_maker mk(seed);
    std::vector<std::string> lines{kHeader};
    const int n = 20 + static_cast<int>(seed * 11 % 150);
    for (int i = 0; i < n; ++i) lines.push_back(mk.line());
    const std::string path = dir.file(fmt::format("c{}.jsonl", seed));
    testing::write_text(path, to_text(lines));
    auto rd = open_reader(path);
    auto ctx = build_context(*rd);
    REQUIRE(ctx.ok());
    context_counts counts;
    page_request count;
    count.count_only = true;
    for (int pass = 0; pass < 2; ++pass) {  // cold, then from the count the first pass left
      auto rdc = open_reader(path);
      auto page = read_context_page(*rdc, count, counts_of(counts, path, *rdc));
      REQUIRE(page.ok());
      CHECK(page->total == ctx->total_messages);
      CHECK(page->items.empty());
      auto full = read_context_page(*open_reader(path), {1, 0});
      REQUIRE(full.ok());
      CHECK(page->leaf_id == full->leaf_id);
    }
  }
  // A plain chain: the one-item page parses its item, the count parses nothing.
  const std::string path = dir.file("chain.jsonl");
  std::vector<std::string> lines{kHeader};
  std::string parent;
  for (int i = 0; i < 300; ++i) {
    const std::string id = fmt::format("m{:03d}", i);
    lines.push_back(message_line(id, parent, i % 2 ? "assistant" : "user", "text"));
    parent = id;
  }
  testing::write_text(path, to_text(lines));
  auto one = open_reader(path);
  REQUIRE(read_context_page(*one, {1, 0}).ok());
  CHECK(one->stats().lines_parsed == 1);
  auto rd = open_reader(path);
  page_request count;
  count.count_only = true;
  auto page = read_context_page(*rd, count);
  REQUIRE(page.ok());
  CHECK(page->total == 300);
  CHECK(page->leaf_id == std::optional<std::string>("m299"));
  CHECK(rd->stats().lines_parsed == 0);
}
