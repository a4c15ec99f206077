// tool_call_ids: tool-call id sanitizing [R§8.4] (src/agents/tool-call-id.ts).
// - sanitize_tool_call_id: strict = letters and digits only (Kimi "functions.<name>:<n>" ids
//   kept), "sanitizedtoolid" when nothing is left, "defaulttoolid" when there is no id;
//   strict9 = exactly 9 letters/digits (the first 9, or sha256 hex of what is left, or of
//   "sanitized"), "defaultid" when there is no id.
// - rewrite_tool_call_ids: the whole-context, occurrence-aware rewrite. The n-th repeat
//   (n >= 1) of a raw id among assistant calls is seeded "<id>:<n>", so every occurrence gets
//   its own id (lesson of OpenClaw #109443); toolResults take the pending ids of their raw id
//   first-in first-out, a further result for an already answered raw id takes that id's last
//   mapping (so the pairing repair sees it as the duplicate, or the real result replacing a
//   synthetic one, that it is), and a result for a raw id no call has is seeded
//   "<id>:tool_result:<n>". Ids are unique over the context: strict ids at most 40
//   characters (a used one gets sha256(id)[0:8], then "x2".."x999", then "t<n>"), strict9 ids
//   9 characters (sha256(id:i)[0:9] for i < 1000, then sha256(id:t<n>)). Where the reference
//   uses Date.now() this uses a counter, so the output is deterministic.
//   Every id field present on a toolResult is rewritten to the same value.
// SHA-256 is OpenSSL's. Pure; the report counts ids that changed.
#pragma once
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "actors/session/hygiene/hygiene_report.hpp"
#include "actors/session/hygiene/transcript_policy.hpp"

namespace sessionrt::actors::hygiene {

std::string sha256_hex(std::string_view data);
std::string sanitize_tool_call_id(std::optional<std::string_view> id, tool_call_id_mode mode);
// Whether `id` is acceptable as it is for the mode (what the rewrite produces).
bool is_valid_tool_call_id(std::string_view id, tool_call_id_mode mode);

void rewrite_tool_call_ids(boost::json::array& messages, const transcript_policy& policy, hygiene_report& report);

}  // namespace sessionrt::actors::hygiene
