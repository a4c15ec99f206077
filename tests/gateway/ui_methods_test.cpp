// The methods OpenClaw's web Control UI calls (gateway/ui_methods.cpp), through a real socket:
// their shapes, message identities in chat.history, session.message events, sessions.create,
// the pin kept by sessions.patch, and the Origin check / UI files on the gateway's port.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "messages/json_access.hpp"
#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using namespace sessionrt::gateway::testing;
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {

bj::object call(gateway_client& c, const std::string& method, bj::object params = {}) {
  auto r = c.request(method, params, 10s);
  if (!r.ok()) FAIL(method << ": " << r.error().message());
  return r->as_object();
}

std::string error_of_call(gateway_client& c, const std::string& method, bj::object params = {}) {
  auto r = c.request(method, params, 10s);
  if (r.ok()) FAIL(method << " answered " << bj::serialize(*r));
  return r.error().message();
}

// Sends and waits for the run's closing chat event.
void exchange(gateway_client& c, const std::string& key, const std::string& text, const std::string& run) {
  call(c, "chat.send", {{"sessionKey", key}, {"message", text}, {"idempotencyKey", run}});
  auto events = run_events(c, run);
  REQUIRE(events.ok());
  REQUIRE(events->back().at("state") == "final");
}

// The ids of a transcript's message entries, in file order.
std::vector<std::string> message_entry_ids(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> ids;
  for (std::string line; std::getline(in, line);) {
    auto v = bj::parse(line);
    if (v.at("type") == "message") ids.emplace_back(v.at("id").as_string());
  }
  return ids;
}

std::string entry_id_of_type(const std::string& path, const char* type) {
  std::ifstream in(path);
  std::string id;
  for (std::string line; std::getline(in, line);) {
    auto v = bj::parse(line);
    if (v.at("type") == type) id = std::string(v.at("id").as_string());
  }
  return id;
}

}  // namespace

TEST_CASE("ui methods: hello-ok lists the Control UI's methods and the session.message event") {
  running_gateway g;
  auto c = g.client();
  const auto& features = c->hello().at("features").as_object();
  auto has = [&](const char* list, const char* name) {
    for (const auto& m : features.at(list).as_array())
      if (m == name) return true;
    return false;
  };
  for (const char* m : {"chat.startup", "chat.metadata", "agent.identity.get", "sessions.messages.subscribe",
                        "sessions.messages.unsubscribe", "sessions.create", "sessions.resolve", "question.list",
                        "config.get", "cron.list", "models.authStatus", "environments.list"})
    CHECK(has("methods", m));
  CHECK(has("events", "session.message"));
}

TEST_CASE("ui methods: chat.history gives each message its identity and the user message its run") {
  running_gateway g;
  auto c = g.client();
  exchange(*c, "agent:main:main", "first words", "run-one");
  exchange(*c, "agent:main:main", "second words", "run-two");
  auto h = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"inputRunIds", bj::array{"run-two"}}});
  const auto& msgs = h.at("messages").as_array();
  REQUIRE(msgs.size() == 4);
  const std::string sid(h.at("sessionId").as_string());
  // The id is the transcript entry's own, as OpenClaw gives it.
  const auto entries = message_entry_ids(g.dir.path() + "/agents/main/sessions/" + sid + ".jsonl");
  REQUIRE(entries.size() == 4);
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const auto& meta = msgs[i].at("__openclaw").as_object();
    CHECK(meta.at("seq") == static_cast<std::int64_t>(i + 1));
    CHECK(meta.at("id") == entries[i].c_str());
    CHECK(meta.at("runId") == (i < 2 ? "run-one" : "run-two"));
  }
  CHECK(msgs[0].at("idempotencyKey") == "run-one:user");
  CHECK(msgs[2].at("idempotencyKey") == "run-two:user");
  CHECK_FALSE(msgs[1].as_object().contains("idempotencyKey"));
  CHECK(h.at("pendingInputs").at("items").as_array().empty());
  CHECK(h.at("inputReceipts").as_array().empty());
  // A page numbers from where it starts in the session.
  auto last = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"limit", 1}});
  CHECK(last.at("messages").at(0).at("__openclaw").at("seq") == 4);
  CHECK_FALSE(last.contains("inputReceipts"));
  // The run id is on the stored line, where OpenClaw keeps it (pi ignores the extra fields).
  const std::string transcript = g.dir.path() + "/agents/main/sessions/" + sid + ".jsonl";
  std::ifstream in(transcript);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(all.find(R"("idempotencyKey":"run-one:user")") != std::string::npos);
}

