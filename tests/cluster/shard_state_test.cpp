// Opening a shard through the fence (cluster/shard_state.hpp) and the per-write guard
// (cluster/shard_write_guard.hpp), on memory_fs with manual clocks.
#include "cluster/shard_state.hpp"

#include <fcntl.h>

#include <catch2/catch.hpp>

#include "cluster/shard_epoch_file.hpp"
#include "cluster/shard_layout.hpp"
#include "messages/ids.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"

namespace sessionrt::cluster {
namespace {

// Every call that changes the tree, in order: "<op> <path>".
class recording_fs final : public storage::forwarding_fs {
 public:
  using forwarding_fs::forwarding_fs;
  std::vector<std::string> changes;
  result<int> open(const std::string& p, int flags, mode_t mode) override {
    if (flags & O_CREAT) changes.push_back("create " + p);
    return forwarding_fs::open(p, flags, mode);
  }
  status rename(const std::string& a, const std::string& b) override {
    changes.push_back("rename " + b);
    return forwarding_fs::rename(a, b);
  }
  status unlink(const std::string& p) override {
    changes.push_back("unlink " + p);
    return forwarding_fs::unlink(p);
  }
  status link(const std::string& a, const std::string& b) override {
    changes.push_back("link " + b);
    return forwarding_fs::link(a, b);
  }
};

const std::string header_line =
    R"({"type":"session","version":3,"id":"01a22a13-f275-7438-9fcb-df6c4fc1d0eb","timestamp":"2026-11-30T01:31:20.053Z","cwd":"/w"})";
const std::string user_line =
    R"({"type":"message","id":"e71cd325","parentId":null,"timestamp":"2026-11-30T01:34:35.414Z","message":{"role":"user","content":"hi","timestamp":1789041601500}})";

struct shard_fixture {
  manual_clock wall{1789041600000};
  manual_clock mono{0};
  storage::memory_fs mem{wall};
  write_permit permit{mono, "n1"};
  const std::string cluster = "/cluster";
  const shard_id shard{"main", 17};
  std::string dir = *shard_dir(cluster, shard);
  std::string sessions = *shard_sessions_dir(cluster, shard);
  shard_fixture() { permit.start(10000, 0); }

