#include "messages/chat_event.hpp"

namespace sessionrt {

const char* system_event_kind_name(system_event_kind k) {
  switch (k) {
    case system_event_kind::heartbeat: return "heartbeat";
    case system_event_kind::cron: return "cron-event";
    case system_event_kind::exec: return "exec-event";
  }
  return "heartbeat";
}

}  // namespace sessionrt
