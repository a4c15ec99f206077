// OpenClaw's group display names (buildGroupDisplayName): "<channel>:g-<label>".
#include <catch2/catch.hpp>

#include "actors/session/group_display_name.hpp"

using namespace sessionrt::actors;

TEST_CASE("group display name: subject, id fallback, shortening and prefixes") {
  CHECK(group_display_name("discord", "Release Crew", "123") == "discord:g-release-crew");
  CHECK(group_display_name("Telegram", "", "-100200") == "telegram:g-100200");
  CHECK(group_display_name("slack", "", "C0123456789ABCDEF") == "slack:g-c0123456789abcdef");
  CHECK(group_display_name("slack", "", "   ") == "slack");
  CHECK(group_display_name("slack", "#general", "C1") == "slack:g-general");
  CHECK(group_display_name("whatsapp", "@team", "x") == "whatsapp:@team");
  CHECK(group_display_name("", "Ops  &  On-call!!", "x") == "group:g-ops-on-call");
}
