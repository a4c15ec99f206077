// `store merge` (cluster/shard_merge.hpp): several shards give back the single node's files;
// keys in two shards, a non-empty --out, a shard with an unreplayed commit log; and a merge
// killed after any of its changes leaves --out absent or complete, and a rerun finishes it.
#include "cluster/shard_merge.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cluster/shard_layout.hpp"
#include "messages/ids.hpp"
#include "messages/json_writer.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "storage/durable_file.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_paths.hpp"
#include "storage/session_store_file.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::cluster {
namespace {

constexpr int kShards = 8;

// A process that dies after `die_after` changes: every later call fails, as nothing happens
// after a kill -9 (memory_fs keeps every change made before it, as the page cache does).
class dying_fs final : public storage::forwarding_fs {
 public:
  using forwarding_fs::forwarding_fs;
  int changes = 0;
  int die_after = -1;  // -1: never
  bool dead() const { return die_after >= 0 && changes >= die_after; }
  status change() {
    if (dead()) return {errc::io_error, "killed"};
    ++changes;
    return {};
  }
  result<int> open(const std::string& p, int flags, mode_t mode) override {
    if (flags & (O_CREAT | O_WRONLY | O_RDWR | O_TRUNC)) SRT_RETURN_IF_ERROR(change());
    else if (dead()) return status(errc::io_error, "killed");
    return forwarding_fs::open(p, flags, mode);
  }
  result<std::size_t> write(int fd, const char* d, std::size_t n) override {
    SRT_RETURN_IF_ERROR(change());
    return forwarding_fs::write(fd, d, n);
  }
  result<std::size_t> pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) override {  // the commit log's
    SRT_RETURN_IF_ERROR(change());
    return forwarding_fs::pwrite(fd, d, n, o);
  }
  status fsync(int fd) override {
    SRT_RETURN_IF_ERROR(change());
    return forwarding_fs::fsync(fd);
  }
  status rename(const std::string& a, const std::string& b) override {
    SRT_RETURN_IF_ERROR(change());
    return forwarding_fs::rename(a, b);
  }
  status link(const std::string& a, const std::string& b) override {
    SRT_RETURN_IF_ERROR(change());
    return forwarding_fs::link(a, b);
  }
  status unlink(const std::string& p) override {
    SRT_RETURN_IF_ERROR(change());
    return forwarding_fs::unlink(p);
  }
  status mkdir(const std::string& p, mode_t m) override {
    SRT_RETURN_IF_ERROR(change());
    return forwarding_fs::mkdir(p, m);
  }
  result<storage::file_info> lstat(const std::string& p) override {
    if (dead()) return status(errc::io_error, "killed");
    return forwarding_fs::lstat(p);
  }
  result<std::vector<std::string>> list_dir(const std::string& p) override {
    if (dead()) return status(errc::io_error, "killed");
    return forwarding_fs::list_dir(p);
  }
};

struct cluster_fixture {
  manual_clock wall{1789041600000};
  storage::memory_fs mem{wall};
  storage::fs& fs;
  const std::string single;
  const std::string cluster;
  std::vector<std::string> keys;

