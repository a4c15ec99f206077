// The audit cases of SPEC §2 ("dmScope: main while direct messages arrive from several peers")
// and the identity-link rules of [R§1.2]; the row shapes follow the sessions.json example of
// [R§2.2] (origin.from, lastTo, deliveryContext.to name the DM peer).
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <string>
#include <vector>

#include "actors/router/dm_scope_audit.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

session_entry entry_from(const char* json_text) {
  return session_entry(boost::json::parse(json_text).as_object());
}

session_entry dm_row(const char* channel, const char* from, const char* to,
                     const char* display_name = "") {
  boost::json::object o;
  o["sessionId"] = "s";
  o["updatedAt"] = 1;
  o["chatType"] = "direct";
  o["deliveryContext"] = {{"channel", channel}, {"to", to}};
  o["lastChannel"] = channel;
  o["lastTo"] = to;
  o["origin"] = {{"provider", channel}, {"chatType", "direct"}, {"from", from}, {"to", to}};
  if (*display_name) o["displayName"] = display_name;
  return session_entry(std::move(o));
}

std::vector<const audit_finding*> with_check(const std::vector<audit_finding>& findings,
                                             std::string_view check) {
  std::vector<const audit_finding*> out;
  for (const auto& f : findings)
    if (f.check == check) out.push_back(&f);
  return out;
}

