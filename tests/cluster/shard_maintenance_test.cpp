// Store maintenance of a cluster node's shards (runtime::open_shard, cluster/shard_host.hpp; no
// etcd, virtual time): each shard a node holds is maintained as a single node's agent store is,
// through the shard's own guarded files, within the agent's bounds counted over all its shards
// (actors/maintenance/shard_bounds.hpp); a shard
// fenced before the pass refuses its file moves and the pass goes on with the others; a released
// shard is left alone, and maintained again once reopened; `sessions cleanup` covers the shards
// served here.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cluster/shard_epoch_file.hpp"
#include "cluster/shard_host.hpp"
#include "cluster/shard_layout.hpp"
#include "messages/json_access.hpp"
#include "storage/durable_file.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using namespace sessionrt::cluster;

namespace {

constexpr int kShards = 4;
constexpr std::int64_t kDay = 24LL * 3600 * 1000;

// A synthetic key (a hook's: maintenance removes it when stale, archiving its transcript) of
// agent main in shard `index` of kShards.
std::string hook_key_in_shard(int index, int skip = 0) {
  for (int n = 0;; ++n) {
    std::string key = "agent:main:hook:t" + std::to_string(n);
    if (shard_of(key, kShards).index == index && skip-- == 0) return key;
  }
}

std::string sessions_dir_of(const std::string& cluster_dir, int index) {
  auto dir = shard_sessions_dir(cluster_dir, shard_id{"main", index});
  REQUIRE(dir.ok());
  return *dir;
}

std::string store_text(const std::string& cluster_dir, int index) {
  auto text = storage::read_file(storage::posix_fs(), sessions_dir_of(cluster_dir, index) + "/sessions.json", 1u << 24);
  return text.ok() ? *text : std::string();
}

bool has_file(const std::string& dir, const std::string& name) { return storage::posix_fs().lstat(dir + "/" + name).ok(); }

// A file of `dir` whose name starts with `prefix`.
bool has_file_starting(const std::string& dir, const std::string& prefix) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

// The report's entry for the maintenance plan of shard `unit`, or nullptr.
const boost::json::object* shard_entry(const lifecycle_event& report, const std::string& unit) {
  for (const auto& s : report.data.at("stores").as_array()) {
    const auto& o = s.as_object();
    if (json::get_string(o, "shard") == std::optional<std::string_view>(unit) &&
        json::get_string(o, "plan") == std::optional<std::string_view>("maintenance"))
      return &o;
  }
  return nullptr;
}

struct maintained_node {
  testing::lifecycle_harness h;
  manual_clock mono{1000};
  write_permit permit{mono, "n1"};
  std::unique_ptr<runtime::runtime> rt;
  std::unique_ptr<shard_host> host;

  explicit maintained_node(const std::function<void(actors::runtime_settings&)>& tweak = {}) {
    permit.start(10000, mono.now_ms());
    auto o = h.options([&](actors::runtime_settings& s) {
      s.maintenance.mode = actors::maintenance_mode::enforce;
      if (tweak) tweak(s);
    });
    o.shard_of = shard_index_fn(kShards);
    rt = testing::lifecycle_harness::start_with(std::move(o));
    shard_host_options ho;
    ho.cluster_dir = h.dir.path();
    ho.shards_per_agent = kShards;
    host = std::make_unique<shard_host>(*rt, storage::posix_fs(), h.clk, permit, ho);
  }
  ~maintained_node() { (void)rt->stop(); }
  std::string dir() const { return h.dir.path(); }
  status take(int index, std::int64_t epoch) { return host->acquired(shard_claim{shard_id{"main", index}, "n1", epoch, 1}); }
  turn_outcome turn(const std::string& key, const std::string& text) {
    chat_event ev = testing::dm("u1", text);
    ev.session_key = key;
    return rt->send(std::move(ev)).get();
  }
  // A session on `key` whose turn succeeded: its session id.
  std::string session(const std::string& key) {
    auto out = turn(key, "hello from " + key);
    INFO(out.st.to_string());
    REQUIRE(out.st.ok());
    return out.session_id;
  }
  lifecycle_event maintain() {
    auto report = rt->maintain();
    INFO((report.ok() ? std::string() : report.error().message()));
    REQUIRE(report.ok());
    return *report;
  }
};

}  // namespace

