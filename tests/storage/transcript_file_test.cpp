// The transcript writer: ids, leaf, branching, durability modes, rollback, limits, and the
// lazy read path that keeps opening + building a context proportional to the context.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cerrno>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/transcript_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

header_fields header(const std::string& id) {
  header_fields h;
  h.id = id;
  h.timestamp_ms = 1796000000000;
  h.cwd = "/work";
  return h;
}

boost::json::object assistant(const std::string& text) {
  assistant_fields a;
  a.content.push_back(text_block(text));
  a.model = "sim-1";
  a.usage.input = 100;
  a.usage.output = 10;
  a.timestamp_ms = 1796000000000;
  return assistant_message(std::move(a));
}

std::vector<std::string> texts(const session_context& c) {
  std::vector<std::string> out;
  for (const auto& m : c.messages) {
    const auto& o = m.as_object();
    const auto& content = o.contains("content") ? o.at("content") : o.at("summary");
    if (content.is_string())
      out.emplace_back(content.as_string());
    else
      out.emplace_back(content.as_array()[0].as_object().at("text").as_string());
  }
  return out;
}

std::unique_ptr<transcript_file> make(fs& f, sessionrt::clock& c, const std::string& path, durability d = durability::batch) {
  transcript_options o;
  o.mode = d;
  auto t = transcript_file::create(f, c, path, header("sess-1"), o);
  REQUIRE(t.ok());
  return std::move(*t);
}

}  // namespace

TEST_CASE("appends form a chain from the leaf and survive a reopen") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("sess-1.jsonl");
  {
    auto t = make(posix_fs(), clk, path);
    auto u = t->append_message(user_message("hello", 1));
    REQUIRE(u.ok());
    CHECK(u->size() == 8);
    auto a = t->append_message(assistant("hi there"));
    REQUIRE(a.ok());
    CHECK(*t->leaf_id() == *a);
    REQUIRE(t->sync().ok());
    CHECK(t->durable_seq() == 2);
  }
  auto lines = testing::split_lines(testing::read_text(path));
  REQUIRE(lines.size() == 3);
  auto hdr = json::parse_object(lines[0]);
  CHECK(json::to_compact(*hdr) == R"({"type":"session","version":3,"id":"sess-1","timestamp":"2026-11-30T00:53:20.000Z","cwd":"/work"})");
  auto first = json::parse_object(lines[1]);
  auto second = json::parse_object(lines[2]);
  CHECK(first->at("parentId").is_null());
  CHECK(second->at("parentId").as_string() == first->at("id").as_string());
  CHECK(second->at("timestamp").as_string() == "2026-11-30T00:53:20.000Z");
  auto t = transcript_file::open(posix_fs(), clk, path);
  REQUIRE(t.ok());
  auto ctx = (*t)->context();
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"hello", "hi there"});
  CHECK(json::to_compact(ctx->model) == R"({"provider":"anthropic","modelId":"sim-1"})");
}

TEST_CASE("create refuses to overwrite an existing transcript") {
  testing::temp_dir dir;
  manual_clock clk(1);
  testing::write_text(dir.file("x.jsonl"), "keep me\n");
  auto t = transcript_file::create(posix_fs(), clk, dir.file("x.jsonl"), header("x"));
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().code() == errc::already_exists);
  CHECK(testing::read_text(dir.file("x.jsonl")) == "keep me\n");
}

TEST_CASE("branching: set_leaf then append starts a new branch - the old one stays readable") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  auto t = make(posix_fs(), clk, dir.file("b.jsonl"));
  auto u1 = *t->append_message(user_message("pick one", 1));
  auto a1 = *t->append_message(assistant("sqlite"));
  REQUIRE(t->set_leaf(u1).ok());
  auto b = t->append_branch_summary(u1, "tried sqlite");
  REQUIRE(b.ok());
  REQUIRE(t->append_message(assistant("jsonl")).ok());
  auto ctx = t->context();
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"pick one", "tried sqlite", "jsonl"});
  auto old = t->context(leaf_selector::of(a1));
  REQUIRE(old.ok());
  CHECK(texts(*old) == std::vector<std::string>{"pick one", "sqlite"});
  CHECK(t->set_leaf(std::string("nothere")).code() == errc::not_found);
}