TEST_CASE("ui methods: message ids survive a compaction, seqs are places in the context") {
  running_gateway g([](gateway_options& o) {
    // Small reserves, so that a compaction keeps only the last few messages.
    o.runtime.settings.compaction.reserve_tokens = 600;
    o.runtime.settings.compaction.reserve_tokens_floor = 500;
    o.runtime.settings.compaction.keep_recent_tokens = 400;
  });
  auto c = g.client();
  auto ui = g.client();
  for (int i = 0; i < 8; ++i)
    exchange(*c, "agent:main:main", fmt::format("message {} {}", i, std::string(300, static_cast<char>('a' + i))),
             fmt::format("run-{}", i));
  auto before = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}});
  const auto& was = before.at("messages").as_array();
  REQUIRE(was.size() == 16);
  call(*ui, "sessions.messages.subscribe", {{"key", "agent:main:main"}});
  auto compacted = call(*c, "sessions.compact", {{"key", "agent:main:main"}});
  REQUIRE(compacted.at("compacted") == true);
  auto after = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}});
  const auto& now = after.at("messages").as_array();
  REQUIRE(now.size() >= 2);
  REQUIRE(now.size() < was.size());
  // The summary first: the compaction entry's id.
  const std::string transcript = g.dir.path() + "/agents/main/sessions/" + std::string(after.at("sessionId").as_string()) + ".jsonl";
  CHECK(now[0].at("role") == "compactionSummary");
  CHECK(now[0].at("__openclaw").at("id") == entry_id_of_type(transcript, "compaction").c_str());
  CHECK(now[0].at("__openclaw").at("seq") == 1);
  // Every kept message has the id it had before; its seq is its new place.
  std::size_t kept = 0;
  for (std::size_t i = 1; i < now.size(); ++i) {
    const auto& id = now[i].at("__openclaw").at("id");
    CHECK(now[i].at("__openclaw").at("seq") == static_cast<std::int64_t>(i + 1));
    const std::size_t old_at = was.size() - (now.size() - i);  // the kept ones are the last ones
    CHECK(was[old_at].at("__openclaw").at("id") == id);
    CHECK(was[old_at].at("content") == now[i].at("content"));
    CHECK(was[old_at].at("__openclaw").at("seq") != now[i].at("__openclaw").at("seq"));
    ++kept;
  }
  CHECK(kept >= 1);
  CHECK(after.at("totalMessages") == static_cast<std::int64_t>(now.size()));
  // Messages stored after the compaction reach the subscriber with the identities the page has.
  exchange(*c, "agent:main:main", "after the compaction", "run-after");
  std::vector<bj::object> got;
  while (got.size() < 2) {
    auto e = wait_event(*ui, [](const gateway_event& ev) { return ev.event == "session.message"; });
    REQUIRE(e.ok());
    got.push_back(e->payload.as_object());
  }
  auto last = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"limit", 2}});
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(got[i].at("messageId") == last.at("messages").at(i).at("__openclaw").at("id"));
    CHECK(got[i].at("messageSeq") == last.at("messages").at(i).at("__openclaw").at("seq"));
  }
  CHECK(got[0].at("messageSeq") == static_cast<std::int64_t>(now.size() + 1));
}

