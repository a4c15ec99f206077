// The commit log over preallocated and recycled space (log format version 3): the writer
// allocates its file ahead and writes at its length; a torn tail at every position over zeros
// or over a previous use's records ends the log at its last whole record and never returns an
// old record; a dropped log is kept as <n>.free and written again as a later log whose replay
// applies only its own records; version-2 logs still replay.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <random>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_format.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/commit_log/log_replay.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "tests/storage/commit_log/log_test_file.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using namespace sessionrt::storage::commit_log;
using namespace sessionrt::storage::commit_log::testing;

namespace {

// Records of every fragment shape: small ones, one over three blocks, one over two.
std::vector<std::string> records(int seed) {
  return {"head", payload(700, seed), payload(2 * kBlockSize + 100, seed + 1), payload(40, seed + 2),
          payload(kBlockSize - 50, seed + 3),
          payload(90, seed + 4)};
}

// The records' ends when written from byte 0 by a writer of number `n`, into `lf`.
std::vector<std::uint64_t> write_records(log_file& lf, std::uint64_t n, const std::vector<std::string>& recs,
                                         std::uint64_t chunk) {
  log_writer w(lf.mem, lf.fd, lf.path, 0, n);
  w.preallocate(chunk, lf.mem.fstat(lf.fd)->size);
  std::vector<std::uint64_t> ends;
  for (const auto& r : recs) {
    w.add_record(r);
    ends.push_back(w.length());
  }
  REQUIRE(w.write().ok());
  return ends;
}

// Every cut of the last write, from byte 0 to its end (what lies past a cut is `rest`): exactly
// the records whose bytes are whole come back, and the log's valid length is where the last of
// them ends. The file goes from `rest` to `written` a byte per cut (one byte written each time,
// not the file: at a MiB per cut, copying it dominated the test and page faults made it slow).
void check_every_cut(log_file& lf, std::uint64_t number, const std::string& written, const std::string& rest,
                     const std::vector<std::string>& recs, const std::vector<std::uint64_t>& ends) {
  REQUIRE(rest.size() >= written.size());
  lf.set(rest);
  for (std::size_t cut = 0; cut <= written.size(); ++cut) {
    if (cut > 0) REQUIRE(pwrite_all(lf.mem, lf.fd, written.data() + cut - 1, 1, cut - 1).ok());
    log_stop stop;
    auto back = lf.read_all(&stop, nullptr, number);
    // The old bytes past the cut may equal the new ones for a while (the same record at the
    // same place): such a record is whole.
    std::size_t same = cut;
    while (same < written.size() && rest[same] == written[same]) ++same;
    std::size_t whole = 0;
    while (whole < ends.size() && ends[whole] <= same) ++whole;
    INFO("cut at " << cut);
    REQUIRE(back.size() == whole);
    for (std::size_t i = 0; i < whole; ++i) REQUIRE(back[i] == recs[i]);
    REQUIRE(stop.offset == (whole ? ends[whole - 1] : 0));
    REQUIRE(stop.how != log_end::io_error);
    if (cut == written.size()) REQUIRE(stop.how == log_end::end_of_file);
  }
  REQUIRE(lf.bytes() == written + rest.substr(written.size()));  // the sweep wrote what it meant to
}

}  // namespace

TEST_CASE("commit log writer preallocates in chunks and writes at its length, the size unchanged by appends") {
  log_file lf;
  log_writer w(lf.mem, lf.fd, lf.path, 0, 7);
  w.preallocate(1 << 16, 0);
  w.add_record("one");
  REQUIRE(w.write().ok());
  CHECK(lf.mem.fstat(lf.fd)->size == (1u << 16));  // one chunk allocated
  CHECK(w.allocated() == (1u << 16));
  w.add_record(payload(1000, 1));
  REQUIRE(w.write().ok());
  CHECK(lf.mem.fstat(lf.fd)->size == (1u << 16));  // the second write fell inside it
  w.add_record(payload(70000, 2));
  REQUIRE(w.write().ok());
  CHECK(lf.mem.fstat(lf.fd)->size == 2 * (1u << 16));  // ... the third needed another
  log_stop stop;
  auto back = lf.read_all(&stop, nullptr, 7);
  CHECK(back == std::vector<std::string>{"one", payload(1000, 1), payload(70000, 2)});
  CHECK(stop.how == log_end::end_of_file);  // the zeros past it are not a torn tail
  CHECK(stop.offset == w.written());
}

