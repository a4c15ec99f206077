// A runtime serving sessions per shard (runtime_options::shard_of, cluster/shard_host.hpp), no
// etcd: shards opened through the fence serve their keys from their own dirs, a key of a shard
// not served is refused with errc::not_owner, a closed shard's rows are durable in its dir and
// its keys refused, a shard whose stamp moved on refuses to write, and what arrives for a shard
// being opened waits and is delivered in arrival order.
#include <catch2/catch.hpp>

#include "cluster/shard_epoch_file.hpp"
#include "cluster/shard_host.hpp"
#include "cluster/shard_layout.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using namespace sessionrt::cluster;

namespace {

constexpr int kShards = 4;

// A key of agent main in shard `index` of kShards (the first "agent:main:test:<n>" there).
std::string key_in_shard(int index, int skip = 0) {
  for (int n = 0;; ++n) {
    std::string key = "agent:main:test:" + std::to_string(n);
    if (shard_of(key, kShards).index == index && skip-- == 0) return key;
  }
}

chat_event to_key(const std::string& key, const std::string& text) {
  chat_event ev = testing::dm("u1", text);
  ev.session_key = key;
  return ev;
}

std::string store_text(const std::string& cluster_dir, int index) {
  auto path = shard_store_path(cluster_dir, shard_id{"main", index});
  REQUIRE(path.ok());
  auto text = storage::read_file(storage::posix_fs(), *path, 1u << 24);
  return text.ok() ? *text : std::string();
}

struct serving_node {
  testing::lifecycle_harness h;
  manual_clock mono{1000};
  write_permit permit{mono, "n1"};
  std::unique_ptr<runtime::runtime> rt;
  std::unique_ptr<shard_host> host;

  serving_node() {
    permit.start(10000, mono.now_ms());
    auto o = h.options();
    o.shard_of = shard_index_fn(kShards);
    rt = testing::lifecycle_harness::start_with(std::move(o));
    shard_host_options ho;
    ho.cluster_dir = h.dir.path();
    host = std::make_unique<shard_host>(*rt, storage::posix_fs(), h.clk, permit, ho);
  }
  ~serving_node() { (void)rt->stop(); }
  status take(int index, std::int64_t epoch) { return host->acquired(shard_claim{shard_id{"main", index}, "n1", epoch, 1}); }
  turn_outcome turn(const std::string& key, const std::string& text) { return rt->send(to_key(key, text)).get(); }
};

}  // namespace

TEST_CASE("a node serves the keys of the shards it opened from their dirs and refuses the others") {
  serving_node n;
  REQUIRE(n.take(0, 5).ok());
  REQUIRE(n.take(1, 6).ok());
  CHECK(n.rt->open_shards() == std::vector<std::string>{"main/000", "main/001"});
  const std::string k0 = key_in_shard(0), k1 = key_in_shard(1), k2 = key_in_shard(2);

  auto a = n.turn(k0, "hello zero");
  INFO(a.st.to_string());
  REQUIRE(a.st.ok());
  auto b = n.turn(k1, "hello one");
  REQUIRE(b.st.ok());
  auto c = n.turn(k2, "hello two");
  CHECK(c.st.code() == errc::not_owner);
  CHECK(c.st.message().find("main/002") != std::string::npos);
  CHECK(c.session_key == k2);

  REQUIRE(n.rt->flush().ok());
  const std::string dir = n.h.dir.path();
  CHECK(store_text(dir, 0).find(k0) != std::string::npos);
  CHECK(store_text(dir, 0).find(k1) == std::string::npos);
  CHECK(store_text(dir, 1).find(k1) != std::string::npos);
  // The transcript is in the shard's sessions dir, and the whole state dir holds no agent store.
  auto sessions0 = shard_sessions_dir(dir, shard_id{"main", 0});
  REQUIRE(sessions0.ok());
  CHECK(storage::posix_fs().lstat(*sessions0 + "/" + a.session_id + ".jsonl").ok());
  CHECK_FALSE(storage::posix_fs().lstat(dir + "/agents/main/sessions/sessions.json").ok());
  // The epoch stamps are the claims'.
  auto stamp = read_shard_epoch(storage::posix_fs(), shard_epoch_path(dir + "/shards/main/000"));
  REQUIRE(stamp.ok());
  CHECK(*stamp == std::optional<std::int64_t>(5));
}

