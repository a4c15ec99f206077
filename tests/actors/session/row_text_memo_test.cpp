// row_text_memo (actors/session/row_text_memo.hpp): its text is session_store::append_row_text's,
// byte for byte, over a row that changes field by field; unchanged members are not made again;
// invalid UTF-8 is reported.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <random>

#include "actors/session/row_text_memo.hpp"
#include "messages/session_entry.hpp"
#include "storage/session_store.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

std::string full_text(std::string_view key, const boost::json::object& row) {
  std::string out;
  storage::session_store::append_row_text(out, key, session_entry(row));
  return out;
}

std::string memo_text(row_text_memo& memo, std::string_view key, const boost::json::object& row, bool* valid = nullptr) {
  std::string out = "prefix";  // appended after what is there
  const bool ok = memo.append(out, key, row);
  if (valid) *valid = ok;
  REQUIRE(out.rfind("prefix", 0) == 0);
  return out.substr(6);
}

boost::json::object sample_row() {
  return boost::json::object{
      {"sessionId", "0b7c1f7e-2d4a-4c8e-9f55-0d8c7f5b2e11"},
      {"updatedAt", 1764950400000},
      {"deliveryContext", boost::json::object{{"channel", "telegram"}, {"to", "telegram:42"}, {"accountId", "default"}}},
      {"origin", boost::json::object{{"label", "Ann \"A\" \\ <ann>"}, {"chatType", "direct"}, {"from", "telegram:42"}}},
      {"inputTokens", 120},
      {"contextTokens", 200000},
      {"skillsSnapshot", boost::json::object{{"skills", boost::json::array{"a", "b", boost::json::object{}}},
                                             {"prompt", "line\nbreak\ttab \u0001 end"}}},
      {"empty", boost::json::object{}},
      {"list", boost::json::array{}},
      {"ratio", 0.25},
      {"systemSent", true},
      {"label", nullptr},
  };
}

}  // namespace

TEST_CASE("row text memo: the store's bytes as the row changes, only changed members made again") {
  row_text_memo memo;
  const std::string key = "agent:main:telegram:direct:42";
  boost::json::object row = sample_row();
  CHECK(memo_text(memo, key, row) == full_text(key, row));
  CHECK(memo.made_last() == row.size());
  // Nothing changed: nothing made again, the same bytes.
  CHECK(memo_text(memo, key, row) == full_text(key, row));
  CHECK(memo.made_last() == 0);
  // A number, then a nested object's member.
  row["updatedAt"] = 1764950460000;
  CHECK(memo_text(memo, key, row) == full_text(key, row));
  CHECK(memo.made_last() == 1);
  row["origin"].as_object()["label"] = "Bob";
  CHECK(memo_text(memo, key, row) == full_text(key, row));
  CHECK(memo.made_last() == 1);
  // An int becomes a double of another value, a string a number.
  row["inputTokens"] = 120.5;
  row["sessionId"] = 7;
  CHECK(memo_text(memo, key, row) == full_text(key, row));
  CHECK(memo.made_last() == 2);
  // A member added in the middle (the ones after it move), one removed, one added at the end.
  boost::json::object grown;
  for (const auto& kv : row) {
    grown[kv.key()] = kv.value();
    if (kv.key() == "origin") grown["lastChannel"] = "telegram";
  }
  CHECK(memo_text(memo, key, grown) == full_text(key, grown));
  grown.erase("ratio");
  grown["sessionrtHistoryCount"] = 3;
  CHECK(memo_text(memo, key, grown) == full_text(key, grown));
  CHECK(memo_text(memo, key, grown) == full_text(key, grown));
  CHECK(memo.made_last() == 0);
  // Fewer members, an empty row, another key.
  boost::json::object small{{"sessionId", "x"}};
  CHECK(memo_text(memo, key, small) == full_text(key, small));
  CHECK(memo_text(memo, key, boost::json::object{}) == full_text(key, boost::json::object{}));
  CHECK(memo_text(memo, "other \"key\"", row) == full_text("other \"key\"", row));
}

TEST_CASE("row text memo: random edits of a row give the store's bytes") {
  row_text_memo memo;
  std::mt19937 rng(34);
  boost::json::object row = sample_row();
  const std::vector<std::string> keys = {"updatedAt", "inputTokens", "outputTokens", "origin", "model", "label",
                                         "ratio",     "deliveryContext", "extra"};
  for (int round = 0; round < 400; ++round) {
    const std::string& k = keys[rng() % keys.size()];
    switch (rng() % 5) {
      case 0: row[k] = static_cast<std::int64_t>(rng() % 1000); break;
      case 1: row[k] = std::to_string(rng() % 3); break;
      case 2: row.erase(k); break;
      case 3: row[k] = boost::json::object{{"n", static_cast<std::int64_t>(rng() % 2)}}; break;
      default: break;  // unchanged
    }
    INFO("round " << round);
    REQUIRE(memo_text(memo, "k", row) == full_text("k", row));
  }
}

TEST_CASE("row text memo: invalid UTF-8 in a member or the key is reported, and cleared when it goes") {
  row_text_memo memo;
  boost::json::object row = sample_row();
  bool valid = false;
  (void)memo_text(memo, "k", row, &valid);
  CHECK(valid);
  row["label"] = std::string("bad \xff byte");
  (void)memo_text(memo, "k", row, &valid);
  CHECK_FALSE(valid);
  // Unchanged since: still reported (the kept member remembers it).
  (void)memo_text(memo, "k", row, &valid);
  CHECK_FALSE(valid);
  row["label"] = "fine";
  (void)memo_text(memo, "k", row, &valid);
  CHECK(valid);
  (void)memo_text(memo, "bad \xfe key", row, &valid);
  CHECK_FALSE(valid);
}
