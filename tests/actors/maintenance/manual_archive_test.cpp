// OpenClaw 2026.9's manual archive and restore (sessions.patch {archived}) on one row, and the
// refusal of a system event to an archived row (session_rollover's archived_row_refusal).
#include <catch2/catch.hpp>

#include "actors/maintenance/manual_archive.hpp"
#include "actors/session/session_rollover.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::testing {
namespace {

session_entry row_of(boost::json::object o) { return session_entry(std::move(o)); }

}  // namespace

TEST_CASE("manual archive: the patch needs the row, its sessionId as expected, and not the main key") {
  const auto row = row_of({{"sessionId", "s1"}, {"updatedAt", 5}});
  CHECK(actors::check_archive_patch("agent:main:x", &row, std::string_view("s1"), true, false).ok());
  auto missing = actors::check_archive_patch("agent:main:x", nullptr, std::string_view("s1"), true, false);
  CHECK(missing.code() == errc::not_found);
  CHECK(missing.message() == "session not found: agent:main:x");
  auto unexpected = actors::check_archive_patch("agent:main:x", &row, std::nullopt, false, false);
  CHECK(unexpected.message() == "expectedSessionId required for session lifecycle patch: agent:main:x");
  auto changed = actors::check_archive_patch("agent:main:x", &row, std::string_view("s0"), true, false);
  CHECK(changed.message() == "Session agent:main:x changed before patch. Retry.");
  auto main = actors::check_archive_patch("agent:main:main", &row, std::string_view("s1"), true, true);
  CHECK(main.message() == "Cannot archive an agent's main session.");
  // Restoring the main key is allowed (nothing to refuse).
  CHECK(actors::check_archive_patch("agent:main:main", &row, std::string_view("s1"), false, true).ok());
}

TEST_CASE("manual archive: archive sets archivedAt and reason manual and unpins, a second archive keeps the first, "
          "restore clears every archive field") {
  auto e = row_of({{"sessionId", "s1"}, {"pinnedAt", 3}, {"archivedBy", "x"}, {"updatedAt", 5}});
  actors::apply_archive_patch(e, true, 1000);
  CHECK(e.json().at("archivedAt").to_number<std::int64_t>() == 1000);
  CHECK(json::get_string(e.json(), "archiveReason") == std::optional<std::string_view>("manual"));
  CHECK_FALSE(e.json().contains("archivedBy"));
  CHECK_FALSE(e.json().contains("pinnedAt"));
  CHECK(actors::check_pin_patch(e, true).message() == "cannot pin an archived session; restore it first");
  CHECK(actors::check_pin_patch(e, false).ok());

  auto by_cap = row_of({{"sessionId", "s1"}, {"archivedAt", 7}, {"archiveReason", "active-session-cap"}});
  actors::apply_archive_patch(by_cap, true, 1000);
  CHECK(by_cap.json().at("archivedAt").to_number<std::int64_t>() == 7);
  CHECK(json::get_string(by_cap.json(), "archiveReason") == std::optional<std::string_view>("active-session-cap"));

  actors::apply_archive_patch(by_cap, false, 2000);
  CHECK_FALSE(by_cap.json().contains("archivedAt"));
  CHECK_FALSE(by_cap.json().contains("archiveReason"));
  CHECK(actors::check_pin_patch(by_cap, true).ok());
}

TEST_CASE("an archived row refuses heartbeat, cron and exec events, and takes a person's message") {
  const auto archived = row_of({{"sessionId", "s1"}, {"archivedAt", 7}, {"archiveReason", "age-retention"}});
  const auto plain = row_of({{"sessionId", "s1"}});
  for (auto kind : {actors::inbound_kind::heartbeat, actors::inbound_kind::cron_event, actors::inbound_kind::exec_event}) {
    auto refused = actors::archived_row_refusal("agent:main:telegram:direct:1", &archived, kind);
    REQUIRE(refused);
    CHECK(refused->code() == errc::invalid_argument);
    CHECK(refused->message() ==
          "Session \"agent:main:telegram:direct:1\" is archived. Restore it before starting new work.");
    CHECK_FALSE(actors::archived_row_refusal("k", &plain, kind));
    CHECK_FALSE(actors::archived_row_refusal("k", nullptr, kind));
  }
  CHECK_FALSE(actors::archived_row_refusal("k", &archived, actors::inbound_kind::message));
}

}  // namespace sessionrt::testing
