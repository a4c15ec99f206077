// command_catalog: the chat commands sessionrt answers, built from the command table
// (actors/session/chat_commands.hpp kChatCommands: each row's alias, description, category
// and arguments) as OpenClaw 2026.9.6 lists commands to its clients: CommandEntrySchema
// entries, built as its commands.list builds them for the text surface with arguments
// (buildCommandsListResult {scope:"text", includeArgs:true}, which is what it puts in
// chat.startup / chat.metadata's metadata.commands):
//   {name, textAliases, description, category?, source:"native", scope, acceptsArgs, args?}
// `name` is the first text alias without its "/". The scope is "text": sessionrt reads them in
// the message text and registers no channel-native command menus.
// Listed in the table's order: a row listed once by its alias (/status, /context, /stop,
// /compact, /queue), the reset row once per session.resetTriggers entry that is a slash
// command ("/new" and "/reset" by default; the rest of the message starts the new session),
// the dock row once per channel session.identityLinks names (a direct session's replies move
// to that channel). Pure; no I/O.
#pragma once
#include <boost/json/array.hpp>
#include <string>
#include <utility>
#include <vector>

namespace sessionrt::gateway {

// `reset_triggers`: session.resetTriggers (empty: the default "/new", "/reset"); `link_ids`:
// the ids session.identityLinks lists ("telegram:123" names the channel "telegram").
boost::json::array chat_command_catalog(const std::vector<std::string>& reset_triggers,
                                        const std::vector<std::string>& link_ids);

}  // namespace sessionrt::gateway
