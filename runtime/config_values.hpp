// config_values: the scalar readers behind runtime/config.hpp. Each reads one JSON value found
// at a config key path and returns the typed value, or errc::invalid_argument with the message
//   config key <path>: <what was expected>, got <what the file says>
// so a user can find and fix the key. Nothing here knows the key layout; config.cpp does.
// - whole numbers: JSON numbers with no fraction (1e3 counts), within [min, max]; max is at
//   most 2^53-1 so every accepted value prints back exactly;
// - byte sizes: a whole number of bytes, or a string "<number><unit>" with the unit b, k/kb/kib,
//   m/mb/mib, g/gb/gib, t/tb/tib (any case, 1024-based as OpenClaw's parseByteSize: "2mb" is
//   2097152; space before the unit allowed, a bare digit string is bytes);
// - durations: a whole number of milliseconds, or a string "<number><unit>" with the unit
//   ms, s, m, h, d ("30s", "10m", "24h", "7d", "1.5h"; a bare digit string is milliseconds);
//   "Infinity" only where the caller allows it.
#pragma once
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt::runtime {

inline constexpr std::int64_t max_config_integer = 9007199254740991;  // 2^53 - 1

// "config key <path>: <reason>" as errc::invalid_argument.
status config_key_error(std::string_view path, std::string_view reason);
// How a value is shown after "got": strings quoted (long ones cut), numbers and literals as
// JSON writes them, "an object" / "an array".
std::string describe_json_value(const boost::json::value& value);
// "session" + "reset" -> "session.reset"; a key that is not [A-Za-z0-9_$-]+ is written
// ["quoted"]; an empty parent gives the key alone.
std::string child_key_path(std::string_view parent, std::string_view key);
std::string item_key_path(std::string_view parent, std::size_t index);  // "bindings[2]"

// Text parsers (no key path): nullopt when the text is not of the form, or out of range.
std::optional<std::int64_t> parse_byte_size(std::string_view text);
std::optional<std::int64_t> parse_duration_ms(std::string_view text);

result<bool> read_bool(const boost::json::value& value, std::string_view path);
result<std::string> read_string(const boost::json::value& value, std::string_view path);
// A string that is not empty after trimming ASCII white space (kept as written).
result<std::string> read_non_empty_string(const boost::json::value& value, std::string_view path);
result<std::vector<std::string>> read_string_list(const boost::json::value& value, std::string_view path);
// A finite JSON number of at least `min` (fractions allowed).
result<double> read_number(const boost::json::value& value, std::string_view path, double min);
result<std::int64_t> read_whole_number(const boost::json::value& value, std::string_view path, std::int64_t min,
                                       std::int64_t max = max_config_integer);
result<std::int64_t> read_byte_size(const boost::json::value& value, std::string_view path, std::int64_t min);
// `infinity` (when set) is returned for the string "Infinity".
result<std::int64_t> read_duration_ms(const boost::json::value& value, std::string_view path, std::int64_t min,
                                      std::optional<std::int64_t> infinity = std::nullopt);

// A string `parse` accepts (the rule module's own parser decides trimming and case); the
// error lists `names`.
template <class Enum>
result<Enum> read_enum(const boost::json::value& value, std::string_view path,
                       std::optional<Enum> (*parse)(std::string_view), std::string_view names) {
  std::optional<Enum> parsed;
  if (value.is_string()) parsed = parse(value.get_string());
  if (parsed) return *parsed;
  return config_key_error(path, "expected one of " + std::string(names) + ", got " + describe_json_value(value));
}

// Edit distance over ASCII-lowercased text (optimal string alignment: a swap of neighbours is one edit).
std::size_t key_distance(std::string_view a, std::string_view b);
// The known key closest to `key` when it is close enough to be a likely typo: distance at
// most max(1, min(3, size/3)), or one key is the start of the other (4+ characters, as
// "softThreshold" for "softThresholdTokens"). The first of equally close keys.
std::optional<std::string_view> closest_key(std::string_view key, std::span<const std::string_view> known);

}  // namespace sessionrt::runtime
