// replay_normalizer: normalizeAssistantReplayContent [R§8.2 step 2], on messages in place.
// - user messages blank after removing blank text blocks are dropped;
// - transcript-only assistant mirrors (provider "openclaw", model delivery-mirror /
//   gateway-injected) are dropped;
// - NO_REPLY payload text blocks of assistants are dropped (silent_reply's payload rule);
// - reasoning-only stopReason "length" turns (nothing but thinking blocks) are dropped;
// - an assistant with no content left whose stopReason is "error", or whose usage is all
//   zero, gets the text "[assistant turn failed before producing content]";
// - trailing error sentinels (error assistants holding only that text) are popped.
// Counters go to the report. "Strip internal metadata from text" is not done (sessionrt
// never writes such metadata into assistant text).
#pragma once
#include <boost/json.hpp>

#include "actors/session/hygiene/hygiene_report.hpp"

namespace sessionrt::actors::hygiene {

inline constexpr std::string_view kFailedAssistantText = "[assistant turn failed before producing content]";

void normalize_assistant_replay(boost::json::array& messages, hygiene_report& report);

}  // namespace sessionrt::actors::hygiene
