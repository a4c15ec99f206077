// sessionrt.runner.attach / sessionrt.turn.result: a client that becomes a model runner
// (runner_pool.hpp has the protocol). Both need operator.write.
#include "gateway/method_table.hpp"
#include "gateway/param_check.hpp"
#include "gateway/runner_pool.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

method_outcome runner_attach(method_call& call) {
  call.conn->runner = true;
  call.core.runners->attach(call.conn_id);
  return bj::value(bj::object{{"attached", true}, {"runners", call.core.runners->attached()}});
}

method_outcome turn_result(method_call& call) {
  if (!call.conn->runner) return error_of("sessionrt.turn.result: this connection did not call sessionrt.runner.attach");
  if (auto problem = runner_pool::result_params_problem(call.params))
    return params_error("sessionrt.turn.result", *problem);
  auto st = call.core.runners->on_result(call.conn_id, call.params);
  if (!st.ok()) return error_of(st.message());
  return bj::value(bj::object{{"ok", true}});
}

}  // namespace

void add_runner_methods(std::vector<method_entry>& t) {
  t.push_back({"sessionrt.runner.attach", method_scope::write, true, runner_attach});
  t.push_back({"sessionrt.turn.result", method_scope::write, true, turn_result});
}

}  // namespace sessionrt::gateway
