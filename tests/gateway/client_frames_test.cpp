// The client's frame handling against frames recorded from OpenClaw's real gateway.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "gateway/client_protocol.hpp"
#include "messages/json_access.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
namespace bj = boost::json;

namespace {
std::string vector_path(const std::string& name) { return testing::vectors_dir() + "/gateway/" + name; }

struct recorded_frame {
  int cid;
  std::string dir;
  std::string data;
};

std::vector<recorded_frame> tui_frames() {
  std::vector<recorded_frame> out;
  for (const auto& line : testing::split_lines(testing::read_text(vector_path("real-tui-session.jsonl")))) {
    if (line.empty()) continue;
    bj::object o = bj::parse(line).as_object();
    out.push_back({static_cast<int>(o.at("cid").as_int64()), std::string(o.at("dir").as_string()),
                   std::string(o.at("data").as_string())});
  }
  return out;
}

// The recorded CALL lines of a real-gateway-*.jsonl file, as the res frames the server sent.
std::vector<std::pair<std::string, std::string>> recorded_responses(const std::string& file) {
  std::vector<std::pair<std::string, std::string>> out;
  int n = 0;
  for (const auto& line : testing::split_lines(testing::read_text(vector_path(file)))) {
    if (line.empty()) continue;
    bj::object o = bj::parse(line).as_object();
    if (!o.contains("CALL")) continue;
    bj::object res{{"type", "res"}, {"id", std::to_string(++n) + ":x"}, {"ok", o.at("ok")}};
    if (o.contains("payload")) res["payload"] = o.at("payload");
    if (o.contains("error")) res["error"] = o.at("error");
    out.emplace_back(std::string(o.at("CALL").as_string()), bj::serialize(res));
  }
  return out;
}
}  // namespace

TEST_CASE("client parses every frame the real gateway sent the TUI and matches every response to its request") {
  auto frames = tui_frames();
  std::map<std::string, std::string> requested;  // id -> method
  std::size_t responses = 0, events = 0;
  event_sequence seq;
  for (const auto& f : frames) {
    if (f.dir == "c2s") {
      bj::object req = bj::parse(f.data).as_object();
      requested[std::string(req.at("id").as_string())] = std::string(req.at("method").as_string());
      continue;
    }
    if (f.dir != "s2c") continue;
    auto parsed = parse_server_frame(f.data);
    INFO(f.data.substr(0, 200));
    REQUIRE(parsed.ok());
    if (parsed->type == server_frame::kind::response) {
      ++responses;
      CHECK(requested.count(parsed->id) == 1);
      CHECK(parsed->ok);
    } else {
      ++events;
      CHECK_FALSE(parsed->event.empty());
      CHECK(seq.observe(*parsed).ok());
    }
  }
  CHECK(responses == requested.size());
  CHECK(events > 40);
  REQUIRE(seq.last().has_value());
}

TEST_CASE("client reads the recorded chat stream: cumulative delta messages, a final with stopReason") {
  std::string text_so_far;
  int deltas = 0, finals = 0;
  for (const auto& f : tui_frames()) {
    if (f.dir != "s2c") continue;
    auto parsed = parse_server_frame(f.data);
    REQUIRE(parsed.ok());
    if (parsed->type != server_frame::kind::event || parsed->event != "chat") continue;
    const bj::object& p = parsed->payload.as_object();
    auto state = json::get_string(p, "state");
    REQUIRE(state);
    if (*state == "delta") {
      ++deltas;
      std::string piece(*json::get_string(p, "deltaText"));
      std::string whole(p.at("message").at("content").at(0).at("text").as_string());
      text_so_far += piece;
      CHECK(whole == text_so_far);
    } else if (*state == "final") {
      ++finals;
      CHECK(json::get_string(p, "stopReason").value_or("") == "stop");
      CHECK(std::string(p.at("message").at("content").at(0).at("text").as_string()) == text_so_far);
    }
  }
  CHECK(deltas >= 2);
  CHECK(finals == 1);
}

TEST_CASE("client reads the real gateway's error response as a status naming code and message") {
  auto calls = recorded_responses("real-gateway-session-methods.jsonl");
  bool seen = false;
  int failures = 0;
  for (const auto& [method, frame] : calls) {
    auto parsed = parse_server_frame(frame);
    REQUIRE(parsed.ok());
    if (!parsed->ok) {
      ++failures;
      CHECK(parsed->error.code == "INVALID_REQUEST");
      CHECK(to_status(parsed->error, method).code() == errc::invalid_argument);
    }
    if (method != "no.such.method") continue;
    seen = true;
    REQUIRE_FALSE(parsed->ok);
    CHECK(parsed->error.code == "INVALID_REQUEST");
    CHECK(parsed->error.message == "unknown method: no.such.method");
    status st = to_status(parsed->error, method);
    CHECK(st.code() == errc::invalid_argument);
    CHECK(st.message() == "gateway refused no.such.method: INVALID_REQUEST: unknown method: no.such.method");
  }
  CHECK(seen);
  CHECK(failures == 2);  // the unknown method and sessions.patch without its key
}

