// OpenClaw's group display names (buildGroupDisplayName): "<channel>:g-<label>".
#include <catch2/catch.hpp>

#include "actors/session/group_display_name.hpp"
#include "actors/session/dock_command.hpp"

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

TEST_CASE("dock command: both spellings, whole body only") {
  CHECK(parse_dock_command("/dock-discord") == std::optional<std::string>("discord"));
  CHECK(parse_dock_command("  /DOCK_Telegram ") == std::optional<std::string>("telegram"));
  CHECK(!parse_dock_command("/dock-discord now").has_value());
  CHECK(!parse_dock_command("/dock-").has_value());
  CHECK(!parse_dock_command("/docking").has_value());
}
