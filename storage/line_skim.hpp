// line_skim: the few fields of a transcript line that indexing needs — type, id, parentId,
// message role, leaf-control target, side-append flag — read without building a JSON tree.
// Lines written by pi / OpenClaw / sessionrt start with {"type":..,"id":..,"parentId":..,
// "timestamp":..}, so a prefix match reads them in a few dozen byte comparisons; any other
// shape (custom entries put their payload first, escapes inside ids, unusual spacing) falls
// back to a full parse of that one line. The views point into the line passed in.
#pragma once
#include <boost/json/object.hpp>
#include <optional>
#include <string_view>

#include "messages/transcript_entry.hpp"

namespace sessionrt::storage {

struct line_skeleton {
  entry_type type = entry_type::unknown;
  std::string_view id;                       // empty when the line has no string id
  std::optional<std::string_view> parent_id;  // nullopt for null / absent
  std::string_view role;                     // message.role for message entries (may be empty)
  std::optional<std::string_view> target_id;  // leaf controls: targetId (nullopt = null)
  bool side = false;                         // appendMode == "side": does not move the leaf
};

// Returns false when the line is not a JSON object (malformed); `out` is then unspecified.
// Views may point into `scratch` (kept alive by the caller) when a full parse was needed.
bool skim_line(std::string_view line, line_skeleton& out, boost::json::object& scratch);

// The same fields from an already parsed line.
line_skeleton skeleton_of(const boost::json::object& line);

}  // namespace sessionrt::storage
