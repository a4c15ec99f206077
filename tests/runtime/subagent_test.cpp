// Sub-agents (issue 17): runtime::spawn_subagent creates agent:<a>:subagent:<uuid> with the
// spawn fields, runs the task as its first turn, tells the parent's subscribers with
// subagent.completed; the depth limit (agents.maxSpawnDepth) and leaf sub-agents refuse;
// /new in the child keeps the spawn fields [R§4.3]; sub-agent rows are synthetic [R§5.2].
#include <catch2/catch.hpp>

#include "actors/router/session_key.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using sessionrt::testing::inbound;
using sessionrt::testing::lifecycle_harness;

namespace {

const std::string kParent = "agent:main:main";

session_entry row_of(runtime::runtime& rt, const std::string& key) {
  auto row = rt.session(key);
  REQUIRE(row.ok());
  REQUIRE(row->has_value());
  return **row;
}

actors::subagent_spec task(const std::string& text) {
  actors::subagent_spec s;
  s.task = text;
  return s;
}

}  // namespace

TEST_CASE("subagent: a spawn creates the child row with its spawn fields and runs the task first") {
  lifecycle_harness h;
  auto rt = h.start();
  REQUIRE(rt->send(inbound("telegram", "1", "hello")).get().st.ok());
  actors::subagent_spec spec = task("Research Node.js security advisories");
  spec.label = "research";
  turn_outcome out = rt->spawn_subagent(kParent, spec).get();
  REQUIRE(out.st.ok());
  REQUIRE(out.session_key.rfind("agent:main:subagent:", 0) == 0);
  REQUIRE(out.reply.has_value());
  CHECK(actors::is_synthetic_key(out.session_key));
  const session_entry child = row_of(*rt, out.session_key);
  CHECK(child.spawned_by() == std::optional<std::string_view>(kParent));
  CHECK(child.parent_session_key() == std::optional<std::string_view>(kParent));
  CHECK(child.spawn_depth() == std::optional<std::int64_t>(1));
  CHECK(child.subagent_role() == std::optional<std::string_view>("leaf"));  // maxSpawnDepth 1
  CHECK(child.subagent_control_scope() == std::optional<std::string_view>("none"));
  CHECK(child.label() == std::optional<std::string_view>("research"));
  CHECK(!child.forked_from_parent().has_value());
  CHECK(child.session_id() == std::optional<std::string_view>(out.session_id));
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[1].last_user_text == "Research Node.js security advisories");
  CHECK(calls[1].messages == 1);  // not forked: the task alone
  rt->settle();
  auto done = h.of_type("subagent.completed");
  REQUIRE(done.size() == 1);
  CHECK(done[0].session_key == kParent);
  CHECK(done[0].data.at("childSessionKey").as_string() == out.session_key);
  CHECK(done[0].data.at("childSessionId").as_string() == out.session_id);
  CHECK(done[0].data.at("reply").as_string() == *out.reply);
  bool created = false;
  for (const auto& e : h.of_type("session.created"))
    created = created || (e.session_key == out.session_key && e.data.at("spawnedBy").as_string() == kParent);
  CHECK(created);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("subagent: the depth limit and leaf sub-agents refuse, naming agents.maxSpawnDepth") {
  lifecycle_harness h;
  auto rt = h.start([](actors::runtime_settings& s) { s.subagents.max_spawn_depth = 2; });
  REQUIRE(rt->send(inbound("telegram", "1", "hello")).get().st.ok());
  turn_outcome first = rt->spawn_subagent(kParent, task("plan")).get();
  REQUIRE(first.st.ok());
  CHECK(row_of(*rt, first.session_key).subagent_role() == std::optional<std::string_view>("orchestrator"));
  CHECK(row_of(*rt, first.session_key).subagent_control_scope() == std::optional<std::string_view>("children"));
  turn_outcome second = rt->spawn_subagent(first.session_key, task("do step 1")).get();
  REQUIRE(second.st.ok());
  const session_entry grandchild = row_of(*rt, second.session_key);
  CHECK(grandchild.spawn_depth() == std::optional<std::int64_t>(2));
  CHECK(grandchild.spawned_by() == std::optional<std::string_view>(first.session_key));
  CHECK(grandchild.subagent_role() == std::optional<std::string_view>("leaf"));
  // A leaf cannot spawn.
  turn_outcome leaf = rt->spawn_subagent(second.session_key, task("deeper")).get();
  CHECK(leaf.st.code() == errc::invalid_argument);
  CHECK(leaf.st.message().find("leaf") != std::string::npos);
  // An orchestrator at the limit is refused by the depth.
  actors::subagent_spec forced = task("deeper still");
  forced.role = "orchestrator";
  turn_outcome at_limit = rt->spawn_subagent(first.session_key, forced).get();
  REQUIRE(at_limit.st.ok());
  turn_outcome past = rt->spawn_subagent(at_limit.session_key, task("too deep")).get();
  CHECK(past.st.code() == errc::limit_exceeded);
  CHECK(past.st.message().find("agents.maxSpawnDepth (2)") != std::string::npos);
  CHECK(past.st.message().find("depth 3") != std::string::npos);
  const std::size_t rows = rt->sessions()->size();
  CHECK(rows == 4);  // main, child, two grandchildren: the refusals stored nothing
  REQUIRE(rt->stop().ok());
}

TEST_CASE("subagent: bad spawns are refused with the reason") {
  lifecycle_harness h;
  auto rt = h.start();
  turn_outcome none = rt->spawn_subagent(kParent, task("x")).get();
  CHECK(none.st.code() == errc::not_found);
  CHECK(none.st.message().find(kParent) != std::string::npos);
  REQUIRE(rt->send(inbound("telegram", "1", "hello")).get().st.ok());
  CHECK(rt->spawn_subagent(kParent, task("")).get().st.code() == errc::invalid_argument);
  actors::subagent_spec role = task("x");
  role.role = "boss";
  turn_outcome bad_role = rt->spawn_subagent(kParent, role).get();
  CHECK(bad_role.st.message().find("\"boss\"") != std::string::npos);
  actors::subagent_spec agent = task("x");
  agent.agent_id = "nobody";
  CHECK(rt->spawn_subagent(kParent, agent).get().st.message().find("no agent nobody") != std::string::npos);
  CHECK(rt->spawn_subagent("agent:main:../x", task("x")).get().st.code() == errc::invalid_argument);
  CHECK(rt->sessions()->size() == 1);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("subagent: /new and /reset in the child keep the spawn fields") {
  lifecycle_harness h;
  auto rt = h.start();
  REQUIRE(rt->send(inbound("telegram", "1", "hello")).get().st.ok());
  turn_outcome child = rt->spawn_subagent(kParent, task("first task")).get();
  REQUIRE(child.st.ok());
  for (const char* trigger : {"/new", "/reset"}) {
    chat_event ev;
    ev.session_key = child.session_key;
    ev.text = std::string(trigger) + " next task";
    turn_outcome out = rt->send(ev).get();
    REQUIRE(out.st.ok());
    CHECK(out.new_session);
    const session_entry row = row_of(*rt, child.session_key);
    CHECK(row.session_id() != std::optional<std::string_view>(child.session_id));
    CHECK(row.spawned_by() == std::optional<std::string_view>(kParent));
    CHECK(row.parent_session_key() == std::optional<std::string_view>(kParent));
    CHECK(row.spawn_depth() == std::optional<std::int64_t>(1));
    CHECK(row.subagent_role() == std::optional<std::string_view>("leaf"));
    CHECK(row.subagent_control_scope() == std::optional<std::string_view>("none"));
  }
  REQUIRE(rt->stop().ok());
}