TEST_CASE("ui methods: chat.history pages back with offset and nextOffset, as OpenClaw's UI asks") {
  running_gateway g;
  auto c = g.client();
  for (int i = 0; i < 3; ++i) exchange(*c, "agent:main:main", fmt::format("turn {}", i), fmt::format("page-{}", i));
  auto seqs = [](const bj::object& page) {
    std::vector<std::int64_t> out;
    for (const auto& m : page.at("messages").as_array()) out.push_back(m.at("__openclaw").at("seq").as_int64());
    return out;
  };
  auto p1 = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"limit", 2}});
  CHECK(seqs(p1) == std::vector<std::int64_t>{5, 6});
  CHECK(p1.at("hasMore") == true);
  CHECK(p1.at("nextOffset") == 2);
  CHECK(p1.at("totalMessages") == 6);
  auto p2 = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"limit", 2}, {"offset", p1.at("nextOffset")}});
  CHECK(seqs(p2) == std::vector<std::int64_t>{3, 4});
  CHECK(p2.at("nextOffset") == 4);
  auto p3 = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"limit", 2}, {"offset", p2.at("nextOffset")}});
  CHECK(seqs(p3) == std::vector<std::int64_t>{1, 2});
  CHECK(p3.at("hasMore") == false);
  CHECK_FALSE(p3.contains("nextOffset"));
  CHECK(p3.at("messages").at(0).at("content") == "turn 0");
  auto past = call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"limit", 2}, {"offset", 10}});
  CHECK(past.at("messages").as_array().empty());
  CHECK(error_of_call(*c, "chat.history", {{"sessionKey", "agent:main:main"}, {"offset", -1}}).find("must be >= 0") !=
        std::string::npos);
}

TEST_CASE("ui methods: chat.startup answers as chat.history with metadata, and resolves a short id") {
  running_gateway g;
  auto c = g.client();
  exchange(*c, "agent:main:main", "hello", "run-startup");
  auto s = call(*c, "chat.startup", {{"sessionKey", "agent:main:main"}, {"limit", 80}, {"maxBytes", 262144}});
  CHECK(s.at("sessionKey") == "agent:main:main");
  CHECK(s.at("messages").as_array().size() == 2);
  CHECK(s.at("messages").at(0).at("__openclaw").at("runId") == "run-startup");
  CHECK(s.contains("sessionInfo"));
  CHECK(s.at("metadata").at("models").as_array().size() >= 1);
  CHECK(s.at("metadata").at("runtimeSelectionLocked") == false);
  auto md = call(*c, "chat.metadata", {{"sessionKey", "agent:main:main"}, {"agentId", "main"}});
  CHECK(md.at("models").at(0).at("id") == "sim-1");
  CHECK(md.at("commands") == s.at("metadata").at("commands"));
  // Without a key: the agent's main session.
  auto main = call(*c, "chat.startup", {{"agentId", "main"}});
  CHECK(main.at("resolution").at("key") == "agent:main:main");
  CHECK(main.at("messages").as_array().size() == 2);
  // A dashboard session by the short id in the UI's URL.
  auto made = call(*c, "sessions.create", {{"label", "short"}});
  const std::string key(made.at("key").as_string());
  std::string hex;
  for (char ch : key.substr(key.rfind(':') + 1))
    if (ch != '-') hex += ch;
  auto by_short = call(*c, "chat.startup", {{"shortId", hex}, {"agentId", "main"}});
  CHECK(by_short.at("sessionKey") == key.c_str());
  CHECK(by_short.at("resolution").at("key") == key.c_str());
  auto resolved = call(*c, "sessions.resolve", {{"shortId", hex.substr(0, 8)}, {"agentId", "main"}, {"allowMissing", true}});
  CHECK(resolved.at("ok") == true);
  CHECK(resolved.at("key") == key.c_str());
  auto missing = call(*c, "sessions.resolve", {{"shortId", "0123456789abcdef"}, {"allowMissing", true}});
  CHECK(missing.at("ok") == false);
  CHECK(error_of_call(*c, "sessions.resolve", {{"shortId", "xyz"}}).find("8-32 hexadecimal") != std::string::npos);
  CHECK(error_of_call(*c, "sessions.resolve", {}).find("is required") != std::string::npos);
  auto by_label = call(*c, "sessions.resolve", {{"label", "short"}});
  CHECK(by_label.at("key") == key.c_str());
}