TEST_CASE("a released shard is durable in its dir and its keys are refused from then on") {
  serving_node n;
  REQUIRE(n.take(0, 5).ok());
  const std::string k0 = key_in_shard(0);
  REQUIRE(n.turn(k0, "before the handoff").st.ok());
  REQUIRE(n.host->released(shard_id{"main", 0}).ok());
  CHECK(n.rt->open_shards().empty());
  CHECK(store_text(n.h.dir.path(), 0).find(k0) != std::string::npos);  // written by the close
  auto after = n.turn(k0, "after the handoff");
  CHECK(after.st.code() == errc::not_owner);

  // Opened again (a later epoch): the session continues from the shard's state.
  REQUIRE(n.take(0, 9).ok());
  auto again = n.turn(k0, "back again");
  REQUIRE(again.st.ok());
  CHECK_FALSE(again.new_session);
}

TEST_CASE("a shard whose epoch stamp moved on refuses the turn's writes") {
  serving_node n;
  REQUIRE(n.take(1, 6).ok());
  const std::string k1 = key_in_shard(1);
  REQUIRE(n.turn(k1, "mine still").st.ok());
  // Another node took the shard at a higher epoch and stamped it.
  REQUIRE(stamp_shard_epoch(storage::posix_fs(), shard_epoch_path(n.h.dir.path() + "/shards/main/001"), 42, "n2").ok());
  auto refused = n.turn(k1, "not mine any more");
  CHECK_FALSE(refused.st.ok());
  auto opened = n.host->opened(shard_id{"main", 1});
  REQUIRE(opened);
  CHECK(opened->guard->fenced());
  CHECK(opened->files->refused() > 0);
  // A permit that ran out refuses too (a fresh shard, then the lease not renewed past TTL/2).
  REQUIRE(n.take(2, 7).ok());
  n.mono.advance(6000);
  CHECK_FALSE(n.turn(key_in_shard(2), "too late").st.ok());
}

TEST_CASE("what arrives for a shard being opened waits and is delivered in arrival order") {
  serving_node n;
  const std::string k3 = key_in_shard(3);
  n.rt->opening_shard("main", 3);
  auto first = n.rt->send(to_key(k3, "first words"));
  auto second = n.rt->send(to_key(k3, "second words"));
  n.rt->settle();  // the router has both: they wait for the shard
  CHECK(first.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
  REQUIRE(n.take(3, 11).ok());
  auto a = first.get();
  auto b = second.get();
  INFO(a.st.to_string());
  REQUIRE(a.st.ok());
  REQUIRE(b.st.ok());
  CHECK(a.session_id == b.session_id);
  auto sessions = shard_sessions_dir(n.h.dir.path(), shard_id{"main", 3});
  REQUIRE(sessions.ok());
  auto text = storage::read_file(storage::posix_fs(), *sessions + "/" + a.session_id + ".jsonl", 1u << 24);
  REQUIRE(text.ok());
  const auto p1 = text->find("first words"), p2 = text->find("second words");
  REQUIRE(p1 != std::string::npos);
  REQUIRE(p2 != std::string::npos);
  CHECK(p1 < p2);

  // An open that fails refuses what waited.
  const std::string k2 = key_in_shard(2);
  n.rt->opening_shard("main", 2);
  auto waiting = n.rt->send(to_key(k2, "never served"));
  n.rt->shard_open_failed("main", 2);
  CHECK(waiting.get().st.code() == errc::not_owner);
}

TEST_CASE("serves() says before a turn is taken whether its shard is here, coming or going") {
  serving_node n;
  const std::string k3 = key_in_shard(3), k2 = key_in_shard(2);  // the fixture has 4 shards
  CHECK(n.rt->serves(k3, "main").code() == errc::not_owner);  // never announced
  n.rt->opening_shard("main", 3);
  CHECK(n.rt->serves(k3, "main").ok());  // what arrives is held until the open
  n.rt->shard_open_failed("main", 3);
  CHECK(n.rt->serves(k3, "main").code() == errc::not_owner);
  REQUIRE(n.take(3, 12).ok());
  CHECK(n.rt->serves(k3, "main").ok());
  CHECK(n.rt->serves(k2, "main").code() == errc::not_owner);  // another shard
  REQUIRE(n.host->released(shard_id{"main", 3}).ok());
  const status gone = n.rt->serves(k3, "main");
  CHECK(gone.code() == errc::not_owner);
  CHECK(gone.message().find("main/003") != std::string::npos);
}
