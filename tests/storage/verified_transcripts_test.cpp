// verified_transcripts: the stamps of transcripts this runtime closed clean (the open that
// uses them: transcript_open_test.cpp).
#include <catch2/catch.hpp>

#include "storage/verified_transcripts.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {
file_info stamp(std::uint64_t ino, std::uint64_t size, std::int64_t mtime_ns) {
  file_info i;
  i.dev = 1;
  i.ino = ino;
  i.size = size;
  i.mtime_ns = i.ctime_ns = mtime_ns;
  return i;
}
}  // namespace

TEST_CASE("verified_transcripts: an entry answers once, and only for the very stamp noted") {
  verified_transcripts v;
  v.note("/s/a.jsonl", stamp(7, 100, 5));
  CHECK(v.size() == 1);
  CHECK(v.take("/s/a.jsonl", stamp(7, 100, 5)));
  CHECK_FALSE(v.take("/s/a.jsonl", stamp(7, 100, 5)));  // taken: the caller writes the file now
  CHECK(v.size() == 0);
  v.note("/s/a.jsonl", stamp(7, 100, 5));
  CHECK_FALSE(v.take("/s/a.jsonl", stamp(7, 101, 5)));  // grew
  v.note("/s/a.jsonl", stamp(7, 100, 5));
  CHECK_FALSE(v.take("/s/a.jsonl", stamp(8, 100, 5)));  // replaced
  v.note("/s/a.jsonl", stamp(7, 100, 5));
  auto touched = stamp(7, 100, 5);
  touched.ctime_ns = 6;
  CHECK_FALSE(v.take("/s/a.jsonl", touched));  // chmod, or a write that kept size and mtime
  v.note("/s/a.jsonl", stamp(7, 100, 5));
  CHECK_FALSE(v.take("/s/b.jsonl", stamp(7, 100, 5)));  // another name
}

TEST_CASE("verified_transcripts: memory is bounded by its capacity, the oldest half dropped first") {
  verified_transcripts v(4);
  for (int i = 0; i < 5; ++i) v.note("/s/" + std::to_string(i), stamp(i, 1, 1));
  CHECK(v.size() <= 4);
  CHECK_FALSE(v.take("/s/0", stamp(0, 1, 1)));  // dropped with the older generation
  CHECK(v.take("/s/4", stamp(4, 1, 1)));
  CHECK(v.take("/s/2", stamp(2, 1, 1)));  // the older generation is still asked
  v.note("/s/9", stamp(9, 1, 1));
  v.note("/s/9", stamp(9, 2, 2));  // noted again: the newer stamp counts
  CHECK_FALSE(v.take("/s/9", stamp(9, 1, 1)));
}
