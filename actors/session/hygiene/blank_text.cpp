#include "actors/session/hygiene/blank_text.hpp"

#include <algorithm>

#include "actors/session/hygiene/replay_message.hpp"

namespace sessionrt::actors::hygiene {

void drop_blank_text_blocks(boost::json::array& messages, hygiene_report& report) {
  for (auto& mv : messages) {
    auto* content = content_array(mv);
    if (!content) continue;
    const auto before = content->size();
    auto end = std::remove_if(content->begin(), content->end(), [](const boost::json::value& b) { return is_blank_text_block(b); });
    content->erase(end, content->end());
    report.blank_text_blocks_dropped += before - content->size();
  }
}

}  // namespace sessionrt::actors::hygiene
