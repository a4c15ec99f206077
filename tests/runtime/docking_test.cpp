// Channel docking (issue 17, OpenClaw's /dock-<channel>): a linked sender moves the direct
// session's reply route to their peer on another channel; an unlinked sender and a group get a
// reply that changes nothing; the route persists across a restart; outcomes and turn events
// carry the delivery route.
#include <catch2/catch.hpp>

#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using sessionrt::testing::inbound;
using sessionrt::testing::lifecycle_harness;

namespace {

const std::string kKey = "agent:main:main";

void linked(actors::runtime_settings& s) {
  s.routing.session.links = {{"alice", {"telegram:123", "discord:456"}}, {"bob", {"telegram:777"}}};
}

session_entry row_of(runtime::runtime& rt, const std::string& key) {
  auto row = rt.session(key).value();
  REQUIRE(row.has_value());
  return *row;
}

}  // namespace

TEST_CASE("docking: /dock_discord moves a linked sender's replies and keeps the session") {
  lifecycle_harness h;
  auto rt = h.start(linked);
  turn_outcome hello = rt->send(inbound("telegram", "123", "start the task")).get();
  REQUIRE(hello.st.ok());
  CHECK(hello.delivery.channel == "telegram");
  CHECK(hello.delivery.to == "telegram:123");
  turn_outcome docked = rt->send(inbound("telegram", "123", "/dock_discord")).get();
  REQUIRE(docked.st.ok());
  CHECK(docked.command == "/dock-discord");
  CHECK(docked.command_output.find("discord:456") != std::string::npos);
  CHECK(docked.session_id == hello.session_id);
  CHECK(!docked.new_session);
  CHECK(docked.delivery.channel == "discord");
  CHECK(docked.delivery.to == "456");
  CHECK(docked.delivery.account_id == "default");
  const session_entry row = row_of(*rt, kKey);
  CHECK(row.last_channel() == std::optional<std::string_view>("discord"));
  CHECK(row.last_to() == std::optional<std::string_view>("456"));
  CHECK(row.last_account_id() == std::optional<std::string_view>("default"));
  CHECK(row.session_id() == std::optional<std::string_view>(hello.session_id));
  CHECK(h.model->calls().size() == 1);  // the command needed no model call
  rt->settle();
  auto events = h.of_type("session.docked");
  REQUIRE(events.size() == 1);
  CHECK(events[0].data.at("channel").as_string() == "discord");
  CHECK(events[0].data.at("from").as_string() == "telegram");
  // The route survives a restart.
  REQUIRE(rt->stop().ok());
  rt.reset();
  auto again = h.start(linked);
  const session_entry reloaded = row_of(*again, kKey);
  CHECK(reloaded.last_channel() == std::optional<std::string_view>("discord"));
  CHECK(reloaded.last_to() == std::optional<std::string_view>("456"));
  REQUIRE(again->stop().ok());
}

TEST_CASE("docking: /dock-discord from an unlinked sender or one without that channel changes nothing") {
  lifecycle_harness h;
  auto rt = h.start(linked);
  turn_outcome stranger = rt->send(inbound("telegram", "999", "/dock-discord")).get();
  REQUIRE(stranger.st.ok());
  CHECK(stranger.command_output.find("not linked") != std::string::npos);
  CHECK(stranger.delivery.channel == "telegram");
  CHECK(row_of(*rt, kKey).last_channel() == std::optional<std::string_view>("telegram"));
  turn_outcome bob = rt->send(inbound("telegram", "777", "/dock-discord")).get();
  CHECK(bob.command_output.find("no discord peer") != std::string::npos);
  CHECK(row_of(*rt, kKey).last_to() == std::optional<std::string_view>("telegram:777"));
  CHECK(h.model->calls().empty());
  REQUIRE(rt->stop().ok());
}

TEST_CASE("docking: a group session is not docked") {
  lifecycle_harness h;
  auto rt = h.start(linked);
  chat_event group = inbound("telegram", "-100200", "/dock_discord");
  group.peer_kind = "group";
  group.sender_id = "123";
  turn_outcome out = rt->send(group).get();
  REQUIRE(out.st.ok());
  CHECK(out.command_output.find("only in a direct session") != std::string::npos);
  const session_entry row = row_of(*rt, "agent:main:telegram:group:-100200");
  CHECK(row.last_channel() == std::optional<std::string_view>("telegram"));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("docking: turn.completed carries the delivery route, and a group row gets its display name") {
  lifecycle_harness h;
  auto rt = h.start(linked);
  chat_event group = inbound("discord", "g1", "hi all");
  group.peer_kind = "group";
  group.subject = "Release Crew";
  REQUIRE(rt->send(group).get().st.ok());
  rt->settle();
  auto done = h.of_type("turn.completed");
  REQUIRE(done.size() == 1);
  CHECK(done[0].data.at("delivery").as_object().at("channel").as_string() == "discord");
  const session_entry row = row_of(*rt, "agent:main:discord:group:g1");
  CHECK(row.display_name() == std::optional<std::string_view>("discord:g-release-crew"));
  CHECK(row.subject() == std::optional<std::string_view>("Release Crew"));
  REQUIRE(rt->stop().ok());
}