TEST_CASE("commit log torn at every position over preallocated zeros keeps exactly the whole records before it") {
  log_file lf;
  const auto recs = records(1);
  const auto ends = write_records(lf, 3, recs, 1 << 20);
  const std::string all = lf.bytes();
  REQUIRE(all.size() == (1u << 20));
  const std::string written = all.substr(0, ends.back());
  const std::string zeros(all.size(), '\0');
  REQUIRE(all == written + zeros.substr(written.size()));
  check_every_cut(lf, 3, written, zeros, recs, ends);
}

TEST_CASE("commit log torn at every position over a recycled file never returns the previous use's records") {
  log_file lf;
  // The previous use: log 4, longer than what log 9 writes over it.
  auto old_recs = records(50);
  for (int i = 0; i < 6; ++i) old_recs.push_back(payload(300 + 50 * i, 60 + i));
  write_records(lf, 4, old_recs, 1 << 20);
  const std::string old = lf.bytes();
  {
    log_stop stop;
    REQUIRE(lf.read_all(&stop, nullptr, 4) == old_recs);  // the old log reads whole under its own number
  }
  const auto recs = records(1);
  const auto ends = write_records(lf, 9, recs, 1 << 20);
  const std::string written = lf.bytes().substr(0, ends.back());
  // Whole, the new log ends cleanly where the old bytes begin.
  log_stop stop;
  CHECK(lf.read_all(&stop, nullptr, 9) == recs);
  CHECK(stop.how == log_end::end_of_file);
  CHECK(stop.offset == ends.back());
  // Without the number, the reader takes the first fragment's: the same.
  {
    log_reader r(lf.mem, lf.fd, lf.path);
    std::string rec;
    std::size_t n = 0;
    while (r.next(rec)) ++n;
    CHECK(n == recs.size());
  }
  check_every_cut(lf, 9, written, old, recs, ends);
  // A new log of one record over the old one, cut nowhere: the old records after it stay unread,
  // even where an old fragment begins exactly where the new log ends.
  lf.set(old);
  log_writer w(lf.mem, lf.fd, lf.path, 0, 9);
  w.add_record("head");  // the same size as the old log's first record: the old second follows
  REQUIRE(w.write().ok());
  CHECK(lf.read_all(&stop, nullptr, 9) == std::vector<std::string>{"head"});
  CHECK(stop.how == log_end::end_of_file);
}

TEST_CASE("commit log version 2 fragments still read, and a version-3 reader tells them apart") {
  log_file lf;
  log_writer w(lf.mem, lf.fd, lf.path, 0);
  w.write_legacy_fragments();
  const auto recs = records(5);
  for (const auto& r : recs) w.add_record(r);
  REQUIRE(w.write().ok());
  log_stop stop;
  CHECK(lf.read_all(&stop, nullptr, 12) == recs);  // legacy fragments carry no number to check
  CHECK(stop.how == log_end::end_of_file);
  CHECK(static_cast<std::uint8_t>(lf.bytes()[6]) == kFullType);  // the legacy type, a 7-byte header
}

namespace {

const std::string kState = "/state";
const std::string kRel = "agents/main/sessions/s1.jsonl";
const std::string kFile = kState + "/" + kRel;

struct state_dir {
  manual_clock clk{1000};
  memory_fs f{clk};
  std::string id;
  std::string dir = log_dir(kState);
  state_dir() {
    REQUIRE(ensure_dir(f, kState + "/agents/main/sessions").ok());
    id = *state_identity(f, kState);
    REQUIRE(ensure_dir(f, dir).ok());
  }
  // Log n holding the given appends of kFile (inode `ino`), written through a preallocating writer.
  new_log log_with(std::uint64_t n, std::uint64_t ino, const std::vector<std::pair<std::uint64_t, std::string>>& appends) {
    auto made = create_log(f, clk, dir, n, id);
    REQUIRE(made.ok());
    log_writer w(f, made->fd, made->path, made->length, made->number);
    w.preallocate(1 << 16, made->allocated);
    for (const auto& [offset, bytes] : appends) {
      std::string p;
      encode_transcript_append(p, 0, ino, offset, kRel, bytes);
      w.add_record(p);
    }
    REQUIRE(w.write().ok());
    REQUIRE(f.fdatasync(made->fd).ok());
    REQUIRE(f.close(made->fd).ok());
    return *made;
  }
  std::vector<std::string> names() { return *f.list_dir(dir); }
};

}  // namespace

