// The maintenance actor's kept pictures: a dir_index updated file by file and a row_cache fed
// the store's row changes give the plans that a listing and rows read afresh give, after every
// step of a random history (files written, archived, deleted; rows put, erased, put again).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <map>
#include <set>
#include <random>
#include <string>
#include <vector>

#include "actors/maintenance/cron_retention.hpp"
#include "actors/maintenance/dir_index.hpp"
#include "actors/maintenance/maintenance_pass.hpp"
#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/row_cache.hpp"
#include "actors/store/row_change_log.hpp"
#include "storage/archive_names.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kDay = 24 * 3600 * 1000;
constexpr std::int64_t t0 = 1'790'000'000'000;

std::string describe(const maintenance_plan& plan) {
  std::string out = fmt::format("before {} after {} bytes {} -> {} |", plan.before_count, plan.after_count,
                                plan.total_bytes_before, plan.total_bytes_after);
  for (const auto& a : plan.actions) out += " " + boost::json::serialize(action_json(a));
  for (const auto& w : plan.warnings) out += " warning: " + w;
  return out;
}

std::string describe(const dir_index& index) {
  std::string out = fmt::format("{} files {} bytes |", index.size(), index.bytes());
  for (const auto& f : index.by_mtime()) out += fmt::format(" {}@{}:{}", f.name, f.mtime_ms, f.session_id());
  out += " | deleted";
  for (const auto& f : index.deleted_archives()) out += fmt::format(" {}@{}", f.name, *f.timestamp_ms());
  out += " | reset";
  for (const auto& f : index.reset_archives()) out += fmt::format(" {}@{}", f.name, *f.timestamp_ms());
  out += " | temps";
  for (const auto& f : index.store_temps()) out += " " + f.name;
  out += " | by name";
  std::set<std::string> sessions;
  for (const auto& f : index.by_name()) {
    out += " " + f.name;
    if (!f.session_id().empty()) sessions.insert(std::string(f.session_id()));
  }
  out += " | by session";
  for (const auto& id : sessions) {
    out += " " + id + ":";
    for (const auto& f : index.session_files(id)) out += " " + f.name;
  }
  return out;
}

std::string uuid_of(int n) { return fmt::format("00000000-0000-4000-8000-{:012d}", n); }

// A random history of one sessions dir and its store.
struct history {
  std::mt19937 rng{20261202};
  std::map<std::string, dir_file> files;  // the dir as it is
  dir_index kept;                         // updated file by file
  storage::session_store store;
  row_change_log log;
  row_cache cache;
  std::int64_t now = t0;
  int next_session = 0;

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

  void put_file(std::string name, std::uint64_t size, std::int64_t mtime) {
    dir_file f{name, size, mtime};
    files[name] = f;
    kept.put(f);
  }
  void erase_file(std::string name) {
    files.erase(name);
    kept.erase(name);
  }
  void put_row(const std::string& key, const std::string& session_id, std::int64_t updated_at) {
    session_entry e;
    e.set_session_id(session_id);
    e.set_updated_at(updated_at);
    store.upsert(key, std::move(e));
    log.note(key, store.size());
  }
  void erase_row(const std::string& key) {
    if (store.erase(key)) log.note(key, store.size());
  }

  void step() {
    now += pick(6) * 3600 * 1000;
    switch (pick(9)) {
      case 0:
      case 1: {  // a new session: its row and transcript
        const std::string id = uuid_of(next_session++);
        const std::string key = pick(4) == 0 ? fmt::format("agent:main:telegram:group:-{}", pick(5))
                                             : fmt::format("agent:main:telegram:direct:{}", pick(40));
        put_row(key, id, now - pick(40) * kDay);
        put_file(id + ".jsonl", 100 + pick(5000), now - pick(3) * kDay);
        if (pick(3) == 0) put_file(id + ".trajectory.jsonl", 50 + pick(500), now);
        break;
      }
      case 2: {  // a transcript grows
        if (files.empty()) break;
        auto it = std::next(files.begin(), pick(static_cast<int>(files.size())));
        put_file(it->first, it->second.size + 10 + pick(1000), now);
        break;
      }
      case 3: {  // a reset: the transcript archived
        if (next_session == 0) break;
        const std::string name = uuid_of(pick(next_session)) + ".jsonl";
        auto it = files.find(name);
        if (it == files.end()) break;
        auto size = it->second.size;
        erase_file(name);
        put_file(storage::archive_name(name, storage::archive_reason::reset, now - pick(40) * kDay), size, now);
        break;
      }
      case 4:  // a deleted archive, of any age
        put_file(storage::archive_name(uuid_of(1000 + pick(1000)) + ".jsonl", storage::archive_reason::deleted,
                                       now - pick(3) * kDay),
                 200 + pick(2000), now - pick(3) * kDay);
        break;
      case 5: {  // a file goes
        if (files.empty()) break;
        erase_file(std::next(files.begin(), pick(static_cast<int>(files.size())))->first);
        break;
      }
      case 6: {  // a row goes, or is put again (it moves to the end of the store)
        if (store.empty()) break;
        std::string key((*std::next(store.begin(), pick(static_cast<int>(store.size())))).key);
        const std::string id(store.find(key)->session_id().value_or(""));
        erase_row(key);
        if (pick(2) == 0) put_row(key, id, now);
        break;
      }
      case 7:  // a store write in flight, or one left behind long ago
        put_file(fmt::format("sessions.json.{}.tmp", uuid_of(pick(3))), 4000, now - pick(2) * 600 * 1000);
        break;
      case 8:  // cron runs
        put_row(fmt::format("agent:main:cron:job{}:run:{}", pick(2), uuid_of(5000 + pick(50))), uuid_of(5000 + pick(50)),
                now - pick(3) * kDay);
        break;
    }
    put_file("sessions.json", 1000 + store.size() * 120, now);
  }
};

}  // namespace