TEST_CASE("ui methods: metadata.commands and commands.list name sessionrt's chat commands in OpenClaw's shape") {
  running_gateway g([](gateway_options& o) {
    o.runtime.settings.session.reset.reset_triggers = {"/new", "/reset", "/fresh", "start over"};
    o.runtime.settings.routing.session.links = {{"alice", {"telegram:123", "discord:9"}}, {"bob", {"telegram:77"}}};
  });
  auto c = g.client();
  auto md = call(*c, "chat.metadata", {{"agentId", "main"}});
  const auto& cmds = md.at("commands").as_array();
  std::map<std::string, bj::object> by_name;
  for (const auto& v : cmds) {
    const auto& o = v.as_object();
    for (const char* field : {"name", "textAliases", "description", "source", "scope", "acceptsArgs"}) CHECK(o.contains(field));
    for (const auto& kv : o)  // CommandEntrySchema is closed
      CHECK(std::set<std::string>{"name", "nativeName", "textAliases", "description", "category", "source", "scope", "acceptsArgs",
                                  "args"}
                .count(std::string(kv.key())) == 1);
    CHECK(o.at("textAliases").at(0) == ("/" + std::string(o.at("name").as_string())).c_str());
    by_name[std::string(o.at("name").as_string())] = o;
  }
  for (const char* name : {"status", "context", "stop", "new", "reset", "fresh", "compact", "queue", "dock-telegram", "dock-discord"})
    CHECK(by_name.count(name) == 1);
  CHECK(by_name.size() == 10);  // "start over" is not a slash command; telegram is named once
  CHECK(by_name["compact"].at("description") == "Compact the session context.");
  CHECK(by_name["compact"].at("category") == "session");
  CHECK(by_name["compact"].at("args").at(0).at("name") == "instructions");
  CHECK(by_name["queue"].at("args").at(0).at("choices").as_array().size() == 4);
  CHECK(by_name["queue"].at("args").at(2).at("type") == "number");
  CHECK(by_name["status"].at("acceptsArgs") == false);
  CHECK(by_name["new"].at("acceptsArgs") == true);
  CHECK(by_name["status"].at("source") == "native");
  CHECK(by_name["status"].at("scope") == "text");
  // commands.list: the same list; without args when asked; none for the native surface.
  auto listed = call(*c, "commands.list", {{"scope", "text"}, {"includeArgs", true}});
  CHECK(listed.at("commands") == md.at("commands"));
  auto bare = call(*c, "commands.list", {{"includeArgs", false}});
  CHECK_FALSE(bare.at("commands").at(0).as_object().contains("args"));
  for (const auto& v : bare.at("commands").as_array()) CHECK_FALSE(v.as_object().contains("args"));
  CHECK(call(*c, "commands.list", {{"scope", "native"}}).at("commands").as_array().empty());
  CHECK(error_of_call(*c, "commands.list", {{"scope", "menus"}}).find("allowed values") != std::string::npos);
  CHECK(error_of_call(*c, "commands.list", {{"sessionKey", "agent:main:nobody"}}).find("Session not found.") != std::string::npos);
}

TEST_CASE("ui methods: agents.list names each agent's model, agent.identity.get its identity") {
  running_gateway g;
  auto c = g.client();
  auto agents = call(*c, "agents.list");
  CHECK(agents.at("agents").at(0).at("model").at("primary") == "sessionrt/sim-1");
  auto id = call(*c, "agent.identity.get", {{"agentId", "main"}});
  CHECK(id.at("agentId") == "main");
  CHECK(id.at("name") == "Assistant");
  auto by_key = call(*c, "agent.identity.get", {{"sessionKey", "agent:main:main"}});
  CHECK(by_key.at("agentId") == "main");
}

