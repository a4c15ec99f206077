// next_usage_family: the usage lineage rule shared by rollovers and compaction successors.
#include <catch2/catch.hpp>

#include "messages/session_entry.hpp"

using namespace sessionrt;

TEST_CASE("next_usage_family: key kept or defaulted, ids uniq([...ids, previous id, new id])") {
  session_entry first;
  first.set_session_id("A");
  auto f = next_usage_family(first, "agent:main:main", "B");
  CHECK(f.key == "agent:main:main");
  CHECK(f.session_ids == std::vector<std::string>{"A", "B"});

  session_entry row;
  row.set_session_id("B");
  row.set_usage_family_key("family-1");
  row.set_usage_family_session_ids({"A"});  // the current id missing from the list: kept anyway
  f = next_usage_family(row, "agent:main:main", "C");
  CHECK(f.key == "family-1");
  CHECK(f.session_ids == std::vector<std::string>{"A", "B", "C"});

  row.set_usage_family_session_ids({"A", "B", "A"});  // repeats collapse, first place kept
  f = next_usage_family(row, "agent:main:main", "C");
  CHECK(f.session_ids == std::vector<std::string>{"A", "B", "C"});

  session_entry no_id;  // a row without a session id adds only the new one
  f = next_usage_family(no_id, "k", "N");
  CHECK(f.session_ids == std::vector<std::string>{"N"});
}