TEST_CASE("kept pictures: a dir_index and a row_cache kept up to date plan what a fresh listing plans") {
  history h;
  maintenance_settings settings;
  settings.mode = maintenance_mode::enforce;
  settings.max_entries = 30;
  settings.prune_after_ms = 20 * kDay;
  settings.max_disk_bytes = 60'000;
  cron_settings cron;
  cron.session_retention_ms = kDay;
  std::size_t plans_with_actions = 0, budget_plans = 0;
  for (int i = 0; i < 400; ++i) {
    h.step();
    INFO("step " << i);
    const auto fresh_files = dir_index::of(std::vector<dir_file>([&] {
      std::vector<dir_file> v;
      for (const auto& [name, f] : h.files) v.push_back(f);
      return v;
    }()));
    REQUIRE(describe(h.kept) == describe(fresh_files));

    if (i % 3 == 0) h.cache.apply(collect_changes(h.store, h.log.take()));  // passes are sparser than changes
    if (i % 3 != 0) continue;
    const auto fresh_rows = maintenance_rows(h.store);
    REQUIRE(h.cache.rows().size() == fresh_rows.size());
    for (std::size_t r = 0; r < fresh_rows.size(); ++r) {
      REQUIRE(h.cache.rows()[r].key() == fresh_rows[r].key());
      REQUIRE(h.cache.rows()[r].session_id() == fresh_rows[r].session_id());
      REQUIRE(h.cache.rows()[r].transcript_name() == fresh_rows[r].transcript_name());
      REQUIRE(h.cache.rows()[r].text_bytes == fresh_rows[r].text_bytes);
      REQUIRE(h.cache.rows()[r].updated_at == fresh_rows[r].updated_at);
    }

    planner_input kept_in;
    kept_in.rows = &h.cache.rows();
    kept_in.index = &h.kept;
    kept_in.settings = settings;
    kept_in.now_ms = h.now;
    planner_input fresh_in = kept_in;
    fresh_in.rows = &fresh_rows;
    fresh_in.index = nullptr;
    const auto listing = h.kept.files();
    fresh_in.files = &listing;
    const auto kept_plan = plan_maintenance(kept_in);
    CHECK(describe(kept_plan) == describe(plan_maintenance(fresh_in)));
    CHECK(describe(plan_cron_reaper(h.cache.rows(), h.kept, cron, h.now)) ==
          describe(plan_cron_reaper(fresh_rows, listing, cron, h.now)));
    plans_with_actions += kept_plan.actions.empty() ? 0 : 1;
    budget_plans += kept_plan.disk_budget && kept_plan.disk_budget->over_budget ? 1 : 0;
  }
  // The history reached the steps it means to test.
  CHECK(plans_with_actions > 20);
  CHECK(budget_plans > 5);
}

TEST_CASE("row_change_log: the first take is full, then the changed keys once, and full again after too many") {
  row_change_log log;
  log.note("a", 1);
  auto first = log.take();
  CHECK(first.full);
  CHECK(first.keys.empty());
  log.note("a", 1);
  log.note("b", 2);
  log.note("a", 2);
  auto second = log.take();
  CHECK_FALSE(second.full);
  std::sort(second.keys.begin(), second.keys.end());
  CHECK(second.keys == std::vector<std::string>{"a", "b"});
  CHECK(log.take().keys.empty());
  for (int i = 0; i < 1100; ++i) log.note(std::to_string(i), 10);
  auto overflowed = log.take();
  CHECK(overflowed.full);
  CHECK(overflowed.keys.empty());
}