TEST_CASE("ui methods: session.message events carry every stored message to subscribers only, once") {
  running_gateway g;
  auto ui = g.client();
  auto other = g.client();
  auto sender = g.client();
  exchange(*sender, "agent:main:main", "before the subscription", "run-before");
  auto sub = call(*ui, "sessions.messages.subscribe", {{"key", "main"}, {"includeApprovals", true}});
  CHECK(sub.at("subscribed") == true);
  CHECK(sub.at("key") == "agent:main:main");
  CHECK(sub.at("approvalReplay").as_array().empty());
  exchange(*sender, "agent:main:main", "after it", "run-after");
  std::vector<bj::object> got;
  while (got.size() < 2) {
    auto e = wait_event(*ui, [](const gateway_event& ev) { return ev.event == "session.message"; });
    REQUIRE(e.ok());
    got.push_back(e->payload.as_object());
  }
  CHECK(got[0].at("sessionKey") == "agent:main:main");
  CHECK(got[0].at("message").at("role") == "user");
  CHECK(got[0].at("message").at("idempotencyKey") == "run-after:user");
  CHECK(got[0].at("messageSeq") == 3);
  CHECK(got[0].at("runId") == "run-after");
  CHECK(got[0].at("messageId") == got[0].at("message").at("__openclaw").at("id"));
  CHECK(got[1].at("message").at("role") == "assistant");
  CHECK(got[1].at("messageSeq") == 4);
  CHECK(got[1].at("runId") == "run-after");
  CHECK(got[1].at("session").at("key") == "agent:main:main");
  // The same identities as the history page.
  auto h = call(*ui, "chat.history", {{"sessionKey", "agent:main:main"}});
  CHECK(h.at("messages").at(3).at("__openclaw").at("id") == got[1].at("messageId"));
  // Nothing more for it, nothing for a connection that did not subscribe.
  CHECK_FALSE(wait_event(*ui, [](const gateway_event& ev) { return ev.event == "session.message"; }, 300ms).ok());
  CHECK_FALSE(wait_event(*other, [](const gateway_event& ev) { return ev.event == "session.message"; }, 300ms).ok());
  // Unsubscribed: no more.
  CHECK(call(*ui, "sessions.messages.unsubscribe", {{"key", "agent:main:main"}}).at("subscribed") == false);
  exchange(*sender, "agent:main:main", "unheard", "run-unheard");
  CHECK_FALSE(wait_event(*ui, [](const gateway_event& ev) { return ev.event == "session.message"; }, 300ms).ok());
  CHECK(error_of_call(*ui, "sessions.messages.subscribe", {}).find("must have required property 'key'") != std::string::npos);
}

