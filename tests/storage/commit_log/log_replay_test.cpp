// Start-up replay of the commit log: bytes already in their file are skipped, a torn or
// missing tail is written again (idempotently), a file that is gone or replaced is never
// created or touched, a log from another state dir or a newer format is refused before
// anything changes, and after a power loss that kept only the synced log every acknowledged
// append is back.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_replay.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "storage/durable_file.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using namespace sessionrt::storage::commit_log;

namespace {

const std::string kState = "/state";
const std::string kRel = "agents/main/sessions/s1.jsonl";
const std::string kFile = kState + "/" + kRel;

struct fixture {
  manual_clock clk{1000};
  memory_fs mem{clk};
  fs& f;
  std::string id;
  explicit fixture(fs* over = nullptr) : f(over ? *over : mem) {
    REQUIRE(ensure_dir(f, kState + "/agents/main/sessions").ok());
    auto got = state_identity(f, kState);
    REQUIRE(got.ok());
    id = *got;
    REQUIRE(ensure_dir(f, log_dir(kState)).ok());
  }
  std::uint64_t ino(const std::string& path) { return f.stat(path)->ino; }
  void write_file(const std::string& path, const std::string& text) {
    auto fd = f.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd.ok());
    REQUIRE(write_all(f, *fd, text.data(), text.size()).ok());
    REQUIRE(f.close(*fd).ok());
  }
  std::string text(const std::string& path) { return *read_file(f, path, 1 << 20); }
  // A log (number n) with the given appends, synced.
  std::string log_with(std::uint64_t n, const std::vector<transcript_append>& appends, const std::string& state_id = "") {
    auto made = create_log(f, clk, log_dir(kState), n, state_id.empty() ? id : state_id);
    REQUIRE(made.ok());
    log_writer w(f, made->fd, made->path, made->length, made->number);
    for (const auto& a : appends) {
      std::string p;
      encode(p, a);
      w.add_record(p);
    }
    REQUIRE(w.write().ok());
    REQUIRE(f.fdatasync(made->fd).ok());
    REQUIRE(f.close(made->fd).ok());
    return made->path;
  }
  transcript_append rec(std::uint64_t inode, std::uint64_t offset, std::string bytes, std::string path = kRel) {
    transcript_append a;
    a.inode = inode;
    a.offset = offset;
    a.path = std::move(path);
    a.bytes = std::move(bytes);
    return a;
  }
};

}  // namespace

TEST_CASE("commit log replay skips what is there and writes a torn tail again, idempotently") {
  fixture fx;
  const std::string whole = "header\nline one\nline two\nline three\n";
  fx.write_file(kFile, whole);
  const auto ino = fx.ino(kFile);
  const std::string log = fx.log_with(1, {fx.rec(ino, 0, "header\n"), fx.rec(ino, 7, "line one\nline two\n"),
                                          fx.rec(ino, 25, "line three\n")});
  auto rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(rep->records == 3);
  CHECK(rep->present == 3);
  CHECK(rep->rewritten == 0);
  CHECK(fx.text(kFile) == whole);
  CHECK(rep->files_synced == 1);

  // The tail torn in the middle of "line two", then garbage: cut and rewritten from there.
  fx.write_file(kFile, "header\nline one\nline tw\x01\x02");
  REQUIRE(fx.ino(kFile) == ino);
  rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(rep->present == 1);
  CHECK(rep->rewritten == 2);
  CHECK(rep->rewritten_paths == std::vector<std::string>{kFile});
  CHECK(fx.text(kFile) == whole);
  // Again: nothing to do.
  rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(rep->present == 3);
  CHECK(fx.text(kFile) == whole);

  // Zeros where the data was (the size reached the disk, the data did not).
  fx.write_file(kFile, "header\nline one\n" + std::string(whole.size() - 16, '\0'));
  rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(fx.text(kFile) == whole);
  // Bytes past the last record (written, never logged) stay when the records match.
  fx.write_file(kFile, whole + "unlogged\n");
  rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(fx.text(kFile) == whole + "unlogged\n");
}

TEST_CASE("commit log replay never creates a file, nor touches one that replaced it") {
  fixture fx;
  fx.write_file(kFile, "header\n");
  const auto ino = fx.ino(kFile);
  const std::string log = fx.log_with(1, {fx.rec(ino, 0, "header\nsaid\n")});
  // Renamed away (made durable before the rename): the record is skipped, nothing is created.
  REQUIRE(fx.f.rename(kFile, kFile + ".reset.1").ok());
  auto rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(rep->missing == 1);
  CHECK_FALSE(fx.f.lstat(kFile).ok());
  CHECK(fx.text(kFile + ".reset.1") == "header\n");
  // Another file now under the old name: another inode, left alone.
  fx.write_file(kFile, "another\n");
  REQUIRE(fx.ino(kFile) != ino);
  rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(rep->missing == 1);
  CHECK(fx.text(kFile) == "another\n");
}

