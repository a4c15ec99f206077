#include "storage/line_skim.hpp"

#include <cstring>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"

namespace sessionrt::storage {
namespace {

// Matches `lit` at `p`; advances p on success.
bool eat(std::string_view s, std::size_t& p, std::string_view lit) {
  if (s.compare(p, lit.size(), lit) != 0) return false;
  p += lit.size();
  return true;
}

// Reads a JSON string without escapes starting after its opening quote; p ends after the
// closing quote. Fails on a backslash (the slow path handles escapes).
bool plain_string(std::string_view s, std::size_t& p, std::string_view& out) {
  const std::size_t start = p;
  const char* q = static_cast<const char*>(std::memchr(s.data() + p, '"', s.size() - p));
  if (!q) return false;
  const std::size_t end = static_cast<std::size_t>(q - s.data());
  if (std::memchr(s.data() + start, '\\', end - start)) return false;
  out = s.substr(start, end - start);
  p = end + 1;
  return true;
}

bool fast_path(std::string_view s, line_skeleton& out) {
  std::size_t p = 0;
  std::string_view type, id;
  if (!eat(s, p, "{\"type\":\"") || !plain_string(s, p, type)) return false;
  out.type = entry_type_of(type);
  if (out.type == entry_type::custom || out.type == entry_type::custom_message || out.type == entry_type::unknown ||
      out.type == entry_type::session)
    return false;
  if (!eat(s, p, ",\"id\":\"") || !plain_string(s, p, id)) return false;
  out.id = id;
  if (eat(s, p, ",\"parentId\":null")) {
    out.parent_id.reset();
  } else {
    std::string_view parent;
    if (!eat(s, p, ",\"parentId\":\"") || !plain_string(s, p, parent)) return false;
    out.parent_id = parent;
  }
  // A well-formed line ends with '}' (trailing whitespace / '\r' tolerated).
  std::size_t e = s.size();
  while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\r' || s[e - 1] == '\t')) --e;
  if (e == 0 || s[e - 1] != '}') return false;
  if (out.type == entry_type::message) {
    std::size_t q = p;
    std::string_view ts, role;
    if (eat(s, q, ",\"timestamp\":\"") && plain_string(s, q, ts) && eat(s, q, ",\"message\":{\"role\":\"") &&
        plain_string(s, q, role))
      out.role = role;
    else
      return false;
  } else if (out.type == entry_type::leaf) {
    return false;  // rare; read targetId by the slow path
  }
  // "appendMode":"side" cannot occur unescaped inside a string value; if present anywhere,
  // confirm it is top-level with the slow path.
  static constexpr std::string_view kSide = "\"appendMode\":\"side\"";
  if (memmem(s.data(), s.size(), kSide.data(), kSide.size())) return false;
  return true;
}

}  // namespace

line_skeleton skeleton_of(const boost::json::object& o) {
  line_skeleton out;
  out.type = type_of(o);
  out.id = json::get_string(o, "id").value_or(std::string_view());
  out.parent_id = json::get_string(o, "parentId");
  if (out.type == entry_type::message) out.role = role_of(o).value_or(std::string_view());
  if (out.type == entry_type::leaf) out.target_id = json::get_string(o, "targetId");
  auto mode = json::get_string(o, "appendMode");
  out.side = mode && *mode == "side";
  return out;
}

bool skim_line(std::string_view line, line_skeleton& out, boost::json::object& scratch) {
  out = line_skeleton{};
  if (fast_path(line, out)) return true;
  auto parsed = json::parse_object(line);
  if (!parsed.ok()) return false;
  scratch = std::move(*parsed);
  out = skeleton_of(scratch);
  return true;
}

}  // namespace sessionrt::storage
