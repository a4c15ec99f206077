// Row changes in the commit log (log_format.hpp kRowChange, kStoreWritten) at start-up: each
// sessions.json gets the changes that come after its last write in its store's order — a
// store's own change sorted in after the session row it followed, a removal that came later
// kept, the last change of a key winning — and replaying the same logs again gives the same
// file, byte for byte; a hand edit made after the store's last write stays.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "storage/commit_log/row_replay.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_store_file.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;
using namespace sessionrt::storage::commit_log;

namespace {

const std::string kState = "/state";
const std::string kStoreRel = "agents/main/sessions/sessions.json";
const std::string kStore = kState + "/" + kStoreRel;

std::string row_text(const std::string& key, const std::string& session_id, std::int64_t updated_at) {
  session_entry e(boost::json::object{{"sessionId", session_id}, {"updatedAt", updated_at}});
  std::string out;
  session_store::append_row_text(out, key, e);
  return out;
}

row_change put(std::uint8_t origin, std::uint64_t order, const std::string& key, const std::string& id,
               std::int64_t at = 1) {
  return {origin, order, kStoreRel, key, row_text(key, id, at)};
}
row_change removal(std::uint8_t origin, std::uint64_t order, const std::string& key) {
  return {origin, order, kStoreRel, key, ""};
}
store_written written(std::uint64_t order) { return {order, kStoreRel}; }

std::vector<std::string> keys_of(const std::vector<row_op>& ops) {
  std::vector<std::string> out;
  for (const auto& op : ops) out.push_back(op.key + (op.text.empty() ? "-" : "+"));
  return out;
}

struct fixture {
  manual_clock clk{1000};
  memory_fs f{clk};
  std::string id;
  fixture() {
    REQUIRE(ensure_dir(f, kState + "/agents/main/sessions").ok());
    id = *state_identity(f, kState);
    REQUIRE(ensure_dir(f, log_dir(kState)).ok());
  }
  template <class... Records>
  void log(std::uint64_t n, const Records&... records) {
    auto made = create_log(f, clk, log_dir(kState), n, id);
    REQUIRE(made.ok());
    log_writer w(f, made->fd, made->path, made->length, made->number);
    auto add = [&](const auto& r) {
      std::string p;
      encode(p, r);
      w.add_record(p);
    };
    (add(records), ...);
    REQUIRE(w.write().ok());
    REQUIRE(f.close(made->fd).ok());
  }
  void store_file(const std::string& text) { REQUIRE(replace_file_atomic(f, kStore, text).ok()); }
  std::string store_text() { return *read_file(f, kStore, 1 << 20); }
  // The runtime's start: replay, the store loaded and given its rows, written; the logs kept
  // unless `finish` (a crash before their removal leaves them for the next start).
  void start(bool finish) {
    auto rec = replay_state_dir(f, kState);
    REQUIRE(rec.ok());
    session_store_file file(f, clk, kStore);
    REQUIRE(file.load().ok());
    if (auto it = rec->report.rows.find(kStore); it != rec->report.rows.end()) {
      auto done = apply_row_changes(file.store(), it->second);
      CHECK(done.refused.empty());
    }
    REQUIRE(file.save().ok());
    if (finish) REQUIRE(finish_recovery(f, clk, kState, *rec, {kStore}).ok());
  }
};

}  // namespace

