// The value types that cross actors with an inspect() survive CAF's binary serializer field
// for field, so a later step can send them between nodes: a field left out of an inspect()
// (or loaded into the wrong place) fails here.
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/caf_types.hpp"
#include "actors/subagent/subagent_spawn.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

template <class T>
T round_trip(const T& in) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  T copy = in;
  REQUIRE(!sink(copy));
  REQUIRE(!buf.empty());
  caf::binary_deserializer source{sys, buf};
  T out;
  REQUIRE(!source(out));
  return out;
}

}  // namespace

TEST_CASE("status survives CAF serialization with its code and message") {
  const status in(errc::timeout, "the model call took longer than model.timeoutMs (5 ms)");
  const status out = round_trip(in);
  CHECK(out.code() == errc::timeout);
  CHECK(out.message() == in.message());
  CHECK(round_trip(status()).ok());
}

TEST_CASE("system_event survives CAF serialization field for field") {
  system_event in;
  in.kind = system_event_kind::cron;
  in.session_key = "agent:main:cron:j1";
  in.agent_id = "main";
  in.job_id = "j1";
  in.job_name = "nightly";
  in.text = "run the report";
  in.timestamp_ms = 1764561600123;
  const system_event out = round_trip(in);
  CHECK(out.kind == system_event_kind::cron);
  CHECK(out.session_key == in.session_key);
  CHECK(out.agent_id == in.agent_id);
  CHECK(out.job_id == in.job_id);
  CHECK(out.job_name == in.job_name);
  CHECK(out.text == in.text);
  CHECK(out.timestamp_ms == in.timestamp_ms);
}

TEST_CASE("turn_outcome survives CAF serialization, a missing reply included") {
  turn_outcome in;
  in.st = status(errc::cancelled, "the turn was cancelled (stop)");
  in.session_key = "agent:main:main";
  in.session_id = "s-1";
  in.reply = "hello";
  in.suppressed = true;
  in.command = "/status";
  in.command_output = "Model: sim";
  in.new_session = true;
  in.reset_reason = "daily";
  in.notices = {"a", "b"};
  in.delivery = {"telegram", "u1", "default", "t9"};
  turn_outcome out = round_trip(in);
  CHECK(out.st.code() == errc::cancelled);
  CHECK(out.st.message() == in.st.message());
  CHECK(out.session_key == in.session_key);
  CHECK(out.session_id == in.session_id);
  CHECK(out.reply == std::optional<std::string>("hello"));
  CHECK(out.suppressed);
  CHECK(out.command == "/status");
  CHECK(out.command_output == "Model: sim");
  CHECK(out.new_session);
  CHECK(out.reset_reason == "daily");
  CHECK(out.notices == in.notices);
  CHECK(out.delivery.channel == "telegram");
  CHECK(out.delivery.to == "u1");
  CHECK(out.delivery.account_id == "default");
  CHECK(out.delivery.thread_id == "t9");
  in.reply.reset();
  CHECK_FALSE(round_trip(in).reply.has_value());
}

TEST_CASE("route_facts, summary_reply and subagent_spec survive CAF serialization") {
  route_facts r{"discord", "bot2", "group", "g1", "th", true, true};
  const route_facts r2 = round_trip(r);
  CHECK(r2.channel == "discord");
  CHECK(r2.account_id == "bot2");
  CHECK(r2.chat_type == "group");
  CHECK(r2.peer_id == "g1");
  CHECK(r2.thread_id == "th");
  CHECK(r2.is_group);
  CHECK(r2.is_thread);

  summary_reply s{status(errc::unsupported, "no provider"), "summary text"};
  const summary_reply s2 = round_trip(s);
  CHECK(s2.st.code() == errc::unsupported);
  CHECK(s2.text == "summary text");

  subagent_spec a{"research", "find the paper", true, "leaf", "none", "lookup"};
  const subagent_spec a2 = round_trip(a);
  CHECK(a2.agent_id == "research");
  CHECK(a2.task == "find the paper");
  CHECK(a2.fork);
  CHECK(a2.role == "leaf");
  CHECK(a2.control_scope == "none");
  CHECK(a2.label == "lookup");
}
