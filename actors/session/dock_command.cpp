#include "actors/session/dock_command.hpp"

#include <fmt/format.h>

#include "messages/ascii_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors {
namespace {

// OpenClaw trims these four only here (not \f or \v), as chat_commands.cpp dock_rule does.
constexpr std::string_view kBlanks = " \t\r\n";

}  // namespace

result<dock_target> resolve_dock_target(std::string_view channel, const route_facts& route, std::string_view sender_id,
                                        const identity_links& links) {
  if (route.chat_type != "direct" || route.is_group)
    return status(errc::invalid_argument,
                  fmt::format("/dock-{} works only in a direct session; this is a {} chat: nothing changed", channel,
                              route.chat_type));
  const std::string sender = ascii_lower(ascii_trim(sender_id.empty() ? std::string_view(route.peer_id) : sender_id, kBlanks));
  const std::string qualified = ascii_lower(route.channel) + ":" + sender;
  for (const auto& [group, ids] : links) {
    bool member = false;
    for (const auto& id : ids) {
      const std::string v = ascii_lower(ascii_trim(id, kBlanks));
      member = member || (!sender.empty() && (v == sender || v == qualified));
    }
    if (!member) continue;
    const std::string prefix = std::string(channel) + ":";
    for (const auto& id : ids) {
      const std::string_view v = ascii_trim(id, kBlanks);
      if (v.size() > prefix.size() && ascii_lower(v.substr(0, prefix.size())) == prefix)
        return dock_target{std::string(channel), std::string(v.substr(prefix.size())), "default", std::string(ascii_trim(group, kBlanks))};
    }
    return status(errc::not_found,
                  fmt::format("identity {:?} has no {} peer in session.identityLinks (add \"{}:<id>\"): nothing changed",
                              std::string(ascii_trim(group, kBlanks)), channel, channel));
  }
  return status(errc::not_found,
                fmt::format("{} is not linked to another channel (session.identityLinks): /dock-{} changed nothing",
                            qualified, channel));
}

void apply_dock(session_entry& row, const dock_target& target) {
  boost::json::object delivery{{"channel", target.channel}, {"to", target.peer_id}, {"accountId", target.account_id}};
  row.set_delivery_context(std::move(delivery));
  row.set_last_channel(target.channel);
  row.set_last_to(target.peer_id);
  row.set_last_account_id(target.account_id);
}

std::string dock_reply(const dock_target& target) {
  return fmt::format("Replies now go to {}:{} ({}).", target.channel, target.peer_id, target.group);
}

payloads::session_docked dock_payload(const dock_target& target, const std::string& previous_channel) {
  return {target.channel, target.peer_id, target.account_id, target.group, previous_channel};
}

delivery_route delivery_route_of(const session_entry& row) {
  delivery_route r;
  if (const auto* d = row.delivery_context()) {
    r.channel = std::string(json::get_string(*d, "channel").value_or(""));
    r.to = std::string(json::get_string(*d, "to").value_or(""));
    r.account_id = std::string(json::get_string(*d, "accountId").value_or(""));
    if (auto t = json::get_string(*d, "threadId")) r.thread_id = std::string(*t);
  }
  if (r.channel.empty()) r.channel = std::string(row.last_channel().value_or(""));
  if (r.to.empty()) r.to = std::string(row.last_to().value_or(""));
  if (r.account_id.empty()) r.account_id = std::string(row.last_account_id().value_or(""));
  return r;
}

}  // namespace sessionrt::actors
