// session_store: JS object order, O(1) lookup, per-row serialization cache.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "messages/json_writer.hpp"
#include "storage/session_store.hpp"
#include "storage/session_store_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using sessionrt::storage::session_store;

namespace {

session_entry make_row(const std::string& id, std::int64_t updated) {
  session_entry e;
  e.set_session_id(id);
  e.set_updated_at(updated);
  e.set_chat_type("direct");
  return e;
}

std::vector<std::string> keys_of(const session_store& s) {
  std::vector<std::string> keys;
  for (const auto& r : s) keys.emplace_back(r.key);
  return keys;
}

// The reference: the whole store as one JSON object, serialized in one go.
std::string full_pretty(const session_store& s) {
  boost::json::object o;
  for (const auto& r : s) o[r.key] = r.entry.json();
  return json::to_pretty(o);
}

std::string key(int i) { return fmt::format("k{}", i); }

}  // namespace

TEST_CASE("session_store keeps JavaScript object order") {
  session_store s;
  CHECK(s.upsert("b", make_row("1", 1)));
  CHECK(s.upsert("a", make_row("2", 2)));
  CHECK(s.upsert("c", make_row("3", 3)));
  CHECK(keys_of(s) == std::vector<std::string>{"b", "a", "c"});

  // Replacing keeps the place; erase keeps the others' order; a re-added key goes last.
  CHECK_FALSE(s.upsert("b", make_row("9", 9)));
  CHECK(keys_of(s) == std::vector<std::string>{"b", "a", "c"});
  CHECK(s.find("b")->session_id() == "9");
  CHECK(s.erase("a"));
  CHECK_FALSE(s.erase("a"));
  CHECK(keys_of(s) == std::vector<std::string>{"b", "c"});
  CHECK(s.upsert("a", make_row("2", 2)));
  CHECK(keys_of(s) == std::vector<std::string>{"b", "c", "a"});
  CHECK(s.size() == 3);
  CHECK(s.find("zz") == nullptr);
  CHECK(s.find_for_update("zz") == nullptr);
  CHECK(s.contains("c"));
}

TEST_CASE("session_store serializes as JSON.stringify(store, null, 2)") {
  session_store s;
  CHECK(s.to_pretty() == "{}");
  s.upsert("agent:main:main", make_row("x", 5));
  session_entry empty;
  s.upsert("odd \"key\"\n\u00e9", empty);
  CHECK(s.to_pretty() ==
        "{\n  \"agent:main:main\": {\n    \"sessionId\": \"x\",\n    \"updatedAt\": 5,\n    \"chatType\": \"direct\"\n  },"
        "\n  \"odd \\\"key\\\"\\n\u00e9\": {}\n}");
  CHECK(s.to_pretty() == full_pretty(s));
  s.erase("agent:main:main");
  s.erase("odd \"key\"\n\u00e9");
  CHECK(s.to_pretty() == "{}");
}

TEST_CASE("session_store re-serializes only changed rows and stays byte-identical") {
  session_store s;
  for (int i = 0; i < 1000; ++i) {
    session_entry e = make_row("id-" + std::to_string(i), 1700000000000 + i);
    e.set_display_name("chat " + std::to_string(i));
    e.json()["delivery"] = boost::json::object{{"kind", "none"}};
    s.upsert("agent:main:chat:" + std::to_string(i), std::move(e));
  }
  const std::string before = s.to_pretty();
  REQUIRE(before == full_pretty(s));
  const auto v0 = s.text_version();

  // Asking for a row without changing it does not change the text.
  REQUIRE(s.find_for_update("agent:main:chat:10") != nullptr);
  CHECK(s.text_version() == v0);
  CHECK(s.to_pretty() == before);

  // One row changed: a set field keeps its place, a new field goes last, a cleared one goes.
  session_entry* row = s.find_for_update("agent:main:chat:500");
  REQUIRE(row != nullptr);
  row->set_updated_at(1800000000000);
  row->set_label("renamed");
  row->clear_display_name();
  const std::string after = s.to_pretty();
  CHECK(s.text_version() != v0);
  CHECK(after != before);
  CHECK(after == full_pretty(s));
  CHECK(after.find("\"agent:main:chat:500\": {\n    \"sessionId\": \"id-500\",\n    \"updatedAt\": 1800000000000,\n"
                   "    \"chatType\": \"direct\",\n    \"delivery\": {\n      \"kind\": \"none\"\n    },\n"
                   "    \"label\": \"renamed\"\n  }") != std::string::npos);

  // Replacing a row wholesale through upsert is seen too.
  s.upsert("agent:main:chat:0", make_row("new", 1));
  CHECK(s.to_pretty() == full_pretty(s));
}

TEST_CASE("session_store survives many erases (holes are squeezed out)") {
  session_store s;
  for (int i = 0; i < 1000; ++i) s.upsert(key(i), make_row(std::to_string(i), i));
  (void)s.to_pretty();
  for (int i = 0; i < 1000; ++i)
    if (i % 10 != 0) REQUIRE(s.erase(key(i)));
  CHECK(s.size() == 100);
  std::vector<std::string> expected;
  for (int i = 0; i < 1000; i += 10) expected.push_back(key(i));
  CHECK(keys_of(s) == expected);
  for (int i = 0; i < 1000; i += 10) REQUIRE(s.find(key(i))->session_id() == std::to_string(i));
  s.find_for_update("k500")->set_label("x");
  CHECK(s.to_pretty() == full_pretty(s));
  s.upsert("new", make_row("n", 1));
  CHECK(keys_of(s).back() == "new");
  CHECK(s.to_pretty() == full_pretty(s));
}