TEST_CASE("client refuses frames OpenClaw's client would drop, naming what is wrong") {
  struct bad {
    const char* frame;
    const char* names;
  };
  const bad cases[] = {
      {"not json", "not a JSON object"},
      {"[1,2]", "not a JSON object"},
      {R"({"id":"1"})", "\"type\""},
      {R"({"type":"hello"})", "unknown \"type\": \"hello\""},
      {R"({"type":"res","ok":true})", "\"id\""},
      {R"({"type":"res","id":"7","payload":{}})", "\"ok\""},
      {R"({"type":"res","id":"7","ok":false})", "\"error\" object"},
      {R"({"type":"res","id":"7","ok":false,"error":{"message":"m"}})", "without \"code\""},
      {R"({"type":"res","id":"7","ok":false,"error":{"code":"X","message":""}})", "without \"message\""},
      {R"({"type":"event","payload":{}})", "\"event\" name"},
      {R"({"type":"event","event":"tick","seq":-1})", "\"seq\""},
      {R"({"type":"event","event":"tick","seq":"3"})", "\"seq\""},
  };
  for (const auto& c : cases) {
    INFO(c.frame);
    auto r = parse_server_frame(c.frame);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == errc::corrupt);
    CHECK_THAT(r.error().message(), Catch::Contains(c.names));
  }
}

TEST_CASE("client reports an event gap naming the expected and the received seq") {
  event_sequence seq;
  auto ev = [](std::int64_t n) {
    return parse_server_frame(R"({"type":"event","event":"tick","payload":{"ts":1},"seq":)" + std::to_string(n) + "}").value();
  };
  auto challenge = parse_server_frame(R"({"type":"event","event":"connect.challenge","payload":{"nonce":"n","ts":1}})").value();
  CHECK(seq.observe(challenge).ok());
  CHECK(seq.observe(ev(1)).ok());
  CHECK(seq.observe(ev(2)).ok());
  status gap = seq.observe(ev(4));
  REQUIRE_FALSE(gap.ok());
  CHECK(gap.message() == "event gap: expected seq 3, got 4 (event tick)");
  CHECK(seq.observe(ev(5)).ok());  // counting resumes from what arrived
}

TEST_CASE("client's connect params have the shape of OpenClaw's own connect request") {
  bj::object recorded;
  for (const auto& f : tui_frames())
    if (f.dir == "c2s" && f.data.find("\"connect\"") != std::string::npos) {
      recorded = bj::parse(f.data).as_object().at("params").as_object();
      break;
    }
  REQUIRE_FALSE(recorded.empty());
  client_identity who;
  who.token = "secret";
  who.scopes = {"operator.admin"};
  bj::object ours = connect_params(who);
  // Every key we send is one the real client sends, with the same JSON kind.
  for (const auto& [k, v] : ours) {
    INFO(k);
    REQUIRE(recorded.contains(k));
    CHECK(recorded.at(k).kind() == v.kind());
  }
  for (const auto& [k, v] : ours.at("client").as_object()) {
    INFO("client." << std::string(k));
    CHECK(recorded.at("client").as_object().contains(k));
  }
  CHECK(ours.at("minProtocol").as_int64() == 4);
  CHECK(ours.at("maxProtocol").as_int64() == 4);
  CHECK(ours.at("auth").at("token").as_string() == recorded.at("auth").at("token").as_string());
  CHECK(ours.at("role") == recorded.at("role"));
  CHECK(ours.at("client").at("id").as_string() == "cli");
}

TEST_CASE("client asks for the least scope OpenClaw's CLI asks for each method") {
  for (const char* m : {"sessions.list", "sessions.describe", "chat.history", "status", "health"})
    CHECK(scope_for_method(m) == "operator.read");
  for (const char* m : {"sessions.patch", "chat.send"}) CHECK(scope_for_method(m) == "operator.write");
  for (const char* m : {"sessions.reset", "sessions.delete", "sessions.compact"})
    CHECK(scope_for_method(m) == "operator.admin");
}

TEST_CASE("client builds request frames the server can read back") {
  bj::value params = bj::object{{"sessionKey", "agent:main:main"}, {"limit", 5}};
  bj::object f = bj::parse(request_frame("3:abc", "chat.history", params)).as_object();
  CHECK(f.at("type") == "req");
  CHECK(f.at("id") == "3:abc");
  CHECK(f.at("method") == "chat.history");
  CHECK(f.at("params") == params);
}