TEST_CASE("row_cache: a row erased and put again moves to the end, as in sessions.json") {
  storage::session_store store;
  row_change_log log;
  row_cache cache;
  for (const char* key : {"agent:main:a", "agent:main:b", "agent:main:c"}) {
    store.upsert(key, session_entry());
    log.note(key, store.size());
  }
  cache.apply(collect_changes(store, log.take()));
  REQUIRE(cache.rows().size() == 3);
  store.erase("agent:main:a");
  log.note("agent:main:a", store.size());
  store.upsert("agent:main:a", session_entry());
  log.note("agent:main:a", store.size());
  store.erase("agent:main:b");
  log.note("agent:main:b", store.size());
  cache.apply(collect_changes(store, log.take()));
  REQUIRE(cache.rows().size() == 2);
  CHECK(cache.rows()[0].key() == "agent:main:c");
  CHECK(cache.rows()[1].key() == "agent:main:a");
}

TEST_CASE("dir_index: a batch erases first, then puts (the last put of a name wins), and erase and put rounds leave it as built fresh") {
  const std::string a = uuid_of(1) + ".jsonl", b = uuid_of(2) + ".jsonl", t = uuid_of(1) + ".trajectory.jsonl";
  auto index = dir_index::of({{a, 10, 5}, {b, 20, 3}, {t, 1, 9}});
  CHECK(index.bytes() == 31);
  CHECK(describe(index) == describe(dir_index::of({{b, 20, 3}, {a, 10, 5}, {t, 1, 9}})));
  // b goes and comes back in one batch; a is put twice.
  index.update({{a, 11, 7}, {b, 25, 1}, {a, 12, 8}}, {b, "absent"});
  const auto expected = dir_index::of({{a, 12, 8}, {b, 25, 1}, {t, 1, 9}});
  CHECK(describe(index) == describe(expected));
  CHECK(index.bytes() == 38);
  REQUIRE(index.find(a) != nullptr);
  CHECK(index.find(a)->size == 12);
  CHECK(index.find("absent") == nullptr);
  // The session's two files, in name order.
  std::vector<std::string> names;
  for (const auto& f : index.session_files(uuid_of(1))) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{a, t});
  CHECK(index.session_files(uuid_of(3)).empty());
  // Rounds of a new name put and erased (its record is reused by the next).
  for (int round = 0; round < 50; ++round) {
    const std::string n = storage::archive_name(a, storage::archive_reason::deleted, 1000 + round);
    index.put({n, 5, round});
    CHECK(index.deleted_archives().size() == 1);
    CHECK(index.deleted_archives().begin()->timestamp_ms() == std::optional<std::int64_t>(1000 + round));
    index.erase(n);
  }
  CHECK(index.size() == 3);
  CHECK(describe(index) == describe(expected));
}

TEST_CASE("dir_index: random batches of erases and puts leave it as built fresh from the same files") {
  std::mt19937 rng(20261204);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  // Names of every kind the orders care about, from a small pool so that batches hit existing
  // names, erase and put one name together, and put one name twice.
  auto name_of = [&](int n) {
    const std::string transcript = uuid_of(n % 40) + ".jsonl";
    switch (n % 5) {
      case 0: return transcript;
      case 1: return uuid_of(n % 40) + ".trajectory.jsonl";
      case 2: return storage::archive_name(transcript, storage::archive_reason::deleted, t0 + (n % 7) * kDay);
      case 3: return storage::archive_name(transcript, storage::archive_reason::reset, t0 + (n % 3) * kDay);
      default: return fmt::format("sessions.json.{}.tmp", uuid_of(n % 4));
    }
  };
  std::map<std::string, dir_file> files;
  dir_index kept;
  for (int round = 0; round < 400; ++round) {
    std::vector<dir_file> puts;
    std::vector<std::string> erased;
    const int n = 1 + pick(round % 10 == 0 ? 60 : 6);
    for (int i = 0; i < n; ++i) {
      const std::string name = name_of(pick(200));
      if (pick(3) == 0) {
        erased.push_back(name);
      } else {
        // mtimes collide often: ties are broken by name
        puts.push_back({name, static_cast<std::uint64_t>(1 + pick(1000)), t0 + pick(5) * 1000});
      }
    }
    for (const auto& e : erased) files.erase(e);
    for (const auto& p : puts) files[p.name] = p;
    kept.update(puts, erased);
    std::vector<dir_file> all;
    for (const auto& [name, f] : files) all.push_back(f);
    INFO("round " << round);
    REQUIRE(describe(kept) == describe(dir_index::of(all)));
  }
  CHECK(kept.size() == files.size());
}
