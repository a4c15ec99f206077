// Maintenance protection as OpenClaw 2026.9 decides it (actors/router/protected_key.hpp,
// isProtectedSessionMaintenanceEntry): the main key, threads, external delivery routes and
// conversations, rows whose delivery is external, and group / channel / thread chats; never a
// synthetic key. Then the planner: such rows survive age retention and the cap.
#include <catch2/catch.hpp>

#include <algorithm>

#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/router/protected_key.hpp"
#include "actors/router/session_key.hpp"
#include "tests/actors/maintenance/maintenance_fixture.hpp"

namespace sessionrt::testing {
namespace {

bool protected_key(const std::string& key, boost::json::object row = {}) {
  const session_entry e(std::move(row));
  return actors::is_protected_key(key, &e);
}

bool touched(const actors::maintenance_plan& plan, const std::string& key) {
  return std::any_of(plan.actions.begin(), plan.actions.end(), [&](const auto& a) { return a.key == key; });
}

}  // namespace

TEST_CASE("protected key: the main key and external delivery routes and conversations, as OpenClaw 2026.9",
          "[maintenance]") {
  // isPrimarySessionMaintenanceKey: "global", or any agent's "main" (the literal, not mainKey).
  CHECK(protected_key("agent:main:main"));
  CHECK(protected_key("agent:ops:main"));
  CHECK(protected_key("Agent:Main:MAIN"));
  CHECK(protected_key("global"));
  CHECK_FALSE(protected_key("agent:main:main2"));
  CHECK_FALSE(protected_key("agent:main::main"));  // a rest starting with ':' is no agent key
  // parseSessionDeliveryRoute: <channel>:<kind>:<peer> and <channel>:<account>:(direct|dm):<peer>.
  CHECK(protected_key("agent:main:telegram:direct:5"));
  CHECK(protected_key("agent:main:signal:dm:+15550001"));
  CHECK(protected_key("agent:main:whatsapp:default:direct:+15550001"));
  CHECK(protected_key("agent:main:discord:group:77"));
  CHECK(protected_key("agent:main:telegram:direct:5:thread:9"));
  CHECK_FALSE(protected_key("agent:main:telegram:user:5"));     // not a peer kind
  CHECK_FALSE(protected_key("agent:main:webchat:direct"));      // no peer
  CHECK_FALSE(protected_key("agent:main:agent:direct:5"));      // a nested agent key is opaque
  // The key patterns: direct:<peer>, <channel>:(group|channel):<id>, Telegram DM topics.
  CHECK(protected_key("agent:main:direct:5"));
  CHECK(protected_key("agent:main:slack:channel:c01"));
  CHECK(protected_key("telegram:dm:5:topic:1"));
  CHECK(actors::is_external_conversation_key("agent:main:direct:5"));
  CHECK_FALSE(actors::is_delivery_route_key("agent:main:direct:5"));
  // Ordinary dashboard and explicit sessions are not protected ...
  CHECK_FALSE(protected_key("agent:main:dashboard:0b7e5a52"));
  CHECK_FALSE(protected_key("agent:main:explicit:notes"));
  // ... synthetic ones never, whatever their row says.
  CHECK_FALSE(protected_key("agent:main:cron:job1", {{"chatType", "group"}}));
  CHECK_FALSE(protected_key("agent:main:main:heartbeat"));
  CHECK_FALSE(protected_key("agent:main:explicit:model-run-0b7e5a52-5f5e-4a43-9c1e-2f4e6f1d9a10"));
  CHECK(actors::is_model_run_key("agent:main:explicit:model-run-0b7e5a52-5f5e-4a43-9c1e-2f4e6f1d9a10"));
  // Threads and group chats, as before.
  CHECK(protected_key("agent:main:explicit:notes:thread:1"));
  CHECK(protected_key("agent:main:explicit:notes", {{"chatType", "Group"}}));
  CHECK(protected_key("agent:main:explicit:notes", {{"origin", {{"chatType", "channel"}}}}));
}

TEST_CASE("protected key: a row whose delivery is external is protected whatever its key", "[maintenance]") {
  const std::string key = "agent:main:explicit:notes";
  using bj = boost::json::object;
  // JSON-era rows, read as 2026.9 migrates them (normalizeLegacySessionEntryDelivery).
  CHECK(protected_key(key, {{"deliveryContext", bj{{"channel", "telegram"}, {"to", "telegram:5"}}}}));
  CHECK(protected_key(key, {{"lastChannel", "telegram"}, {"lastTo", "telegram:5"}}));
  CHECK(protected_key(key, {{"origin", bj{{"provider", "discord"}, {"from", "discord:1"}}}}));
  CHECK(protected_key(key, {{"route", bj{{"channel", "slack"}, {"target", bj{{"to", "c01"}}}}}}));
  // webchat and the internal channels are not external deliveries ...
  CHECK_FALSE(protected_key(key, {{"deliveryContext", bj{{"channel", "webchat"}, {"to", "webchat:ui"}}},
                                  {"lastChannel", "webchat"},
                                  {"lastTo", "webchat:ui"}}));
  CHECK_FALSE(protected_key(key, {{"lastChannel", "heartbeat"}}));
  CHECK_FALSE(protected_key(key, {{"sessionId", "s1"}, {"updatedAt", 5}}));  // no delivery at all
  // ... unless deliveryContext names an external target behind the internal channel.
  CHECK(protected_key(key, {{"lastChannel", "webchat"}, {"deliveryContext", bj{{"channel", "telegram"}, {"to", "5"}}}}));
  // 2026.9's own form.
  CHECK(protected_key(key, {{"delivery", bj{{"kind", "external"}, {"route", bj{}}, {"context", bj{}}, {"origin", bj{}}}}}));
  CHECK_FALSE(protected_key(key, {{"delivery", bj{{"kind", "internal"}}}}));
  CHECK(actors::row_delivery_kind(session_entry(bj{{"delivery", bj{{"kind", "none"}}}})) == actors::delivery_kind::none);
  CHECK(actors::row_delivery_kind(session_entry(bj{{"lastChannel", "webchat"}})) == actors::delivery_kind::internal);
}

TEST_CASE("maintenance planner: the main key and a delivery-target key survive age retention and the cap",
          "[maintenance]") {
  sessions_fixture fx;
  const std::string delivery_row = "agent:main:explicit:ops-room";
  fx.row("agent:main:main", "m1", 90 * day);
  fx.row("agent:main:telegram:direct:5", "d5", 90 * day);
  fx.row(delivery_row, "r1", 90 * day,
         {{"deliveryContext", {{"channel", "telegram"}, {"to", "telegram:5"}}}, {"lastChannel", "telegram"}});
  fx.row("agent:main:explicit:old", "o1", 90 * day);  // an ordinary row as old: archived by age
  for (int i = 0; i < 4; ++i)
    fx.row("agent:main:dashboard:" + std::to_string(i), "b" + std::to_string(i), (i + 1) * 1000);
  for (const char* id : {"m1", "d5", "r1", "o1", "b0", "b1", "b2", "b3"}) fx.transcript(id, 500, 90 * day);
  fx.save();
  actors::maintenance_settings s;
  s.mode = actors::maintenance_mode::enforce;
  s.max_entries = 1;  // far over: the cap takes every unprotected row it may
  auto plan = fx.plan(s, {}, true);
  for (const std::string& key : std::vector<std::string>{"agent:main:main", "agent:main:telegram:direct:5", delivery_row})
    CHECK_FALSE(touched(plan, key));
  CHECK(actors::row_label_in(plan, "agent:main:explicit:old") == std::string("archive-age"));
  CHECK(plan.age_archived == 1);
  CHECK(plan.cap_archived == 4);  // the dashboard rows, least active first
}

}  // namespace sessionrt::testing

