// Epoch-milliseconds <-> the timestamp strings of the file formats.
// Entry timestamps are JavaScript's Date.prototype.toISOString(): "2026-11-30T01:34:35.417Z".
// Archive suffixes use the same text with ':' replaced by '-' ("2026-11-30T01-34-35.417Z").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sessionrt {

void append_iso_ms(std::string& out, std::int64_t epoch_ms);
std::string format_iso_ms(std::int64_t epoch_ms);

// Parses what Date.parse accepts of ISO-8601: "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS[.fff…]]"
// followed by "Z", "±HH:MM" or nothing (read as UTC). Returns nullopt for anything else
// (where JavaScript would give NaN).
std::optional<std::int64_t> parse_iso_ms(std::string_view text);

// format_iso_ms with ':' -> '-' (archive names), and its inverse recognizer.
std::string format_archive_ts(std::int64_t epoch_ms);
std::optional<std::int64_t> parse_archive_ts(std::string_view text);

}  // namespace sessionrt
