// Seeded session ids: the same inputs give the same id, any input changed gives another, and
// every id has UUID v4's form (OpenClaw's sessionId).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "messages/ids.hpp"

using sessionrt::session_ids;

namespace {
bool v4_form(const std::string& id) {
  if (id.size() != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-') return false;
  return id[14] == '4' && std::string("89ab").find(id[19]) != std::string::npos;
}
}  // namespace

TEST_CASE("session ids: seeded ids follow from their inputs, random ones do not repeat", "[ids]") {
  const session_ids a(std::uint64_t{7}), b(std::uint64_t{7}), other_seed(std::uint64_t{8}), random;
  const std::string id = a.next("agent:main:main", 1000, "prev", "message");
  CHECK(v4_form(id));
  CHECK(b.next("agent:main:main", 1000, "prev", "message") == id);  // another run, same seed
  std::set<std::string> seen{id};
  seen.insert(a.next("agent:main:other", 1000, "prev", "message"));
  seen.insert(a.next("agent:main:main", 1001, "prev", "message"));
  seen.insert(a.next("agent:main:main", 1000, "", "message"));
  seen.insert(a.next("agent:main:main", 1000, "prev", "compaction"));
  seen.insert(other_seed.next("agent:main:main", 1000, "prev", "message"));
  CHECK(seen.size() == 6);
  for (const auto& s : seen) CHECK(v4_form(s));
  const std::string r1 = random.next("agent:main:main", 1000, "prev", "message");
  const std::string r2 = random.next("agent:main:main", 1000, "prev", "message");
  CHECK(v4_form(r1));
  CHECK(r1 != r2);
}