TEST_CASE("a node's maintenance pass prunes the stale rows of each shard it holds in the shard's dir") {
  maintained_node n;
  REQUIRE(n.take(0, 5).ok());
  REQUIRE(n.take(1, 6).ok());
  const std::string k0 = hook_key_in_shard(0), k1 = hook_key_in_shard(1);
  const std::string id0 = n.session(k0), id1 = n.session(k1);
  REQUIRE(n.rt->flush().ok());
  const std::string d0 = sessions_dir_of(n.dir(), 0), d1 = sessions_dir_of(n.dir(), 1);
  REQUIRE(has_file(d0, id0 + ".jsonl"));
  REQUIRE(store_text(n.dir(), 0).find(k0) != std::string::npos);

  REQUIRE(n.rt->advance_clock(31 * kDay).ok());  // past pruneAfter (30 days)
  auto report = n.maintain();
  REQUIRE(n.rt->flush().ok());
  const auto* s0 = shard_entry(report, "main/000");
  const auto* s1 = shard_entry(report, "main/001");
  REQUIRE(s0);
  REQUIRE(s1);
  CHECK(json::get_int(*s0, "pruned") == std::optional<std::int64_t>(1));
  CHECK(json::get_int(*s0, "rowsRemoved") == std::optional<std::int64_t>(1));
  CHECK(shard_entry(report, "main/002") == nullptr);  // not held here
  // The rows are gone from each shard's store, the transcripts archived in each shard's dir.
  CHECK(store_text(n.dir(), 0).find(k0) == std::string::npos);
  CHECK(store_text(n.dir(), 1).find(k1) == std::string::npos);
  CHECK_FALSE(has_file(d0, id0 + ".jsonl"));
  CHECK(has_file_starting(d0, id0 + ".jsonl.deleted."));
  CHECK_FALSE(has_file(d1, id1 + ".jsonl"));
  CHECK(has_file_starting(d1, id1 + ".jsonl.deleted."));
}

TEST_CASE("maintenance of a shard of an agent under its maxEntries removes nothing though the shard holds more than its share") {
  // 4 rows and 4 MB for the agent; shard 0 of 4 holds 3 of its rows (its even share was 1).
  maintained_node n([](actors::runtime_settings& s) {
    s.maintenance.max_entries = 4;
    s.maintenance.max_disk_bytes = 4'000'000;
  });
  REQUIRE(n.take(0, 5).ok());
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(hook_key_in_shard(0, i));
    n.session(keys.back());
    n.h.clk.advance(1000);
  }
  REQUIRE(n.rt->flush().ok());
  auto report = n.maintain();
  REQUIRE(n.rt->flush().ok());
  const auto* s0 = shard_entry(report, "main/000");
  REQUIRE(s0);
  CHECK(json::get_int(*s0, "capped") == std::optional<std::int64_t>(0));
  CHECK(json::get_int(*s0, "rowsRemoved") == std::optional<std::int64_t>(0));
  const auto* budget = s0->if_contains("diskBudget");
  REQUIRE(budget);
  REQUIRE(budget->is_object());
  // The agent's budget, which the agent's few bytes are far within.
  CHECK(json::get_int(budget->as_object(), "maxBytes") == std::optional<std::int64_t>(4'000'000));
  const std::string text = store_text(n.dir(), 0);
  for (const auto& k : keys) CHECK(text.find(k) != std::string::npos);
}

TEST_CASE("maintenance of an agent over its maxEntries sheds down to it, each shard its part of the excess") {
  // maxEntries 4 (high water 5); the agent holds 6 rows, 3 in each of shards 0 and 1: the 2 rows
  // over are shared, one from each (the even 1/4 share, 1 row, took 2 from each).
  maintained_node n([](actors::runtime_settings& s) { s.maintenance.max_entries = 4; });
  REQUIRE(n.take(0, 5).ok());
  REQUIRE(n.take(1, 6).ok());
  std::vector<std::string> keys0, keys1;
  for (int i = 0; i < 3; ++i) {
    keys0.push_back(hook_key_in_shard(0, i));
    n.session(keys0.back());
    keys1.push_back(hook_key_in_shard(1, i));
    n.session(keys1.back());
    n.h.clk.advance(1000);  // distinct activity: the cap takes the least recent first
  }
  REQUIRE(n.rt->flush().ok());
  auto report = n.maintain();
  REQUIRE(n.rt->flush().ok());
  const auto* s0 = shard_entry(report, "main/000");
  const auto* s1 = shard_entry(report, "main/001");
  REQUIRE(s0);
  REQUIRE(s1);
  CHECK(json::get_int(*s0, "capped") == std::optional<std::int64_t>(1));
  CHECK(json::get_int(*s1, "capped") == std::optional<std::int64_t>(1));
  const std::string text0 = store_text(n.dir(), 0), text1 = store_text(n.dir(), 1);
  // Each shard's least recent row went; the agent keeps its 4 most recent.
  CHECK(text0.find(keys0[0]) == std::string::npos);
  CHECK(text1.find(keys1[0]) == std::string::npos);
  for (int i = 1; i < 3; ++i) {
    CHECK(text0.find(keys0[static_cast<std::size_t>(i)]) != std::string::npos);
    CHECK(text1.find(keys1[static_cast<std::size_t>(i)]) != std::string::npos);
  }
}

