// Sub-agents of a shard's session (actors/subagent/subagent_actor.hpp, sessions per shard; no
// etcd, virtual time): the child's key is drawn in its parent's shard, so its row, its (forked)
// transcript and its first turn are the parent's shard's, on the node that holds it; a parent
// of a shard not served here, and a child of an agent whose shard is not served here, are
// refused with errc::not_owner.
#include <catch2/catch.hpp>

#include "cluster/shard_host.hpp"
#include "cluster/shard_layout.hpp"
#include "storage/durable_file.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using namespace sessionrt::cluster;

namespace {

constexpr int kShards = 4;

std::string key_in_shard(int index) {
  for (int n = 0;; ++n) {
    std::string key = "agent:main:test:" + std::to_string(n);
    if (shard_of(key, kShards).index == index) return key;
  }
}

std::string read_or_empty(const std::string& path) {
  auto text = storage::read_file(storage::posix_fs(), path, 1u << 24);
  return text.ok() ? *text : std::string();
}

struct subagent_node {
  testing::lifecycle_harness h;
  manual_clock mono{1000};
  write_permit permit{mono, "n1"};
  std::unique_ptr<runtime::runtime> rt;
  std::unique_ptr<shard_host> host;

  subagent_node() {
    permit.start(10000, mono.now_ms());
    auto o = h.options();
    o.shard_of = shard_index_fn(kShards);
    rt = testing::lifecycle_harness::start_with(std::move(o));
    shard_host_options ho;
    ho.cluster_dir = h.dir.path();
    ho.shards_per_agent = kShards;
    host = std::make_unique<shard_host>(*rt, storage::posix_fs(), h.clk, permit, ho);
  }
  ~subagent_node() { (void)rt->stop(); }
  std::string sessions_dir(int index) {
    auto dir = shard_sessions_dir(h.dir.path(), shard_id{"main", index});
    REQUIRE(dir.ok());
    return *dir;
  }
};

}  // namespace

TEST_CASE("a sub-agent of a shard's session lives in its parent's shard, forked from its transcript") {
  subagent_node n;
  REQUIRE(n.host->acquired(shard_claim{shard_id{"main", 1}, "n1", 5, 1}).ok());
  const std::string parent = key_in_shard(1);
  chat_event ev = testing::dm("u1", "the parent's words");
  ev.session_key = parent;
  REQUIRE(n.rt->send(std::move(ev)).get().st.ok());

  actors::subagent_spec spec;
  spec.task = "the child's task";
  spec.fork = true;
  turn_outcome child = n.rt->spawn_subagent(parent, spec).get();
  INFO(child.st.to_string());
  REQUIRE(child.st.ok());
  REQUIRE(child.session_key.rfind("agent:main:subagent:", 0) == 0);
  CHECK(shard_of(child.session_key, kShards).index == 1);  // drawn in the parent's shard
  CHECK(child.reply.has_value());
  REQUIRE(n.rt->flush().ok());
  const std::string store = read_or_empty(n.sessions_dir(1) + "/sessions.json");
  CHECK(store.find(child.session_key) != std::string::npos);
  auto row = n.rt->session(child.session_key);
  REQUIRE(row.ok());
  REQUIRE(row->has_value());
  CHECK((*row)->parent_session_key() == std::optional<std::string_view>(parent));
  // Its transcript is in the shard's dir and starts from the parent's branch.
  const std::string file((*row)->session_file().value_or(""));
  CHECK(file.rfind(n.sessions_dir(1) + "/", 0) == 0);
  const std::string text = read_or_empty(file);
  CHECK(text.find("the parent's words") != std::string::npos);
  CHECK(text.find("the child's task") != std::string::npos);
  // Nothing in the plain layout.
  CHECK_FALSE(storage::posix_fs().lstat(n.h.dir.path() + "/agents/main/sessions/sessions.json").ok());
}

TEST_CASE("a sub-agent spawn is refused when the parent's or the child's shard is not served here") {
  subagent_node n;
  REQUIRE(n.host->acquired(shard_claim{shard_id{"main", 1}, "n1", 5, 1}).ok());
  actors::subagent_spec spec;
  spec.task = "work";
  turn_outcome elsewhere = n.rt->spawn_subagent(key_in_shard(2), spec).get();
  CHECK(elsewhere.st.code() == errc::not_owner);
  CHECK(elsewhere.st.message().find("main/002") != std::string::npos);

  const std::string parent = key_in_shard(1);
  chat_event ev = testing::dm("u1", "hello");
  ev.session_key = parent;
  REQUIRE(n.rt->send(std::move(ev)).get().st.ok());
  actors::subagent_spec other = spec;
  other.agent_id = "ops";  // its shard of the same index, ops/001, is not held here
  turn_outcome refused = n.rt->spawn_subagent(parent, other).get();
  CHECK(refused.st.code() == errc::not_owner);
  CHECK(refused.st.message().find("ops/001") != std::string::npos);
}
