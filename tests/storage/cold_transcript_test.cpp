// storage/cold_transcript: a transcript kept as <file>.jsonl.zst, every reader finding it, and
// the moves between the two forms surviving a failure or a power loss at every syscall.
#include <catch2/catch.hpp>

#include <errno.h>
#include <fcntl.h>

#include <functional>
#include <memory>

#include "messages/json_access.hpp"
#include "storage/archive_names.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/transcript_check.hpp"
#include "storage/transcript_file.hpp"
#include "storage/transcript_header.hpp"
#include "storage/transcript_open.hpp"
#include "storage/transcript_reader.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

constexpr std::int64_t kT0 = 1796000000000;
const std::string kId = "0b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e";

header_fields header() {
  header_fields h;
  h.id = kId;
  h.timestamp_ms = kT0;
  h.cwd = "/w";
  h.session_key = "agent:main:main";
  return h;
}

// A transcript of `turns` user/assistant exchanges; returns its bytes.
std::string write_transcript(fs& f, const std::string& path, int turns) {
  manual_clock clk(kT0);
  auto t = transcript_file::create(f, clk, path, header());
  REQUIRE(t.ok());
  for (int i = 0; i < turns; ++i) {
    REQUIRE((*t)->append_message(user_message("question " + std::to_string(i) + ": what about the files?", kT0 + i)).ok());
    assistant_fields a;
    a.model = "claude-sonnet-4-5";
    a.content.push_back(text_block("answer " + std::to_string(i) + ": the files are kept, compressed when old."));
    a.usage.input = 100 + i;
    a.usage.output = 20;
    a.timestamp_ms = kT0 + i;
    REQUIRE((*t)->append_message(assistant_message(a)).ok());
  }
  REQUIRE((*t)->sync().ok());
  t->reset();
  return testing::read_text(path);
}

std::vector<std::string> context_texts(fs& f, const std::string& path) {
  auto rd = transcript_reader::open(f, path);
  REQUIRE(rd.ok());
  auto ctx = build_context(**rd);
  REQUIRE(ctx.ok());
  std::vector<std::string> out;
  for (const auto& m : ctx->messages) out.push_back(message_text(m.as_object().if_contains("content")));
  return out;
}

// Kills a power_loss_fs at its n-th call (any call: reads, stats and closes count too).
class kill_at_call final : public forwarding_fs {
 public:
  kill_at_call(power_loss_fs& inner, int n) : forwarding_fs(inner), plfs_(inner), left_(n) {}
  bool fired() const { return left_ <= 0; }
  result<int> open(const std::string& p, int fl, mode_t m) override { return tick() ? forwarding_fs::open(p, fl, m) : dead(); }
  status close(int fd) override { (void)tick(); return forwarding_fs::close(fd); }
  result<std::size_t> write(int fd, const char* d, std::size_t n) override { return tick() ? forwarding_fs::write(fd, d, n) : dead(); }
  result<std::size_t> pread(int fd, char* b, std::size_t n, std::uint64_t o) override { return tick() ? forwarding_fs::pread(fd, b, n, o) : dead(); }
  status fsync(int fd) override { return tick() ? forwarding_fs::fsync(fd) : dead(); }
  status fdatasync(int fd) override { return tick() ? forwarding_fs::fdatasync(fd) : dead(); }
  result<file_info> fstat(int fd) override { return tick() ? forwarding_fs::fstat(fd) : dead(); }
  result<file_info> lstat(const std::string& p) override { return tick() ? forwarding_fs::lstat(p) : dead(); }
  result<file_info> stat(const std::string& p) override { return tick() ? forwarding_fs::stat(p) : dead(); }
  status rename(const std::string& a, const std::string& b) override { return tick() ? forwarding_fs::rename(a, b) : dead(); }
  status link(const std::string& a, const std::string& b) override { return tick() ? forwarding_fs::link(a, b) : dead(); }
  status unlink(const std::string& p) override { return tick() ? forwarding_fs::unlink(p) : dead(); }

 private:
  bool tick() {
    if (--left_ == 0) plfs_.kill();
    return !plfs_.dead();
  }
  static status dead() { return status(errc::io_error, "killed"); }
  power_loss_fs& plfs_;
  int left_;
};

}  // namespace

