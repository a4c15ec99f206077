// `store split` (cluster/shard_split.hpp): a single node's state dir into the shard layout, the
// reverse of `store merge`. Split then merge gives back the same rows (sessionFile aside, which
// names the new dir) and the same files byte for byte; each row lands in its key's shard with
// its transcript; a file of no row is kept in shard 000; an existing target is refused.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>

#include "cluster/shard_layout.hpp"
#include "cluster/shard_merge.hpp"
#include "cluster/shard_split.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store_file.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using namespace sessionrt::cluster;

namespace {

constexpr int kShards = 4;

storage::session_store read_store(const std::string& path) {
  auto text = storage::read_file(storage::posix_fs(), path, 1u << 24);
  REQUIRE(text.ok());
  auto parsed = storage::load_from_text(*text);
  REQUIRE(parsed.ok());
  return std::move(parsed->store);
}

// The rows by key, without sessionFile (which names the dir), and the sessionFile's name.
std::map<std::string, std::string> rows_of(const storage::session_store& store) {
  std::map<std::string, std::string> out;
  for (const auto& row : store) {
    boost::json::object o = row.entry.json();
    std::string file;
    if (auto* sf = o.if_contains("sessionFile"); sf && sf->is_string()) file = storage::path_basename(std::string(sf->as_string()));
    o.erase("sessionFile");
    out[std::string(row.key)] = boost::json::serialize(o) + " file=" + file;
  }
  return out;
}

// name -> contents of the regular files of `dir`, sessions.json left out.
std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const bool lock = name.size() > 5 && name.substr(name.size() - 5) == ".lock";
    if (!e.is_regular_file() || name.rfind("sessions.json", 0) == 0 || lock) continue;
    auto text = storage::read_file(storage::posix_fs(), e.path().string(), 1u << 24);
    REQUIRE(text.ok());
    out[name] = *text;
  }
  return out;
}

}  // namespace

TEST_CASE("store split puts each row in its key's shard and a merge gives the same rows and files back") {
  testing::lifecycle_harness h;
  {
    auto rt = h.start();
    for (int i = 0; i < 12; ++i) {
      chat_event ev = testing::dm("u" + std::to_string(i), "hello " + std::to_string(i));
      ev.session_key = "agent:main:test:" + std::to_string(i);
      REQUIRE(rt->send(std::move(ev)).get().st.ok());
    }
    REQUIRE(rt->stop().ok());
  }
  const std::string state = h.dir.path();
  const std::string sessions = h.sessions_dir();
  // A file of no row (an archive of a removed session): kept, in shard 000.
  REQUIRE(storage::replace_file_atomic(storage::posix_fs(), sessions + "/gone.jsonl.deleted.2026-01-01T00-00-00.000Z",
                                       "{\"type\":\"session\"}\n")
              .ok());
  const auto original_rows = rows_of(read_store(sessions + "/sessions.json"));
  const auto original_files = files_of(sessions);
  REQUIRE(original_rows.size() == 12);

  testing::temp_dir target;
  const std::string out = target.path() + "/cluster";
  split_options o;
  o.shards_per_agent = kShards;
  auto split = split_state_dir(storage::posix_fs(), h.clk, state, out, o);
  INFO((split.ok() ? std::string() : split.error().message()));
  REQUIRE(split.ok());
  CHECK(split->rows == 12);
  CHECK(split->unplaced == 1);
  CHECK(split->files == original_files.size());
  CHECK_FALSE(storage::posix_fs().lstat(split_staging_dir(out)).ok());

  // Each row is in its key's shard, its transcript beside it, its sessionFile naming it.
  std::size_t rows = 0;
  for (int index = 0; index < kShards; ++index) {
    auto dir = shard_sessions_dir(out, shard_id{"main", index});
    REQUIRE(dir.ok());
    if (!storage::posix_fs().lstat(*dir + "/sessions.json").ok()) continue;
    for (const auto& row : read_store(*dir + "/sessions.json")) {
      ++rows;
      CHECK(shard_of(row.key, kShards).index == index);
      const std::string file(row.entry.session_file().value_or(""));
      CHECK(storage::path_dirname(file) == *dir);
      CHECK(storage::posix_fs().lstat(file).ok());
    }
  }
  CHECK(rows == 12);
  auto zero = shard_sessions_dir(out, shard_id{"main", 0});
  REQUIRE(zero.ok());
  CHECK(storage::posix_fs().lstat(*zero + "/gone.jsonl.deleted.2026-01-01T00-00-00.000Z").ok());
  // The state dir is as it was.
  CHECK(rows_of(read_store(sessions + "/sessions.json")) == original_rows);

  // Merged back: the same rows and the same files.
  const std::string merged = target.path() + "/merged";
  auto back = merge_shards(storage::posix_fs(), h.clk, out, merged);
  INFO((back.ok() ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  const std::string merged_sessions = merged + "/agents/main/sessions";
  CHECK(rows_of(read_store(merged_sessions + "/sessions.json")) == original_rows);
  CHECK(files_of(merged_sessions) == original_files);

  // A target that exists is refused, and so is a state dir that is a cluster's.
  auto again = split_state_dir(storage::posix_fs(), h.clk, state, out, o);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code() == errc::already_exists);
  auto of_cluster = split_state_dir(storage::posix_fs(), h.clk, out, target.path() + "/other", o);
  REQUIRE_FALSE(of_cluster.ok());
  CHECK(of_cluster.error().code() == errc::invalid_argument);
}