TEST_CASE("a compaction written here records the path state, and the context cuts at it") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  auto t = make(posix_fs(), clk, dir.file("c.jsonl"));
  REQUIRE(t->append_thinking_level("high").ok());
  std::string keep;
  for (int i = 0; i < 10; ++i) {
    auto u = *t->append_message(user_message("u" + std::to_string(i), i));
    if (i == 8) keep = u;
    REQUIRE(t->append_message(assistant("a" + std::to_string(i))).ok());
  }
  auto c = t->append_compaction("summary", keep, 1234);
  REQUIRE(c.ok());
  REQUIRE(t->append_message(user_message("after", 99)).ok());
  REQUIRE(t->sync().ok());
  auto lines = testing::split_lines(testing::read_text(dir.file("c.jsonl")));
  auto comp = json::parse_object(lines[lines.size() - 2]);
  CHECK(json::to_compact(comp->at("details")) ==
        R"({"readFiles":[],"modifiedFiles":[],"sessionrt":{"thinkingLevel":"high","model":{"provider":"anthropic","modelId":"sim-1"}}})");
  auto ctx = t->context();
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"summary", "u8", "a8", "u9", "a9", "after"});
  CHECK(ctx->thinking_level->as_string() == "high");
}

TEST_CASE("opening a long transcript and building its context after a compaction reads only the tail") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("long.jsonl");
  const std::string text(400, 'x');
  {
    auto t = make(posix_fs(), clk, path, durability::none);
    REQUIRE(t->append_thinking_level("low").ok());
    std::string keep;
    for (int i = 0; i < 10000; ++i) {
      auto u = *t->append_message(user_message(text, i));
      if (i == 9960) keep = u;
      REQUIRE(t->append_message(assistant(text)).ok());
    }
    REQUIRE(t->append_compaction("sum", keep, 5000).ok());
    for (int i = 0; i < 10; ++i) REQUIRE(t->append_message(user_message("tail", i)).ok());
    REQUIRE(t->flush().ok());
  }
  const auto size = testing::read_text(path).size();
  auto rd = transcript_reader::open(posix_fs(), path);
  REQUIRE(rd.ok());
  auto ctx = build_context(**rd);
  REQUIRE(ctx.ok());
  CHECK(ctx->messages.size() == 1 + 80 + 10);
  CHECK(ctx->thinking_level->as_string() == "low");
  // 20,000 entries of ~500 bytes; the context needs the last ~90.
  CHECK(size > 9'000'000);
  CHECK((*rd)->stats().bytes_read < 600'000);
  CHECK((*rd)->stats().lines_indexed < 1000);
  CHECK_FALSE((*rd)->fully_indexed());
}

TEST_CASE("without sessionrt's note (a pi compaction), the walk skims to the root but parses only the context") {
  testing::temp_dir dir;
  const auto path = dir.file("pi.jsonl");
  std::string f = R"({"type":"session","version":3,"id":"p","timestamp":"2026-11-30T01:00:00.000Z","cwd":"/w"})" "\n";
  std::string prev = "null";
  for (int i = 0; i < 2000; ++i) {
    std::string id = fmt::format("{:08x}", i);
    f += R"({"type":"message","id":")" + id + R"(","parentId":)" + prev +
         R"(,"timestamp":"2026-11-30T01:00:00.000Z","message":{"role":"user","content":"m)" + std::to_string(i) +
         R"(","timestamp":1}})" "\n";
    prev = "\"" + id + "\"";
  }
  f += R"({"type":"compaction","id":"cccccccc","parentId":)" + prev +
       R"(,"timestamp":"2026-11-30T01:00:00.000Z","summary":"S","firstKeptEntryId":"000007cf","tokensBefore":1})" "\n";
  testing::write_text(path, f);
  auto rd = transcript_reader::open(posix_fs(), path);
  REQUIRE(rd.ok());
  auto ctx = build_context(**rd);
  REQUIRE(ctx.ok());
  CHECK(ctx->messages.size() == 2);  // summary + m1999
  CHECK((*rd)->stats().lines_indexed == 2001);
  CHECK((*rd)->stats().lines_parsed < 10);
}

