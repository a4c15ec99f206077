#include "cluster/cluster_status.hpp"

#include <catch2/catch.hpp>

#include <sstream>

#include "app/cli/command_line.hpp"
#include "cluster/cluster_command.hpp"
#include "cluster/node_membership.hpp"
#include "messages/json_reader.hpp"
#include "tests/cluster/etcd_process.hpp"

namespace sessionrt::cluster {
namespace {

cluster_snapshot sample() {
  cluster_snapshot s;
  s.cluster = "prod";
  s.endpoint = "http://127.0.0.1:2379";
  s.revision = 99;
  s.nodes = {{"n1", "10.0.0.1:7001", "0.1.0", false, 0x10}, {"n2", "10.0.0.2:7001", "0.1.0", true, 0x20}};
  s.lease_ttl_s = {{0x10, 8}, {0x20, 3}};
  shard_table t = empty_shard_table("main", 4);
  t.owners = {"n1", "n1", "n2", "gone"};
  t.revision = 50;
  s.tables = {t};
  // main/1 is assigned to n1 but n2 still holds it: a handoff in flight.
  s.claims = {{{"main", 0}, "n1", 60, 0x10}, {{"main", 1}, "n2", 61, 0x20}, {{"main", 2}, "n2", 70, 0x20}};
  return s;
}

struct cli_result {
  int code;
  std::string out, err;
};

cli_result run(std::vector<std::string> args, std::string etcd_env = "") {
  std::ostringstream out, err;
  runtime::cli_io io = runtime::process_cli_io();
  io.out = &out;
  io.err = &err;
  io.env = [etcd_env](std::string_view name) -> std::optional<std::string> {
    if (name == "SESSIONRT_ETCD" && !etcd_env.empty()) return etcd_env;
    return std::nullopt;
  };
  args.insert(args.begin(), "sessionrt");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const int code = runtime::run_cli(static_cast<int>(argv.size()), argv.data(), io, {add_cluster_commands});
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("cluster status: figures per node and agent, handoffs in flight, as JSON", "[cluster][status]") {
  auto j = status_json(sample());
  CHECK(j.at("cluster") == "prod");
  CHECK(j.at("revision") == 99);
  const auto& nodes = j.at("nodes").as_array();
  REQUIRE(nodes.size() == 2);
  const auto& n1 = nodes[0].as_object();
  CHECK(n1.at("id") == "n1");
  CHECK(n1.at("lease") == "0x10");
  CHECK(n1.at("leaseTtlS") == 8);
  CHECK(n1.at("shardsAssigned") == 2);
  CHECK(n1.at("shardsHeld") == 1);
  CHECK(n1.at("epochs").at("min") == 60);
  const auto& n2 = nodes[1].as_object();
  CHECK(n2.at("draining") == true);
  CHECK(n2.at("shardsAssigned") == 1);
  CHECK(n2.at("shardsHeld") == 2);
  CHECK(n2.at("epochs").at("min") == 61);
  CHECK(n2.at("epochs").at("max") == 70);
  const auto& agent = j.at("agents").as_array().at(0).as_object();
  CHECK(agent.at("tableRevision") == 50);
  CHECK(agent.at("onDepartedNodes") == 1);
  CHECK(agent.at("unassigned") == 0);
  CHECK(j.at("handoffsInFlight") == 1);
  CHECK(j.at("owners").as_array().size() == 3);
  CHECK(j.at("owners").as_array()[1].at("shard") == "main/1");
}

TEST_CASE("cluster status: the text form", "[cluster][status]") {
  const std::string text = status_text(sample());
  CHECK(text ==
        "cluster prod at http://127.0.0.1:2379 (revision 99)\n"
        "nodes: 2\n"
        "  n1  address 10.0.0.1:7001  build 0.1.0  lease 0x10 (8 s left)  shards 2 assigned, 1 held  epochs 60\n"
        "  n2 (draining)  address 10.0.0.2:7001  build 0.1.0  lease 0x20 (3 s left)  shards 1 assigned, 2 held  epochs 61..70\n"
        "agents: 1\n"
        "  main  4 shards  table revision 50  0 unassigned  1 on departed nodes\n"
        "shards: 4 in tables, 3 held; handoffs in flight: 1\n");
}

TEST_CASE("sessionrt cluster status: unreachable etcd is an error naming it, exit 2", "[cluster][status]") {
  auto r = run({"cluster", "status", "--cluster", "prod", "--etcd", "http://127.0.0.1:9", "--timeout-ms", "2000"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("etcd at http://127.0.0.1:9 is unreachable"));
  auto bad = run({"cluster", "status", "--cluster", "a/b", "--etcd", "http://127.0.0.1:9"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("cluster name 'a/b'"));
  auto missing = run({"cluster", "status"});
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("--cluster"));
}

TEST_CASE("sessionrt cluster status: nodes, shards per node and epochs from a live etcd", "[cluster][status][etcd]") {
  SESSIONRT_TEST_ETCD(server);
  auto etcd = blocking_etcd::connect({server->endpoint(), 5000});
  REQUIRE(etcd.ok());
  auto loop = providers::http_loop::start();
  REQUIRE(loop.ok());
  auto client = etcd_client::make(**loop, {server->endpoint(), 5000});
  REQUIRE(client.ok());
  manual_clock mono(0);
  std::vector<std::unique_ptr<node_membership>> nodes;
  for (const char* id : {"n1", "n2"}) {
    membership_options o;
    o.cluster = "prod";
    o.node_id = id;
    o.address = std::string("127.0.0.1:700") + (id[1]);
    o.build = "0.1.0";
    nodes.push_back(std::make_unique<node_membership>(*client, o, mono, mono));
    REQUIRE(await_call<status>([&](etcd_client::done_status cb) { nodes.back()->join(std::move(cb)); }).ok());
  }
  shard_table t = empty_shard_table("main", 4);
  t.owners = {"n1", "n2", "n1", "n2"};
  REQUIRE(etcd->put("/sessionrt/prod/shards/main", encode_shard_table(t)).ok());
  shard_claims claims(*client, "prod");
  std::vector<std::int64_t> epochs;
  for (int i = 0; i < 3; ++i) {
    auto& owner = *nodes[static_cast<std::size_t>(i % 2)];
    auto c = await_call<result<shard_claim>>([&](etcd_client::done<shard_claim> cb) {
      claims.acquire({"main", i}, i % 2 ? "n2" : "n1", owner.lease(), std::move(cb));
    });
    REQUIRE(c.ok());
    epochs.push_back(c->epoch);
  }

  auto r = run({"cluster", "status", "--cluster", "prod", "--etcd", server->endpoint(), "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto j = json::parse_object(r.out);
  REQUIRE(j.ok());
  const auto& list = j->at("nodes").as_array();
  REQUIRE(list.size() == 2);
  CHECK(list[0].at("id") == "n1");
  CHECK(list[0].at("address") == "127.0.0.1:7001");
  CHECK(list[0].at("shardsAssigned") == 2);
  CHECK(list[0].at("shardsHeld") == 2);
  CHECK(list[0].at("epochs").at("min") == epochs[0]);
  CHECK(list[0].at("epochs").at("max") == epochs[2]);
  CHECK(list[1].at("shardsHeld") == 1);
  CHECK(list[1].at("leaseTtlS").as_int64() > 0);
  CHECK(j->at("owners").as_array().size() == 3);
  CHECK(j->at("handoffsInFlight") == 0);

  auto text = run({"cluster", "status", "--cluster", "prod", "--etcd", server->endpoint()});
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("nodes: 2") && Catch::Contains("shards 2 assigned, 2 held") &&
                           Catch::Contains("shards: 4 in tables, 3 held; handoffs in flight: 0"));
  auto from_env = run({"cluster", "status", "--cluster", "prod", "--json"}, server->endpoint());  // $SESSIONRT_ETCD
  REQUIRE(from_env.code == 0);
  CHECK_THAT(from_env.out, Catch::Contains("\"etcd\": \"" + server->endpoint() + "\""));
  auto empty = run({"cluster", "status", "--cluster", "other", "--etcd", server->endpoint()});
  REQUIRE(empty.code == 0);
  CHECK_THAT(empty.out, Catch::Contains("no live nodes") && Catch::Contains("no shard tables yet"));
}

}  // namespace sessionrt::cluster
