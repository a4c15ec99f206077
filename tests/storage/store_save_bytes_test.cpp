// session_store_file::save() builds sessions.json from the rows' cached texts in a buffer kept
// between saves. Whatever the history of changes (rows added, replaced by entry or by text,
// changed in place, erased, the store replaced or reloaded, the file growing and shrinking past
// the size at which the buffer is given back), each save must write exactly the bytes a
// one-shot serialization of the whole store gives: JSON.stringify(store, null, 2) built from a
// fresh boost::json object, plus the trailing newline rule.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "messages/clock.hpp"
#include "messages/json_writer.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_store_file.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

constexpr std::int64_t kNow = 1789041600000;  // 2026-09-10T12:00:00.000Z
const std::string kPath = "/state/agents/main/sessions/sessions.json";

// The reference: the whole store as one object, pretty-printed at once.
std::string one_shot(const session_store& store, bool trailing_newline) {
  boost::json::object whole;
  for (const auto& r : store) whole[r.key] = r.entry.json();
  std::string out = json::to_pretty(whole);
  if (trailing_newline) out += '\n';
  return out;
}

std::string on_disk(fs& f) {
  auto text = read_file(f, kPath, std::size_t(1) << 30);
  REQUIRE(text.ok());
  return *text;
}

// A row of random shape and size: a few known fields, text that needs escaping, non-ASCII,
// nested objects and arrays, numbers of varying width (so a row's text changes length).
session_entry random_row(std::mt19937_64& rng, int n) {
  session_entry e;
  e.set_session_id("id-" + std::to_string(rng() % 100000));
  e.set_updated_at(kNow + static_cast<std::int64_t>(rng() % 1000000000));
  if (rng() % 2) e.set_display_name(std::string("r\u00e9union \"") + std::to_string(n) + "\"\t\\ \U0001F600");
  if (rng() % 3 == 0) e.set_label(std::string(rng() % 300, 'x'));
  if (rng() % 4 == 0) e.json()["archivedAt"] = kNow;
  boost::json::array hist;
  for (std::uint64_t i = 0, k = rng() % 5; i < k; ++i) hist.emplace_back(boost::json::object{{"n", rng() % 100000}});
  e.json()["delivery"] = boost::json::object{{"kind", rng() % 2 ? "none" : "chat"}, {"history", hist}};
  e.json()["totalTokens"] = static_cast<std::int64_t>(rng() % (std::uint64_t(1) << (rng() % 40)));
  if (rng() % 5 == 0) e.json()["ratio"] = 0.1 * static_cast<double>(rng() % 1000);
  return e;
}

std::string key_of(std::uint64_t k) { return "agent:main:chat:peer-" + std::to_string(k); }

// One random change of the store; returns whether it may have changed the store.
void random_change(std::mt19937_64& rng, session_store& store, int n) {
  const std::string key = key_of(rng() % 400);
  switch (rng() % 6) {
    case 0:
    case 1:
      store.upsert(key, random_row(rng, n));
      break;
    case 2: {  // as a session hands its row: the text append_row_text writes
      std::string text;
      session_store::append_row_text(text, key, random_row(rng, n));
      REQUIRE(store.upsert_text(key, std::move(text)).ok());
      break;
    }
    case 3:
      if (session_entry* row = store.find_for_update(key)) {
        row->set_updated_at(kNow + n);
        if (rng() % 2) row->set_label("changed " + std::to_string(n));
      }
      break;
    case 4:
      store.erase(key);
      break;
    default:
      break;  // nothing: a save with nothing new writes nothing
  }
}

void check_saves(std::size_t spill_min_bytes, std::uint64_t seed) {
  manual_clock clk(kNow);
  memory_fs files(clk);
  store_file_options opt;
  opt.spill_min_bytes = spill_min_bytes;
  std::mt19937_64 rng(seed);
  session_store_file file(files, clk, kPath, opt);
  REQUIRE(file.load().ok());
  std::size_t grew = 0, shrank = 0, last = 0;
  for (int round = 0; round < 300; ++round) {
    const int changes = static_cast<int>(rng() % 40);
    for (int i = 0; i < changes; ++i) random_change(rng, file.store(), round * 100 + i);
    if (round % 50 == 49) {
      // Most rows go at once: the next text is far shorter than the buffer's last one.
      for (std::uint64_t k = 0; k < 400; ++k)
        if (k % 7 != 0) file.store().erase(key_of(k));
    }
    if (round % 97 == 96) file.store() = session_store();  // a store put in place of the loaded one
    REQUIRE(file.save().ok());
    const std::string bytes = on_disk(files);
    REQUIRE(bytes == one_shot(file.store(), file.trailing_newline()));
    (bytes.size() > last ? grew : shrank) += 1;
    last = bytes.size();
    file.shed_rows();  // as the store actor does after each save
    if (round % 61 == 60) {
      // Without a trailing newline on disk, a reload keeps it that way.
      std::string text = bytes;
      if (!text.empty() && text.back() == '\n') text.pop_back();
      REQUIRE(replace_file_atomic(files, kPath, text, replace_options{}).ok());
      REQUIRE(file.load().ok());
      REQUIRE_FALSE(file.trailing_newline());
    }
  }
  CHECK(grew > 10);
  CHECK(shrank > 10);
}

}  // namespace

TEST_CASE("store save bytes: random changes over 300 saves write what a one-shot serialization gives") {
  // The buffer kept between saves (the files stay under the spill size) and given back after
  // every save (each is over it), over two random histories each.
  for (std::uint64_t seed : {1u, 2u}) {
    check_saves(std::size_t(1) << 40, seed);
    check_saves(1, seed);
  }
  // Around the limit: kept while small, given back when large.
  check_saves(200000, 3);
}

TEST_CASE("store save bytes: a text shorter than the last save's leaves none of its bytes behind") {
  manual_clock clk(kNow);
  memory_fs files(clk);
  session_store_file file(files, clk, kPath);
  REQUIRE(file.load().ok());
  session_entry big;
  big.set_session_id("s");
  big.set_label(std::string(5000, 'y'));
  file.store().upsert("agent:main:a", big);
  file.store().upsert("agent:main:b", big);
  REQUIRE(file.save().ok());
  REQUIRE(on_disk(files).size() > 10000);
  file.store().erase("agent:main:a");
  session_entry small;
  small.set_session_id("t");
  file.store().upsert("agent:main:b", small);
  REQUIRE(file.save().ok());
  CHECK(on_disk(files) == "{\n  \"agent:main:b\": {\n    \"sessionId\": \"t\"\n  }\n}\n");
}
