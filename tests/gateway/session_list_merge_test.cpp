// session_list_merge without sockets: the answers of a cluster's nodes to one sessions.list,
// merged into the page the client asked for.
#include "gateway/session_list_merge.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace sessionrt::gateway;
namespace bj = boost::json;

namespace {
bj::object row(const std::string& key, std::int64_t updated) { return {{"key", key}, {"updatedAt", updated}}; }
bj::object answer(bj::array rows, std::int64_t total, const std::string& path) {
  return {{"ts", 5}, {"path", path}, {"count", static_cast<std::int64_t>(rows.size())}, {"totalCount", total},
          {"sessions", std::move(rows)}, {"defaults", bj::object{}}};
}
std::vector<std::string> keys_of(const bj::object& out) {
  std::vector<std::string> keys;
  for (const auto& r : out.at("sessions").as_array()) keys.emplace_back(r.at("key").as_string());
  return keys;
}
}  // namespace

TEST_CASE("session list merge: every node's rows, newest first, paged as one list", "[forward]") {
  // Each node answered rows [0, offset + limit) = [0, 3) of its own.
  auto here = answer({row("a1", 90), row("a2", 50), row("a3", 10)}, 5, "here/sessions.json");
  auto peer = answer({row("b1", 80), row("b2", 60), row("b3", 40)}, 3, "peer/sessions.json");
  auto out = merge_session_lists({here, peer}, 1, 2);
  CHECK(keys_of(out) == std::vector<std::string>{"b1", "b2"});
  CHECK(out.at("totalCount") == 8);
  CHECK(out.at("count") == 2);
  CHECK(out.at("limitApplied") == 2);
  CHECK(out.at("nextOffset") == 3);
  CHECK(out.at("hasMore") == true);
  CHECK(out.at("path") == "here/sessions.json");  // this node's
  auto first = merge_session_lists({here, peer}, 0, 100);
  CHECK(keys_of(first) == std::vector<std::string>{"a1", "b1", "b2", "a2", "b3", "a3"});
  CHECK(first.at("hasMore") == true);  // the nodes hold 8, they sent 6 (the limit asked of them)
}

TEST_CASE("session list merge: a key two nodes answered (its shard moved between them) is listed once, its newest row",
          "[forward]") {
  auto here = answer({row("k", 10), row("x", 5)}, 2, "here");
  auto peer = answer({row("k", 30)}, 1, "peer");
  auto out = merge_session_lists({here, peer}, 0, 10);
  CHECK(keys_of(out) == std::vector<std::string>{"k", "x"});
  CHECK(out.at("sessions").at(0).at("updatedAt") == 30);
  CHECK(out.at("totalCount") == 2);
  CHECK(out.at("hasMore") == false);
  CHECK(out.at("nextOffset").is_null());
  // An offset past the end: an empty page.
  auto past = merge_session_lists({here, peer}, 7, 10);
  CHECK(past.at("sessions").as_array().empty());
  CHECK(past.at("count") == 0);
}
