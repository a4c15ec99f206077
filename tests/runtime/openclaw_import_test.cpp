// `sessionrt import openclaw` / `export openclaw` on agent databases built here with OpenClaw's
// schema: every storage layout of a transcript, the errors that must name their session, a
// crash mid-import resumed without duplicates, and an export that imports back byte-equal.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "messages/json_reader.hpp"
#include "runtime/openclaw/agent_db_reader.hpp"
#include "runtime/openclaw/openclaw_export.hpp"
#include "runtime/openclaw/openclaw_import.hpp"
#include "runtime/openclaw/zstd_codec.hpp"
#include "storage/faulty_fs.hpp"
#include "storage/process_probe.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"
#include "tests/runtime/openclaw/oc_test_db.hpp"
#include "tests/test_support.hpp"

namespace oc = sessionrt::openclaw;
using namespace sessionrt;
using sessionrt::testing::oc_test_db;
using sessionrt::testing::temp_dir;

namespace {

struct vector_session {
  std::string name, key, id, text;
  std::vector<std::string> lines;
};

std::vector<vector_session> vector_sessions() {
  std::vector<vector_session> out;
  int i = 0;
  for (const char* name : {"pi_01_basic", "pi_02_toolcall", "pi_03_compaction", "pi_04_branch"}) {
    vector_session v;
    v.name = name;
    v.text = testing::read_text(testing::vectors_dir() + "/" + name + ".jsonl");
    v.lines = testing::split_lines(v.text);
    auto header = json::parse_object(v.lines.at(0));
    v.id = std::string(header->at("id").as_string());
    v.key = fmt::format("agent:main:direct:user{}", ++i);
    out.push_back(std::move(v));
  }
  return out;
}

std::string entry_json(const vector_session& v, int tokens) {
  return fmt::format(R"({{"sessionId":"{}","updatedAt":1789041660000,"sessionStartedAt":1789041600000,"chatType":"direct",)"
                     R"("inputTokens":{},"outputTokens":10,"totalTokens":{},"delivery":{{"kind":"none"}}}})",
                     v.id, tokens, tokens + 10);
}

oc::import_options options(const std::string& from, const std::string& to) {
  oc::import_options o;
  o.from_dir = from;
  o.state_dir = to;
  o.durable = false;
  return o;
}

std::vector<std::string> jsonl_names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& n : testing::list_names(dir))
    if (n.size() > 6 && n.substr(n.size() - 6) == ".jsonl") out.push_back(n);
  return out;
}

storage::session_store load_store(const std::string& path) {
  auto parsed = storage::load_from_text(testing::read_text(path));
  REQUIRE(parsed.ok());
  return std::move(parsed->store);
}

// Four sessions: event_json rows, event_zstd rows, a cold archive file (with stale archives
// beside it), and an archive of the first five events followed by rows.
void build_four(oc_test_db& db, const std::vector<vector_session>& vs) {
  db.add_session(vs[0].key, vs[0].id, entry_json(vs[0], 100), vs[0].lines, oc_test_db::layout::json_rows);
  db.add_session(vs[1].key, vs[1].id, entry_json(vs[1], 200), vs[1].lines, oc_test_db::layout::zstd_rows);
  db.add_session(vs[2].key, vs[2].id, entry_json(vs[2], 300), vs[2].lines, oc_test_db::layout::cold_file);
  db.add_session(vs[3].key, vs[3].id, entry_json(vs[3], 400), vs[3].lines, oc_test_db::layout::cold_then_rows, 5);
  // Stale archives: valid names, not named by the table (one is not even zstd).
  oc_test_db::write_file(oc::cold_archive_path(db.sessions_dir(), std::string(64, 'a') + ".jsonl.zst"), "not zstd");
  oc_test_db::write_file(oc::cold_archive_path(db.sessions_dir(), std::string(64, 'b') + ".jsonl.zst"),
                         oc::compress("{\"kind\":\"header\",\"version\":1,\"sessionId\":\"x\",\"generation\":\"old\"}\n"));
}

}  // namespace

