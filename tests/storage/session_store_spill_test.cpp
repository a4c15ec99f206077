// Spilled rows (session_store_file::shed_rows): after a save, unchanged rows keep only their
// place in the file just written; every later save, read and change must give exactly what a
// store kept wholly in memory gives, and a file changed in place by another program must never
// be read back nor overwritten.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "messages/json_writer.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_store_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using sessionrt::testing::read_text;
using sessionrt::testing::temp_dir;

namespace {

// Records what is written through it: each write() call is one batch (a gathered write comes
// as one call: fs's default joins it), and the size hints; with `full`, every write fails
// with ENOSPC.
class batch_recorder final : public forwarding_fs {
 public:
  using forwarding_fs::forwarding_fs;
  result<std::size_t> write(int fd, const char* data, std::size_t n) override {
    batches.push_back(n);
    if (on_batch) on_batch();
    if (full) return errno_status(ENOSPC, "write", "");
    written.append(data, n);
    return inner_.write(fd, data, n);
  }
  void size_hint(int fd, std::uint64_t bytes) override {
    hinted = bytes;
    inner_.size_hint(fd, bytes);
  }
  void clear() { batches.clear(), written.clear(), hinted = 0; }
  std::vector<std::size_t> batches;
  std::string written;
  std::uint64_t hinted = 0;
  std::function<void()> on_batch;
  bool full = false;
};

session_entry row_for(int i, int version) {
  session_entry e;
  e.set_session_id(fmt::format("id-{}-{}", i, version));
  e.set_updated_at(1789041600000 + version);
  e.set_chat_type("direct");
  if (i % 3 == 0) e.set_label(fmt::format("caf\u00e9 {} \"quoted\"", i));
  return e;
}

store_file_options spill_at_any_size() {
  store_file_options o;
  o.spill_min_bytes = 0;
  return o;
}

}  // namespace

TEST_CASE("spilled rows: saves, reads and changes give what an in-memory store gives") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"), spill_at_any_size());
  session_store shadow;  // the same operations, never saved: rows stay in memory
  std::mt19937 rng(7);
  int next_key = 0;
  std::vector<std::string> keys;
  for (int round = 0; round < 40; ++round) {
    // A few random changes: new rows, replaced rows, rows changed in place, erased rows.
    const int changes = 1 + static_cast<int>(rng() % 6);
    for (int c = 0; c < changes; ++c) {
      const unsigned op = keys.empty() ? 0 : rng() % 4;
      if (op == 0 || keys.size() < 5) {
        const std::string k = fmt::format("agent:main:telegram:direct:{}", next_key);
        keys.push_back(k);
        file.store().upsert(k, row_for(next_key, round));
        shadow.upsert(k, row_for(next_key, round));
        ++next_key;
      } else {
        const std::size_t at = rng() % keys.size();
        const std::string k = keys[at];
        if (op == 1) {
          file.store().upsert(k, row_for(static_cast<int>(at), round + 100));
          shadow.upsert(k, row_for(static_cast<int>(at), round + 100));
        } else if (op == 2) {
          session_entry* e = file.store().find_for_update(k);
          REQUIRE(e != nullptr);
          CHECK(e->session_id() == shadow.find(k)->session_id());  // read back from the file first
          e->set_updated_at(round);
          shadow.find_for_update(k)->set_updated_at(round);
        } else {
          CHECK(file.store().erase(k));
          CHECK(shadow.erase(k));
          keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(at));
        }
      }
    }
    REQUIRE(file.save().ok());
    const std::size_t shed = file.shed_rows();
    CHECK(shed == file.store().size());
    const std::string expected = shadow.to_pretty() + "\n";
    CHECK(read_text(file.path()) == expected);        // what was written
    CHECK(file.store().to_pretty() + "\n" == expected);  // what is served from spilled rows
    if (round % 10 == 9) {                            // every row read back (a listing)
      auto s = shadow.begin();
      for (const auto& r : file.store()) {
        REQUIRE(s != shadow.end());
        CHECK(r.key == (*s).key);
        CHECK(json::to_compact(r.entry.json()) == json::to_compact((*s).entry.json()));
        ++s;
      }
      CHECK(file.shed_rows() == file.store().size());  // and shed again
    }
  }
  CHECK(file.store().spill_error().ok());
  // A copy of a store with spilled rows reads them from the same file.
  session_store copy = file.store();
  CHECK(copy.to_pretty() == shadow.to_pretty());
}

