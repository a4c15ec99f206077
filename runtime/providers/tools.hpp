// tools: what a host registers so the built-in runners can run a tool loop (model -> tool
// calls -> execute -> tool results -> model). A tool is a name, a description, a JSON schema
// for its arguments, and an asynchronous execute function.
//
// Contract of execute(args, cancel, done):
//   - returns at once; calls `done` exactly once, later, from any thread (or before returning);
//   - `args` are the model's arguments as parsed (not validated against the schema: a tool
//     checks what it needs and answers an error result for bad input);
//   - `cancel` is set when the turn is cancelled (/stop, timeout, stop()); a tool should stop
//     and may call done with anything (it is ignored then);
//   - several calls of one tool may run at once (the model asked for several in one round).
// A tool result is pi's toolResult content: text and image blocks, and whether it is an error.
#pragma once
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "messages/model_runner.hpp"
#include "runtime/providers/wire_format.hpp"

namespace sessionrt::providers {

struct tool_result {
  boost::json::array content;  // [{type:"text", text}, {type:"image", data, mimeType}]
  bool is_error = false;
  static tool_result text(std::string text, bool is_error = false);
};

struct tool {
  tool_spec spec;  // name, description, parameters (a JSON schema object)
  std::function<void(boost::json::object args, std::shared_ptr<const cancellation> cancel,
                     std::function<void(tool_result)> done)>
      execute;
};

// The tools of a runner, by name. Filled before the runner starts; read-only afterwards.
class tool_registry {
 public:
  status add(tool t);  // errc::already_exists for a second tool of one name; invalid_argument for no name
  const tool* find(const std::string& name) const;
  const std::vector<tool_spec>& specs() const { return specs_; }
  bool empty() const { return tools_.empty(); }

 private:
  std::map<std::string, tool> tools_;
  std::vector<tool_spec> specs_;
};

}  // namespace sessionrt::providers
