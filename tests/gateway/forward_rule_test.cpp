// forward_rule without sockets: which calls go to the node owning their session's shard, what a
// client is told when nobody serves the shard now, and the node link's mark and addresses.
#include "gateway/forward_rule.hpp"

#include <catch2/catch.hpp>

#include <set>

#include "gateway/method_table.hpp"

using namespace sessionrt::gateway;

namespace {
shard_route remote_route() {
  shard_route r;
  r.at = shard_route::where::remote;
  r.node = "n2";
  r.address = "127.0.0.1:7002";
  r.shard = "main/17";
  return r;
}
}  // namespace

TEST_CASE("forward rule: the session calls of a shard owned elsewhere go to its owner", "[forward]") {
  const std::optional<std::string> key = "agent:main:x";
  for (std::string_view m : {"chat.send", "chat.abort", "chat.history", "sessions.patch", "sessions.reset",
                             "sessions.describe", "sessions.delete", "sessions.compact", "chat.startup",
                             "sessions.create", "commands.list", "sessions.messages.subscribe"}) {
    INFO(std::string(m));
    auto v = decide_forward(m, false, key, remote_route());
    CHECK(v.what == forward_verdict::kind::forward);
    CHECK(v.node == "n2");
    CHECK(v.address == "127.0.0.1:7002");
  }
  CHECK(forwarded_key_param("chat.send") == "sessionKey");
  CHECK(forwarded_key_param("sessions.patch") == "key");
  // Everything else runs here, whatever the owner: lists, subscriptions to all sessions, and an
  // unsubscribe (the subscription it ends is followed by the forwarder, not by the owner).
  for (std::string_view m : {"sessions.list", "health", "sessions.subscribe", "sessions.unsubscribe",
                             "sessions.messages.unsubscribe", "agent.identity.get", "sessions.resolve"})
    CHECK(decide_forward(m, false, key, remote_route()).what == forward_verdict::kind::serve_here);
}

TEST_CASE("forward rule: one row per method, naming the key param its handler reads, and what no key means",
          "[forward]") {
  using keyless = forwarded_method::keyless;
  std::set<std::string_view> seen;
  for (const auto& m : forwarded_methods()) {
    INFO(std::string(m.method));
    CHECK(seen.insert(m.method).second);  // one row each
    CHECK(find_method(m.method) != nullptr);  // a method this gateway answers
    // OpenClaw's params: chat.* and commands.list name the session "sessionKey", sessions.* "key".
    CHECK(m.key_param == (m.method.rfind("sessions.", 0) == 0 ? "key" : "sessionKey"));
  }
  REQUIRE(find_forwarded("chat.startup"));
  CHECK(find_forwarded("chat.startup")->without_key == keyless::main_session);
  REQUIRE(find_forwarded("sessions.create"));
  CHECK(find_forwarded("sessions.create")->without_key == keyless::new_key);
  CHECK(find_forwarded("chat.send")->without_key == keyless::runs_here);
  CHECK(find_forwarded("sessions.list") == nullptr);
}

TEST_CASE("forward rule: an event of a session is relayed only from the node owning it now", "[forward]") {
  CHECK(relay_from("n2", remote_route()));
  CHECK_FALSE(relay_from("n3", remote_route()));  // an old owner, or a relay through another node
  shard_route here;
  here.at = shard_route::where::local;
  here.node = "n1";
  CHECK_FALSE(relay_from("n2", here));  // the shard is this node's: its own events reach its clients
  CHECK_FALSE(relay_from("n1", here));
  shard_route nobody;
  nobody.at = shard_route::where::unknown;
  CHECK_FALSE(relay_from("n2", nobody));
}

TEST_CASE("forward rule: local owners, node links and keys that do not resolve are served here", "[forward]") {
  shard_route local;
  local.at = shard_route::where::local;
  CHECK(decide_forward("chat.send", false, std::string("agent:main:x"), local).what == forward_verdict::kind::serve_here);
  // One hop at most: a forwarded call is never forwarded again, whatever this node believes.
  CHECK(decide_forward("chat.send", true, std::string("agent:main:x"), remote_route()).what ==
        forward_verdict::kind::serve_here);
  CHECK(decide_forward("chat.send", false, std::nullopt, remote_route()).what == forward_verdict::kind::serve_here);
}

TEST_CASE("forward rule: a shard nobody holds now is refused UNAVAILABLE, retryable, naming the shard", "[forward]") {
  shard_route nobody;
  nobody.at = shard_route::where::unknown;
  nobody.shard = "main/17";
  nobody.why = "shard main/17 has no owner now (being placed, handed off or failed over)";
  auto v = decide_forward("chat.history", false, std::string("agent:main:x"), nobody);
  REQUIRE(v.what == forward_verdict::kind::refuse);
  auto e = v.error.to_json();
  CHECK(e.at("code") == "UNAVAILABLE");
  CHECK(e.at("retryable") == true);
  CHECK(e.at("retryAfterMs") == kForwardRetryAfterMs);
  CHECK(e.at("details").at("reason") == "owner_unknown");
  CHECK(e.at("details").at("shard") == "main/17");
  CHECK_THAT(std::string(e.at("message").as_string()), Catch::Contains("agent:main:x") && Catch::Contains("no owner now"));
}

TEST_CASE("forward rule: a node link is marked by its connect, and node addresses parse", "[forward]") {
  auto who = node_link_identity("tok", "n1", "sessionrt-0.1.0");
  client_info seen;
  seen.id = who.client_id;
  seen.mode = who.mode;
  seen.display_name = who.display_name;
  CHECK(is_node_link(seen));
  CHECK(who.scopes == std::vector<std::string>{"operator.admin"});
  client_info cli;
  cli.id = "cli";
  cli.mode = "cli";
  cli.display_name = "sessionrt-node n1";
  CHECK_FALSE(is_node_link(cli));

  auto a = parse_address("127.0.0.1:7002");
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 7002);
  auto v6 = parse_address("[::1]:9");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(parse_address("0.0.0.0:7001")->host == "127.0.0.1");  // a wildcard bind, reached on loopback
  CHECK_FALSE(parse_address("nohost"));
  CHECK_FALSE(parse_address("h:0"));
  CHECK_FALSE(parse_address("h:70000"));
  CHECK_FALSE(parse_address(":7001"));
}

TEST_CASE("forward rule: a runtime's not_owner is answered UNAVAILABLE retryable, others as before", "[forward]") {
  auto e = from_status(sessionrt::status(sessionrt::errc::not_owner, "shard main/17 is not served by this node")).to_json();
  CHECK(e.at("code") == "UNAVAILABLE");
  CHECK(e.at("retryable") == true);
  CHECK(e.at("retryAfterMs") == kForwardRetryAfterMs);
  CHECK(e.at("details").at("reason") == "not_owner");
  auto bad = from_status(sessionrt::status(sessionrt::errc::invalid_argument, "bad key")).to_json();
  CHECK(bad.at("code") == "INVALID_REQUEST");
  CHECK_FALSE(bad.contains("retryable"));
}