  std::string transcript_text(const std::string& id, const std::string& key) {
    return R"({"type":"session","version":3,"id":")" + id +
           R"(","timestamp":"2026-11-30T01:31:20.053Z","cwd":"/w","sessionKey":")" + key + "\"}\n" +
           R"({"type":"message","id":"e1","parentId":null,"timestamp":"2026-11-30T01:34:35.414Z","message":{"role":"user","content":"hello )" +
           key + R"(","timestamp":1789041601500}})" + "\n";
  }

  // The same sessions written twice: as one node's state dir, and split into shards by shard_of.
  // On memory_fs by default; on the real files under `root` when `real` is given.
  explicit cluster_fixture(storage::fs* real = nullptr, const std::string& root = "")
      : fs(real ? *real : mem), single(root + "/single"), cluster(root + "/cluster") {
    for (int i = 0; i < 14; ++i) keys.push_back("agent:main:telegram:direct:user" + std::to_string(i));
    for (int i = 0; i < 4; ++i) keys.push_back("agent:ops:cron:job" + std::to_string(i));
    std::map<std::string, storage::session_store> single_stores;
    std::map<shard_id, storage::session_store> shard_stores;
    std::int64_t t = 1789041600000;
    for (const auto& key : keys) {
      const shard_id s = shard_of(key, kShards);
      const std::string id = new_session_id();
      const std::string single_dir = *storage::agent_sessions_dir(single, s.agent);
      const std::string shard_sessions = *shard_sessions_dir(cluster, s);
      const std::string text = transcript_text(id, key);
      REQUIRE(storage::ensure_dir(fs, single_dir).ok());
      REQUIRE(storage::ensure_dir(fs, shard_sessions).ok());
      REQUIRE(storage::replace_file_atomic(fs, storage::path_join(single_dir, id + ".jsonl"), text).ok());
      REQUIRE(storage::replace_file_atomic(fs, storage::path_join(shard_sessions, id + ".jsonl"), text).ok());
      boost::json::object row{{"sessionId", id}, {"updatedAt", ++t}, {"chatType", "direct"}};
      row["sessionFile"] = storage::path_join(single_dir, id + ".jsonl");
      single_stores[s.agent].upsert(key, session_entry(row));
      row["sessionFile"] = storage::path_join(shard_sessions, id + ".jsonl");
      shard_stores[s].upsert(key, session_entry(row));
    }
    for (auto& [agent, store] : single_stores) save(*storage::store_path(single, agent), std::move(store));
    for (auto& [s, store] : shard_stores) save(*shard_store_path(cluster, s), std::move(store));
    // A shard a node opened at least once: its epoch stamp and an empty commit log dir.
    REQUIRE(storage::ensure_dir(fs, storage::commit_log::log_dir(*shard_dir(cluster, shard_stores.begin()->first))).ok());
  }

  void save(const std::string& path, storage::session_store store) {
    storage::session_store_file file(fs, wall, path);
    file.store() = std::move(store);
    REQUIRE(file.save().ok());
  }

  storage::session_store load(const std::string& path) {
    storage::session_store_file file(fs, wall, path);
    auto rep = file.load();
    REQUIRE(rep.ok());
    CHECK(!rep->quarantine);
    return std::move(file.store());
  }

  // The merged state dir holds what the single node's does: the same rows (sessionFile naming
  // the merged dir) and the same transcript bytes.
  void check_equals_single(const std::string& out) {
    for (const char* agent : {"main", "ops"}) {
      const std::string single_dir = *storage::agent_sessions_dir(single, agent);
      const std::string out_dir = *storage::agent_sessions_dir(out, agent);
      auto want = load(*storage::store_path(single, agent));
      auto got = load(*storage::store_path(out, agent));
      CHECK(got.size() == want.size());
      for (const auto& row : want) {
        const session_entry* merged = got.find(row.key);
        REQUIRE(merged);
        session_entry a = row.entry, b = *merged;
        const std::string name = std::string(*a.session_id()) + ".jsonl";
        CHECK(b.session_file() == storage::path_join(out_dir, name));
        a.clear_session_file();
        b.clear_session_file();
        CHECK(json::to_compact(b.json()) == json::to_compact(a.json()));
        CHECK(storage::read_file(fs, storage::path_join(out_dir, name), 1 << 20).value() ==
              storage::read_file(fs, storage::path_join(single_dir, name), 1 << 20).value());
      }
    }
  }
};

}  // namespace

TEST_CASE("store merge: several shards give the single node's sessions.json and transcripts",
          "[cluster][shard_merge]") {
  cluster_fixture f;
  auto listed = list_shards(f.fs, f.cluster);
  REQUIRE(listed.ok());
  REQUIRE(listed->shards.size() >= 4);  // 18 keys over 8 + 8 shards
  std::vector<merge_progress> seen;
  merge_options o;
  o.progress = [&](const merge_progress& p) { seen.push_back(p); };
  auto r = merge_shards(f.fs, f.wall, f.cluster, "/out", o);
  REQUIRE(r.ok());
  CHECK(r->shards == listed->shards.size());
  CHECK(r->rows == f.keys.size());
  CHECK(r->files == f.keys.size());
  CHECK(r->duplicates.empty());
  CHECK(r->warnings.empty());  // nothing left out: each shard's sessions.json is merged, not skipped
  CHECK(r->agents == std::vector<std::string>{"main", "ops"});
  REQUIRE(seen.size() == listed->shards.size());
  CHECK(seen.back().shards_done == seen.back().shards_total);
  f.check_equals_single("/out");
  CHECK(!f.fs.lstat(merge_staging_dir("/out")).ok());
  CHECK(!f.fs.lstat(merge_staging_dir("/out") + "-source").ok());
}

