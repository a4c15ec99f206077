// display_projection: a stored user turn as a person should see it [SPEC §5]. Runtime-only
// prompt context is never stored by sessionrt, but older transcripts (OpenClaw's) stored it
// in front of the user's words; wherever history is shown (/context list, a gateway's
// history) this removes it. Recognized at the start of the text, repeatedly, in any order:
// - inbound metadata blocks: a line "<Label> (untrusted metadata):" or "<Label> (untrusted,
//   ...):" (Conversation info, Sender, Thread starter, Replied message, Chat history since
//   last reply, ...) followed by a ```json fenced block, or by lines up to a blank line;
//   "Untrusted context (metadata, ...):" blocks the same way;
// - timestamp envelopes "[Thu 2026-04-09 14:48 GMT+8] ";
// - "System: ..." event lines;
// - the inter-session marker (its two lines, provenance_marker.hpp).
// Text that starts with none of these is returned unchanged. Pure; never touches storage.
#pragma once
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace sessionrt::actors::hygiene {

std::string strip_runtime_wrappers(std::string_view text);

// The message for display: user turns get their string content / text blocks projected
// (text blocks left empty are removed); other roles are returned as they are.
boost::json::object display_message(const boost::json::object& message);
// A user message as a one-line title: its text as shown (strip_runtime_wrappers), white space
// collapsed, cut to `max_chars` code points with "…"; nullopt for a blank one or a /command.
std::optional<std::string> display_title(const boost::json::object& user_message, std::size_t max_chars = 60);
boost::json::array display_messages(const boost::json::array& messages);

}  // namespace sessionrt::actors::hygiene