TEST_CASE("commit log dropped by a checkpoint is recycled as a later log whose replay applies only its own records") {
  state_dir sd;
  REQUIRE(replace_file_atomic(sd.f, kFile, "a\nb\nc\nd\n").ok());
  const auto ino = sd.f.stat(kFile)->ino;
  // Log 1 says the file holds four lines; the checkpoint drops it into the recycle pool.
  auto first = sd.log_with(1, ino, {{0, "a\n"}, {2, "b\n"}, {4, "c\n"}, {6, "d\n"}});
  CHECK_FALSE(first.recycled);
  REQUIRE(recycle_logs(sd.f, sd.dir, {1}, 2).ok());
  CHECK(*list_logs(sd.f, sd.dir) == std::vector<std::uint64_t>{});
  CHECK(sd.names() == std::vector<std::string>{"00000000000000000001.free"});
  // The file is rewritten to something else meanwhile (say a repair cut it to one line).
  REQUIRE(replace_file_atomic(sd.f, kFile, "a\n").ok());
  const auto ino2 = sd.f.stat(kFile)->ino;
  // Log 2 takes the .free file: its header over the old bytes, one record of its own.
  auto second = sd.log_with(2, ino2, {{2, "x\n"}});
  CHECK(second.recycled);
  CHECK(second.allocated == (1u << 16));  // the old file's size: nothing to allocate
  CHECK(sd.names() == std::vector<std::string>{"00000000000000000002.log"});
  auto rep = replay_logs(sd.f, kState, sd.id, {second.path});
  REQUIRE(rep.ok());
  CHECK(rep->records == 1);  // log 1's records, still in the file past log 2's, are not read
  CHECK(rep->rewritten == 1);
  CHECK(rep->warnings.empty());
  CHECK(*read_file(sd.f, kFile, 1 << 20) == "a\nx\n");
}

TEST_CASE("commit log recycling keeps at most its pool and a header is refused under another log's name") {
  state_dir sd;
  REQUIRE(replace_file_atomic(sd.f, kFile, "a\n").ok());
  const auto ino = sd.f.stat(kFile)->ino;
  sd.log_with(1, ino, {{0, "a\n"}});
  sd.log_with(2, ino, {{0, "a\n"}});
  sd.log_with(3, ino, {{0, "a\n"}});
  REQUIRE(recycle_logs(sd.f, sd.dir, {1, 2, 3}, 2).ok());
  CHECK(sd.names().size() == 2);  // two kept as .free, the third removed
  CHECK(list_logs(sd.f, sd.dir)->empty());
  // Log 4 is written into the oldest; log 5 into the other; log 6 is a new file.
  CHECK(sd.log_with(4, ino, {}).recycled);
  CHECK(sd.log_with(5, ino, {}).recycled);
  CHECK_FALSE(sd.log_with(6, ino, {}).recycled);
  CHECK(*list_logs(sd.f, sd.dir) == std::vector<std::uint64_t>{4, 5, 6});
  // Log 4's file under log 7's name (moved by hand): its fragments are not log 7's, so nothing
  // is read (a start cut between a recycled file's rename and its header reads the same way).
  REQUIRE(sd.f.rename(log_path(sd.dir, 4), log_path(sd.dir, 7)).ok());
  auto rep = replay_logs(sd.f, kState, sd.id, {log_path(sd.dir, 7)});
  REQUIRE(rep.ok());
  CHECK(rep->records == 0);
  CHECK(log_number_of(log_path(sd.dir, 7)) == std::optional<std::uint64_t>(7));
  CHECK(log_number_of("/x/00000000000000000007.free") == std::nullopt);
}

TEST_CASE("commit log numbers are never used twice in a state dir, so a recycled file's old records stay old") {
  state_dir sd;
  REQUIRE(replace_file_atomic(sd.f, kFile, "").ok());
  const auto ino = sd.f.stat(kFile)->ino;
  // A run writes log 1 (long) and drops it at its clean stop: no .log is left, one .free.
  auto first = sd.log_with(1, ino, {{0, "a\n"}, {2, "b\n"}, {4, "c\n"}, {6, "d\n"}});
  REQUIRE(recycle_logs(sd.f, sd.dir, {1}, 2).ok());
  // The next start numbers its log above the .free file's: log 2, written into that file.
  auto rec = replay_state_dir(sd.f, kState);
  REQUIRE(rec.ok());
  CHECK(rec->logs.empty());
  CHECK(rec->next_number == 2);
  auto second = sd.log_with(rec->next_number, ino, {{0, "x\n"}});
  CHECK(second.recycled);
  // Its replay reads its one record, never log 1's (a number 1 again would have read them all).
  auto rep = replay_logs(sd.f, kState, sd.id, {second.path});
  REQUIRE(rep.ok());
  CHECK(rep->records == 1);
  CHECK(*read_file(sd.f, kFile, 1 << 20) == "x\n");
}