TEST_CASE("the first append after a lazy open indexes the whole file once, so ids stay unique") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("u.jsonl");
  {
    auto t = make(posix_fs(), clk, path, durability::none);
    for (int i = 0; i < 3000; ++i) REQUIRE(t->append_message(user_message(std::string(300, 'y'), i)).ok());
  }
  auto t = transcript_file::open(posix_fs(), clk, path);
  REQUIRE(t.ok());
  CHECK_FALSE((*t)->reader().fully_indexed());
  REQUIRE((*t)->append_message(user_message("new", 1)).ok());
  CHECK((*t)->reader().fully_indexed());
  CHECK((*t)->stats().full_index_scans == 1);
  REQUIRE((*t)->append_message(user_message("newer", 2)).ok());
  CHECK((*t)->stats().full_index_scans == 1);
}

TEST_CASE("durability modes: none writes on commit, sync fdatasyncs each commit, batch groups syncs") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  faulty_fs f(posix_fs());
  SECTION("none") {
    auto t = make(f, clk, dir.file("n.jsonl"), durability::none);
    int before = f.count(fs_op::fdatasync);
    REQUIRE(t->append_message(user_message("a", 1)).ok());
    REQUIRE(t->commit().ok());
    CHECK(f.count(fs_op::fdatasync) == before);
    CHECK(t->durable_seq() == 1);
  }
  SECTION("sync") {
    auto t = make(f, clk, dir.file("s.jsonl"), durability::sync);
    int before = f.count(fs_op::fdatasync);
    for (int i = 0; i < 3; ++i) {
      REQUIRE(t->append_message(user_message("a", 1)).ok());
      REQUIRE(t->commit().ok());
    }
    CHECK(f.count(fs_op::fdatasync) - before == 3);
    CHECK(t->durable_seq() == 3);
  }
  SECTION("batch") {
    auto t = make(f, clk, dir.file("b.jsonl"), durability::batch);
    int before = f.count(fs_op::fdatasync);
    for (int i = 0; i < 100; ++i) {
      REQUIRE(t->append_message(user_message("a", 1)).ok());
      REQUIRE(t->commit().ok());
    }
    CHECK(t->durable_seq() == 0);
    CHECK_FALSE(t->sync_due());
    clk.advance(t->options().batch_window_ms);
    CHECK(t->sync_due());
    REQUIRE(t->sync().ok());
    CHECK(f.count(fs_op::fdatasync) - before == 1);
    CHECK(t->durable_seq() == 100);
  }
  SECTION("batch: a new file's header is synced before its name, even with nothing appended") {
    auto t = make(f, clk, dir.file("h.jsonl"), durability::batch);
    int before = f.count(fs_op::fdatasync);
    REQUIRE(t->dir_unsynced());
    REQUIRE(t->sync().ok());
    CHECK(f.count(fs_op::fdatasync) - before == 1);
    CHECK_FALSE(t->dir_unsynced());
  }
}

TEST_CASE("ENOSPC or EIO during a write rolls the append back and leaves the file loadable") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  faulty_fs f(posix_fs());
  const auto path = dir.file("f.jsonl");
  auto t = make(f, clk, path, durability::sync);
  auto kept = t->append_message(user_message("kept", 1));
  REQUIRE(t->commit().ok());
  const std::string before = testing::read_text(path);
  SECTION("no space: a short write then ENOSPC") { f.space_left(20); }
  SECTION("EIO on the write") { f.fail_nth(fs_op::write, 1, EIO); }
  auto lost = t->append_message(user_message(std::string(200, 'z'), 2));
  REQUIRE(lost.ok());
  auto st = t->commit();
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains(path));
  CHECK(testing::read_text(path) == before);
  CHECK(*t->leaf_id() == *kept);
  CHECK(t->appended_seq() == 1);
  f.clear();
  auto again = t->append_message(user_message("after", 3));
  REQUIRE(again.ok());
  REQUIRE(t->commit().ok());
  auto ctx = t->context();
  REQUIRE(ctx.ok());
  CHECK(texts(*ctx) == std::vector<std::string>{"kept", "after"});
}

