// route_facts: what the router learned about the chat an event came from, handed to the
// session with the event (actors/router/event_routing derives it; the session uses it for the
// row's delivery fields and for the reset type).
#pragma once
#include <string>

namespace sessionrt::actors {

struct route_facts {
  std::string channel, account_id;
  std::string chat_type = "direct";  // direct | group | channel
  std::string peer_id;
  std::string thread_id;
  bool is_group = false, is_thread = false;
};

}  // namespace sessionrt::actors
