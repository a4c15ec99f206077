// The transcript index's id table: later entries win, entries indexed backward never replace
// a later one, a rolled-back append takes its id out, and ids stay findable through growth
// and deletions that shift probe chains (checked against a std::map model).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <map>
#include <random>

#include "storage/transcript_index.hpp"

using namespace sessionrt::storage;

namespace {
index_record rec(std::string id, std::uint64_t offset = 0) {
  index_record r;
  r.id = std::move(id);
  r.offset = offset;
  return r;
}
}  // namespace

TEST_CASE("transcript_index: a later duplicate id wins, an earlier one indexed backward does not", "[transcript_index]") {
  transcript_index idx;
  CHECK_FALSE(idx.find("a1"));
  const auto p0 = idx.push_back(rec("a1", 10));
  const auto p1 = idx.push_back(rec("b2", 20));
  const auto p2 = idx.push_back(rec("a1", 30));  // the same id again: the later entry wins
  CHECK(idx.find("a1") == p2);
  CHECK(idx.find("b2") == p1);
  const auto before = idx.push_front(rec("b2", 5));  // found scanning backward: b2 at p1 stays
  CHECK(before == p0 - 1);
  CHECK(idx.find("b2") == p1);
  const auto older = idx.push_front(rec("c3", 1));
  CHECK(idx.find("c3") == older);
  CHECK(idx.at(*idx.find("c3")).offset == 1);
  CHECK_FALSE(idx.find(""));  // entries without an id are not found by ""
  idx.push_back(rec(""));
  CHECK_FALSE(idx.find(""));
}

TEST_CASE("transcript_index: pop_back takes the rolled-back entry's id out", "[transcript_index]") {
  transcript_index idx;
  idx.push_back(rec("a1"));
  const auto p = idx.push_back(rec("d4"));
  CHECK(idx.find("d4") == p);
  idx.pop_back();
  CHECK_FALSE(idx.find("d4"));
  CHECK(idx.find("a1") == 0);
  idx.push_back(rec("d4"));
  CHECK(idx.find("d4") == 1);
  idx.clear();
  CHECK_FALSE(idx.find("a1"));
  CHECK(idx.empty());
  CHECK(idx.push_back(rec("a1")) == 0);
  CHECK(idx.find("a1") == 0);
}

TEST_CASE("transcript_index: ids stay findable through growth and rolled-back appends (random against a model)",
          "[transcript_index]") {
  std::mt19937_64 rng(34);
  transcript_index idx;
  std::map<std::string, transcript_index::position> model;  // what find() must say
  for (int step = 0; step < 20000; ++step) {
    const auto roll = rng() % 10;
    // Few distinct ids (many duplicates and long probe chains) in the first half, then many.
    const std::string id = fmt::format("{:08x}", step < 10000 ? rng() % 700 : rng());
    if (roll < 6 || idx.empty()) {
      model[id] = idx.push_back(rec(id));
    } else if (roll < 8) {
      const auto p = idx.push_front(rec(id));
      model.try_emplace(id, p);
    } else {
      const auto last = idx.end_position() - 1;
      const std::string gone = idx.at(last).id;
      idx.pop_back();
      if (auto it = model.find(gone); it != model.end() && it->second == last) model.erase(it);
    }
    if (step % 997 == 0 || step == 19999)
      for (const auto& [k, p] : model) {
        INFO("step " << step << " id " << k);
        REQUIRE(idx.find(k) == p);
      }
  }
  for (int i = 0; i < 200; ++i) {
    const std::string absent = fmt::format("x{:07x}", i);  // never pushed
    CHECK_FALSE(idx.find(absent));
  }
}
