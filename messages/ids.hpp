// Identifiers of the file formats.
// - session ids: UUID v4, lowercase ("3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44"), as OpenClaw writes;
// - entry ids: the first 8 hex chars of a UUID v4, as pi's generateId (uniqueness within a
//   file is the caller's job: it knows the file's ids);
// - validators for ids that come from outside and may end up in a path.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sessionrt {

// Where new session ids come from: random UUID v4s (the default), or, with a seed, UUIDs of
// version 4's form derived from the seed and what the id is for (the session key, the time, the
// id it replaces, why). A simulation that replays the same events then gets the same ids on
// every run, so file names, and the name order maintenance breaks ties with, match too; random
// draws would follow the threads' interleaving.
class session_ids {
 public:
  session_ids() = default;  // random
  explicit session_ids(std::optional<std::uint64_t> seed) : seed_(seed) {}
  std::string next(std::string_view session_key, std::int64_t now_ms, std::string_view previous_id,
                   std::string_view purpose) const;

 private:
  std::optional<std::uint64_t> seed_;
};

std::string new_uuid_v4();
std::string new_session_id();  // == new_uuid_v4()
std::string new_entry_id();    // 8 lowercase hex chars

// ^[A-Za-z0-9][A-Za-z0-9._:@-]*$, at most 255 chars ("safe" session id of the store [R§2.2]).
bool is_safe_session_id(std::string_view id);
// ^[a-z0-9][a-z0-9._-]{0,127}$ case-insensitive: an id that may be used as "<id>.jsonl".
bool is_transcript_id(std::string_view id);

}  // namespace sessionrt
