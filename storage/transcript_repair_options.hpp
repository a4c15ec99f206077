// repair_options: the knobs shared by the transcript repair (transcript_repair.hpp) and the
// damage scan that decides whether it runs (transcript_damage_scan.hpp). Both must read a file
// under the same bounds, or the scan could pass a line the repair would drop, so they share one
// struct. Plain values; a default-constructed one is what an open for a run uses.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "messages/json_reader.hpp"

namespace sessionrt::storage {

struct repair_options {
  // Whole-file bound for repair_transcript_file; the error names it.
  std::size_t max_file_bytes = std::size_t(512) << 20;
  // Per-line bound; a line over it is dropped as malformed with a reason naming the limit.
  json::parse_limits line_limits{};
  // Source of the uuid in "repair-<uuid>" ids of inserted tool results (default new_uuid_v4).
  std::function<std::string()> new_uuid;
  // Shown in summary() as "(<file>)"; repair_transcript_file sets it to the file's basename.
  std::string file_label;
};

}  // namespace sessionrt::storage