TEST_CASE("commit log replay leaves a file cut before a record's offset and says so") {
  fixture fx;
  fx.write_file(kFile, "abc");
  const auto ino = fx.ino(kFile);
  const std::string log = fx.log_with(1, {fx.rec(ino, 10, "late\n")});
  auto rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(rep->holes == 1);
  REQUIRE(rep->warnings.size() == 1);
  CHECK(rep->warnings[0].find("before the commit log's record at byte 10") != std::string::npos);
  CHECK(fx.text(kFile) == "abc");
}

TEST_CASE("commit log of another state dir or a newer format is refused before anything is replayed") {
  fixture fx;
  fx.write_file(kFile, "h\n");
  const auto ino = fx.ino(kFile);
  const std::string ours = fx.log_with(1, {fx.rec(ino, 0, "h\nmine\n")});
  const std::string theirs = fx.log_with(2, {fx.rec(ino, 0, "h\ntheirs\n")}, "0000-other-state");
  auto rep = replay_logs(fx.f, kState, fx.id, {ours, theirs});
  REQUIRE_FALSE(rep.ok());
  CHECK(rep.error().code() == errc::corrupt);
  CHECK(rep.error().message().find("0000-other-state") != std::string::npos);
  CHECK(rep.error().message().find(fx.id) != std::string::npos);
  CHECK(rep.error().message().find(theirs) != std::string::npos);
  CHECK(fx.text(kFile) == "h\n");  // not even the good log was replayed

  // A header of format version 9.
  auto made = create_log(fx.f, fx.clk, log_dir(kState), 3, fx.id);
  REQUIRE(made.ok());
  REQUIRE(fx.f.close(made->fd).ok());
  {
    auto fd = fx.f.open(made->path, O_WRONLY | O_TRUNC, 0600);
    REQUIRE(fd.ok());
    log_writer w(fx.f, *fd, made->path, 0, made->number);
    std::string newer;
    newer.push_back(static_cast<char>(record_kind::log_header));
    newer += std::string("\x09\x00\x00\x00", 4);
    newer += "a layout this version does not know";
    w.add_record(newer);
    REQUIRE(w.write().ok());
    REQUIRE(fx.f.close(*fd).ok());
  }
  rep = replay_logs(fx.f, kState, fx.id, {ours, made->path});
  REQUIRE_FALSE(rep.ok());
  CHECK(rep.error().code() == errc::unsupported);
  CHECK(rep.error().message().find("format version 9") != std::string::npos);
  CHECK(rep.error().message().find("version 3") != std::string::npos);
  CHECK(fx.text(kFile) == "h\n");
}

TEST_CASE("commit log replay stops at a torn log tail and applies what precedes it") {
  fixture fx;
  fx.write_file(kFile, "h\n");
  const auto ino = fx.ino(kFile);
  const std::string log = fx.log_with(1, {fx.rec(ino, 0, "h\none\n"), fx.rec(ino, 6, "two\n")});
  auto size = fx.f.stat(log)->size;
  {
    auto fd = fx.f.open(log, O_RDWR, 0600);
    REQUIRE(fx.f.ftruncate(*fd, size - 2).ok());
    REQUIRE(fx.f.close(*fd).ok());
  }
  auto rep = replay_logs(fx.f, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(fx.text(kFile) == "h\none\n");
  REQUIRE(rep->warnings.size() == 1);
  CHECK(rep->warnings[0].find("torn") != std::string::npos);
}

TEST_CASE("commit log files: one identity per state dir, logs listed in order, a number used once") {
  fixture fx;
  auto again = state_identity(fx.f, kState);
  REQUIRE(again.ok());
  CHECK(*again == fx.id);
  CHECK(fx.id.size() == 36);
  fx.log_with(10, {});
  fx.log_with(2, {});
  fx.write_file(log_dir(kState) + "/notes.txt", "x");
  fx.write_file(log_dir(kState) + "/0000000000000000000x.log", "x");
  auto logs = list_logs(fx.f, log_dir(kState));
  REQUIRE(logs.ok());
  CHECK(*logs == std::vector<std::uint64_t>{2, 10});
  auto dup = create_log(fx.f, fx.clk, log_dir(kState), 2, fx.id);
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.error().code() == errc::already_exists);
  REQUIRE(remove_logs(fx.f, log_dir(kState), {2, 10}).ok());
  CHECK(list_logs(fx.f, log_dir(kState))->empty());
  CHECK(list_logs(fx.f, "/nowhere")->empty());
}