TEST_CASE("session_store copies are independent") {
  session_store a;
  a.upsert("x", make_row("1", 1));
  a.upsert("y", make_row("2", 2));
  (void)a.to_pretty();
  session_store b = a;
  b.find_for_update("x")->set_label("only in b");
  b.erase("y");
  CHECK(a.size() == 2);
  CHECK_FALSE(a.find("x")->label().has_value());
  CHECK(b.find("x")->label() == "only in b");
  CHECK(a.to_pretty() == full_pretty(a));
  CHECK(b.to_pretty() == full_pretty(b));
  session_store c = std::move(b);
  CHECK(keys_of(c) == std::vector<std::string>{"x"});
  CHECK(c.to_pretty() == full_pretty(c));
}

TEST_CASE("released rows keep only their text and come back identical when read or changed") {
  // The reference's own store file: nested objects, unicode, numbers of every kind.
  auto parsed = storage::load_from_text(testing::read_text(testing::vectors_dir() + "/oc_legacy_sessions.json"), {});
  REQUIRE(parsed.ok());
  session_store& s = parsed->store;
  REQUIRE(s.size() > 1);
  const std::string before = s.to_pretty();
  std::vector<std::string> rows;
  for (const auto& r : s) rows.push_back(json::to_compact(r.entry.json()));

  CHECK(s.release_clean_rows() == s.size());
  CHECK(s.release_clean_rows() == 0);  // nothing left to release
  CHECK(s.to_pretty() == before);      // saved from the text alone
  std::size_t i = 0;
  for (const auto& r : s) CHECK(json::to_compact(r.entry.json()) == rows[i++]);  // parsed back, equal

  // A change to a released row is kept and only that row changes.
  s.release_clean_rows();
  const std::string first_key((*s.begin()).key);
  s.release_clean_rows();
  session_entry* e = s.find_for_update(first_key);
  REQUIRE(e != nullptr);
  CHECK(e->session_id().has_value());  // parsed before it is handed out
  e->set_updated_at(42);
  const std::string after = s.to_pretty();
  CHECK(after != before);
  auto reparsed = storage::load_from_text(after, {});
  REQUIRE(reparsed.ok());
  CHECK(reparsed->store.find(first_key)->updated_at() == std::optional<std::int64_t>(42));

  // upsert over a released row, copies of a store with released rows.
  s.release_clean_rows();
  s.upsert(first_key, make_row("fresh", 7));
  session_store copy = s;
  CHECK(copy.to_pretty() == s.to_pretty());
  CHECK(copy.find(first_key)->session_id() == std::optional<std::string_view>("fresh"));

  // A row with invalid UTF-8 (the writer passes it through, the reader would refuse it) is
  // not released: it keeps its value instead of coming back empty.
  session_entry odd = make_row("odd", 8);
  odd.set_label(std::string("Caf\xe9"));
  s.upsert("odd", odd);
  s.release_clean_rows();
  CHECK(s.find("odd")->label() == std::optional<std::string_view>("Caf\xe9"));
  CHECK(s.find("odd")->session_id() == std::optional<std::string_view>("odd"));
}

TEST_CASE("upsert_text: a row set from its text serializes, reads and versions as upsert does") {
  session_store by_row, by_text;
  for (int i = 0; i < 4; ++i) {
    session_entry e = make_row(fmt::format("id{}", i), i);
    by_row.upsert(key(i), e);
    std::string text;
    session_store::append_row_text(text, key(i), e);
    CHECK(*by_text.upsert_text(key(i), std::move(text)));
  }
  CHECK(by_text.to_pretty() == by_row.to_pretty());
  CHECK(by_text.find(key(2))->session_id() == std::optional<std::string_view>("id2"));  // parsed when read

  // The same text again changes nothing; another text replaces the row in its place, also
  // over a row changed in place and not serialized yet.
  const auto v = by_text.text_version();
  std::string same;
  session_store::append_row_text(same, key(1), make_row("id1", 1));
  CHECK_FALSE(*by_text.upsert_text(key(1), same));
  CHECK(by_text.text_version() == v);
  by_text.find_for_update(key(3))->set_updated_at(99);  // dirty
  std::string replaced;
  session_store::append_row_text(replaced, key(3), make_row("new", 5));
  CHECK_FALSE(*by_text.upsert_text(key(3), replaced));
  CHECK(by_text.text_version() != v);
  by_row.upsert(key(3), make_row("new", 5));
  CHECK(by_text.to_pretty() == by_row.to_pretty());
  CHECK(by_text.to_pretty() == full_pretty(by_text));

  // A text for another key, a cut one, or one with invalid UTF-8 is refused; the row stays.
  const std::string before = by_text.to_pretty();
  std::string other;
  session_store::append_row_text(other, key(0), make_row("wrong", 1));
  CHECK(by_text.upsert_text(key(2), other).error().code() == errc::invalid_argument);
  CHECK(by_text.upsert_text(key(2), "\n").error().code() == errc::invalid_argument);
  std::string bad;
  session_store::append_row_text(bad, key(2), make_row("Caf\xe9", 1));
  CHECK_FALSE(by_text.upsert_text(key(2), bad).ok());
  CHECK(by_text.to_pretty() == before);
}
