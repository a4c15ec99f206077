#include "actors/session/chat_commands.hpp"

#include "messages/ascii_text.hpp"
#include "messages/js_text.hpp"

namespace sessionrt::actors {
namespace {

// A row recognized by its spelling (chat_commands.hpp): `lowered` is the trimmed body
// lowercased, `trimmed` the same text as sent.
bool spelled(const chat_command_row& row, std::string_view trimmed, std::string_view lowered, recognized_command& out) {
  if (row.spelling.empty()) return false;
  if (lowered == row.spelling || (!row.spelling_too.empty() && lowered == row.spelling_too)) return true;
  if (!row.takes_args || lowered.size() <= row.spelling.size() || lowered.compare(0, row.spelling.size(), row.spelling) != 0 ||
      lowered[row.spelling.size()] != ' ')
    return false;
  out.args = std::string(js_trim(trimmed.substr(row.spelling.size())));
  return true;
}

}  // namespace

bool reset_rule(std::string_view body, const command_context& ctx, recognized_command& out) {
  if (!ctx.resets) return false;
  out.trigger = parse_reset_trigger(body, *ctx.resets);
  return out.trigger.command == reset_command::reset;
}

bool dock_rule(std::string_view body, const command_context&, recognized_command& out) {
  // OpenClaw trims these four only here (not \f or \v).
  constexpr std::string_view blanks = " \t\r\n";
  if (const std::string_view trimmed = ascii_trim(body, blanks); trimmed.empty() || trimmed.front() != '/') return false;
  const std::string text = ascii_lower(ascii_trim(body, blanks));
  for (std::string_view prefix : {"/dock-", "/dock_"}) {
    if (text.size() <= prefix.size() || text.compare(0, prefix.size(), prefix) != 0) continue;
    std::string channel = text.substr(prefix.size());
    if (channel.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) continue;
    out.channel = std::move(channel);
    return true;
  }
  return false;
}

recognized_command recognize_chat_command(std::string_view body, const command_context& ctx) {
  recognized_command out;
  if (reset_rule(body, ctx, out)) {
    out.id = chat_command::reset;
    return out;
  }
  // Every other command starts with '/' (lowercasing keeps it and makes no other '/'): most
  // messages are told apart without a lowercased copy.
  const std::string_view trimmed = js_trim(body);
  if (trimmed.empty() || trimmed.front() != '/') return out;
  const std::string lowered = js_lowercase(trimmed);
  for (const auto& row : kChatCommands) {
    if (row.rule == reset_rule) continue;  // read above
    if (row.rule ? row.rule(body, ctx, out) : spelled(row, trimmed, lowered, out)) {
      out.id = row.id;
      return out;
    }
  }
  return out;
}

}  // namespace sessionrt::actors