TEST_CASE("cold transcript: classified with its session, archived as it is") {
  auto c = classify(kId + ".jsonl.zst");
  CHECK(c.kind == artifact_kind::cold_transcript);
  CHECK(c.session_id == kId);
  CHECK(c.base == kId + ".jsonl");
  CHECK(classify(kId + "-topic-42.jsonl.zst").kind == artifact_kind::cold_transcript);
  CHECK(classify(".jsonl.zst").kind == artifact_kind::unknown);  // not a transcript name
  CHECK(holds_transcript(artifact_kind::cold_transcript));
  CHECK_FALSE(is_transcript_kind(artifact_kind::cold_transcript));  // a row's sessionFile never names one
  auto archived = classify(kId + ".jsonl.zst.deleted.2026-11-30T01-02-03.000Z");
  CHECK(archived.kind == artifact_kind::deleted_archive);
  CHECK(classify(kId + ".jsonl.zst.1234.0b6c0d43-7a3e-4c52-9d7e-5f1a2b3c4d5e.tmp").kind == artifact_kind::temp);

  testing::temp_dir dir;
  const std::string path = dir.file(kId + ".jsonl");
  const std::string text = write_transcript(posix_fs(), path, 20);
  REQUIRE(compress_transcript(posix_fs(), path)->done);
  manual_clock clk(kT0);
  auto moved = archive_transcript(posix_fs(), clk, path, archive_reason::deleted);
  REQUIRE(moved.ok());
  CHECK(path_basename(*moved) == kId + ".jsonl.zst.deleted.2026-11-30T00-53-20.000Z");
  CHECK(transcript_form_of(posix_fs(), path).value() == transcript_form::missing);
}

TEST_CASE("cold transcript: compressed, every reader reads it, restored byte for byte before the next append") {
  testing::temp_dir dir;
  const std::string path = dir.file(kId + ".jsonl");
  const std::string text = write_transcript(posix_fs(), path, 200);
  const auto before = context_texts(posix_fs(), path);
  REQUIRE(before.size() == 400);

  auto moved = compress_transcript(posix_fs(), path);
  REQUIRE(moved.ok());
  REQUIRE(moved->done);
  CHECK(moved->raw_bytes == text.size());
  CHECK(moved->cold_bytes == testing::read_text(path + ".zst").size());
  CHECK(moved->cold_bytes * 5 < moved->raw_bytes);
  CHECK(testing::list_names(dir.path()) == std::vector<std::string>{kId + ".jsonl.zst"});
  CHECK(transcript_form_of(posix_fs(), path).value() == transcript_form::cold);

  // Readers: the reader (and the context built from it), the whole bytes, the head, the first
  // user message, the checker; by the .jsonl name and by the .zst name.
  {
    auto rd = transcript_reader::open(posix_fs(), path);
    REQUIRE(rd.ok());
    CHECK((*rd)->cold());
    CHECK((*rd)->path() == path);
    auto tail = (*rd)->tail(2, 1 << 20);
    REQUIRE(tail.ok());
    REQUIRE(tail->size() == 2);
  }
  CHECK(context_texts(posix_fs(), path) == before);
  CHECK(context_texts(posix_fs(), path + ".zst") == before);
  CHECK(read_transcript_bytes(posix_fs(), path, 1 << 30).value() == text);
  CHECK(read_transcript_head(posix_fs(), path, 64).value() == text.substr(0, 64));
  auto first = read_first_user_message(posix_fs(), path);
  REQUIRE(first.ok());
  REQUIRE(first->has_value());
  CHECK(message_text((*first)->if_contains("content")) == "question 0: what about the files?");
  auto check = check_transcript(posix_fs(), path);
  REQUIRE(check.ok());
  CHECK(check->ok());
  CHECK(check->entries == 400);
  CHECK(check->bytes == text.size());
  // A writer never opens the compressed copy: it restores first.
  CHECK(transcript_reader::open(posix_fs(), path, {}, O_RDWR | O_APPEND).error().code() == errc::not_found);

  manual_clock clk(kT0 + 1000);
  auto opened = open_or_create_transcript(posix_fs(), clk, path, header(), {});
  REQUIRE(opened.ok());
  CHECK(opened->restored);
  CHECK_FALSE(opened->created);
  CHECK(testing::list_names(dir.path()) == std::vector<std::string>{kId + ".jsonl"});
  CHECK(testing::read_text(path) == text);
  REQUIRE(opened->file->append_message(user_message("after the restore", kT0 + 5000)).ok());
  REQUIRE(opened->file->sync().ok());
  opened->file.reset();
  auto after = context_texts(posix_fs(), path);
  REQUIRE(after.size() == 401);
  CHECK(std::equal(before.begin(), before.end(), after.begin()));
  CHECK(after.back() == "after the restore");
}