TEST_CASE("spilled rows: a file changed in place is neither read back nor overwritten") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"), spill_at_any_size());
  for (int i = 0; i < 5; ++i) file.store().upsert(fmt::format("k{}", i), row_for(i, 1));
  REQUIRE(file.save().ok());
  REQUIRE(file.shed_rows() == 5);

  // Another program appends to the file in place (same inode).
  const std::string edited = read_text(file.path()) + "  ";
  {
    int fd = ::open(file.path().c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "  ", 2) == 2);
    ::close(fd);
  }
  CHECK(file.store().find("k2")->json().empty());  // not read back: reads as empty
  auto looked = file.store().lookup("k3");            // ... which lookup() tells from an empty row
  REQUIRE_FALSE(looked.ok());
  CHECK(looked.error().message().find("the row of k3") != std::string::npos);
  CHECK(file.store().lookup("absent").ok());
  CHECK(*file.store().lookup("absent") == nullptr);
  CHECK_FALSE(file.store().spill_error().ok());
  CHECK(file.store().spill_error().message().find("changed in place") != std::string::npos);
  file.store().upsert("k9", row_for(9, 2));
  status saved = file.save();
  CHECK_FALSE(saved.ok());
  CHECK(saved.message().find("changed in place") != std::string::npos);
  CHECK(read_text(file.path()) == edited);  // the other program's bytes are still there
}

TEST_CASE("spilled rows: no spill for a version the file does not hold") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"), spill_at_any_size());
  file.store().upsert("a", row_for(1, 1));
  REQUIRE(file.save().ok());
  file.store().upsert("b", row_for(2, 1));  // changed after the save: the file lacks it
  const std::string on_disk = read_text(file.path());
  file.shed_rows();  // must not take places in a file that lacks "b": released to text instead
  CHECK(on_disk.find("\"b\"") == std::string::npos);
  session_store reference;
  reference.upsert("a", row_for(1, 1));
  reference.upsert("b", row_for(2, 1));
  CHECK(file.store().to_pretty() == reference.to_pretty());
  REQUIRE(file.save().ok());
  CHECK(file.shed_rows() == 2);
  CHECK(file.store().to_pretty() + "\n" == read_text(file.path()));
}

TEST_CASE("spilled rows: a touch is harmless, a same-size edit that moves rows is caught") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"), spill_at_any_size());
  for (int i = 0; i < 3; ++i) file.store().upsert(fmt::format("k{}", i), row_for(i, 1));
  REQUIRE(file.save().ok());
  REQUIRE(file.shed_rows() == 3);
  const std::string written = read_text(file.path());

  // Only the mtime changes: the rows read back as they were.
  REQUIRE(::utimensat(AT_FDCWD, file.path().c_str(), nullptr, 0) == 0);
  CHECK(file.store().find("k1")->session_id() == std::optional<std::string_view>("id-1-1"));
  CHECK(file.store().spill_error().ok());
  file.shed_rows();

  // Same size, but the text moved by one byte (a byte dropped at the front, one added at the
  // end): every row is now one byte off.
  std::string shifted = written.substr(1) + " ";
  REQUIRE(shifted.size() == written.size());
  {
    int fd = ::open(file.path().c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, shifted.data(), shifted.size(), 0) == static_cast<ssize_t>(shifted.size()));
    ::close(fd);
  }
  CHECK(file.store().find("k2")->json().empty());
  CHECK_FALSE(file.store().spill_error().ok());
  CHECK(file.store().spill_error().message().find("no longer where this runtime wrote it") != std::string::npos);
  file.store().upsert("k3", row_for(3, 1));
  CHECK_FALSE(file.save().ok());
  CHECK(read_text(file.path()) == shifted);  // not overwritten
}

