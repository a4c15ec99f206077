// connection_state: the per-connection protocol state machine, without sockets.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "gateway/connection_state.hpp"

using namespace sessionrt::gateway;
namespace bj = boost::json;

namespace {
bj::object connect_params(const std::string& token, int min = 4, int max = 4, const std::string& client = "cli") {
  return bj::object{{"minProtocol", min},
                    {"maxProtocol", max},
                    {"client", bj::object{{"id", client}, {"version", "1"}, {"platform", "linux"}, {"mode", "cli"}}},
                    {"auth", bj::object{{"token", token}}},
                    {"role", "operator"},
                    {"scopes", bj::array{"operator.write"}}};
}
}  // namespace

TEST_CASE("connection_state: a request before connect closes 1008 with the real server's message") {
  connection_state s;
  auto f = s.on_text(R"({"type":"req","id":"1","method":"sessions.list","params":{}})");
  REQUIRE(f.what == inbound_frame::kind::close);
  CHECK(f.respond_first);
  CHECK(f.error.code == "INVALID_REQUEST");
  CHECK(f.error.message == "invalid handshake: first request must be connect");
  CHECK(f.error.why == fault::before_connect);  // what the transport counts it by
  CHECK(f.close.code == 1008);
  CHECK(s.current() == connection_state::phase::awaiting_connect);
}

TEST_CASE("connection_state: not JSON and not an object close the connection naming which") {
  connection_state s;
  auto a = s.on_text("{nope");
  REQUIRE(a.what == inbound_frame::kind::close);
  CHECK(a.close.reason == "invalid request frame: not JSON");
  CHECK(a.error.why == fault::not_json);
  auto b = s.on_text("[1,2]");
  REQUIRE(b.what == inbound_frame::kind::close);
  CHECK(b.close.reason == "invalid request frame: not a JSON object");
  CHECK(b.error.why == fault::not_json);
}

TEST_CASE("connection_state: the token is checked, a mismatch is AUTH_TOKEN_MISMATCH and close 1008") {
  connection_state s;
  auto v = s.check_connect(connect_params("wrong"), "right");
  CHECK_FALSE(v.ok);
  CHECK(v.error.message == "unauthorized: gateway token mismatch");
  CHECK(v.error.details.at("code") == "AUTH_TOKEN_MISMATCH");
  CHECK(v.error.why == fault::token_mismatch);
  CHECK(v.close.code == 1008);
  CHECK(s.current() == connection_state::phase::awaiting_connect);
  auto shorter = s.check_connect(connect_params("righ"), "right");
  CHECK_FALSE(shorter.ok);
}

TEST_CASE("connection_state: an unsupported protocol is PROTOCOL_MISMATCH with expectedProtocol and close 1002") {
  connection_state s;
  auto v = s.check_connect(connect_params("t", 5, 6), "t");
  CHECK_FALSE(v.ok);
  CHECK(v.error.message == "protocol mismatch");
  CHECK(v.error.details.at("code") == "PROTOCOL_MISMATCH");
  CHECK(v.error.why == fault::protocol_mismatch);
  CHECK(v.error.details.at("expectedProtocol") == 4);
  CHECK(v.close.code == 1002);
}

TEST_CASE("connection_state: an unknown client.id is refused naming the field") {
  connection_state s;
  auto v = s.check_connect(connect_params("t", 4, 4, "my-bot"), "t");
  CHECK_FALSE(v.ok);
  CHECK(v.error.message == "invalid connect params: at /client/id: must be equal to one of the allowed values");
  CHECK(v.close.code == 1008);
}

TEST_CASE("connection_state: connect grants the scopes asked for, write covers read not admin") {
  connection_state s;
  auto v = s.check_connect(connect_params("t"), "t");
  REQUIRE(v.ok);
  CHECK(s.current() == connection_state::phase::open);
  CHECK(s.allowed(method_scope::read));
  CHECK(s.allowed(method_scope::write));
  CHECK_FALSE(s.allowed(method_scope::admin));
  CHECK(s.client().id == "cli");
  // A second connect is an error, not a close.
  auto again = s.on_text(R"({"type":"req","id":"2","method":"connect","params":{}})");
  CHECK(again.what == inbound_frame::kind::error);
}

TEST_CASE("connection_state: after connect a request frame is dispatched with its params, seq counts from 1") {
  connection_state s;
  REQUIRE(s.check_connect(connect_params("t"), "t").ok);
  auto f = s.on_text(R"({"type":"req","id":"7","method":"sessions.list","params":{"limit":2}})");
  REQUIRE(f.what == inbound_frame::kind::request);
  CHECK(f.id == "7");
  CHECK(f.method == "sessions.list");
  CHECK(f.params.at("limit") == 2);
  CHECK(s.next_seq() == 1);
  CHECK(s.next_seq() == 2);
  CHECK(s.last_seq() == 2);
  auto bad = s.on_text(R"({"type":"req","id":"8"})");
  CHECK(bad.what == inbound_frame::kind::error);
  CHECK(bad.error.message == "invalid request frame: at /method: must be a non-empty string");
}

TEST_CASE("connection_state: watched keys are bounded the least recently used falling out first") {
  connection_state s;
  const auto n = connection_state::kMaxWatchedKeys;
  for (std::size_t i = 0; i < n; ++i) CHECK(s.watch("k" + std::to_string(i)).added);
  auto again = s.watch("k0");  // touched: now the most recent
  CHECK_FALSE(again.added);
  CHECK_FALSE(again.evicted);
  auto over = s.watch("new");
  CHECK(over.added);
  REQUIRE(over.evicted);
  CHECK(*over.evicted == "k1");
  CHECK(s.watched().size() == n);
  CHECK(s.watched().front() == "new");
  CHECK(s.watches("k0"));
  CHECK_FALSE(s.watches("k1"));
}
