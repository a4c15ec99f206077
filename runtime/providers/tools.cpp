#include "runtime/providers/tools.hpp"

namespace sessionrt::providers {

tool_result tool_result::text(std::string text, bool is_error) {
  tool_result r;
  r.content.push_back(boost::json::object{{"type", "text"}, {"text", std::move(text)}});
  r.is_error = is_error;
  return r;
}

status tool_registry::add(tool t) {
  if (t.spec.name.empty()) return status(errc::invalid_argument, "a tool needs a name");
  if (!t.execute) return status(errc::invalid_argument, "tool " + t.spec.name + " has no execute function");
  if (tools_.count(t.spec.name)) return status(errc::already_exists, "a tool named " + t.spec.name + " is registered already");
  specs_.push_back(t.spec);
  const std::string name = t.spec.name;
  tools_.emplace(name, std::move(t));
  return {};
}

const tool* tool_registry::find(const std::string& name) const {
  auto it = tools_.find(name);
  return it == tools_.end() ? nullptr : &it->second;
}

}  // namespace sessionrt::providers