TEST_CASE("ui methods: sessions.create makes a dashboard session and starts its first turn") {
  running_gateway g;
  auto c = g.client();
  call(*c, "sessions.subscribe");
  auto empty = call(*c, "sessions.create", {{"label", "Empty one"}});
  CHECK(empty.at("ok") == true);
  CHECK(std::string(empty.at("key").as_string()).rfind("agent:main:dashboard:", 0) == 0);
  CHECK(empty.at("runStarted") == false);
  CHECK(empty.at("entry").at("label") == "Empty one");
  CHECK(empty.at("sessionId") == empty.at("entry").at("sessionId"));
  auto changed = wait_event(*c, [](const gateway_event& e) {
    return e.event == "sessions.changed" && e.payload.at("reason") == "create";
  });
  REQUIRE(changed.ok());
  auto with_turn = call(*c, "sessions.create", {{"key", "agent:main:made"}, {"message", "start here"}});
  CHECK(with_turn.at("key") == "agent:main:made");
  CHECK(with_turn.at("runStarted") == true);
  const std::string run(with_turn.at("runId").as_string());
  auto events = run_events(*c, run);
  REQUIRE(events.ok());
  CHECK(events->back().at("state") == "final");
  auto h = call(*c, "chat.history", {{"sessionKey", "agent:main:made"}});
  CHECK(h.at("messages").at(0).at("idempotencyKey") == (run + ":user").c_str());
  // A dashboard session made with its first message is named by it (OpenClaw names it by a
  // model call); displayName is a title, not a label.
  auto titled = call(*c, "sessions.create", {{"agentId", "main"}, {"message", "  plan   the\nweek "}});
  CHECK(titled.at("entry").at("displayName") == "plan the week");
  CHECK_FALSE(titled.at("entry").as_object().contains("label"));
  REQUIRE(run_events(*c, std::string(titled.at("runId").as_string())).ok());
  auto named = call(*c, "sessions.create", {{"displayName", "Mine"}, {"message", "hello"}});
  CHECK(named.at("entry").at("displayName") == "Mine");
  CHECK_FALSE(named.at("entry").as_object().contains("label"));
  REQUIRE(run_events(*c, std::string(named.at("runId").as_string())).ok());
  CHECK_FALSE(with_turn.at("entry").as_object().contains("displayName"));  // not a dashboard session
  // A fork with a message: a dashboard session starting from the parent's branch, its first
  // turn the message.
  auto fork = call(*c, "sessions.create", {{"parentSessionKey", "agent:main:made"}, {"fork", true}, {"message", "go on"}});
  CHECK(std::string(fork.at("key").as_string()).rfind("agent:main:dashboard:", 0) == 0);
  CHECK(fork.at("entry").at("forkedFromParent") == true);
  CHECK(fork.at("runStarted") == true);
  auto fork_events = run_events(*c, std::string(fork.at("runId").as_string()));
  REQUIRE(fork_events.ok());
  auto fh = call(*c, "chat.history", {{"sessionKey", fork.at("key")}});
  REQUIRE(fh.at("messages").as_array().size() == 4);  // the parent's exchange, then its own
  CHECK(fh.at("messages").at(2).at("content") == "go on");
  // Without a message (the Sessions page's "Fork conversation"): the parent's branch, no turn,
  // the same messages with the same ids.
  auto bare = call(*c, "sessions.create",
                   {{"parentSessionKey", "agent:main:made"}, {"fork", true}, {"forkFrom", "last-completed"}, {"agentId", "main"}});
  CHECK(bare.at("runStarted") == false);
  CHECK(bare.at("entry").at("forkedFromParent") == true);
  CHECK(bare.at("entry").at("parentSessionKey") == "agent:main:made");
  const std::string bare_key(bare.at("key").as_string());
  auto parent_page = call(*c, "chat.history", {{"sessionKey", "agent:main:made"}});
  auto bare_page = call(*c, "chat.history", {{"sessionKey", bare_key}});
  REQUIRE(bare_page.at("messages").as_array().size() == 2);
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(bare_page.at("messages").at(i).at("__openclaw").at("id") == parent_page.at("messages").at(i).at("__openclaw").at("id"));
  CHECK(bare_page.at("sessionId") != parent_page.at("sessionId"));
  bool listed = false;
  const auto rows = call(*c, "sessions.list");
  for (const auto& r : rows.at("sessions").as_array())
    listed = listed || r.at("key") == bare_key.c_str();
  CHECK(listed);
  CHECK(error_of_call(*c, "sessions.create", {{"fork", true}}).find("requires parentSessionKey") != std::string::npos);
  CHECK(error_of_call(*c, "sessions.create", {{"parentSessionKey", "agent:main:made"}, {"fork", true}, {"forkFrom", "first"}})
            .find("last-completed") != std::string::npos);
  CHECK(error_of_call(*c, "sessions.create", {{"key", bare_key}, {"parentSessionKey", "agent:main:made"}, {"fork", true}})
            .find("exists") != std::string::npos);
  CHECK(error_of_call(*c, "sessions.create", {{"parentSessionKey", "agent:main:nobody"}, {"fork", true}})
            .find("no session agent:main:nobody") != std::string::npos);
}

