#include "gateway/command_catalog.hpp"

#include <boost/json.hpp>
#include <set>

#include "messages/ascii_text.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

// serializeArg: {name, description, type, required?, choices?}
bj::object arg(const char* name, const char* description, const char* type = "string",
               std::vector<const char*> choices = {}) {
  bj::object a{{"name", name}, {"description", description}, {"type", type}};
  if (!choices.empty()) {
    bj::array c;
    for (const char* v : choices) c.push_back(bj::object{{"value", v}, {"label", v}});
    a["choices"] = std::move(c);
  }
  return a;
}

// mapCommand for the text surface.
bj::object command(const std::string& alias, const std::string& description, const char* category, bool accepts_args,
                   bj::array args = {}) {
  bj::object c{{"name", alias.substr(1)},
               {"textAliases", bj::array{bj::string(alias)}},
               {"description", description},
               {"category", category},
               {"source", "native"},
               {"scope", "text"},
               {"acceptsArgs", accepts_args}};
  if (accepts_args && !args.empty()) c["args"] = std::move(args);
  return c;
}

// A trigger usable as a command name: "/word" (letters, digits, '-', '_'), lower-cased.
bool command_like(const std::string& t) {
  if (t.size() < 2 || t.front() != '/' || t.size() > 201) return false;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const char ch = t[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_')) return false;
  }
  return true;
}

}  // namespace

bj::array chat_command_catalog(const std::vector<std::string>& reset_triggers, const std::vector<std::string>& link_ids) {
  bj::array out;
  out.push_back(command("/status", "Show current status.", "status", false));
  out.push_back(command("/context", "Explain how context is built and used.", "status", true,
                        bj::array{arg("action", "list (the default): what the prompt is made of", "string", {"list"})}));
  out.push_back(command("/stop", "Stop the current run.", "session", false));
  std::set<std::string> seen;
  const std::vector<std::string> defaults{"/new", "/reset"};
  for (const auto& raw : reset_triggers.empty() ? defaults : reset_triggers) {
    const std::string t = ascii_lower(raw);
    if (!command_like(t) || !seen.insert(t).second) continue;
    const std::string description = t == "/reset" ? "Reset the current session."
                                    : t == "/new" ? "Start a new session."
                                                  : "Start a new session (session.resetTriggers).";
    out.push_back(command(t, description, "session", true));
  }
  out.push_back(command("/compact", "Compact the session context.", "session", true,
                        bj::array{arg("instructions", "Extra compaction instructions")}));
  out.push_back(command("/queue", "Adjust queue settings.", "options", true,
                        bj::array{arg("mode", "queue mode", "string", {"steer", "followup", "collect", "interrupt"}),
                                  arg("debounce", "debounce duration (e.g. 500ms, 2s)"), arg("cap", "queue cap", "number"),
                                  arg("drop", "drop policy", "string", {"old", "new", "summarize"})}));
  std::set<std::string> channels;
  for (const auto& id : link_ids) {
    const auto colon = id.find(':');
    if (colon == std::string::npos || colon == 0) continue;
    const std::string channel = ascii_lower(id.substr(0, colon));
    if (command_like("/dock-" + channel)) channels.insert(channel);
  }
  for (const auto& ch : channels)
    out.push_back(command("/dock-" + ch, "Move this direct session's replies to " + ch + ".", "tools", false));
  return out;
}

}  // namespace sessionrt::gateway