TEST_CASE("import openclaw: event_json rows, zstd rows, cold archives become the original JSONL bytes") {
  temp_dir from, to;
  auto vs = vector_sessions();
  {
    oc_test_db db(from.path(), "main");
    build_four(db, vs);
  }
  storage::system_clock clk;
  auto rep = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), options(from.path(), to.path()));
  REQUIRE(rep.ok());
  INFO((rep->errors.empty() ? std::string() : rep->errors[0].error.message()));
  REQUIRE(rep->ok());
  REQUIRE(rep->agents.size() == 1);
  const auto& a = rep->agents[0];
  CHECK(a.sessions == 4);
  CHECK(a.imported == 4);
  std::uint64_t lines = 0, bytes = 0;
  for (const auto& v : vs) lines += v.lines.size(), bytes += v.text.size();
  CHECK(a.entries == lines);
  CHECK(a.bytes == bytes);
  const std::string dir = to.path() + "/agents/main/sessions";
  for (const auto& v : vs) CHECK(testing::read_text(dir + "/" + v.id + ".jsonl") == v.text);
  auto store = load_store(dir + "/sessions.json");
  REQUIRE(store.size() == 4);
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const auto* e = store.find(vs[i].key);
    REQUIRE(e);
    CHECK(e->session_id() == std::optional<std::string_view>(vs[i].id));
    CHECK(e->total_tokens() == std::optional<std::int64_t>(static_cast<std::int64_t>(100 * (i + 1) + 10)));
    CHECK(std::string(*e->session_file()).find(vs[i].id + ".jsonl") != std::string::npos);
  }
  // Nothing was created beside the source database.
  CHECK(testing::list_names(from.path() + "/agents/main/agent") == std::vector<std::string>{"openclaw-agent.sqlite"});
}

TEST_CASE("import openclaw: torn zstd blob and missing cold archive name their session and the rest is imported") {
  temp_dir from, to;
  auto vs = vector_sessions();
  {
    oc_test_db db(from.path(), "main");
    db.add_session(vs[0].key, vs[0].id, entry_json(vs[0], 100), vs[0].lines, oc_test_db::layout::json_rows);
    // Torn: the blob of seq 2 loses its last bytes.
    std::vector<std::string> head(vs[1].lines.begin(), vs[1].lines.begin() + 2), tail(vs[1].lines.begin() + 3, vs[1].lines.end());
    db.add_session(vs[1].key, vs[1].id, entry_json(vs[1], 200), head, oc_test_db::layout::json_rows);
    std::string z = oc::compress(vs[1].lines[2]);
    db.add_zstd_row(vs[1].id, 2, vs[1].lines[2], z.substr(0, z.size() - 4));
    auto cold = db.add_session(vs[2].key, vs[2].id, entry_json(vs[2], 300), vs[2].lines, oc_test_db::layout::cold_file);
    std::filesystem::remove(cold);
    db.add_session(vs[3].key, vs[3].id, entry_json(vs[3], 400), vs[3].lines, oc_test_db::layout::cold_blob);
  }
  storage::system_clock clk;
  auto rep = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), options(from.path(), to.path()));
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());
  REQUIRE(rep->errors.size() == 2);
  const auto& torn = rep->errors[0].key == vs[1].key ? rep->errors[0] : rep->errors[1];
  const auto& missing = rep->errors[0].key == vs[1].key ? rep->errors[1] : rep->errors[0];
  CHECK(torn.key == vs[1].key);
  CHECK(torn.error.code() == errc::corrupt);
  CHECK_THAT(torn.error.message(), Catch::Contains(vs[1].id) && Catch::Contains("seq 2") && Catch::Contains("zstd"));
  CHECK(missing.key == vs[2].key);
  CHECK(missing.error.code() == errc::not_found);
  CHECK_THAT(missing.error.message(), Catch::Contains(vs[2].id) && Catch::Contains("cold archive") && Catch::Contains("missing"));
  CHECK(rep->agents[0].imported == 2);
  CHECK(rep->agents[0].failed == 2);
  const std::string dir = to.path() + "/agents/main/sessions";
  CHECK(jsonl_names(dir).size() == 2);
  CHECK_FALSE(testing::exists(dir + "/" + vs[1].id + ".jsonl"));
  CHECK_FALSE(testing::exists(dir + "/" + vs[2].id + ".jsonl"));
  CHECK(testing::read_text(dir + "/" + vs[3].id + ".jsonl") == vs[3].text);
  auto store = load_store(dir + "/sessions.json");
  CHECK(store.size() == 2);
  CHECK_FALSE(store.contains(vs[1].key));
  CHECK_FALSE(store.contains(vs[2].key));
}

