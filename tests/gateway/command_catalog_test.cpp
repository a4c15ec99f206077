// gateway/command_catalog: commands.list's entries built from the command table
// (actors/session/chat_commands.hpp): a row added there is listed here.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <set>
#include <string>

#include "actors/session/chat_commands.hpp"
#include "gateway/command_catalog.hpp"

using namespace sessionrt;

namespace {

std::set<std::string> names_of(const boost::json::array& catalog) {
  std::set<std::string> names;
  for (const auto& v : catalog) names.insert(std::string(v.at("name").as_string()));
  return names;
}

}  // namespace

TEST_CASE("command catalog: every listed row of the command table is listed, named as it is recognized") {
  const auto catalog = gateway::chat_command_catalog({}, {"telegram:1"});
  const auto names = names_of(catalog);
  std::size_t expected = 0;
  for (const auto& row : actors::kChatCommands) {
    INFO("row " << row.name);
    switch (row.listing) {
      case actors::command_listing::not_listed: break;
      case actors::command_listing::once:
        CHECK(names.count(std::string(row.alias.substr(1))) == 1);
        // The listed alias is recognized as this row's command.
        CHECK(actors::recognize_chat_command(row.alias).id == row.id);
        ++expected;
        break;
      case actors::command_listing::per_reset_trigger:
        CHECK(names.count("new") == 1);
        CHECK(names.count("reset") == 1);
        expected += 2;
        break;
      case actors::command_listing::per_linked_channel:
        CHECK(names.count("dock-telegram") == 1);
        CHECK(actors::recognize_chat_command("/dock-telegram").id == row.id);
        ++expected;
        break;
    }
  }
  CHECK(catalog.size() == expected);
  CHECK(names.count("dock-telegram") == 1);
}

TEST_CASE("command catalog: the entries OpenClaw's clients read, unchanged from the hand-written list") {
  // What the list said before it was built from the table (the same text, the same order).
  const auto catalog = gateway::chat_command_catalog({}, {"telegram:1", "Discord:2", "x"});
  CHECK(boost::json::serialize(catalog) ==
        R"J([{"name":"status","textAliases":["/status"],"description":"Show current status.","category":"status","source":"native","scope":"text","acceptsArgs":false},)J"
        R"J({"name":"context","textAliases":["/context"],"description":"Explain how context is built and used.","category":"status","source":"native","scope":"text","acceptsArgs":true,"args":[{"name":"action","description":"list (the default): what the prompt is made of","type":"string","choices":[{"value":"list","label":"list"}]}]},)J"
        R"J({"name":"stop","textAliases":["/stop"],"description":"Stop the current run.","category":"session","source":"native","scope":"text","acceptsArgs":false},)J"
        R"J({"name":"new","textAliases":["/new"],"description":"Start a new session.","category":"session","source":"native","scope":"text","acceptsArgs":true},)J"
        R"J({"name":"reset","textAliases":["/reset"],"description":"Reset the current session.","category":"session","source":"native","scope":"text","acceptsArgs":true},)J"
        R"J({"name":"compact","textAliases":["/compact"],"description":"Compact the session context.","category":"session","source":"native","scope":"text","acceptsArgs":true,"args":[{"name":"instructions","description":"Extra compaction instructions","type":"string"}]},)J"
        R"J({"name":"queue","textAliases":["/queue"],"description":"Adjust queue settings.","category":"options","source":"native","scope":"text","acceptsArgs":true,"args":[{"name":"mode","description":"queue mode","type":"string","choices":[{"value":"steer","label":"steer"},{"value":"followup","label":"followup"},{"value":"collect","label":"collect"},{"value":"interrupt","label":"interrupt"}]},)J"
        R"J({"name":"debounce","description":"debounce duration (e.g. 500ms, 2s)","type":"string"},)J"
        R"J({"name":"cap","description":"queue cap","type":"number"},)J"
        R"J({"name":"drop","description":"drop policy","type":"string","choices":[{"value":"old","label":"old"},{"value":"new","label":"new"},{"value":"summarize","label":"summarize"}]}]},)J"
        R"J({"name":"dock-discord","textAliases":["/dock-discord"],"description":"Move this direct session's replies to discord.","category":"tools","source":"native","scope":"text","acceptsArgs":false},)J"
        R"J({"name":"dock-telegram","textAliases":["/dock-telegram"],"description":"Move this direct session's replies to telegram.","category":"tools","source":"native","scope":"text","acceptsArgs":false}])J");
  const auto custom = gateway::chat_command_catalog({"/New", "/fresh", "start over", "/new"}, {});
  CHECK(boost::json::serialize(custom) ==
        R"J([{"name":"status","textAliases":["/status"],"description":"Show current status.","category":"status","source":"native","scope":"text","acceptsArgs":false},)J"
        R"J({"name":"context","textAliases":["/context"],"description":"Explain how context is built and used.","category":"status","source":"native","scope":"text","acceptsArgs":true,"args":[{"name":"action","description":"list (the default): what the prompt is made of","type":"string","choices":[{"value":"list","label":"list"}]}]},)J"
        R"J({"name":"stop","textAliases":["/stop"],"description":"Stop the current run.","category":"session","source":"native","scope":"text","acceptsArgs":false},)J"
        R"J({"name":"new","textAliases":["/new"],"description":"Start a new session.","category":"session","source":"native","scope":"text","acceptsArgs":true},)J"
        R"J({"name":"fresh","textAliases":["/fresh"],"description":"Start a new session (session.resetTriggers).","category":"session","source":"native","scope":"text","acceptsArgs":true},)J"
        R"J({"name":"compact","textAliases":["/compact"],"description":"Compact the session context.","category":"session","source":"native","scope":"text","acceptsArgs":true,"args":[{"name":"instructions","description":"Extra compaction instructions","type":"string"}]},)J"
        R"J({"name":"queue","textAliases":["/queue"],"description":"Adjust queue settings.","category":"options","source":"native","scope":"text","acceptsArgs":true,"args":[{"name":"mode","description":"queue mode","type":"string","choices":[{"value":"steer","label":"steer"},{"value":"followup","label":"followup"},{"value":"collect","label":"collect"},{"value":"interrupt","label":"interrupt"}]},)J"
        R"J({"name":"debounce","description":"debounce duration (e.g. 500ms, 2s)","type":"string"},)J"
        R"J({"name":"cap","description":"queue cap","type":"number"},)J"
        R"J({"name":"drop","description":"drop policy","type":"string","choices":[{"value":"old","label":"old"},{"value":"new","label":"new"},{"value":"summarize","label":"summarize"}]}]}])J");
}
