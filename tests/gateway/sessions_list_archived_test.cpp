// sessions.list and archived rows (OpenClaw 2026.9: archivedAt, e.g. from
// session.maintenance.archiveDashboardAfter): left out by default, `archived: true` lists only
// them, `archived: "all"` both; every row says whether it is archived.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "messages/json_access.hpp"
#include "storage/durable_file.hpp"
#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using namespace sessionrt::gateway::testing;
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kNow = 1796011140000;

void write_store(const std::string& state_dir) {
  const std::string dir = state_dir + "/agents/main/sessions";
  REQUIRE(storage::ensure_dir(storage::posix_fs(), dir).ok());
  bj::object store{
      {"agent:main:main", bj::object{{"sessionId", "m1"}, {"updatedAt", kNow}}},
      {"agent:main:dashboard:old", bj::object{{"sessionId", "d1"},
                                              {"updatedAt", kNow - 9 * 86400000LL},
                                              {"archivedAt", kNow - 86400000LL},
                                              {"archiveReason", "stale-dashboard"}}},
      {"agent:main:dashboard:new", bj::object{{"sessionId", "d2"}, {"updatedAt", kNow - 1000}}},
  };
  sessionrt::testing::write_text(dir + "/sessions.json", bj::serialize(store));
}

std::vector<std::string> keys_of(const bj::value& answer) {
  std::vector<std::string> out;
  for (const auto& row : answer.at("sessions").as_array()) out.emplace_back(row.at("key").as_string());
  return out;
}

}  // namespace

TEST_CASE("gateway: sessions.list leaves archived rows out unless asked for them") {
  running_gateway g([](gateway_options& o) { write_store(o.runtime.settings.state_dir); });
  auto c = g.client();

  auto active = c->request("sessions.list", bj::object{}, 10s);
  REQUIRE(active.ok());
  CHECK(keys_of(*active) == std::vector<std::string>{"agent:main:main", "agent:main:dashboard:new"});
  CHECK(active->at("totalCount").to_number<std::int64_t>() == 2);
  for (const auto& row : active->at("sessions").as_array()) {
    CHECK(row.at("archived") == false);
    CHECK_FALSE(row.as_object().contains("archivedAt"));
  }

  auto archived = c->request("sessions.list", bj::object{{"archived", true}}, 10s);
  REQUIRE(archived.ok());
  REQUIRE(keys_of(*archived) == std::vector<std::string>{"agent:main:dashboard:old"});
  const auto& row = archived->at("sessions").as_array()[0];
  CHECK(row.at("archived") == true);
  CHECK(row.at("archivedAt").to_number<std::int64_t>() == kNow - 86400000LL);
  CHECK(row.at("archiveReason") == "stale-dashboard");

  auto all = c->request("sessions.list", bj::object{{"archived", "all"}}, 10s);
  REQUIRE(all.ok());
  CHECK(all->at("totalCount").to_number<std::int64_t>() == 3);
  CHECK(keys_of(*c->request("sessions.list", bj::object{{"archived", false}}, 10s)).size() == 2);

  auto bad = c->request("sessions.list", bj::object{{"archived", "some"}}, 10s);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message(), Catch::Contains("archived"));
}