  // A row for `key` whose transcript holds `text`.
  void put_row(storage::fs& fs, const std::string& key, const std::string& id, const std::string& text) {
    REQUIRE(storage::ensure_dir(fs, sessions).ok());
    storage::session_store_file file(fs, wall, *shard_store_path(cluster, shard));
    REQUIRE(file.load().ok());
    file.store().upsert(key, session_entry(boost::json::object{{"sessionId", id}, {"updatedAt", wall.now_ms()}}));
    REQUIRE(file.save().ok());
    REQUIRE(storage::replace_file_atomic(fs, storage::path_join(sessions, id + ".jsonl"), text).ok());
  }
};

}  // namespace

TEST_CASE("shard state: a higher epoch on disk refuses the open and nothing is written", "[cluster][shard_state]") {
  shard_fixture f;
  REQUIRE(stamp_shard_epoch(f.mem, shard_epoch_path(f.dir), 57, "n2").ok());
  recording_fs fs(f.mem);
  auto opened = open_shard_state(fs, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(!opened.ok());
  CHECK(opened.error().code() == errc::locked);
  CHECK_THAT(opened.error().message(),
             Catch::Contains("main/17") && Catch::Contains("epoch 57") && Catch::Contains("fenced"));
  CHECK(fs.changes.empty());
  CHECK(!f.mem.lstat(storage::commit_log::state_id_path(f.dir)).ok());  // no start-up step ran
  CHECK(!f.mem.lstat(f.sessions).ok());
  auto still = read_shard_epoch(f.mem, shard_epoch_path(f.dir));
  REQUIRE(still.ok());
  CHECK(**still == 57);
}

TEST_CASE("shard state: an expired permit refuses the open before the stamp", "[cluster][shard_state]") {
  shard_fixture f;
  f.mono.set(5000);  // TTL/2 of 10 s since the last renewal
  recording_fs fs(f.mem);
  auto opened = open_shard_state(fs, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(!opened.ok());
  CHECK(opened.error().code() == errc::locked);
  CHECK_THAT(opened.error().message(), Catch::Contains("TTL/2") && Catch::Contains("opening shard main/17"));
  CHECK(fs.changes.empty());
}

TEST_CASE("shard state: the epoch is stamped durably before the first write to the shard", "[cluster][shard_state]") {
  shard_fixture f;
  f.put_row(f.mem, "agent:main:a", "01a22a13-f275-7438-9fcb-df6c4fc1d0eb", header_line + "\n" + user_line + "\n");
  REQUIRE(stamp_shard_epoch(f.mem, shard_epoch_path(f.dir), 30, "n0").ok());  // the previous owner's
  recording_fs fs(f.mem);
  auto opened = open_shard_state(fs, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(opened.ok());
  CHECK(opened->report.decision == open_decision::stamp_then_write);
  CHECK(opened->report.previous_epoch == 30);
  REQUIRE(!fs.changes.empty());
  // The stamp's own temp file and rename come first; everything else (state-id, commit log
  // dir entries, the store) after.
  const std::string epoch = shard_epoch_path(f.dir);
  std::size_t stamped = fs.changes.size();
  for (std::size_t i = 0; i < fs.changes.size(); ++i)
    if (fs.changes[i] == "rename " + epoch) stamped = std::min(stamped, i);
  REQUIRE(stamped < fs.changes.size());
  for (std::size_t i = 0; i < stamped; ++i) CHECK_THAT(fs.changes[i], Catch::Contains(epoch + "."));
  CHECK(fs.changes.size() > stamped + 1);  // the start-up steps wrote afterwards (state-id at least)
  auto now = read_shard_epoch(f.mem, epoch);
  REQUIRE(now.ok());
  CHECK(**now == 42);
  CHECK(opened->store->store().contains("agent:main:a"));
  CHECK(opened->guard->check().ok());

  // Opened again by the same holder: nothing to stamp.
  recording_fs again(f.mem);
  auto reopened = open_shard_state(again, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(reopened.ok());
  CHECK(reopened->report.decision == open_decision::write);
  for (const auto& c : again.changes) CHECK(c.find(epoch) == std::string::npos);
}

TEST_CASE("shard state: a torn transcript tail left by the previous owner is repaired at open",
          "[cluster][shard_state]") {
  shard_fixture f;
  const std::string id = "01a22a13-f275-7438-9fcb-df6c4fc1d0eb";
  const std::string torn = R"({"type":"message","id":"bb","parentId":"e71cd325","timest)";
  f.put_row(f.mem, "agent:main:a", id, header_line + "\n" + user_line + "\n" + torn);
  auto opened = open_shard_state(f.mem, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(opened.ok());
  CHECK(opened->report.tails_checked == 1);
  REQUIRE(opened->report.repaired.size() == 1);
  CHECK(opened->report.repaired[0].torn_tail_lines == 1);
  CHECK(opened->report.repaired[0].torn_tail_bytes == torn.size());
  auto text = storage::read_file(f.mem, storage::path_join(f.sessions, id + ".jsonl"), 1 << 20);
  REQUIRE(text.ok());
  CHECK(*text == header_line + "\n" + user_line + "\n");
  REQUIRE(opened->report.repaired[0].dropped_path);  // the torn bytes are kept beside it
  auto dropped = storage::read_file(f.mem, *opened->report.repaired[0].dropped_path, 1 << 20);
  REQUIRE(dropped.ok());
  CHECK(*dropped == torn + "\n");
}

TEST_CASE("shard state: a transcript whose row write was lost is adopted at open, as at a node's start",
          "[cluster][shard_state]") {
  shard_fixture f;
  REQUIRE(storage::ensure_dir(f.mem, f.sessions).ok());
  const std::string id = "01a22a13-f275-7438-9fcb-df6c4fc1d0eb";
  const std::string header =
      R"({"type":"session","version":3,"id":")" + id + R"(","timestamp":"2026-11-30T01:31:20.053Z","cwd":"/w","sessionKey":"agent:main:lost"})";
  REQUIRE(storage::replace_file_atomic(f.mem, storage::path_join(f.sessions, id + ".jsonl"),
                                       header + "\n" + user_line + "\n").ok());
  auto opened = open_shard_state(f.mem, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(opened.ok());
  REQUIRE(opened->report.adopted.size() == 1);
  CHECK(opened->report.adopted[0].key == "agent:main:lost");
  // Saved durably: a reader of the file sees the row.
  storage::session_store_file again(f.mem, f.wall, *shard_store_path(f.cluster, f.shard));
  REQUIRE(again.load().ok());
  REQUIRE(again.store().find("agent:main:lost"));
  CHECK(again.store().find("agent:main:lost")->session_id() == id);
}

TEST_CASE("shard write guard: refuses once the permit runs out, and for good once a newer owner stamped",
          "[cluster][shard_state]") {
  shard_fixture f;
  auto opened = open_shard_state(f.mem, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(opened.ok());
  const auto& guard = *opened->guard;
  CHECK(guard.check().ok());
  f.mono.set(4999);
  CHECK(guard.check().ok());
  f.mono.set(5000);  // the last renewal (at 0) is TTL/2 old
  auto expired = guard.check();
  CHECK(expired.code() == errc::locked);
  CHECK_THAT(expired.message(), Catch::Contains("shard main/17") && Catch::Contains("TTL/2"));
  f.permit.renewed(4000);  // a renewal sent at 4 s answered: writes again
  CHECK(guard.check().ok());

  // Another node took the shard (it could only after this lease expired; here the stamp alone).
  REQUIRE(stamp_shard_epoch(f.mem, shard_epoch_path(f.dir), 57, "n2").ok());
  auto fenced = guard.check();
  CHECK(fenced.code() == errc::locked);
  CHECK_THAT(fenced.message(), Catch::Contains("epoch 57") && Catch::Contains("fenced"));
  CHECK(guard.fenced());
  f.permit.renewed(4500);
  CHECK(guard.check().code() == errc::locked);  // sticky, whatever the permit says
}

TEST_CASE("shard write guard: a removed epoch stamp refuses writes", "[cluster][shard_state]") {
  shard_fixture f;
  auto opened = open_shard_state(f.mem, f.wall, f.cluster, epoch_fence(f.shard, "n1", 42), f.permit);
  REQUIRE(opened.ok());
  REQUIRE(f.mem.unlink(shard_epoch_path(f.dir)).ok());
  auto st = opened->guard->check();
  CHECK(st.code() == errc::locked);
  CHECK_THAT(st.message(), Catch::Contains("is gone"));
}

}  // namespace sessionrt::cluster
