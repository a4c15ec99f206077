#include "actors/session/queue_settings.hpp"

namespace sessionrt::actors {

std::optional<queue_mode> parse_queue_mode(std::string_view text) {
  if (text == "followup") return queue_mode::followup;
  if (text == "collect") return queue_mode::collect;
  if (text == "interrupt") return queue_mode::interrupt;
  if (text == "steer") return queue_mode::steer;
  return std::nullopt;
}

std::optional<queue_drop> parse_queue_drop(std::string_view text) {
  if (text == "old") return queue_drop::old_first;
  if (text == "new") return queue_drop::new_first;
  if (text == "summarize") return queue_drop::summarize;
  return std::nullopt;
}

std::string_view queue_mode_name(queue_mode m) {
  switch (m) {
    case queue_mode::followup: return "followup";
    case queue_mode::collect: return "collect";
    case queue_mode::interrupt: return "interrupt";
    case queue_mode::steer: return "steer";
  }
  return "followup";
}

std::string_view queue_drop_name(queue_drop d) {
  switch (d) {
    case queue_drop::old_first: return "old";
    case queue_drop::new_first: return "new";
    case queue_drop::summarize: return "summarize";
  }
  return "summarize";
}

}  // namespace sessionrt::actors
