#include "gateway/command_catalog.hpp"

#include <boost/json.hpp>
#include <set>

#include "actors/session/chat_commands.hpp"
#include "messages/ascii_text.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;
using actors::chat_command_row;
using actors::command_listing;

namespace {

// serializeArg: {name, description, type, required?, choices?}
bj::object arg(const actors::command_arg& spec) {
  bj::object a{{"name", spec.name}, {"description", spec.description}, {"type", spec.type}};
  if (!spec.choices.empty()) {
    bj::array c;
    for (std::string_view v : spec.choices) c.push_back(bj::object{{"value", v}, {"label", v}});
    a["choices"] = std::move(c);
  }
  return a;
}

// mapCommand for the text surface.
bj::object command(const std::string& alias, const std::string& description, const chat_command_row& row) {
  bj::object c{{"name", alias.substr(1)},
               {"textAliases", bj::array{bj::string(alias)}},
               {"description", description},
               {"category", row.category},
               {"source", "native"},
               {"scope", "text"},
               {"acceptsArgs", row.accepts_args}};
  if (row.accepts_args && !row.args.empty()) {
    bj::array args;
    for (const auto& a : row.args) args.push_back(arg(a));
    c["args"] = std::move(args);
  }
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

// `text` with each "<channel>" replaced by `channel`.
std::string with_channel(std::string_view text, const std::string& channel) {
  constexpr std::string_view mark = "<channel>";
  std::string out;
  for (std::size_t at; (at = text.find(mark)) != std::string_view::npos; text.remove_prefix(at + mark.size()))
    out.append(text.substr(0, at)).append(channel);
  return out.append(text);
}

void add_reset_triggers(bj::array& out, const chat_command_row& row, const std::vector<std::string>& reset_triggers) {
  std::set<std::string> seen;
  const std::vector<std::string> defaults{"/new", "/reset"};
  for (const auto& raw : reset_triggers.empty() ? defaults : reset_triggers) {
    const std::string t = ascii_lower(raw);
    if (!command_like(t) || !seen.insert(t).second) continue;
    // OpenClaw's own descriptions for its two; a configured trigger gets the row's.
    const std::string description = t == "/reset" ? "Reset the current session."
                                    : t == "/new" ? "Start a new session."
                                                  : std::string(row.description);
    out.push_back(command(t, description, row));
  }
}

void add_linked_channels(bj::array& out, const chat_command_row& row, const std::vector<std::string>& link_ids) {
  std::set<std::string> channels;
  for (const auto& id : link_ids) {
    const auto colon = id.find(':');
    if (colon == std::string::npos || colon == 0) continue;
    const std::string channel = ascii_lower(id.substr(0, colon));
    if (command_like(with_channel(row.alias, channel))) channels.insert(channel);
  }
  for (const auto& ch : channels)
    out.push_back(command(with_channel(row.alias, ch), with_channel(row.description, ch), row));
}

}  // namespace

bj::array chat_command_catalog(const std::vector<std::string>& reset_triggers, const std::vector<std::string>& link_ids) {
  bj::array out;
  for (const auto& row : actors::kChatCommands) {
    switch (row.listing) {
      case command_listing::not_listed: break;
      case command_listing::once: out.push_back(command(std::string(row.alias), std::string(row.description), row)); break;
      case command_listing::per_reset_trigger: add_reset_triggers(out, row, reset_triggers); break;
      case command_listing::per_linked_channel: add_linked_channels(out, row, link_ids); break;
    }
  }
  return out;
}

}  // namespace sessionrt::gateway
