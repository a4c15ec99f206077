// group_display_name: the displayName OpenClaw gives a group session's row
// (buildGroupDisplayName, [R§4.3] "group metadata patch"): "<channel>:<token>", where the token
// is the group's subject (or its id when there is none, shortened past 14 characters to
// "abcdef...wxyz") lowercased, blanks to '-', other characters outside [a-z0-9#@._+-] to '-',
// dashes collapsed and trimmed, and prefixed "g-" unless it starts with '@', '#' or "g-" or
// holds a '#'. Pure.
#pragma once
#include <string>
#include <string_view>

namespace sessionrt::actors {

std::string group_display_name(std::string_view channel, std::string_view subject, std::string_view group_id);

}  // namespace sessionrt::actors