TEST_CASE("cold transcript: a leftover .zst beside its .jsonl is ignored by readers and removed by a restore") {
  testing::temp_dir dir;
  const std::string path = dir.file(kId + ".jsonl");
  write_transcript(posix_fs(), path, 5);
  REQUIRE(compress_transcript(posix_fs(), path)->done);
  // As a crash after a restore's link leaves it: both, and the .jsonl moved on since.
  const std::string stale = testing::read_text(path + ".zst");
  REQUIRE(restore_transcript(posix_fs(), path)->done);
  testing::write_text(path + ".zst", stale);
  {
    manual_clock clk(kT0);
    auto t = transcript_file::open(posix_fs(), clk, path);
    REQUIRE(t.ok());
    REQUIRE((*t)->append_message(user_message("newer than the leftover", kT0)).ok());
    REQUIRE((*t)->sync().ok());
  }
  CHECK(transcript_form_of(posix_fs(), path).value() == transcript_form::both);
  CHECK(context_texts(posix_fs(), path).back() == "newer than the leftover");
  CHECK(read_transcript_bytes(posix_fs(), path, 1 << 20).value() == testing::read_text(path));
  auto r = restore_transcript(posix_fs(), path);
  REQUIRE(r.ok());
  CHECK_FALSE(r->done);
  CHECK(r->removed_leftover);
  CHECK(transcript_form_of(posix_fs(), path).value() == transcript_form::hot);
  CHECK(context_texts(posix_fs(), path).back() == "newer than the leftover");
}

TEST_CASE("cold transcript: a torn .zst is refused with its name and nothing is created in its place") {
  testing::temp_dir dir;
  const std::string path = dir.file(kId + ".jsonl");
  write_transcript(posix_fs(), path, 50);
  REQUIRE(compress_transcript(posix_fs(), path)->done);
  const std::string z = testing::read_text(path + ".zst");
  testing::write_text(path + ".zst", z.substr(0, z.size() / 2));
  auto r = restore_transcript(posix_fs(), path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == errc::corrupt);
  CHECK_THAT(r.error().message(), Catch::Contains(kId + ".jsonl.zst"));
  CHECK(testing::list_names(dir.path()) == std::vector<std::string>{kId + ".jsonl.zst"});
  manual_clock clk(kT0);
  CHECK_FALSE(open_or_create_transcript(posix_fs(), clk, path, header(), {}).ok());  // not a new empty session
  CHECK(testing::list_names(dir.path()) == std::vector<std::string>{kId + ".jsonl.zst"});
  CHECK(transcript_reader::open(posix_fs(), path).error().code() == errc::corrupt);
}

TEST_CASE("cold transcript: a .jsonl that changed since the plan, or while compressed, is kept") {
  testing::temp_dir dir;
  const std::string path = dir.file(kId + ".jsonl");
  const std::string text = write_transcript(posix_fs(), path, 5);
  compress_options o;
  o.expect_size = text.size() + 1;
  auto m = compress_transcript(posix_fs(), path, o);
  REQUIRE(m.ok());
  CHECK_FALSE(m->done);
  CHECK_THAT(m->skipped, Catch::Contains("changed after the plan"));
  CHECK(testing::list_names(dir.path()) == std::vector<std::string>{kId + ".jsonl"});

  // A writer that ignores the lock appends while the compression runs (after the .zst is
  // linked): the .jsonl stays, the .zst goes.
  class appending_fs final : public forwarding_fs {
   public:
    appending_fs(fs& inner, std::string path) : forwarding_fs(inner), path_(std::move(path)) {}
    status link(const std::string& a, const std::string& b) override {
      status st = forwarding_fs::link(a, b);
      testing::write_text(path_, testing::read_text(path_) + "{\"type\":\"custom\",\"id\":\"zz\"}\n");
      return st;
    }
    std::string path_;
  } racing(posix_fs(), path);
  auto raced = compress_transcript(racing, path);
  REQUIRE(raced.ok());
  CHECK_FALSE(raced->done);
  CHECK_THAT(raced->skipped, Catch::Contains("written while it was compressed"));
  CHECK(testing::list_names(dir.path()) == std::vector<std::string>{kId + ".jsonl"});
  CHECK(testing::read_text(path).size() > text.size());
}