TEST_CASE("row changes replay in the store's order after its last write, one per key") {
  store_row_history h;
  h.add(put(kFromSession, 10, "a", "a1"));
  h.add(put(kFromSession, 11, "b", "b1"));
  h.add(written(11));                       // sessions.json held a1, b1
  h.add(put(kFromSession, 12, "c", "c1"));  // new after the write
  h.add(put(kFromSession, 13, "a", "a2"));
  // The store erased "c" after it took row 12 but before row 13: its record comes later in the
  // log (a store's record travels after the rows it took), yet it sorts in after row 12.
  h.add(removal(kFromStore, 12, "c"));
  h.add(put(kFromSession, 14, "d", "d1"));
  h.add(removal(kFromStore, 14, "d"));  // maintenance removed d: it stays removed
  h.add(put(kFromSession, 15, "b", "b2"));
  const auto ops = h.pending();
  CHECK(keys_of(ops) == std::vector<std::string>{"c-", "a+", "d-", "b+"});
  CHECK(ops[1].text == row_text("a", "a2", 1));
  CHECK(ops[3].text == row_text("b", "b2", 1));
  CHECK(h.changes() == 8);
  CHECK(h.covered() == 2);

  // A session wrote c again after the store removed it: c is back.
  store_row_history later;
  later.add(put(kFromSession, 12, "c", "c1"));
  later.add(removal(kFromStore, 12, "c"));
  later.add(put(kFromSession, 13, "c", "c2"));
  CHECK(keys_of(later.pending()) == std::vector<std::string>{"c+"});
  // ... and when the store's removal was made after it took row 13, c stays removed.
  store_row_history after;
  after.add(put(kFromSession, 12, "c", "c1"));
  after.add(put(kFromSession, 13, "c", "c2"));
  after.add(removal(kFromStore, 13, "c"));
  CHECK(keys_of(after.pending()) == std::vector<std::string>{"c-"});

  // A written record covers the store's own changes recorded before it at the same order.
  store_row_history own;
  own.add(removal(kFromStore, 0, "x"));
  own.add(written(0));
  own.add(put(kFromStore, 0, "y", "y1"));
  CHECK(keys_of(own.pending()) == std::vector<std::string>{"y+"});
}

TEST_CASE("replaying the commit log's row changes twice gives the same sessions.json") {
  fixture fx;
  fx.store_file("{\n  \"old\": {\n    \"sessionId\": \"o\"\n  },\n  \"b\": {\n    \"sessionId\": \"b0\"\n  }\n}\n");
  fx.log(1, put(kFromSession, 1ull << 32, "a", "a1"), put(kFromSession, (1ull << 32) + 1, "b", "b1"),
         removal(kFromStore, (1ull << 32) + 1, "old"), put(kFromSession, (1ull << 32) + 2, "c", "c1"),
         removal(kFromStore, (1ull << 32) + 2, "c"), put(kFromSession, (1ull << 32) + 3, "c", "c2"),
         put(kFromSession, (1ull << 32) + 4, "a", "a2"));
  fx.start(/*finish=*/false);  // a crash before the logs were removed
  const std::string once = fx.store_text();
  fx.start(/*finish=*/false);
  CHECK(fx.store_text() == once);
  fx.start(/*finish=*/true);
  CHECK(fx.store_text() == once);
  CHECK(list_logs(fx.f, log_dir(kState))->empty());
  session_store_file file(fx.f, fx.clk, kStore);
  REQUIRE(file.load().ok());
  CHECK(file.store().keys() == std::vector<std::string_view>{"b", "a", "c"});
  CHECK(file.store().find("a")->session_id() == std::optional<std::string_view>("a2"));
  CHECK(file.store().find("b")->session_id() == std::optional<std::string_view>("b1"));
  CHECK(file.store().find("c")->session_id() == std::optional<std::string_view>("c2"));
  CHECK_FALSE(file.store().contains("old"));
}

TEST_CASE("a hand edit of sessions.json made after the store's last write survives the replay") {
  fixture fx;
  // The store wrote a1 and b1 (its written record), then someone edited b by hand; the
  // runtime changed a again before the crash.
  fx.log(1, put(kFromSession, 1, "a", "a1"), put(kFromSession, 2, "b", "b1"), written(2),
         put(kFromSession, 3, "a", "a2"));
  fx.store_file("{\n  \"a\": {\n    \"sessionId\": \"a1\"\n  },\n  \"b\": {\n    \"sessionId\": \"b-by-hand\"\n  }\n}\n");
  fx.start(true);
  session_store_file file(fx.f, fx.clk, kStore);
  REQUIRE(file.load().ok());
  CHECK(file.store().find("a")->session_id() == std::optional<std::string_view>("a2"));
  CHECK(file.store().find("b")->session_id() == std::optional<std::string_view>("b-by-hand"));
}

TEST_CASE("recover_logs gives a sessions.json no runtime loaded its row changes") {
  fixture fx;
  fx.log(1, put(kFromSession, 1, "agent:main:x", "x1"));
  auto rec = recover_logs(fx.f, kState, &fx.clk);
  REQUIRE(rec.ok());
  CHECK(rec->report.row_changes == 1);
  session_store_file file(fx.f, fx.clk, kStore);
  REQUIRE(file.load().ok());
  CHECK(file.store().find("agent:main:x")->session_id() == std::optional<std::string_view>("x1"));
  CHECK(list_logs(fx.f, log_dir(kState))->empty());
}