TEST_CASE("store merge: a key in two shards is kept once, the newest updatedAt, and reported",
          "[cluster][shard_merge]") {
  cluster_fixture f;
  const std::string key = f.keys[0];
  const shard_id home = shard_of(key, kShards);
  const shard_id other{home.agent, (home.index + 1) % kShards};
  storage::session_store_file file(f.fs, f.wall, *shard_store_path(f.cluster, other));
  REQUIRE(storage::ensure_dir(f.fs, *shard_sessions_dir(f.cluster, other)).ok());
  REQUIRE(file.load().ok());
  file.store().upsert(key, session_entry(boost::json::object{{"sessionId", "stray"}, {"updatedAt", 1}}));
  REQUIRE(file.save().ok());
  auto r = merge_shards(f.fs, f.wall, f.cluster, "/out");
  REQUIRE(r.ok());
  REQUIRE(r->duplicates.size() == 1);
  CHECK(r->duplicates[0].key == key);
  CHECK(r->duplicates[0].kept == home);
  CHECK(r->duplicates[0].dropped == other);
  CHECK(r->duplicates[0].dropped_updated_at == 1);
  CHECK(r->rows == f.keys.size());
  f.check_equals_single("/out");  // the newer row won
}

TEST_CASE("store merge: a non-empty out dir is refused unless forced, and then moved aside",
          "[cluster][shard_merge]") {
  cluster_fixture f;
  REQUIRE(storage::ensure_dir(f.fs, "/out").ok());
  REQUIRE(storage::replace_file_atomic(f.fs, "/out/keep-me", "x").ok());
  auto refused = merge_shards(f.fs, f.wall, f.cluster, "/out");
  REQUIRE(!refused.ok());
  CHECK(refused.error().code() == errc::already_exists);
  CHECK_THAT(refused.error().message(), Catch::Contains("/out is not empty") && Catch::Contains("--force"));
  CHECK(!f.fs.lstat(merge_staging_dir("/out")).ok());  // refused before writing anything

  merge_options o;
  o.force = true;
  auto forced = merge_shards(f.fs, f.wall, f.cluster, "/out/", o);
  REQUIRE(forced.ok());
  REQUIRE(forced->replaced);
  CHECK(storage::read_file(f.fs, *forced->replaced + "/keep-me", 16).value() == "x");
  f.check_equals_single("/out");
}

TEST_CASE("store merge: a shard whose commit log holds records is refused with its name", "[cluster][shard_merge]") {
  cluster_fixture f;
  const shard_id s = shard_of(f.keys[0], kShards);
  const std::string dir = *shard_dir(f.cluster, s);
  auto id = storage::commit_log::state_identity(f.fs, dir);
  REQUIRE(id.ok());
  const std::string logs = storage::commit_log::log_dir(dir);
  REQUIRE(storage::ensure_dir(f.fs, logs).ok());
  auto log = storage::commit_log::create_log(f.fs, f.wall, logs, 1, *id);
  REQUIRE(log.ok());
  REQUIRE(f.fs.close(log->fd).ok());
  // A header alone is a log with nothing to replay: merged.
  auto header_only = merge_shards(f.fs, f.wall, f.cluster, "/out1");
  REQUIRE(header_only.ok());
  CHECK(header_only->rows == f.keys.size());
  // A second log holding one row change the sessions.json may lack: refused, naming it.
  auto second = storage::commit_log::create_log(f.fs, f.wall, logs, 2, *id);
  REQUIRE(second.ok());
  {
    storage::commit_log::log_writer writer(f.fs, second->fd, second->path, second->length, second->number);
    std::string payload;
    storage::commit_log::encode_row_change(payload, storage::commit_log::kFromSession, 1,
                                           "agents/main/sessions/sessions.json", f.keys[0], "");
    writer.add_record(payload);
    REQUIRE(writer.write().ok());
  }
  REQUIRE(f.fs.close(second->fd).ok());
  auto refused = merge_shards(f.fs, f.wall, f.cluster, "/out2");
  REQUIRE(!refused.ok());
  CHECK(refused.error().code() == errc::locked);
  CHECK_THAT(refused.error().message(), Catch::Contains("shard " + to_string(s)) && Catch::Contains(second->path) &&
                                            Catch::Contains("not replayed"));
  CHECK(!f.fs.lstat("/out2").ok());
  CHECK(!f.fs.lstat(merge_staging_dir("/out2")).ok());
}