TEST_CASE("cold transcript: a failing syscall at any point of a compression or a restore leaves one readable copy") {
  for (fs_op op : {fs_op::open, fs_op::write, fs_op::fsync, fs_op::link, fs_op::unlink}) {
    for (int nth = 1; nth <= 4; ++nth) {
      for (bool restoring : {false, true}) {
        INFO("op " << static_cast<int>(op) << " nth " << nth << (restoring ? " restore" : " compress"));
        testing::temp_dir dir;
        const std::string path = dir.file(kId + ".jsonl");
        const std::string text = write_transcript(posix_fs(), path, 100);
        if (restoring) REQUIRE(compress_transcript(posix_fs(), path)->done);
        faulty_fs f(posix_fs());
        f.fail_nth(op, nth, EIO);
        auto r = restoring ? restore_transcript(f, path) : compress_transcript(f, path);
        (void)r;
        // Whatever happened: the transcript reads whole, and a retry finishes the move.
        CHECK(read_transcript_bytes(posix_fs(), path, 1 << 30).value() == text);
        CHECK(context_texts(posix_fs(), path).size() == 200);
        auto again = restoring ? restore_transcript(posix_fs(), path) : compress_transcript(posix_fs(), path);
        REQUIRE(again.ok());
        CHECK(transcript_form_of(posix_fs(), path).value() == (restoring ? transcript_form::hot : transcript_form::cold));
        CHECK(read_transcript_bytes(posix_fs(), path, 1 << 30).value() == text);
      }
    }
  }
}

TEST_CASE("cold transcript: a power loss at every syscall of a compression or a restore leaves one readable copy") {
  for (bool restoring : {false, true}) {
    int calls_done = 0;
    for (int n = 1;; ++n) {
      INFO((restoring ? "restore" : "compress") << ", power lost at call " << n);
      testing::temp_dir dir;
      const std::string path = dir.file(kId + ".jsonl");
      const std::string text = write_transcript(posix_fs(), path, 100);
      if (restoring) REQUIRE(compress_transcript(posix_fs(), path)->done);
      power_loss_fs plfs(posix_fs(), static_cast<std::uint64_t>(n));
      kill_at_call f(plfs, n);
      auto r = restoring ? restore_transcript(f, path) : compress_transcript(f, path);
      const bool finished = !f.fired();
      if (finished) REQUIRE(r.ok());
      REQUIRE(plfs.power_loss().ok());
      const auto form = transcript_form_of(posix_fs(), path).value();
      CHECK(form != transcript_form::missing);
      CHECK(read_transcript_bytes(posix_fs(), path, 1 << 30).value() == text);
      CHECK(context_texts(posix_fs(), path).size() == 200);
      // After the reboot the move is finished by the next attempt, from whatever was left.
      auto again = restoring ? restore_transcript(posix_fs(), path) : compress_transcript(posix_fs(), path);
      REQUIRE(again.ok());
      CHECK(read_transcript_bytes(posix_fs(), path, 1 << 30).value() == text);
      if (finished) {
        calls_done = n;
        break;
      }
      REQUIRE(n < 500);
    }
    CHECK(calls_done > 10);  // the cut went through every step
  }
}

TEST_CASE("cold transcript: remove_transcript takes both forms") {
  testing::temp_dir dir;
  const std::string path = dir.file(kId + ".jsonl");
  write_transcript(posix_fs(), path, 3);
  REQUIRE(compress_transcript(posix_fs(), path)->done);
  CHECK(transcript_exists(posix_fs(), path));
  REQUIRE(remove_transcript(posix_fs(), path).ok());
  CHECK_FALSE(transcript_exists(posix_fs(), path));
  CHECK(remove_transcript(posix_fs(), path).code() == errc::not_found);
}
