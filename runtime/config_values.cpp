#include "runtime/config_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "messages/ascii_text.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::runtime {
namespace {

constexpr std::size_t max_shown_string_bytes = 40;

bool is_plain_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '$';
}

// "<decimal><blanks><unit>": the decimal has digits and at most one '.', no sign or exponent.
struct number_with_unit {
  double number = 0;
  std::string unit;  // lowercased; "" when absent
};

std::optional<number_with_unit> split_number_and_unit(std::string_view text) {
  text = ascii_trim(text);
  std::size_t end = 0;
  bool seen_digit = false, seen_point = false;
  for (; end < text.size(); ++end) {
    char c = text[end];
    if (c >= '0' && c <= '9') {
      seen_digit = true;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!seen_digit) return std::nullopt;
  number_with_unit out;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, out.number);
  if (ec != std::errc() || ptr != text.data() + end) return std::nullopt;
  std::string_view unit = ascii_trim(text.substr(end));
  if (!std::all_of(unit.begin(), unit.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }))
    return std::nullopt;
  out.unit = ascii_lower(unit);
  return out;
}

struct unit_factor {
  std::string_view unit;
  double factor;
};

constexpr unit_factor byte_units[] = {
    {"", 1.0},
    {"b", 1.0},
    {"k", 1024.0},
    {"kb", 1024.0},
    {"kib", 1024.0},
    {"m", 1048576.0},
    {"mb", 1048576.0},
    {"mib", 1048576.0},
    {"g", 1073741824.0},
    {"gb", 1073741824.0},
    {"gib", 1073741824.0},
    {"t", 1099511627776.0},
    {"tb", 1099511627776.0},
    {"tib", 1099511627776.0},
};

constexpr unit_factor duration_units[] = {
    {"", 1.0}, {"ms", 1.0}, {"s", 1000.0}, {"m", 60000.0}, {"h", 3600000.0}, {"d", 86400000.0},
};

std::optional<std::int64_t> scaled(std::string_view text, std::span<const unit_factor> units) {
  auto parsed = split_number_and_unit(text);
  if (!parsed) return std::nullopt;
  auto unit = std::find_if(units.begin(), units.end(), [&](const unit_factor& u) { return u.unit == parsed->unit; });
  if (unit == units.end()) return std::nullopt;
  double value = std::round(parsed->number * unit->factor);
  if (!std::isfinite(value) || value > static_cast<double>(max_config_integer)) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

std::string range_text(std::int64_t min, std::int64_t max) {
  if (max >= max_config_integer) return fmt::format(">= {}", min);
  return fmt::format("from {} to {}", min, max);
}

status below_minimum(std::string_view path, std::string_view what, std::int64_t min, const boost::json::value& value) {
  return config_key_error(path,
                          fmt::format("expected {} of at least {}, got {}", what, min, describe_json_value(value)));
}

}  // namespace

status config_key_error(std::string_view path, std::string_view reason) {
  return status(errc::invalid_argument, fmt::format("config key {}: {}", path, reason));
}

std::string describe_json_value(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::object:
      return "an object";
    case boost::json::kind::array:
      return "an array";
    case boost::json::kind::string: {
      std::string_view text = value.get_string();
      if (text.size() <= max_shown_string_bytes) return json::to_compact(value);
      std::string shown = json::to_compact(boost::json::value(utf8_prefix(text, max_shown_string_bytes)));
      shown.insert(shown.size() - 1, "…");
      return shown;
    }
    default:
      return json::to_compact(value);
  }
}

std::string child_key_path(std::string_view parent, std::string_view key) {
  bool plain = !key.empty() && std::all_of(key.begin(), key.end(), is_plain_key_char);
  if (plain) return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
  return fmt::format("{}[{}]", parent, json::to_compact(boost::json::value(key)));
}

std::string item_key_path(std::string_view parent, std::size_t index) { return fmt::format("{}[{}]", parent, index); }

std::optional<std::int64_t> parse_byte_size(std::string_view text) { return scaled(text, byte_units); }

std::optional<std::int64_t> parse_duration_ms(std::string_view text) { return scaled(text, duration_units); }