TEST_CASE("ui methods: sessions.patch keeps a pin as OpenClaw does and the rows show it") {
  running_gateway g;
  auto c = g.client();
  exchange(*c, "agent:main:pinme", "hi", "run-pin");
  auto p = call(*c, "sessions.patch", {{"key", "agent:main:pinme"}, {"pinned", true}});
  CHECK(p.at("entry").at("pinnedAt").is_int64());
  const auto at = p.at("entry").at("pinnedAt").as_int64();
  auto again = call(*c, "sessions.patch", {{"key", "agent:main:pinme"}, {"pinned", true}});
  CHECK(again.at("entry").at("pinnedAt") == at);  // pinned once: its time kept
  auto list = call(*c, "sessions.list");
  bool seen = false;
  for (const auto& s : list.at("sessions").as_array())
    if (s.at("key") == "agent:main:pinme") {
      seen = true;
      CHECK(s.at("pinned") == true);
      CHECK(s.at("pinnedAt") == at);
    }
  CHECK(seen);
  auto un = call(*c, "sessions.patch", {{"key", "agent:main:pinme"}, {"pinned", false}});
  CHECK_FALSE(un.at("entry").as_object().contains("pinnedAt"));
  CHECK(call(*c, "sessions.describe", {{"key", "agent:main:pinme"}}).at("session").at("pinned") == false);
  CHECK(error_of_call(*c, "sessions.patch", {{"key", "agent:main:pinme"}, {"pinned", "yes"}})
            .find("at /pinned: must be boolean") != std::string::npos);
}

TEST_CASE("ui methods: features sessionrt lacks answer what is true") {
  running_gateway g;
  auto c = g.client();
  CHECK(call(*c, "question.list").at("questions").as_array().empty());
  CHECK(call(*c, "cron.list", {{"limit", 50}}).at("jobs").as_array().empty());
  CHECK(call(*c, "cron.status").at("enabled") == false);
  CHECK(call(*c, "tasks.list", {{"sessionKey", "agent:main:main"}}).at("tasks").as_array().empty());
  CHECK(call(*c, "progressCard.get", {{"sessionKey", "agent:main:main"}}).at("card").is_null());
  CHECK(call(*c, "sessions.branches.list", {{"sessionKey", "agent:main:main"}}).at("branches").as_array().empty());
  CHECK(call(*c, "sessions.companion.state", {{"sessionKey", "agent:main:main"}}).at("state") == "unavailable");
  CHECK(call(*c, "sessions.observer.visibility", {{"visible", true}}).at("ok") == true);
  CHECK(call(*c, "models.authStatus").at("providers").as_array().empty());
  CHECK(call(*c, "config.get").at("exists") == false);
  CHECK(call(*c, "update.status").at("updateAvailable").is_null());
  CHECK(call(*c, "talk.catalog").at("speech").at("providers").as_array().empty());
  CHECK(call(*c, "environments.list").at("environments").as_array().empty());
  CHECK(call(*c, "users.list").at("profiles").as_array().empty());
  for (const char* m : {"exec.approval.list", "plugin.approval.list", "openclaw.approval.list"}) {
    auto r = c->request(m, bj::object{}, 10s);
    REQUIRE(r.ok());
    CHECK(r->as_array().empty());
  }
}