TEST_CASE("spilled rows: a store smaller than spill_min_bytes keeps its rows' text and reads nothing back") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  store_file_options o;
  o.spill_min_bytes = 4096;
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"), o);
  for (int i = 0; i < 5; ++i) file.store().upsert(fmt::format("k{}", i), row_for(i, 1));
  REQUIRE(file.save().ok());
  REQUIRE(read_text(file.path()).size() < o.spill_min_bytes);
  REQUIRE(file.shed_rows() == 5);  // released to their text, not spilled

  // Were the rows spilled, this in-place edit would make them unreadable (the test above).
  {
    int fd = ::open(file.path().c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "  ", 2) == 2);
    ::close(fd);
  }
  CHECK(file.store().lookup("k3").ok());
  CHECK(file.store().find("k2")->session_id() == std::optional<std::string_view>("id-2-1"));
  CHECK(file.store().spill_error().ok());

  // Grown past the threshold, the next save's rows spill: the same edit is then caught.
  for (int i = 5; i < 60; ++i) file.store().upsert(fmt::format("k{}", i), row_for(i, 1));
  REQUIRE(file.save().ok());
  REQUIRE(read_text(file.path()).size() >= o.spill_min_bytes);
  REQUIRE(file.shed_rows() == 60);
  {
    int fd = ::open(file.path().c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "  ", 2) == 2);
    ::close(fd);
  }
  CHECK_FALSE(file.store().lookup("k3").ok());
}

TEST_CASE("spilled rows: the text written in pieces is the text whole, for any piece size") {
  temp_dir dir;
  manual_clock clk(1789041600000);
  session_store_file file(posix_fs(), clk, dir.file("sessions.json"), spill_at_any_size());
  for (int i = 0; i < 60; ++i) file.store().upsert(fmt::format("agent:main:telegram:direct:{}", i), row_for(i, 0));
  REQUIRE(file.save().ok());
  REQUIRE(file.shed_rows() == 60);
  // Some rows in memory again (changed, or read), between runs of spilled ones.
  for (int i : {3, 4, 17, 40, 59}) file.store().upsert(fmt::format("agent:main:telegram:direct:{}", i), row_for(i, 1));
  REQUIRE(file.store().find(fmt::format("agent:main:telegram:direct:{}", 30)) != nullptr);
  const std::string whole = file.store().to_pretty();
  manual_clock mem_clk(0);
  memory_fs mem(mem_clk);
  batch_recorder out(mem);
  for (std::size_t piece : {std::size_t(1), std::size_t(7), std::size_t(150), std::size_t(1000), whole.size(),
                            whole.size() * 2}) {
    std::string scratch = "left from before";  // only a buffer: none of it is written
    out.clear();
    std::size_t scratch_peak = 0;
    out.on_batch = [&] { scratch_peak = std::max(scratch_peak, scratch.size()); };
    auto fd = out.open("/p" + std::to_string(piece), O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd.ok());
    REQUIRE(file.store().write_pretty(scratch, piece, "\n", piece_writer(out, *fd)).ok());
    REQUIRE(out.close(*fd).ok());
    CHECK(out.written == whole + "\n");
    CHECK(out.hinted == out.written.size());  // the length, told before the first batch
    const auto& batches = out.batches;
    REQUIRE(!batches.empty());
    for (std::size_t i = 0; i + 1 < batches.size(); ++i) {
      CHECK(batches[i] >= piece);  // a batch goes only once it is a piece's worth
      // and holds at most two pieces' worth and a row: the text is never whole in memory (a
      // run of spilled rows is read piece-wise)
      CHECK(batches[i] < 2 * piece + 1024);
    }
    // The rows read back pass through `scratch` a run at a time, never the whole text.
    CHECK(scratch_peak < 2 * piece + 1024);
    if (piece == 1000) CHECK(scratch_peak > 0);  // some batch did hold rows read back
    if (piece > whole.size() + 1) CHECK(batches.size() == 1);
  }
  // A write's error ends the text there and is returned as it is.
  std::string scratch;
  out.clear();
  out.on_batch = nullptr;
  out.full = true;
  auto fd = out.open("/full", O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd.ok());
  status st = file.store().write_pretty(scratch, 100, "", piece_writer(out, *fd));
  REQUIRE(out.close(*fd).ok());
  CHECK(st.code() == errc::no_space);
  CHECK(out.batches.size() == 1);  // the one refused
  CHECK(file.store().spill_error().ok());  // not a read-back failure
  // And a save in pieces writes the same file.
  REQUIRE(file.save().ok());
  CHECK(read_text(file.path()) == whole + "\n");
}