TEST_CASE("import openclaw: an unknown schema version names the database and imports nothing") {
  temp_dir from, to;
  auto vs = vector_sessions();
  {
    oc_test_db db(from.path(), "main", 24);
    db.add_session(vs[0].key, vs[0].id, entry_json(vs[0], 100), vs[0].lines, oc_test_db::layout::json_rows);
  }
  {
    oc_test_db other(from.path(), "work");
    other.add_session("agent:work:main", vs[1].id, entry_json(vs[1], 1), vs[1].lines, oc_test_db::layout::json_rows);
  }
  storage::system_clock clk;
  auto rep = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), options(from.path(), to.path()));
  REQUIRE(rep.ok());
  CHECK_FALSE(rep->ok());
  REQUIRE(rep->agents.size() == 2);
  CHECK(rep->agents[0].agent_id == "main");
  CHECK(rep->agents[0].error.code() == errc::unsupported);
  CHECK_THAT(rep->agents[0].error.message(),
             Catch::Contains("openclaw-agent.sqlite") && Catch::Contains("unknown schema version 24"));
  CHECK_FALSE(testing::exists(to.path() + "/agents/main/sessions/sessions.json"));
  CHECK(rep->agents[1].error.ok());
  CHECK(rep->agents[1].imported == 1);
}

TEST_CASE("import openclaw: a crash mid-import is finished by a second run without duplicates") {
  temp_dir from, to;
  auto vs = vector_sessions();
  {
    oc_test_db db(from.path(), "main");
    build_four(db, vs);
  }
  storage::system_clock clk;
  const std::string dir = to.path() + "/agents/main/sessions";
  for (int crash_write : {1, 2, 3, 5, 7}) {
    std::filesystem::remove_all(to.path() + "/agents");
    storage::faulty_fs faulty(storage::posix_fs());
    auto o = options(from.path(), to.path());
    o.rows_batch = 2;
    faulty.crash_at_write(crash_write, 10);
    auto first = oc::import_openclaw(faulty, clk, storage::real_process_probe(), o);
    REQUIRE(first.ok());
    CHECK(faulty.crashed());
    CHECK_FALSE(first->ok());
    // The "restarted process": a stale lock of a dead run is not ours to judge here, so clear it.
    std::filesystem::remove(dir + "/sessions.json.lock");
    auto second = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), o);
    REQUIRE(second.ok());
    INFO("crash at write " << crash_write);
    REQUIRE(second->ok());
    CHECK(jsonl_names(dir).size() == 4);
    auto store = load_store(dir + "/sessions.json");
    CHECK(store.size() == 4);
    for (const auto& v : vs) CHECK(testing::read_text(dir + "/" + v.id + ".jsonl") == v.text);
    // A third run finds everything complete and renames nothing.
    storage::faulty_fs counting(storage::posix_fs());
    auto third = oc::import_openclaw(counting, clk, storage::real_process_probe(), o);
    REQUIRE(third.ok());
    CHECK(third->ok());
    CHECK(third->agents[0].skipped == 4);
    CHECK(counting.count(storage::fs_op::rename) == 0);
  }
}

TEST_CASE("import openclaw: a destination changed since an earlier import is left as it is") {
  temp_dir from, to;
  auto vs = vector_sessions();
  {
    oc_test_db db(from.path(), "main");
    db.add_session(vs[0].key, vs[0].id, entry_json(vs[0], 100), vs[0].lines, oc_test_db::layout::json_rows);
  }
  storage::system_clock clk;
  auto o = options(from.path(), to.path());
  REQUIRE(oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), o)->ok());
  const std::string file = to.path() + "/agents/main/sessions/" + vs[0].id + ".jsonl";
  const std::string changed = vs[0].text + R"({"type":"session_info","id":"abcd1234","parentId":null,"timestamp":"2026-11-30T01:40:00.000Z","name":"x"})" "\n";
  testing::write_text(file, changed);
  auto again = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), o);
  REQUIRE(again.ok());
  CHECK_FALSE(again->ok());
  REQUIRE(again->errors.size() == 1);
  CHECK(again->errors[0].error.code() == errc::already_exists);
  CHECK(testing::read_text(file) == changed);
}