TEST_CASE("a fenced shard refuses its maintenance writes and the pass goes on with the others") {
  maintained_node n;
  REQUIRE(n.take(0, 5).ok());
  REQUIRE(n.take(1, 6).ok());
  const std::string k0 = hook_key_in_shard(0), k1 = hook_key_in_shard(1);
  const std::string id0 = n.session(k0), id1 = n.session(k1);
  REQUIRE(n.rt->flush().ok());
  REQUIRE(n.rt->advance_clock(31 * kDay).ok());
  // Another node took shard 0 at a higher epoch: its guard refuses every write from now on.
  REQUIRE(stamp_shard_epoch(storage::posix_fs(), shard_epoch_path(n.dir() + "/shards/main/000"), 42, "n2").ok());
  const std::string before0 = store_text(n.dir(), 0);

  auto report = n.maintain();  // ends: no crash, no hang
  auto opened = n.host->opened(shard_id{"main", 0});
  REQUIRE(opened);
  CHECK(opened->guard->fenced());
  CHECK(opened->files->refused() > 0);
  const auto* s0 = shard_entry(report, "main/000");
  REQUIRE(s0);
  CHECK(s0->contains("error"));  // the refused move stopped the shard's job
  // Nothing of shard 0 moved or changed: its transcript and its store file are as they were.
  const std::string d0 = sessions_dir_of(n.dir(), 0), d1 = sessions_dir_of(n.dir(), 1);
  CHECK(has_file(d0, id0 + ".jsonl"));
  CHECK_FALSE(has_file_starting(d0, id0 + ".jsonl.deleted."));
  CHECK(store_text(n.dir(), 0) == before0);
  // Shard 1 was maintained (a flush writes it; shard 0's write is refused).
  CHECK_FALSE(n.rt->flush().ok());
  const auto* s1 = shard_entry(report, "main/001");
  REQUIRE(s1);
  CHECK(json::get_int(*s1, "rowsRemoved") == std::optional<std::int64_t>(1));
  CHECK(has_file_starting(d1, id1 + ".jsonl.deleted."));
  CHECK(store_text(n.dir(), 1).find(k1) == std::string::npos);
}

TEST_CASE("a released shard is left alone by maintenance and maintained again once reopened") {
  maintained_node n;
  REQUIRE(n.take(0, 5).ok());
  const std::string k0 = hook_key_in_shard(0);
  const std::string id0 = n.session(k0);
  REQUIRE(n.host->released(shard_id{"main", 0}).ok());
  REQUIRE(n.rt->advance_clock(31 * kDay).ok());
  const std::string d0 = sessions_dir_of(n.dir(), 0);

  auto report = n.maintain();
  CHECK(shard_entry(report, "main/000") == nullptr);
  CHECK(has_file(d0, id0 + ".jsonl"));  // the next owner's to maintain
  CHECK(store_text(n.dir(), 0).find(k0) != std::string::npos);

  REQUIRE(n.take(0, 9).ok());  // back, at a later epoch
  auto again = n.maintain();
  REQUIRE(n.rt->flush().ok());
  const auto* s0 = shard_entry(again, "main/000");
  REQUIRE(s0);
  CHECK_FALSE(s0->contains("error"));
  CHECK(json::get_int(*s0, "rowsRemoved") == std::optional<std::int64_t>(1));
  CHECK(has_file_starting(d0, id0 + ".jsonl.deleted."));
  CHECK(store_text(n.dir(), 0).find(k0) == std::string::npos);
}

TEST_CASE("sessions cleanup on a node covers the shards it holds, one store each") {
  maintained_node n([](actors::runtime_settings& s) { s.maintenance.mode = actors::maintenance_mode::warn; });
  REQUIRE(n.take(0, 5).ok());
  REQUIRE(n.take(2, 6).ok());
  const std::string k0 = hook_key_in_shard(0), k2 = hook_key_in_shard(2);
  n.session(k0);
  n.session(k2);
  REQUIRE(n.rt->flush().ok());
  REQUIRE(n.rt->advance_clock(31 * kDay).ok());

  actors::cleanup_request dry;
  dry.agent_id = "main";
  auto planned = n.rt->cleanup(dry);
  REQUIRE(planned.ok());
  REQUIRE(planned->stores.size() == 2);
  CHECK(planned->stores[0].shard == "main/000");
  CHECK(planned->stores[1].shard == "main/002");
  CHECK(planned->stores[0].store_path == sessions_dir_of(n.dir(), 0) + "/sessions.json");
  CHECK(planned->stores[1].plan.pruned == 1);
  CHECK(store_text(n.dir(), 0).find(k0) != std::string::npos);  // a dry run changes nothing

  actors::cleanup_request apply = dry;
  apply.apply = true;
  apply.mode = actors::maintenance_mode::enforce;
  auto applied = n.rt->cleanup(apply);
  REQUIRE(applied.ok());
  REQUIRE(applied->stores.size() == 2);
  for (const auto& s : applied->stores) {
    INFO(s.shard << ": " << s.error);
    CHECK(s.error.empty());
    CHECK(s.applied);
    CHECK(s.current_entries == 0);
  }
  REQUIRE(n.rt->flush().ok());
  CHECK(store_text(n.dir(), 0).find(k0) == std::string::npos);
  CHECK(store_text(n.dir(), 2).find(k2) == std::string::npos);
  auto json = actors::cleanup_result_json(*applied, false);
  CHECK(json.at("stores").as_array().at(0).as_object().at("shard").as_string() == "main/000");

  // An agent this node serves no shard of: nothing to clean, not an error.
  actors::cleanup_request other = dry;
  other.agent_id = "ops";
  auto none = n.rt->cleanup(other);
  REQUIRE(none.ok());
  CHECK(none->stores.empty());
}
