// Opening a session's transcript: creation, and repair of what a crash mid-write leaves.
#include <catch2/catch.hpp>

#include "messages/json_reader.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/transcript_open.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {
header_fields header() {
  header_fields h;
  h.id = "s";
  h.timestamp_ms = 1796000000000;
  h.cwd = "/w";
  return h;
}
}  // namespace

TEST_CASE("a missing transcript is created - an existing healthy one is opened without a repair") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  auto a = open_or_create_transcript(posix_fs(), clk, dir.file("s.jsonl"), header(), {});
  REQUIRE(a.ok());
  CHECK(a->created);
  auto id = a->file->append_message(user_message("hi", 1));
  REQUIRE(id.ok());
  a->file.reset();
  auto b = open_or_create_transcript(posix_fs(), clk, dir.file("s.jsonl"), header(), {});
  REQUIRE(b.ok());
  CHECK_FALSE(b->created);
  CHECK_FALSE(b->repair.has_value());
  CHECK(b->file->leaf_id() == std::optional<std::string>(*id));
}

TEST_CASE("a crash in the middle of writing a line: the next open repairs the torn tail and keeps every synced entry") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("t.jsonl");
  std::vector<std::string> synced;
  for (std::size_t keep : {1u, 40u, 300u}) {
    faulty_fs f(posix_fs());
    transcript_options o;
    o.mode = durability::sync;
    auto t = open_or_create_transcript(f, clk, path, header(), o);
    REQUIRE(t.ok());
    for (int i = 0; i < 3; ++i) {
      auto id = t->file->append_message(user_message("entry " + std::to_string(i), i));
      REQUIRE(id.ok());
      REQUIRE(t->file->commit().ok());
      synced.push_back(*id);
    }
    f.crash_at_write(1, keep);  // the next write puts `keep` bytes on disk, then the process is dead
    REQUIRE(t->file->append_message(user_message(std::string(500, 'x'), 9)).ok());
    CHECK_FALSE(t->file->commit().ok());
    t->file.reset();
    auto re = open_or_create_transcript(posix_fs(), clk, path, header(), o);
    REQUIRE(re.ok());
    REQUIRE(re->repair.has_value());
    CHECK(re->repair->torn_tail_bytes == keep);
    REQUIRE(re->file->reader().index_all().ok());
    for (const auto& id : synced) CHECK(re->file->reader().index().find(id).has_value());
    re->file.reset();
    for (const auto& line : testing::split_lines(testing::read_text(path))) CHECK(json::parse_object(line).ok());
  }
  CHECK(synced.size() == 9);
}

TEST_CASE("a NUL-filled tail (power loss after the size grew) is dropped on open") {
  testing::temp_dir dir;
  manual_clock clk(1796000000000);
  const auto path = dir.file("z.jsonl");
  {
    auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
    REQUIRE(t.ok());
    REQUIRE(t->file->append_message(user_message("kept", 1)).ok());
  }
  testing::write_text(path, testing::read_text(path) + std::string(4096, '\0'));
  auto t = open_or_create_transcript(posix_fs(), clk, path, header(), {});
  REQUIRE(t.ok());
  REQUIRE(t->repair.has_value());
  CHECK(t->repair->changed());
  auto ctx = t->file->context();
  REQUIRE(ctx.ok());
  CHECK(ctx->messages.size() == 1);
}