result<bool> read_bool(const boost::json::value& value, std::string_view path) {
  if (value.is_bool()) return value.get_bool();
  return config_key_error(path, "expected true or false, got " + describe_json_value(value));
}

result<std::string> read_string(const boost::json::value& value, std::string_view path) {
  if (value.is_string()) return std::string(value.get_string());
  return config_key_error(path, "expected a string, got " + describe_json_value(value));
}

result<std::string> read_non_empty_string(const boost::json::value& value, std::string_view path) {
  if (value.is_string() && !ascii_trim(value.get_string()).empty()) return std::string(value.get_string());
  return config_key_error(path, "expected a non-empty string, got " + describe_json_value(value));
}

result<std::vector<std::string>> read_string_list(const boost::json::value& value, std::string_view path) {
  if (!value.is_array())
    return config_key_error(path, "expected an array of strings, got " + describe_json_value(value));
  std::vector<std::string> out;
  const auto& items = value.get_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto text = read_string(items[i], item_key_path(path, i));
    if (!text) return std::move(text).take_error();
    out.push_back(std::move(*text));
  }
  return out;
}

result<double> read_number(const boost::json::value& value, std::string_view path, double min) {
  auto number = json::as_number(value);
  if (number && std::isfinite(*number) && *number >= min) return *number;
  return config_key_error(path, fmt::format("expected a number >= {}, got {}", min, describe_json_value(value)));
}

result<std::int64_t> read_whole_number(const boost::json::value& value, std::string_view path, std::int64_t min,
                                       std::int64_t max) {
  auto number = json::as_int(value);
  if (number && *number >= min && *number <= max) return *number;
  return config_key_error(
      path, fmt::format("expected a whole number {}, got {}", range_text(min, max), describe_json_value(value)));
}

result<std::int64_t> read_byte_size(const boost::json::value& value, std::string_view path, std::int64_t min) {
  std::optional<std::int64_t> bytes;
  if (value.is_string()) {
    bytes = parse_byte_size(value.get_string());
  } else if (auto number = json::as_int(value); number && *number >= 0 && *number <= max_config_integer) {
    bytes = number;
  }
  if (!bytes)
    return config_key_error(path,
                            "expected a byte size (a whole number of bytes, or a string such as \"500kb\", "
                            "\"2mb\", \"1gb\"), got " +
                                describe_json_value(value));
  if (*bytes < min) return below_minimum(path, "a byte size", min, value);
  return *bytes;
}

result<std::int64_t> read_duration_ms(const boost::json::value& value, std::string_view path, std::int64_t min,
                                      std::optional<std::int64_t> infinity) {
  std::optional<std::int64_t> ms;
  if (value.is_string()) {
    if (infinity && ascii_trim(value.get_string()) == "Infinity") return *infinity;
    ms = parse_duration_ms(value.get_string());
  } else if (auto number = json::as_int(value); number && *number >= 0 && *number <= max_config_integer) {
    ms = number;
  }
  if (!ms)
    return config_key_error(path, fmt::format("expected a duration (whole milliseconds, or a string such as \"30s\", "
                                              "\"10m\", \"24h\", \"7d\"{}), got {}",
                                              infinity ? ", or \"Infinity\"" : "", describe_json_value(value)));
  if (*ms < min) return below_minimum(path, "a duration in milliseconds", min, value);
  return *ms;
}

std::size_t key_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: three rows, for the swap of two neighbours ("stauts").
  auto same = [](char x, char y) { return ascii_lower_char(x) == ascii_lower_char(y); };
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

namespace {
// "softThreshold" for "softThresholdTokens": one is the start of the other, 4+ characters.
bool is_truncation(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  return a.size() >= 4 && key_distance(a, b.substr(0, a.size())) == 0;
}
}  // namespace

std::optional<std::string_view> closest_key(std::string_view key, std::span<const std::string_view> known) {
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, key.size() / 3));
  std::optional<std::string_view> best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : known) {
    std::size_t distance = key_distance(key, candidate);
    if (distance > limit && !is_truncation(key, candidate)) continue;
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace sessionrt::runtime