TEST_CASE("an oversized entry is refused with the limit named - nothing is written") {
  testing::temp_dir dir;
  manual_clock clk(1);
  transcript_options o;
  o.max_line_bytes = 1000;
  auto t = transcript_file::create(posix_fs(), clk, dir.file("l.jsonl"), header("l"), o);
  REQUIRE(t.ok());
  auto r = (*t)->append_message(user_message(std::string(2000, 'q'), 1));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::limit_exceeded);
  CHECK_THAT(r.error().message(), Catch::Contains("limit of 1000 bytes"));
  CHECK((*t)->appended_seq() == 0);
}

TEST_CASE("invalid UTF-8 is replaced, never written raw") {
  testing::temp_dir dir;
  manual_clock clk(1);
  auto t = make(posix_fs(), clk, dir.file("u.jsonl"), durability::none);
  REQUIRE(t->append_message(user_message("bad \xff\xfe end", 1)).ok());
  REQUIRE(t->flush().ok());
  CHECK(t->stats().invalid_utf8_replaced == 2);
  auto lines = testing::split_lines(testing::read_text(dir.file("u.jsonl")));
  auto parsed = json::parse_object(lines[1]);
  REQUIRE(parsed.ok());
  CHECK(parsed->at("message").as_object().at("content").as_string() == "bad \xef\xbf\xbd\xef\xbf\xbd end");
}

TEST_CASE("a torn final line: the reader ignores it, the writer refuses until it is repaired") {
  testing::temp_dir dir;
  manual_clock clk(1);
  const auto path = dir.file("t.jsonl");
  {
    auto t = make(posix_fs(), clk, path, durability::none);
    REQUIRE(t->append_message(user_message("whole", 1)).ok());
  }
  testing::write_text(path, testing::read_text(path) + R"({"type":"message","id":"abc)");
  auto rd = transcript_reader::open(posix_fs(), path);
  REQUIRE(rd.ok());
  CHECK((*rd)->stats().torn_tail_bytes == 27);
  auto ctx = build_context(**rd);
  REQUIRE(ctx.ok());
  CHECK(ctx->messages.size() == 1);
  auto w = transcript_file::open(posix_fs(), clk, path);
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().code() == errc::corrupt);
  CHECK_THAT(w.error().message(), Catch::Contains("torn line of 27 bytes"));
}

TEST_CASE("a file without a session header is refused with a clear error") {
  testing::temp_dir dir;
  testing::write_text(dir.file("h.jsonl"), R"({"type":"message","id":"a"})" "\n");
  auto rd = transcript_reader::open(posix_fs(), dir.file("h.jsonl"));
  REQUIRE_FALSE(rd.ok());
  CHECK(rd.error().code() == errc::corrupt);
  CHECK_THAT(rd.error().message(), Catch::Contains("not a session header"));
}

TEST_CASE("opening a legacy file for writing migrates it to version 3 atomically") {
  testing::temp_dir dir;
  manual_clock clk(1);
  const auto path = dir.file("v2.jsonl");
  testing::write_text(
      path,
      R"({"type":"session","version":2,"id":"v","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"})" "\n"
      R"({"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"hookMessage","content":"h","timestamp":1}})" "\n");
  auto t = transcript_file::open(posix_fs(), clk, path);
  REQUIRE(t.ok());
  auto lines = testing::split_lines(testing::read_text(path));
  CHECK(json::parse_object(lines[0])->at("version").as_int64() == 3);
  CHECK(lines[1].find("\"role\":\"custom\"") != std::string::npos);
  REQUIRE((*t)->append_message(user_message("next", 2)).ok());
  auto ctx = (*t)->context();
  REQUIRE(ctx.ok());
  CHECK(ctx->messages.size() == 2);
}

