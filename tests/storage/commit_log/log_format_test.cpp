// The commit log's format: records of every size round-trip through log_writer and
// log_reader (fragments across blocks, block trailers); a cut at every byte and a damaged byte
// anywhere end the log at the last whole record before it, never returning a damaged one; a
// failed write leaves no torn record behind; the record codec refuses short records.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <random>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/commit_log/log_format.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/memory_fs.hpp"
#include "tests/storage/commit_log/log_test_file.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using namespace sessionrt::storage::commit_log;
using namespace sessionrt::storage::commit_log::testing;

namespace {

// Records whose sizes exercise every fragment type and a trailer.
std::vector<std::string> sample_records() {
  std::vector<std::string> recs = {"", "x", payload(1000, 1), payload(kBlockSize - 3 - (3 * kHeaderSize + 1001) - kHeaderSize, 2),
                                   payload(100, 3), payload(kBlockSize * 2 + 17, 4), payload(5, 5)};
  return recs;
}

}  // namespace

TEST_CASE("commit log records of every size round-trip, across blocks and trailers") {
  log_file lf{O_APPEND};
  log_writer w(lf.mem, lf.fd, lf.path, 0);
  const auto recs = sample_records();
  for (const auto& r : recs) w.add_record(r);
  CHECK(w.written() == 0);
  REQUIRE(w.write().ok());
  CHECK(w.written() == lf.bytes().size());
  CHECK(w.buffered() == 0);
  log_stop stop;
  auto back = lf.read_all(&stop);
  CHECK(back == recs);
  CHECK(stop.how == log_end::end_of_file);
  CHECK(stop.offset == w.written());
  CHECK(lf.bytes().size() > 2 * kBlockSize);
  // The fourth record ends 3 bytes before its block's end: those are the trailer's zeros.
  CHECK(lf.bytes().substr(kBlockSize - 3, 3) == std::string(3, '\0'));
}

TEST_CASE("commit log writer resumes a file at its length, block position included") {
  log_file lf{O_APPEND};
  {
    log_writer w(lf.mem, lf.fd, lf.path, 0);
    w.add_record(payload(kBlockSize - kHeaderSize - 3, 9));  // leaves 3 bytes: a trailer next
    REQUIRE(w.write().ok());
  }
  log_writer again(lf.mem, lf.fd, lf.path, lf.bytes().size());
  again.add_record("after");
  REQUIRE(again.write().ok());
  auto back = lf.read_all();
  REQUIRE(back.size() == 2);
  CHECK(back[1] == "after");
  CHECK(lf.bytes().size() == kBlockSize + kHeaderSize + 5);
}

TEST_CASE("commit log cut at every byte keeps exactly the records before the cut") {
  log_file lf{O_APPEND};
  // The fourth record leaves 3 bytes of its block: a trailer, then the fifth in the next block.
  std::vector<std::string> recs = {"", "first", payload(300, 1), payload(kBlockSize - 3 - (3 * kHeaderSize + 305) - kHeaderSize, 2),
                                   payload(900, 3), payload(40, 4)};
  log_writer w(lf.mem, lf.fd, lf.path, 0);
  std::vector<std::uint64_t> ends;
  for (const auto& r : recs) {
    w.add_record(r);
    ends.push_back(w.length());
  }
  REQUIRE(w.write().ok());
  const std::string full = lf.bytes();
  for (std::size_t cut = 0; cut <= full.size(); ++cut) {
    lf.set(full.substr(0, cut));
    log_stop stop;
    auto back = lf.read_all(&stop);
    std::size_t whole = 0;
    while (whole < ends.size() && ends[whole] <= cut) ++whole;
    INFO("cut at " << cut);
    REQUIRE(back.size() == whole);
    for (std::size_t i = 0; i < whole; ++i) REQUIRE(back[i] == recs[i]);
    const bool at_end = whole > 0 ? ends[whole - 1] == cut : cut == 0;
    // A cut at the end of the block trailer after the last whole record is a clean end too
    // (a cut inside the trailer is torn: trailers are written only with the record after them).
    const bool after_trailer = whole > 0 && kBlockSize - ends[whole - 1] % kBlockSize < kHeaderSize &&
                               cut == (ends[whole - 1] / kBlockSize + 1) * kBlockSize;
    if (at_end || after_trailer)
      REQUIRE(stop.how == log_end::end_of_file);
    else
      REQUIRE(stop.how == log_end::torn_tail);
    REQUIRE(stop.offset == (whole ? ends[whole - 1] : 0));
  }
}

