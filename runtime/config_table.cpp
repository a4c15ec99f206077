#include "runtime/config_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sessionrt::runtime::config_table {

bj::value number_json(double number) {
  if (std::isfinite(number) && std::trunc(number) == number &&
      std::fabs(number) <= static_cast<double>(max_config_integer))
    return static_cast<std::int64_t>(number);
  return number;
}

bj::value size_json(std::uint64_t number) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(number, INT64_MAX));
}

bj::array strings_json(const std::vector<std::string>& texts) {
  bj::array out;
  for (const auto& text : texts) out.emplace_back(text);
  return out;
}

std::string duration_text(std::int64_t ms) {
  constexpr std::int64_t day = 24LL * 3600 * 1000;
  constexpr std::pair<std::int64_t, const char*> units[] = {{day, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}};
  for (const auto& [size, unit] : units)
    if (ms > 0 && ms % size == 0) return fmt::format("{}{}", ms / size, unit);
  return fmt::format("{}ms", ms);
}

status missing_key(const std::string& parent, std::string_view key, std::string_view what) {
  return config_key_error(child_key_path(parent, key), fmt::format("is required ({})", what));
}

void key_walk::warn_unknown(const std::string& parent, std::string_view key, std::span<const std::string_view> known) {
  std::string warning = "unknown config key " + child_key_path(parent, key);
  if (auto suggestion = closest_key(key, known)) {
    warning += " (did you mean " + child_key_path(parent, *suggestion) + "?)";  // a typo: always its own line
  } else {
    unused_keys.push_back(child_key_path(parent, key));
    unused_lines.push_back(warnings.size());
  }
  warnings.push_back(std::move(warning));
}

void key_walk::fold_unused() {
  if (unused_keys.size() <= kUnusedKeysListed) return;
  for (auto it = unused_lines.rbegin(); it != unused_lines.rend(); ++it)
    warnings.erase(warnings.begin() + static_cast<std::ptrdiff_t>(*it));
  std::string first;
  for (std::size_t i = 0; i < 5 && i < unused_keys.size(); ++i) first += (i ? ", " : "") + unused_keys[i];
  warnings.push_back(fmt::format("{} config keys sessionrt does not use are ignored: {}{}", unused_keys.size(), first,
                                 unused_keys.size() > 5 ? ", ..." : ""));
}

// ---- kinds' names ---------------------------------------------------------------------------------

std::string whole::type() const {
  if (max == max_config_integer) return fmt::format("whole >= {}", min);
  return fmt::format("whole {}..{}", min, max);
}
std::string whole::note() const {
  return "a JSON number without a fraction (1e3 counts), at most 2^53-1 (9007199254740991)";
}

std::string number::type() const { return fmt::format("number >= {}", min); }

std::string bytes::type() const { return fmt::format("bytes >= {}", min); }
std::string bytes::note() const {
  return "a whole number of bytes, or a string with a unit, 1024-based and in any case: b, k / kb / kib, m / mb / "
         "mib, g / gb / gib, t / tb / tib (\"500kb\", \"2mb\" = 2097152; a bare digit string is bytes)";
}

std::string millis::type() const {
  return fmt::format("ms >= {}{}", min, infinity ? " or \"Infinity\"" : "");
}
std::string millis::note() const {
  return "whole milliseconds, or a string with a unit: ms, s, m, h, d (\"30s\", \"10m\", \"24h\", \"7d\", "
         "\"1.5h\"; a bare digit string is milliseconds)";
}

// ---- documentation --------------------------------------------------------------------------------

bool docs::has_shape(std::string_view name) const {
  return std::any_of(shapes.begin(), shapes.end(), [&](const doc_shape& s) { return s.name == name; });
}

void docs::note_type(const std::string& type, const std::string& note) {
  if (note.empty()) return;
  for (const auto& [t, n] : type_notes)
    if (t == type) return;
  // ms >= 0 and ms >= 1 say the same: one note per kind of value, under its first word.
  std::string word = type.substr(0, type.find(' '));
  for (const auto& [t, n] : type_notes)
    if (t == word) return;
  type_notes.emplace_back(word, note);
}

namespace {

// A markdown table cell: no line breaks, and a literal | escaped.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

void table(std::string& out, const std::vector<doc_line>& lines) {
  out += "| key | type | default | meaning |\n| --- | --- | --- | --- |\n";
  for (const auto& l : lines)
    out += fmt::format("| `{}` | {} | {} | {} |\n", cell(l.key), cell(l.type), cell(l.default_value), cell(l.meaning));
}

}  // namespace

std::string render_markdown(const docs& d, std::string_view preface) {
  std::string out(preface);
  out += "\n## Keys\n\n";
  table(out, d.lines);
  if (!d.shapes.empty()) out += "\n## Nested objects\n";
  for (const auto& s : d.shapes) {
    out += fmt::format("\n### {}\n\n", s.name);
    if (!s.note.empty()) out += s.note + "\n\n";
    table(out, s.lines);
  }
  if (!d.type_notes.empty()) out += "\n## Values\n\n";
  for (const auto& [type, note] : d.type_notes) out += fmt::format("- {}: {}\n", type, note);
  return out;
}

}  // namespace sessionrt::runtime::config_table