TEST_CASE("store merge: killed after any change, out is absent or complete and a rerun finishes it",
          "[cluster][shard_merge]") {
  cluster_fixture f;
  dying_fs counting(f.fs);
  REQUIRE(merge_shards(counting, f.wall, f.cluster, "/count").ok());
  const int total = counting.changes;
  REQUIRE(total > 20);
  int complete_after_kill = 0, resumed = 0;
  for (int k = 0; k < total; ++k) {
    const std::string out = "/o" + std::to_string(k);
    dying_fs dying(f.fs);
    dying.die_after = k;
    auto killed = merge_shards(dying, f.wall, f.cluster, out);
    REQUIRE(!killed.ok());
    const bool there = f.fs.lstat(out).ok();
    if (there) {  // the rename happened: complete
      ++complete_after_kill;
      f.check_equals_single(out);
      continue;
    }
    auto rerun = merge_shards(f.fs, f.wall, f.cluster, out);
    REQUIRE(rerun.ok());
    if (rerun->resumed) ++resumed;
    f.check_equals_single(out);
    CHECK(!f.fs.lstat(merge_staging_dir(out)).ok());
  }
  CHECK(complete_after_kill >= 1);  // killed between the rename and the marker's removal
  CHECK(resumed > total / 2);       // most kills leave a staging dir the rerun finishes
}

namespace {

// The merging process killed for real: SIGKILL before its `kill_at`-th change (the changes
// dying_fs counts), on posix_fs.
class killing_fs final : public storage::forwarding_fs {
 public:
  killing_fs(storage::fs& inner, int kill_at) : forwarding_fs(inner), kill_at_(kill_at) {}
  result<int> open(const std::string& p, int flags, mode_t mode) override {
    if (flags & (O_CREAT | O_WRONLY | O_RDWR | O_TRUNC)) step();
    return forwarding_fs::open(p, flags, mode);
  }
  result<std::size_t> write(int fd, const char* d, std::size_t n) override {
    step();
    return forwarding_fs::write(fd, d, n);
  }
  result<std::size_t> pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) override {  // the commit log's
    step();
    return forwarding_fs::pwrite(fd, d, n, o);
  }
  status fsync(int fd) override {
    step();
    return forwarding_fs::fsync(fd);
  }
  status rename(const std::string& a, const std::string& b) override {
    step();
    return forwarding_fs::rename(a, b);
  }
  status link(const std::string& a, const std::string& b) override {
    step();
    return forwarding_fs::link(a, b);
  }
  status unlink(const std::string& p) override {
    step();
    return forwarding_fs::unlink(p);
  }
  status mkdir(const std::string& p, mode_t m) override {
    step();
    return forwarding_fs::mkdir(p, m);
  }

 private:
  void step() {
    if (++changes_ == kill_at_) ::kill(::getpid(), SIGKILL);
  }
  int kill_at_;
  int changes_ = 0;
};

}  // namespace

TEST_CASE("store merge: a merge process killed with SIGKILL leaves out absent or complete on real files",
          "[cluster][shard_merge]") {
  testing::temp_dir tmp;
  cluster_fixture f(&storage::posix_fs(), tmp.path());
  dying_fs counting(storage::posix_fs());
  REQUIRE(merge_shards(counting, f.wall, f.cluster, tmp.file("count")).ok());
  const int total = counting.changes;
  REQUIRE(total > 20);
  int killed = 0, there = 0;
  for (int k : {1, 2, total / 4, total / 2, (3 * total) / 4, total - 3, total - 2, total - 1}) {
    const std::string out = tmp.file("out" + std::to_string(k));
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      killing_fs fs(storage::posix_fs(), k);
      auto r = merge_shards(fs, f.wall, f.cluster, out);
      ::_exit(r.ok() ? 0 : 3);  // not reached when killed
    }
    int wstatus = 0;
    REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
    REQUIRE(WIFSIGNALED(wstatus));
    CHECK(WTERMSIG(wstatus) == SIGKILL);
    ++killed;
    if (storage::posix_fs().lstat(out).ok()) {
      ++there;
      f.check_equals_single(out);  // only the rename makes it appear: complete
      continue;
    }
    auto rerun = merge_shards(storage::posix_fs(), f.wall, f.cluster, out);
    REQUIRE(rerun.ok());
    f.check_equals_single(out);
  }
  CHECK(killed == 8);
  CHECK(there >= 1);  // killed after the rename (total - 1: the marker's removal)
}

}  // namespace sessionrt::cluster
