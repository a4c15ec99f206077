// store_migration: sessions.json text to rows, migrated and normalized as OpenClaw does on load
// [R§2.3]. Kept apart from session_store_file (which owns the file: reads, saves, hand edits)
// because it is pure (no I/O, no clock) and is the one place the legacy field rules live; the
// file's load, a hand edit's reload, the salvage of a temp file and `check` all go through it,
// so a row reads the same whichever way it came in. Every change it makes is listed, none is
// silent: a caller that reports nothing still gets the list.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "messages/json_reader.hpp"
#include "messages/status.hpp"
#include "storage/session_store.hpp"

namespace sessionrt::storage {

// One change made (or, for check_store_file, that would be made) to the text of the file.
struct store_change {
  std::string key;   // the sessionKey ("" for the whole file); in recovery notes, the file path
  std::string what;  // "removed the entry", "renamed provider to channel", ...
  std::string why;
};

struct parsed_store {
  session_store store;
  bool trailing_newline = false;
  std::vector<store_change> changes;
};

// Parses, migrates and normalizes sessions.json text. Errors: errc::corrupt (does not parse,
// empty, not an object), errc::limit_exceeded (bytes or depth; the message names the limit).
result<parsed_store> load_from_text(std::string_view text, const json::parse_limits& limits = {});

}  // namespace sessionrt::storage