TEST_CASE("commit log replay after a power loss brings back every append the synced log holds") {
  manual_clock clk{1000};
  memory_fs mem{clk};
  power_loss_fs power(mem, 5);
  fixture fx(&power);
  // Ten transcripts written through the page cache, their records logged and synced; the
  // transcripts themselves never synced (their names are: the directory was fsync'd).
  std::vector<std::string> paths, expected;
  std::vector<transcript_append> recs;
  for (int i = 0; i < 10; ++i) {
    const std::string rel = "agents/main/sessions/t" + std::to_string(i) + ".jsonl";
    const std::string path = kState + "/" + rel;
    auto fd = power.open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    REQUIRE(fd.ok());
    const auto ino = power.fstat(*fd)->ino;
    std::string text;
    for (int k = 0; k < 5; ++k) {
      const std::string line = "{\"n\":" + std::to_string(k) + ",\"t\":" + std::to_string(i) + "}\n";
      REQUIRE(write_all(power, *fd, line.data(), line.size()).ok());
      recs.push_back(fx.rec(ino, text.size(), line, rel));
      text += line;
    }
    REQUIRE(power.close(*fd).ok());
    paths.push_back(path);
    expected.push_back(text);
  }
  REQUIRE(fsync_dir(power, kState + "/agents/main/sessions").ok());
  const std::string log = fx.log_with(1, recs);
  auto lost = power.power_loss();
  REQUIRE(lost.ok());
  CHECK(lost->files_torn == 10);
  auto rep = replay_logs(power, kState, fx.id, {log});
  REQUIRE(rep.ok());
  CHECK(rep->rewritten > 0);
  for (std::size_t i = 0; i < paths.size(); ++i) CHECK(fx.text(paths[i]) == expected[i]);
  // What replay wrote is durable: another power loss takes nothing.
  lost = power.power_loss();
  REQUIRE(lost.ok());
  CHECK(lost->files_torn == 0);
  for (std::size_t i = 0; i < paths.size(); ++i) CHECK(fx.text(paths[i]) == expected[i]);
}

TEST_CASE("commit log replay cut short at any of its writes, then run again, gives the same files") {
  fixture fx;
  std::vector<std::string> paths, whole;
  std::vector<transcript_append> recs;
  for (int i = 0; i < 4; ++i) {
    const std::string rel = "agents/main/sessions/r" + std::to_string(i) + ".jsonl";
    const std::string path = kState + "/" + rel;
    std::string text;
    for (int k = 0; k < 4; ++k) text += "{\"i\":" + std::to_string(i) + ",\"k\":" + std::to_string(k) + "}\n";
    fx.write_file(path, text);
    const auto ino = fx.ino(path);
    for (std::size_t off = 0; off < text.size(); off += 14) recs.push_back(fx.rec(ino, off, text.substr(off, 14), rel));
    paths.push_back(path);
    whole.push_back(text);
  }
  const std::string log = fx.log_with(1, recs);
  for (int nth = 1;; ++nth) {
    // Every file lost its tail: replay has writes to make.
    for (std::size_t i = 0; i < paths.size(); ++i) {
      auto fd = fx.f.open(paths[i], O_RDWR, 0600);
      REQUIRE(fx.f.ftruncate(*fd, 10 + i).ok());
      REQUIRE(fx.f.close(*fd).ok());
    }
    faulty_fs faulty(fx.f);
    faulty.crash_at_write(nth, 3);  // the process dies inside that write, 3 bytes of it on disk
    auto cut = replay_logs(faulty, kState, fx.id, {log});
    const bool finished = !faulty.crashed();
    if (!finished) CHECK_FALSE(cut.ok());
    auto again = replay_logs(fx.f, kState, fx.id, {log});
    REQUIRE(again.ok());
    for (std::size_t i = 0; i < paths.size(); ++i) {
      INFO("cut at write " << nth << ", file " << i);
      REQUIRE(fx.text(paths[i]) == whole[i]);
    }
    if (finished) {
      CHECK(nth > 4);  // every file took at least one write
      break;
    }
  }
}