TEST_CASE("commit log with a damaged byte anywhere returns only the whole records before it") {
  log_file lf{O_APPEND};
  std::vector<std::string> recs = {"head", payload(200, 1), payload(kBlockSize, 2), payload(60, 3), payload(500, 4)};
  log_writer w(lf.mem, lf.fd, lf.path, 0);
  std::vector<std::uint64_t> starts, ends;
  for (const auto& r : recs) {
    starts.push_back(w.length());
    w.add_record(r);
    ends.push_back(w.length());
  }
  REQUIRE(w.write().ok());
  const std::string full = lf.bytes();
  std::size_t checked = 0, clean_ends = 0;
  for (std::size_t pos = 0; pos < full.size(); ++pos) {
    ++checked;
    std::string bad = full;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x5a);
    lf.set(bad);
    log_stop stop;
    auto back = lf.read_all(&stop);
    INFO("damaged byte " << pos);
    // The record holding the byte (if any: trailer bytes belong to none) and all after it are gone.
    std::size_t holder = recs.size();
    for (std::size_t i = 0; i < recs.size(); ++i)
      if (pos >= starts[i] && pos < ends[i]) holder = i;
    if (holder == recs.size()) {
      REQUIRE(back == recs);  // a trailer byte: not read
      continue;
    }
    REQUIRE(back.size() <= holder);
    for (std::size_t i = 0; i < back.size(); ++i) REQUIRE(back[i] == recs[i]);
    // Only a damaged record whose own earlier fragments were whole can lose less: never here,
    // since each fragment is checked; so exactly the records before the holder come back.
    REQUIRE(back.size() == holder);
    REQUIRE(stop.offset == (holder ? ends[holder - 1] : 0));
    // A damaged type or log field of a record's first fragment reads as the end of this log's
    // bytes (version 3 cannot tell it from a previous use's); any other damage is reported.
    if (stop.how == log_end::end_of_file) {
      ++clean_ends;
      const std::uint64_t in_header = pos - starts[holder];
      REQUIRE(in_header >= 6);
      REQUIRE(in_header < kHeaderSize);
    }
  }
  CHECK(checked == full.size());
  CHECK(clean_ends <= 5 * recs.size());
}

TEST_CASE("commit log tail of zeros (preallocated space) ends the log after its last whole record") {
  log_file lf{O_APPEND};
  log_writer w(lf.mem, lf.fd, lf.path, 0);
  w.add_record("one");
  w.add_record(payload(kBlockSize, 7));  // a record over two blocks
  REQUIRE(w.write().ok());
  const std::string full = lf.bytes();
  lf.set(full + std::string(5000, '\0'));
  log_stop stop;
  auto back = lf.read_all(&stop);
  CHECK(back == std::vector<std::string>{"one", payload(kBlockSize, 7)});
  CHECK(stop.how == log_end::end_of_file);
  CHECK(stop.offset == full.size());
  // The second record's last fragment zeroed where it lies: the first survives, the second is torn.
  std::string zeroed = full;
  for (std::size_t i = kBlockSize; i < zeroed.size(); ++i) zeroed[i] = '\0';
  lf.set(zeroed + std::string(5000, '\0'));
  back = lf.read_all(&stop);
  CHECK(back == std::vector<std::string>{"one"});
  CHECK(stop.how == log_end::torn_tail);
  CHECK(stop.offset == kHeaderSize + 3);
}

TEST_CASE("commit log version 2 fragments: a tail of zeros (written size, lost data) is a torn tail") {
  log_file lf{O_APPEND};
  log_writer w(lf.mem, lf.fd, lf.path, 0);
  w.write_legacy_fragments();
  w.add_record("one");
  w.add_record("two");
  REQUIRE(w.write().ok());
  const std::string full = lf.bytes();
  lf.set(full + std::string(5000, '\0'));
  log_stop stop;
  auto back = lf.read_all(&stop);
  CHECK(back == std::vector<std::string>{"one", "two"});
  CHECK(stop.how == log_end::torn_tail);
  CHECK(stop.offset == full.size());
  // The second record zeroed out where it lies: the first survives.
  CHECK(full.size() == 2 * (kLegacyHeaderSize + 3));
  std::string zeroed = full;
  for (std::size_t i = kLegacyHeaderSize + 3; i < zeroed.size(); ++i) zeroed[i] = '\0';
  lf.set(zeroed);
  back = lf.read_all(&stop);
  CHECK(back == std::vector<std::string>{"one"});
  CHECK(stop.how == log_end::torn_tail);
}

