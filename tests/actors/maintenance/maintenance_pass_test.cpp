// maintenance_pass: the batches the maintenance actor applies, the sessions whose files stay,
// and the maintenance.report event.
#include <catch2/catch.hpp>

#include "actors/maintenance/maintenance_pass.hpp"
#include "messages/json_access.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

plan_action row_action(std::string key, std::string sid, std::optional<std::int64_t> at) {
  plan_action a;
  a.kind = action_kind::remove_row;
  a.key = std::move(key);
  a.session_id = std::move(sid);
  a.updated_at = at;
  return a;
}
plan_action file_action(std::string file, std::string sid) {
  plan_action a;
  a.step = maintenance_step::unreferenced;
  a.kind = action_kind::archive_file;
  a.file = std::move(file);
  a.target = a.file + ".deleted.x";
  a.session_id = std::move(sid);
  return a;
}

maintenance_job two_row_job() {
  maintenance_job j;
  j.agent_id = "main";
  j.plan.mode = maintenance_mode::enforce;
  j.plan.actions = {row_action("k1", "s1", 10), row_action("k2", "s2", std::nullopt), file_action("s1.jsonl", "s1"),
                    file_action("s2.jsonl", "s2"), file_action("orphan.jsonl", "s9")};
  j.planned = true;
  index_plan(j);
  return j;
}

}  // namespace

TEST_CASE("maintenance_pass: a batch erases its rows with their planned updatedAt and checks the keys of its files") {
  auto j = two_row_job();
  auto b = batch_of(j, 3, -1);
  CHECK(b.begin == 0);
  CHECK(b.end == 3);
  CHECK(b.erase_keys == std::vector<std::string>{"k1", "k2"});
  CHECK(b.erase_updated_at == std::vector<std::int64_t>{10, -1});
  CHECK(b.check_keys == std::vector<std::string>{"k1"});
  j.next = b.end;
  auto rest = batch_of(j, 3, -1);
  CHECK(rest.begin == 3);
  CHECK(rest.end == 5);
  CHECK(rest.erase_keys.empty());
  CHECK(rest.check_keys == std::vector<std::string>{"k2"});  // the orphan's session had no row
}

TEST_CASE("maintenance_pass: a session whose key is busy or whose row came back keeps its files") {
  auto j = two_row_job();
  auto b = batch_of(j, 10, -1);
  batch_checks none;
  CHECK(sessions_to_keep(j, b, none).empty());
  batch_checks busy;
  busy.busy_keys.insert("k1");
  CHECK(sessions_to_keep(j, b, busy) == std::unordered_set<std::string>{"s1"});
  batch_checks back;
  back.row_session["k2"] = "s2";
  back.row_session["k1"] = "another";  // the key started a new session: s1's file may move
  CHECK(sessions_to_keep(j, b, back) == std::unordered_set<std::string>{"s2"});
}

TEST_CASE("maintenance_pass: the report says what warn would do and what enforce did") {
  auto j = two_row_job();
  j.plan.before_count = 3;
  j.plan.after_count = 1;
  j.plan.pruned = 2;
  j.rows_removed = 2;
  j.files_archived = 1;
  j.skipped = {"s2.jsonl changed after the plan was made; left alone"};
  auto warn = maintenance_report_event({j}, maintenance_mode::warn, "schedule", 42);
  CHECK(warn.type == "maintenance.report");
  CHECK(warn.at_ms == 42);
  CHECK(json::get_string(warn.data, "mode") == std::optional<std::string_view>("warn"));
  CHECK(warn.data.at("applied").as_bool() == false);
  CHECK(warn.data.at("plannedActions").to_number<std::int64_t>() == 5);
  const auto& ws = warn.data.at("stores").as_array().at(0).as_object();
  CHECK_FALSE(ws.contains("rowsRemoved"));  // warn did nothing
  CHECK(ws.at("actions").as_array().size() == 5);
  CHECK(json::get_string(ws.at("actions").as_array().at(0).as_object(), "label") ==
        std::optional<std::string_view>("prune-stale"));

  auto enforce = maintenance_report_event({j}, maintenance_mode::enforce, "request", 42, 2);
  CHECK(enforce.data.at("rowsRemoved").to_number<std::int64_t>() == 2);
  CHECK(enforce.data.at("filesArchived").to_number<std::int64_t>() == 1);
  CHECK(enforce.data.at("skipped").to_number<std::int64_t>() == 1);
  const auto& es = enforce.data.at("stores").as_array().at(0).as_object();
  CHECK(es.at("actions").as_array().size() == 2);  // listed up to the limit
  CHECK(es.at("plannedActions").to_number<std::int64_t>() == 5);
}