namespace sessionrt::testing {

// shouldRunModelRunPrune: a forced pass (cleanup) prunes stale model-run probes only when the
// unarchived rows are over maxEntries; archived rows do not count.
TEST_CASE("maintenance planner: a forced pass prunes model runs only when the unarchived rows pass maxEntries",
          "[maintenance]") {
  sessions_fixture fx;
  const std::string probe = "agent:main:explicit:model-run-0b7e5a52-5f5e-4a43-9c1e-2f4e6f1d9a10";
  fx.row(probe, "mr", 2 * day);  // past the model-run retention (1 day)
  fx.row("agent:main:dashboard:a", "a", 1000);
  fx.row("agent:main:dashboard:b", "b", 1000);
  for (const char* id : {"x", "y", "z"})
    fx.row(std::string("agent:main:dashboard:") + id, id, 1000,
           {{"archivedAt", fixture_now - 1000}, {"archiveReason", "manual"}});
  fx.save();
  actors::maintenance_settings s;
  s.mode = actors::maintenance_mode::enforce;
  s.max_entries = 3;  // 6 rows, but 3 unarchived: not over
  CHECK(fx.plan(s, {}, true).model_run_pruned == 0);
  s.max_entries = 2;  // 3 unarchived: over
  auto plan = fx.plan(s, {}, true);
  CHECK(plan.model_run_pruned == 1);
  CHECK(actors::row_label_in(plan, probe) == std::string("prune-model-run"));
}

}  // namespace sessionrt::testing
