// The methods OpenClaw's web Control UI calls (gateway/ui_methods.cpp), through a real socket:
// their shapes, message identities in chat.history, session.message events, sessions.create,
// the pin kept by sessions.patch, and the Origin check / UI files on the gateway's port.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

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
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const auto& meta = msgs[i].at("__openclaw").as_object();
    CHECK(meta.at("seq") == static_cast<std::int64_t>(i + 1));
    CHECK(meta.at("id") == (sid + ":" + std::to_string(i + 1)).c_str());
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
  // A fork: the parent's branch, its first turn the message.
  auto fork = call(*c, "sessions.create", {{"parentSessionKey", "agent:main:made"}, {"fork", true}, {"message", "go on"}});
  CHECK(std::string(fork.at("key").as_string()).rfind("agent:main:subagent:", 0) == 0);
  CHECK(fork.at("entry").at("forkedFromParent") == true);
  auto fh = call(*c, "chat.history", {{"sessionKey", fork.at("key")}});
  CHECK(fh.at("messages").as_array().size() >= 4);  // the parent's exchange, then its own
  // A fork needs its first message (sessionrt forks as a sub-agent session).
  CHECK(error_of_call(*c, "sessions.create", {{"parentSessionKey", "agent:main:made"}, {"fork", true}})
            .find("needs a message") != std::string::npos);
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
  for (const char* m : {"exec.approval.list", "plugin.approval.list", "openclaw.approval.list"}) {
    auto r = c->request(m, bj::object{}, 10s);
    REQUIRE(r.ok());
    CHECK(r->as_array().empty());
  }
}

TEST_CASE("ui methods: the gateway serves the UI's files and refuses a foreign Origin at the upgrade") {
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
  auto upgrade = [&](std::string origin) {
    ws_connect_options o;
    o.host = "127.0.0.1";
    o.port = port;
    if (!origin.empty()) o.headers.emplace_back("Origin", origin);
    return ws_client::connect(o);
  };
  CHECK(upgrade("").ok());
  CHECK(upgrade("http://127.0.0.1:" + std::to_string(port)).ok());
  CHECK(upgrade("https://ops.example").ok());
  auto foreign = upgrade("https://evil.example");
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.error().message().find("403") != std::string::npos);
}