TEST_CASE("commit log write that fails leaves the file at its last whole record") {
  manual_clock clk{1000};
  memory_fs mem{clk};
  faulty_fs faulty{mem};
  auto fd = faulty.open("/log", O_RDWR | O_CREAT | O_APPEND, 0600);
  REQUIRE(fd.ok());
  log_writer w(faulty, *fd, "/log", 0);
  w.add_record("kept");
  REQUIRE(w.write().ok());
  const auto kept = w.written();
  faulty.space_left(100);  // the next write is cut short, then ENOSPC
  w.add_record(payload(5000, 1));
  status st = w.write();
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == errc::no_space);
  CHECK(st.message().find("/log") != std::string::npos);
  CHECK(w.written() == kept);
  CHECK(w.buffered() == 0);
  CHECK_FALSE(w.broken());
  CHECK(mem.fstat(*fd)->size == kept);
  faulty.clear();
  w.add_record("after");
  REQUIRE(w.write().ok());
  log_reader r(mem, *fd, "/log");
  std::string rec;
  std::vector<std::string> back;
  while (r.next(rec)) back.push_back(rec);
  CHECK(back == std::vector<std::string>{"kept", "after"});
  CHECK(r.stop().how == log_end::end_of_file);

  // When the cut fails too, the writer refuses further writes.
  faulty.fail_nth(fs_op::write, 1, EIO);
  faulty.fail_nth(fs_op::ftruncate, 1, EIO);
  w.add_record("lost");
  CHECK_FALSE(w.write().ok());
  CHECK(w.broken());
  w.add_record("refused");
  st = w.write();
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("new log") != std::string::npos);
}

TEST_CASE("commit log records encode and decode, and short ones are refused") {
  log_header h;
  h.log_number = 42;
  h.created_ms = 1234567;
  h.state_id = "3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44";
  std::string bytes;
  encode(bytes, h);
  auto back = decode(bytes);
  REQUIRE(back.ok());
  const auto& hb = std::get<log_header>(*back);
  CHECK(hb.format_version == kFormatVersion);
  CHECK(hb.log_number == 42);
  CHECK(hb.created_ms == 1234567);
  CHECK(hb.state_id == h.state_id);
  for (std::size_t n = 1; n < bytes.size(); ++n) {
    auto cut = decode(std::string_view(bytes).substr(0, n));
    REQUIRE_FALSE(cut.ok());
    CHECK(cut.error().code() == errc::corrupt);
  }
  CHECK_FALSE(decode(bytes + "x").ok());

  transcript_append a;
  a.flags = kNewFile;
  a.inode = 0x0102030405060708ull;
  a.offset = 77;
  a.path = "agents/main/sessions/s.jsonl";
  a.bytes = std::string("line\n\0two\n", 10);
  bytes.clear();
  encode(bytes, a);
  auto ab = decode(bytes);
  REQUIRE(ab.ok());
  const auto& got = std::get<transcript_append>(*ab);
  CHECK(got.flags == kNewFile);
  CHECK(got.inode == a.inode);
  CHECK(got.offset == 77);
  CHECK(got.path == a.path);
  CHECK(got.bytes == a.bytes);
  CHECK_FALSE(decode(std::string_view(bytes).substr(0, 10)).ok());

  row_change rc;
  rc.origin = kFromStore;
  rc.order = (7ull << 32) + 5;
  rc.store = "agents/main/sessions/sessions.json";
  rc.key = "agent:main:main";
  rc.text = "\n  \"agent:main:main\": {\n    \"sessionId\": \"s\"\n  }";
  bytes.clear();
  encode(bytes, rc);
  auto rb = decode(bytes);
  REQUIRE(rb.ok());
  const auto& rg = std::get<row_change>(*rb);
  CHECK(rg.origin == kFromStore);
  CHECK(rg.order == rc.order);
  CHECK(rg.store == rc.store);
  CHECK(rg.key == rc.key);
  CHECK(rg.text == rc.text);
  for (std::size_t n = 1; n < 1 + 1 + 8 + 2 + rc.store.size() + 4 + rc.key.size(); ++n)
    CHECK(decode(std::string_view(bytes).substr(0, n)).error().code() == errc::corrupt);
  rc.text.clear();  // a removal
  bytes.clear();
  encode(bytes, rc);
  CHECK(std::get<row_change>(*decode(bytes)).text.empty());
  bytes[1] = 9;  // no such origin
  CHECK(decode(bytes).error().code() == errc::corrupt);

  store_written sw;
  sw.order = 99;
  sw.store = rc.store;
  bytes.clear();
  encode(bytes, sw);
  auto wb = decode(bytes);
  REQUIRE(wb.ok());
  CHECK(std::get<store_written>(*wb).order == 99);
  CHECK(std::get<store_written>(*wb).store == rc.store);
  CHECK_FALSE(decode(bytes + "x").ok());
  CHECK_FALSE(decode(std::string_view(bytes).substr(0, bytes.size() - 1)).ok());

  CHECK(decode("").error().code() == errc::corrupt);
  CHECK(decode(std::string(1, '\x03')).error().code() == errc::corrupt);  // a row change with no fields
  CHECK(decode(std::string(1, '\x09')).error().code() == errc::corrupt);

  // A newer version's header decodes as far as its version, so the caller can name it.
  std::string newer;
  newer.push_back(1);
  newer += std::string("\x07\x00\x00\x00", 4);
  auto nb = decode(newer);
  REQUIRE(nb.ok());
  CHECK(std::get<log_header>(*nb).format_version == 7);
}