TEST_CASE("export openclaw: the database it writes imports back to the same bytes and rows") {
  temp_dir from, mid, back, to;
  auto vs = vector_sessions();
  {
    oc_test_db db(from.path(), "main");
    build_four(db, vs);
  }
  storage::system_clock clk;
  REQUIRE(oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), options(from.path(), mid.path()))->ok());
  oc::export_options eo;
  eo.state_dir = mid.path();
  eo.to_dir = to.path();
  auto ex = oc::export_openclaw(storage::posix_fs(), clk, eo);
  REQUIRE(ex.ok());
  INFO((ex->errors.empty() ? std::string() : ex->errors[0].error.message()));
  REQUIRE(ex->ok());
  CHECK(ex->agents[0].sessions == 4);
  std::uint64_t lines = 0;
  for (const auto& v : vs) lines += v.lines.size();
  CHECK(ex->agents[0].entries == lines);
  // A second export refuses to replace the database.
  auto again = oc::export_openclaw(storage::posix_fs(), clk, eo);
  REQUIRE(again.ok());
  CHECK(again->agents[0].error.code() == errc::already_exists);

  auto rep = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), options(to.path(), back.path()));
  REQUIRE(rep.ok());
  REQUIRE(rep->ok());
  const std::string dir = back.path() + "/agents/main/sessions";
  for (const auto& v : vs) CHECK(testing::read_text(dir + "/" + v.id + ".jsonl") == v.text);
  auto a = load_store(mid.path() + "/agents/main/sessions/sessions.json");
  auto b = load_store(dir + "/sessions.json");
  REQUIRE(a.size() == b.size());
  for (const auto& v : vs) {
    auto ea = a.find(v.key)->json(), eb = b.find(v.key)->json();
    ea.erase("sessionFile");
    eb.erase("sessionFile");
    CHECK(boost::json::value(ea) == boost::json::value(eb));
  }
}

TEST_CASE("import openclaw: speed on a generated database") {
  // A few thousand sessions of a few hundred entries (SESSIONRT_OC_BENCH_MB sets the size).
  const char* mb_env = std::getenv("SESSIONRT_OC_BENCH_MB");
  const double target_mb = mb_env ? std::atof(mb_env) : 8;
  temp_dir from, to;
  const auto vs = vector_sessions();
  std::size_t sessions = 0;
  std::uint64_t raw = 0;
  {
    oc_test_db db(from.path(), "main");
    db.exec("BEGIN");
    while (raw < target_mb * 1e6) {
      const auto& v = vs[sessions % vs.size()];
      // The same entries under a new session id, repeated to ~200 entries.
      std::string id = fmt::format("0000{:04x}-0000-4000-8000-{:012x}", sessions % 65536, sessions);
      std::vector<std::string> lines;
      std::string header = v.lines[0];
      header.replace(header.find(v.id), v.id.size(), id);
      lines.push_back(header);
      while (lines.size() < 200)
        for (std::size_t i = 1; i < v.lines.size() && lines.size() < 200; ++i) lines.push_back(v.lines[i]);
      for (const auto& l : lines) raw += l.size() + 1;
      auto e = entry_json(v, 5);
      e.replace(e.find(v.id), v.id.size(), id);
      db.add_session(fmt::format("agent:main:direct:u{}", sessions), id, e, lines,
                     sessions % 2 ? oc_test_db::layout::zstd_rows : oc_test_db::layout::json_rows);
      ++sessions;
    }
    db.exec("COMMIT");
  }
  storage::system_clock clk;
  auto o = options(from.path(), to.path());
  const auto t0 = std::chrono::steady_clock::now();
  auto rep = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(rep.ok());
  REQUIRE(rep->ok());
  const auto& a = rep->agents[0];
  CHECK(a.imported == sessions);
  WARN(fmt::format("import openclaw (no fsync): {} sessions, {} entries, {:.1f} MB of transcripts in {:.2f} s: "
                   "{:.0f} entries/s, {:.1f} MB/s",
                   sessions, a.entries, a.bytes / 1e6, secs, a.entries / secs, a.bytes / 1e6 / secs));
  // The same with every transcript and sessions.json fsync'd (the default of the command).
  temp_dir durable_to;
  o.state_dir = durable_to.path();
  o.durable = true;
  const auto t1 = std::chrono::steady_clock::now();
  auto durable = oc::import_openclaw(storage::posix_fs(), clk, storage::real_process_probe(), o);
  const double dsecs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  REQUIRE(durable.ok());
  REQUIRE(durable->ok());
  WARN(fmt::format("import openclaw (fsync): {} sessions in {:.2f} s: {:.0f} entries/s, {:.1f} MB/s", sessions, dsecs,
                   a.entries / dsecs, a.bytes / 1e6 / dsecs));
}
