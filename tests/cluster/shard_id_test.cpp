#include "cluster/shard_id.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <vector>

#include "cluster/cluster_keys.hpp"
#include "cluster/etcd_base64.hpp"
#include "cluster/shard_table.hpp"

namespace sessionrt::cluster {

TEST_CASE("shards: FNV-1a 64 of the normalized key, fixed for good", "[cluster][shards]") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);  // the published test vectors
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ull);
  const auto s = shard_of("agent:main:telegram:direct:123");
  CHECK(s.agent == "main");
  CHECK(s.index == static_cast<int>(fnv1a64("agent:main:telegram:direct:123") % 256));
  CHECK(shard_of("Agent:MAIN:Telegram:Direct:123") == s);  // normalized first
  CHECK(shard_of("agent:ops:main").agent == "ops");
  CHECK(shard_of("global").agent == "main");  // outside agent:<id>: the default agent
  CHECK(to_string(shard_id{"ops", 7}) == "ops/7");
}

TEST_CASE("shards: one agent's sessions spread over all 256 shards", "[cluster][shards]") {
  std::vector<int> per(256, 0);
  for (int i = 0; i < 25600; ++i) ++per[static_cast<std::size_t>(shard_of(fmt::format("agent:main:telegram:direct:{}", i)).index)];
  int lo = 1 << 30, hi = 0;
  for (int n : per) lo = std::min(lo, n), hi = std::max(hi, n);
  CHECK(lo > 50);   // 100 expected per shard
  CHECK(hi < 160);
}

TEST_CASE("cluster keys: names are checked before they reach a key", "[cluster][keys]") {
  CHECK(check_name("node id", "node-1.a_b").ok());
  CHECK(check_name("node id", "").code() == errc::invalid_argument);
  CHECK(check_name("node id", "../x").code() == errc::invalid_argument);
  CHECK(check_name("node id", "a/b").code() == errc::invalid_argument);
  CHECK(check_name("node id", "-a").code() == errc::invalid_argument);
  CHECK(check_name("cluster name", std::string(65, 'a')).code() == errc::invalid_argument);
  CHECK_THAT(check_name("cluster name", "a b").message(), Catch::Contains("cluster name 'a b'"));
  CHECK(node_key("prod", "n1") == "/sessionrt/prod/nodes/n1");
  CHECK(shard_table_key("prod", "main") == "/sessionrt/prod/shards/main");
  CHECK(owner_key("prod", "main", 17) == "/sessionrt/prod/owners/main/17");
  CHECK(name_under("/sessionrt/prod/nodes/n1", nodes_prefix("prod")) == "n1");
  CHECK(name_under("/sessionrt/prod/nodes/n1/x", nodes_prefix("prod")).empty());
  CHECK(name_under("/sessionrt/prodx/nodes/n1", nodes_prefix("prod")).empty());
}

TEST_CASE("etcd base64: round trip of any bytes, strict decode", "[cluster][etcd]") {
  const std::string bytes("\0\xff/sessionrt/\x80", 14);
  for (std::size_t n = 0; n <= bytes.size(); ++n) {
    auto enc = base64_encode(bytes.substr(0, n));
    auto dec = base64_decode(enc);
    REQUIRE(dec.has_value());
    CHECK(*dec == bytes.substr(0, n));
  }
  CHECK(base64_encode("a") == "YQ==");
  CHECK(!base64_decode("YQ=").has_value());
  CHECK(!base64_decode("Y!==").has_value());
  CHECK(!base64_decode("Y=Q=").has_value());
}

TEST_CASE("shard table: encodes and decodes, refuses a table that does not add up", "[cluster][shards]") {
  auto t = empty_shard_table("main", 4);
  t.owners[1] = "n1";
  t.owners[3] = "n2";
  const std::string text = encode_shard_table(t);
  CHECK(text == R"({"agent":"main","shards":4,"owners":["","n1","","n2"]})");
  auto back = decode_shard_table(text, "k");
  REQUIRE(back.ok());
  CHECK(back->owners == t.owners);
  CHECK(back->agent == "main");
  auto short_list = decode_shard_table(R"({"agent":"main","shards":4,"owners":["n1"]})", "/sessionrt/c/shards/main");
  REQUIRE(!short_list.ok());
  CHECK(short_list.error().code() == errc::corrupt);
  CHECK_THAT(short_list.error().message(), Catch::Contains("/sessionrt/c/shards/main") && Catch::Contains("4 of them"));
  CHECK(!decode_shard_table(R"({"agent":"main","shards":1,"owners":["../x"]})", "k").ok());
  CHECK(!decode_shard_table(R"({"agent":"main","shards":0,"owners":[]})", "k").ok());
  CHECK(!decode_shard_table("not json", "k").ok());
}

}  // namespace sessionrt::cluster
