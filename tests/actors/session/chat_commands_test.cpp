// The command table and its one parser (actors/session/chat_commands.hpp): each command's own
// rules (OpenClaw's), a reset trigger read first, and every row recognized by its example.
#include <catch2/catch.hpp>

#include <optional>
#include <set>
#include <string>

#include "actors/session/chat_commands.hpp"

using namespace sessionrt::actors;

namespace {

std::optional<std::string> dock_of(std::string_view body) {
  auto r = recognize_chat_command(body);
  if (r.id != chat_command::dock) return std::nullopt;
  return r.channel;
}

chat_command id_of(std::string_view body, std::string* args = nullptr) {
  auto r = recognize_chat_command(body);
  if (args) *args = r.args;
  return r.id;
}

}  // namespace

TEST_CASE("dock command: both spellings, whole body only") {
  CHECK(dock_of("/dock-discord") == std::optional<std::string>("discord"));
  CHECK(dock_of("  /DOCK_Telegram ") == std::optional<std::string>("telegram"));
  CHECK(!dock_of("/dock-discord now").has_value());
  CHECK(!dock_of("/dock-").has_value());
  CHECK(!dock_of("/docking").has_value());
  CHECK(!dock_of("\f/dock-discord").has_value());  // OpenClaw trims " \t\r\n" only here
}

TEST_CASE("chat commands: words compared after trim() and toLowerCase(), arguments keep their case") {
  std::string args;
  CHECK(id_of("/status") == chat_command::status);
  CHECK(id_of(" \xc2\xa0/STATUS\n") == chat_command::status);  // U+00A0 is JavaScript white space
  CHECK(id_of("/status now") == chat_command::none);
  CHECK(id_of("status") == chat_command::none);
  CHECK(id_of("/context") == chat_command::context_list);
  CHECK(id_of("/Context List") == chat_command::context_list);
  CHECK(id_of("/context all") == chat_command::none);
  CHECK(id_of("/stop") == chat_command::stop);
  CHECK(id_of("/compact", &args) == chat_command::compact);
  CHECK(args.empty());
  CHECK(id_of("/COMPACT  Keep The Plan ", &args) == chat_command::compact);
  CHECK(args == "Keep The Plan");
  CHECK(id_of("/compact\tnow") == chat_command::none);  // a space only, as OpenClaw
  CHECK(id_of("/queue Collect cap:5", &args) == chat_command::queue);
  CHECK(args == "Collect cap:5");
  CHECK(id_of("/queued") == chat_command::none);
  CHECK(id_of("hello /status") == chat_command::none);
  CHECK(id_of("") == chat_command::none);
}

TEST_CASE("chat commands: a reset trigger is read first, with the sender and the route") {
  reset_trigger_options dm;
  auto r = recognize_chat_command("/new Hello", command_context{&dm});
  CHECK(r.id == chat_command::reset);
  CHECK(r.trigger.matched_trigger == "/new");
  CHECK(r.trigger.first_message == "Hello");
  // Without the reset rules (the first message after a reset) it is ordinary text.
  CHECK(recognize_chat_command("/new Hello").id == chat_command::none);
  // A soft reset is no command; the rollover reads the trigger.
  r = recognize_chat_command("/reset soft", command_context{&dm});
  CHECK(r.id == chat_command::none);
  CHECK(r.trigger.command == reset_command::soft_reset);
  reset_trigger_options stranger;
  stranger.sender_authorized = false;
  CHECK(recognize_chat_command("/new", command_context{&stranger}).id == chat_command::none);
  reset_trigger_options group;
  group.is_group = true;
  group.bot_names = {"bot"};
  CHECK(recognize_chat_command("@bot /reset", command_context{&group}).id == chat_command::reset);
  CHECK(recognize_chat_command("@bot /status", command_context{&group}).id == chat_command::none);
  // A configured trigger that spells another command is a reset.
  reset_trigger_options odd;
  odd.triggers = {"/status"};
  CHECK(recognize_chat_command("/status", command_context{&odd}).id == chat_command::reset);
  CHECK(recognize_chat_command("/new", command_context{&odd}).id == chat_command::none);
}

TEST_CASE("chat command table: every row is recognized by its example, as itself, and answers by its timing") {
  reset_trigger_options dm;
  std::set<chat_command> ids;
  for (const auto& row : kChatCommands) {
    INFO("row " << row.name << ", example \"" << row.example << "\"");
    CHECK(ids.insert(row.id).second);  // one row per command
    CHECK(recognize_chat_command(row.example, command_context{&dm}).id == row.id);
    CHECK(&chat_command_info(row.id) == &row);
    CHECK(!row.done_by.empty());
    // A row is recognized by a rule or by a spelling, and a listed row has a "/" alias.
    CHECK((row.id == chat_command::none || (row.rule != nullptr) != !row.spelling.empty()));
    if (row.listing == command_listing::once) CHECK(row.alias.substr(0, 1) == "/");
  }
  CHECK(chat_command_info(chat_command::stop).timing == command_timing::stop);
  CHECK(chat_command_info(chat_command::reset).timing == command_timing::run_next);
  CHECK(chat_command_info(chat_command::status).timing == command_timing::answer_if_busy);
  CHECK(chat_command_info(chat_command::queue).timing == command_timing::turn);
}