bool mentions(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("dmScope main with DMs from several peers is reported with its fix") {
  routing_config config;  // dmScope main by default
  const session_entry main_row = dm_row("telegram", "telegram:111", "telegram:111");
  const session_entry leftover = dm_row("telegram", "telegram:222", "telegram:222");
  const auto findings = audit_dm_scope(
      config, {{"agent:main:main", &main_row}, {"agent:main:telegram:direct:222", &leftover}});
  const auto shared = with_check(findings, "dm-scope-main-shared");
  REQUIRE(shared.size() == 1);
  CHECK(shared[0]->severity == audit_severity::warn);
  CHECK(mentions(shared[0]->message, "2 distinct peers"));
  CHECK(mentions(shared[0]->message, "telegram:111"));
  CHECK(mentions(shared[0]->message, "telegram:222"));
  CHECK(mentions(shared[0]->fix, "session.dmScope: \"per-channel-peer\""));
  CHECK(mentions(shared[0]->fix, "sessions cleanup --fix-dm-scope"));
  CHECK(shared[0]->evidence_keys ==
        std::vector<std::string>{"agent:main:main", "agent:main:telegram:direct:222"});
}

TEST_CASE("two peers named by the main row itself are critical") {
  const session_entry main_row = dm_row("telegram", "telegram:111", "telegram:222");
  const auto findings = audit_dm_scope(routing_config{}, {{"agent:main:main", &main_row}});
  const auto shared = with_check(findings, "dm-scope-main-shared");
  REQUIRE(shared.size() == 1);
  CHECK(shared[0]->severity == audit_severity::critical);
}

TEST_CASE("one peer, or peers joined by identity links, is not a leak") {
  const session_entry one_peer = dm_row("telegram", "telegram:111", "telegram:111");
  CHECK(with_check(audit_dm_scope(routing_config{}, {{"agent:main:main", &one_peer}}),
                   "dm-scope-main-shared")
            .empty());

  routing_config linked;
  linked.session.links = {{"alice", {"telegram:111", "discord:987"}}};
  const session_entry anchored = dm_row("discord", "telegram:111", "discord:987");
  const auto findings = audit_dm_scope(linked, {{"agent:main:main", &anchored}});
  CHECK(with_check(findings, "dm-scope-main-shared").empty());
  CHECK(with_check(findings, "identity-links-ignored").size() == 1);  // main never applies them
}

TEST_CASE("group rows and per-channel-peer stores raise no dm-scope warning") {
  const session_entry group_row = entry_from(
      R"({"chatType":"group","origin":{"from":"telegram:111"},"lastTo":"telegram:-100"})");
  CHECK(audit_dm_scope(routing_config{}, {{"agent:main:main", &group_row}}).empty());

  routing_config per_channel;
  per_channel.session.direct_message_scope = dm_scope::per_channel_peer;
  const session_entry a = dm_row("telegram", "telegram:111", "telegram:111");
  const session_entry b = dm_row("telegram", "telegram:222", "telegram:222");
  CHECK(audit_dm_scope(per_channel, {{"agent:main:telegram:direct:111", &a},
                                     {"agent:main:telegram:direct:222", &b}})
            .empty());
}

TEST_CASE("a binding that forces dmScope main is audited for its agent") {
  routing_config config;
  config.session.direct_message_scope = dm_scope::per_channel_peer;
  config.bindings = {{"support", {.channel = "telegram"}, dm_scope::main}};
  const session_entry main_row = dm_row("telegram", "telegram:111", "telegram:222");
  const auto findings = audit_dm_scope(config, {{"agent:support:main", &main_row}});
  const auto shared = with_check(findings, "dm-scope-main-shared");
  REQUIRE(shared.size() == 1);
  CHECK(mentions(shared[0]->message, "\"support\""));
}

TEST_CASE("identity links: duplicated ids, unseen ids, bare ids") {
  routing_config config;
  config.session.direct_message_scope = dm_scope::per_channel_peer;
  config.session.links = {{"alice", {"telegram:111", "discord:999"}},
                          {"bob", {"Telegram:111", "555"}}};
  const session_entry row = dm_row("telegram", "telegram:111", "telegram:111");
  const auto findings = audit_dm_scope(config, {{"agent:main:telegram:direct:alice", &row}});

  const auto dup = with_check(findings, "identity-link-duplicate");
  REQUIRE(dup.size() == 1);
  CHECK(dup[0]->severity == audit_severity::warn);
  CHECK(mentions(dup[0]->message, "\"telegram:111\""));
  CHECK(mentions(dup[0]->message, "\"alice\""));
  CHECK(mentions(dup[0]->message, "\"bob\""));

  const auto unseen = with_check(findings, "identity-link-unseen");
  std::vector<std::string> unseen_ids;
  for (const auto* f : unseen) unseen_ids.push_back(f->message);
  CHECK(unseen.size() == 2);
  CHECK(std::any_of(unseen_ids.begin(), unseen_ids.end(),
                    [](const auto& m) { return mentions(m, "\"discord:999\""); }));
  CHECK(std::any_of(unseen_ids.begin(), unseen_ids.end(),
                    [](const auto& m) { return mentions(m, "\"555\""); }));
  CHECK(std::none_of(unseen_ids.begin(), unseen_ids.end(),
                     [](const auto& m) { return mentions(m, "\"telegram:111\""); }));

  const auto bare = with_check(findings, "identity-link-bare-id");
  REQUIRE(bare.size() == 1);
  CHECK(mentions(bare[0]->message, "\"555\""));
  CHECK(bare[0]->severity == audit_severity::info);
  CHECK(with_check(findings, "identity-links-ignored").empty());
}

TEST_CASE("per-peer scope: one display name on several channels without a link") {
  routing_config config;
  config.session.direct_message_scope = dm_scope::per_channel_peer;
  const session_entry tg = dm_row("telegram", "telegram:111", "telegram:111", "Alice");
  const session_entry dc = dm_row("discord", "discord:987", "user:987", "alice");
  const std::vector<stored_session_row> rows = {{"agent:main:telegram:direct:111", &tg},
                                                {"agent:main:discord:direct:987", &dc}};
  const auto findings = audit_dm_scope(config, rows);
  const auto split = with_check(findings, "per-peer-unlinked-person");
  REQUIRE(split.size() == 1);
  CHECK(split[0]->severity == audit_severity::info);
  CHECK(mentions(split[0]->message, "telegram"));
  CHECK(mentions(split[0]->message, "discord"));
  CHECK(mentions(split[0]->fix, "session.identityLinks"));
  CHECK(mentions(split[0]->fix, "\"telegram:111\""));
  CHECK(mentions(split[0]->fix, "\"discord:987\""));

  config.session.links = {{"alice", {"telegram:111", "discord:987"}}};
  CHECK(with_check(audit_dm_scope(config, rows), "per-peer-unlinked-person").empty());
}

TEST_CASE("severity names") {
  CHECK(to_string(audit_severity::info) == "info");
  CHECK(to_string(audit_severity::warn) == "warn");
  CHECK(to_string(audit_severity::critical) == "critical");
}
