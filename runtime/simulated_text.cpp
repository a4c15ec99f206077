#include "runtime/simulated_text.hpp"

#include "messages/js_text.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::runtime {

namespace {

// Bytes of the longest prefix of `text` of at most `max_units` UTF-16 units, ending at a code point.
std::size_t prefix_bytes_within(std::string_view text, std::size_t max_units) {
  std::size_t units = 0, bytes = 0;
  while (bytes < text.size()) {
    auto cp = decode_utf8_at(text, bytes);
    std::size_t width = cp.length == 0 ? 1 : cp.length;
    std::size_t cp_units = cp.length == 4 ? 2 : 1;
    if (units + cp_units > max_units) break;
    units += cp_units;
    bytes += width;
  }
  return bytes;
}

}  // namespace

namespace sim_text {

std::int64_t tokens_of_text(std::string_view text) {
  return static_cast<std::int64_t>((utf16_length(text) + 3) / 4);
}

// `text`, or its first max_units units + "…".
std::string capped(std::string_view text, std::size_t max_units) {
  if (utf16_length(text) <= max_units) return std::string(text);
  return std::string(text.substr(0, prefix_bytes_within(text, max_units - 1))) + "…";
}

bool contains(std::string_view text, std::string_view needle) {
  return !needle.empty() && text.find(needle) != std::string_view::npos;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::string_view first_nonempty_line(std::string_view text) {
  for (auto line : lines_of(text))
    if (auto t = js_trim(line); !t.empty()) return t;
  return {};
}

}  // namespace sim_text

std::string truncate_to_tokens(std::string_view text, std::int64_t max_tokens) {
  if (max_tokens <= 0 || sim_text::tokens_of_text(text) <= max_tokens) return std::string(text);
  auto bytes = prefix_bytes_within(text, static_cast<std::size_t>(max_tokens) * 4);
  auto head = text.substr(0, bytes);
  if (auto nl = head.rfind('\n'); nl != std::string_view::npos && nl > 0) head = head.substr(0, nl);
  return std::string(head);
}

}  // namespace sessionrt::runtime
