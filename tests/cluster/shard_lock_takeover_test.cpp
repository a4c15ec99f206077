// An earlier owner's transcript write locks do not keep a shard's new owner out
// (cluster/shard_state.hpp): opening the shard at a new epoch removes them; an open that the
// fence refuses removes nothing. On memory_fs with manual clocks.
#include <catch2/catch.hpp>

#include "cluster/shard_epoch_file.hpp"
#include "cluster/shard_layout.hpp"
#include "cluster/shard_state.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"

namespace sessionrt::cluster {
namespace {

// A lock as another process wrote it (storage/write_lock.hpp's payload; a live pid of this host).
const std::string k_lock_payload = "{\n  \"pid\": 1,\n  \"createdAt\": \"2026-11-30T01:31:20.053Z\",\n  \"maxHoldMs\": 300000\n}\n";

struct lock_fixture {
  manual_clock wall{1789041600000};
  manual_clock mono{0};
  storage::memory_fs mem{wall};
  write_permit permit{mono, "n2"};
  const std::string cluster = "/cluster";
  const shard_id shard{"main", 17};
  std::string dir = *shard_dir(cluster, shard);
  std::string sessions = *shard_sessions_dir(cluster, shard);
  std::string lock = storage::path_join(sessions, "01a22a13-f275-7438-9fcb-df6c4fc1d0eb.jsonl.lock");
  lock_fixture() {
    permit.start(10000, 0);
    REQUIRE(storage::ensure_dir(mem, sessions).ok());
    REQUIRE(storage::replace_file_atomic(mem, lock, k_lock_payload).ok());
  }
};

}  // namespace

TEST_CASE("shard lock takeover: the new owner's open removes the transcript locks an earlier owner left",
          "[cluster][shard_state]") {
  lock_fixture f;
  REQUIRE(stamp_shard_epoch(f.mem, shard_epoch_path(f.dir), 41, "n1").ok());
  auto opened = open_shard_state(f.mem, f.wall, f.cluster, epoch_fence(f.shard, "n2", 42), f.permit);
  INFO((opened ? std::string() : opened.error().to_string()));
  REQUIRE(opened.ok());
  CHECK(f.mem.lstat(f.lock).error().code() == errc::not_found);
  REQUIRE(opened->report.locks_removed.size() == 1);
  CHECK(opened->report.locks_removed[0] == f.lock);
}

TEST_CASE("shard lock takeover: an open the fence refuses leaves the locks where they are", "[cluster][shard_state]") {
  lock_fixture f;
  REQUIRE(stamp_shard_epoch(f.mem, shard_epoch_path(f.dir), 57, "n3").ok());
  auto opened = open_shard_state(f.mem, f.wall, f.cluster, epoch_fence(f.shard, "n2", 42), f.permit);
  REQUIRE(!opened.ok());
  CHECK(f.mem.lstat(f.lock).ok());
}

}  // namespace sessionrt::cluster