TEST_CASE("ui methods: the gateway serves the UI's files, and a foreign Origin's connect gets OpenClaw's refusal and 1008") {
  sessionrt::testing::temp_dir ui;
  std::filesystem::create_directories(ui.path() + "/assets");
  std::ofstream(ui.path() + "/index.html") << "<!doctype html><html><body>ui</body></html>";
  std::ofstream(ui.path() + "/assets/a-1.js") << "1;";
  running_gateway g([&](gateway_options& o) {
    o.control_ui_root = ui.path();
    o.runtime.settings.gateway.control_ui_allowed_origins = {"https://ops.example"};
  });
  auto [code, body] = http_get(g.server->port(), "/assets/a-1.js");
  CHECK(code == 200);
  CHECK(body == "1;");
  auto cfg = http_get(g.server->port(), "/control-ui-config.json");
  CHECK(cfg.first == 200);
  CHECK(bj::parse(cfg.second).at("basePath") == "");
  CHECK(http_get(g.server->port(), "/healthz").first == 200);  // the gateway's own paths first
  CHECK(http_get(g.server->port(), "/nothing-here").first == 404);
  const auto port = static_cast<std::uint16_t>(g.server->port());
  // Upgrades with an Origin header, then a connect with the right token: its answer frames and
  // the close code / reason.
  struct outcome {
    std::vector<bj::object> frames;
    std::optional<std::uint16_t> close;
    std::string reason;
  };
  auto connect_from = [&](std::string origin, std::string token = "tok", int protocol = 4) {
    ws_connect_options o;
    o.host = "127.0.0.1";
    o.port = port;
    if (!origin.empty()) o.headers.emplace_back("Origin", origin);
    auto ws = ws_client::connect(o);
    REQUIRE(ws.ok());  // the upgrade itself is not refused: OpenClaw checks at connect
    REQUIRE((*ws)->receive_text(5s).ok());  // the challenge
    client_identity who;
    who.token = token;
    auto p = connect_params(who);
    p["minProtocol"] = protocol;
    p["maxProtocol"] = protocol;
    REQUIRE((*ws)->send_text(bj::serialize(bj::object{{"type", "req"}, {"id", "1:c"}, {"method", "connect"}, {"params", p}})).ok());
    outcome out;
    for (int i = 0; i < 10; ++i) {
      auto m = (*ws)->receive_text(i == 0 ? 5000ms : 300ms);
      if (!m.ok()) break;
      out.frames.push_back(bj::parse(*m).as_object());
    }
    out.close = (*ws)->close_code();
    out.reason = (*ws)->close_reason();
    return out;
  };
  for (std::string ok : {std::string(), "http://127.0.0.1:" + std::to_string(port), std::string("https://ops.example")}) {
    auto o = connect_from(ok);
    REQUIRE_FALSE(o.frames.empty());
    CHECK(o.frames[0].at("ok") == true);
    CHECK_FALSE(o.close);
  }
  const std::string message =
      "origin not allowed (open the Control UI from the gateway host or allow it in gateway.controlUi.allowedOrigins)";
  auto foreign = connect_from("https://evil.example");
  REQUIRE(foreign.frames.size() == 1);
  CHECK(foreign.frames[0].at("ok") == false);
  CHECK(foreign.frames[0].at("error").at("code") == "INVALID_REQUEST");
  CHECK(foreign.frames[0].at("error").at("message") == message.c_str());
  CHECK(foreign.frames[0].at("error").at("details").at("code") == "CONTROL_UI_ORIGIN_NOT_ALLOWED");
  CHECK(foreign.frames[0].at("error").at("details").at("reason") == "origin not allowed");
  REQUIRE(foreign.close);
  CHECK(*foreign.close == 1008);
  CHECK(foreign.reason == message);
  // "null" (a sandboxed page) is no origin at all; a wrong token from a foreign page hears about
  // the Origin first; a protocol mismatch is answered before the Origin is looked at.
  auto null_origin = connect_from("null");
  REQUIRE(null_origin.frames.size() == 1);
  CHECK(null_origin.frames[0].at("error").at("details").at("reason") == "origin missing or invalid");
  CHECK(*null_origin.close == 1008);
  auto wrong_token = connect_from("https://evil.example", "nope");
  REQUIRE(wrong_token.frames.size() == 1);
  CHECK(wrong_token.frames[0].at("error").at("details").at("code") == "CONTROL_UI_ORIGIN_NOT_ALLOWED");
  auto old_protocol = connect_from("https://evil.example", "tok", 3);
  REQUIRE(old_protocol.frames.size() == 1);
  CHECK(old_protocol.frames[0].at("error").at("details").at("code") == "PROTOCOL_MISMATCH");
  CHECK(*old_protocol.close == 1002);
}