TEST_CASE("tail reads at most the bytes asked for and returns the last entries in order") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("tail.jsonl");
  {
    auto t = make(posix_fs(), clk, path, durability::none);
    for (int i = 0; i < 500; ++i) REQUIRE(t->append_message(user_message("m" + std::to_string(i), i)).ok());
  }
  auto rd = transcript_reader::open(posix_fs(), path);
  REQUIRE(rd.ok());
  auto last = (*rd)->tail(3, 1u << 20);
  REQUIRE(last.ok());
  REQUIRE(last->size() == 3);
  CHECK(last->back().at("message").as_object().at("content").as_string() == "m499");
  CHECK(last->front().at("message").as_object().at("content").as_string() == "m497");
  const auto before_small = (*rd)->stats().bytes_read;
  auto small = (*rd)->tail(100, 1000);  // ~7 lines fit in 1000 bytes; the cut first line is skipped
  REQUIRE(small.ok());
  CHECK(small->size() < 10);
  CHECK(small->size() >= 5);
  CHECK((*rd)->stats().bytes_read - before_small <= 1000);  // the byte bound holds for this call alone
  CHECK(small->back().at("message").as_object().at("content").as_string() == "m499");
}

TEST_CASE("take_written hands out the bytes the file holds past an offset, as written, once") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  faulty_fs f(posix_fs());
  const auto path = dir.file("w.jsonl");
  auto t = make(f, clk, path, durability::batch);
  auto file_from = [&](std::uint64_t from) { return testing::read_text(path).substr(static_cast<std::size_t>(from)); };
  // The created file's header and two flushes: all of it from 0.
  REQUIRE(t->append_message(user_message("one", 1)).ok());
  REQUIRE(t->flush().ok());
  REQUIRE(t->append_message(assistant("two")).ok());
  REQUIRE(t->flush().ok());
  auto all = t->take_written(0);
  REQUIRE(all.has_value());
  CHECK(*all == file_from(0));
  CHECK_FALSE(t->take_written(0).has_value());  // taken: the caller reads the file
  // After a take, a flush starts again; a take from inside it gets the rest.
  const std::uint64_t before = testing::read_text(path).size();
  REQUIRE(t->append_message(user_message("three", 1)).ok());
  REQUIRE(t->flush().ok());
  auto tail = t->take_written(before + 5);
  REQUIRE(tail.has_value());
  CHECK(*tail == file_from(before + 5));
  // A range that starts before what is kept is not handed out (and the take drops it).
  REQUIRE(t->append_message(user_message("four", 1)).ok());
  REQUIRE(t->flush().ok());
  CHECK_FALSE(t->take_written(before).has_value());
  // A failed write (ENOSPC) is rolled back: what was kept before it still matches the file.
  const std::uint64_t five_at = testing::read_text(path).size();
  REQUIRE(t->append_message(user_message("five", 1)).ok());
  REQUIRE(t->flush().ok());
  const std::uint64_t good_end = testing::read_text(path).size();
  f.fail_nth(fs_op::write, 1, ENOSPC);
  REQUIRE(t->append_message(user_message("six", 1)).ok());
  CHECK_FALSE(t->flush().ok());
  CHECK(testing::read_text(path).size() == good_end);
  auto kept = t->take_written(five_at + 1);
  REQUIRE(kept.has_value());
  CHECK(*kept == file_from(five_at + 1));
}

TEST_CASE("take_written keeps nothing past its bound or outside durability batch") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  SECTION("none") {
    auto t = make(posix_fs(), clk, dir.file("n.jsonl"), durability::none);
    REQUIRE(t->append_message(user_message("a", 1)).ok());
    REQUIRE(t->flush().ok());
    CHECK_FALSE(t->take_written(0).has_value());
  }
  SECTION("past the bound: nothing before the flush that crossed it is kept") {
    const auto path = dir.file("big.jsonl");
    auto t = make(posix_fs(), clk, path, durability::batch);
    const std::string chunk(200'000, 'x');
    for (std::size_t written = 0; written <= transcript_file::kMaxWrittenBytes + chunk.size();) {
      REQUIRE(t->append_message(user_message(chunk, 1)).ok());
      REQUIRE(t->flush().ok());
      written = testing::read_text(path).size();
    }
    CHECK_FALSE(t->take_written(0).has_value());
    // After the drop, the next flush starts what is kept again.
    const std::uint64_t end = testing::read_text(path).size();
    REQUIRE(t->append_message(user_message("small", 1)).ok());
    REQUIRE(t->flush().ok());
    auto kept = t->take_written(end);
    REQUIRE(kept.has_value());
    CHECK(*kept == testing::read_text(path).substr(end));
  }
}
