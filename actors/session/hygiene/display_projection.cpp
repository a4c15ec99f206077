#include "actors/session/hygiene/display_projection.hpp"

#include "messages/transcript_entry.hpp"

#include <cctype>

#include "actors/session/hygiene/provenance_marker.hpp"
#include "actors/session/hygiene/replay_message.hpp"

namespace sessionrt::actors::hygiene {
namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string_view skip_blank_lines(std::string_view t) {
  std::size_t k = 0;
  while (k < t.size() && (t[k] == ' ' || t[k] == '\t' || t[k] == '\n' || t[k] == '\r')) ++k;
  return t.substr(k);
}

std::string_view first_line(std::string_view t) {
  auto nl = t.find('\n');
  auto line = t.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string_view after_line(std::string_view t) {
  auto nl = t.find('\n');
  return nl == std::string_view::npos ? std::string_view() : t.substr(nl + 1);
}

// "[Www YYYY-MM-DD HH:MM<anything but ']'>] "
std::size_t envelope_length(std::string_view t) {
  if (t.size() < 22 || t[0] != '[') return 0;
  if (!std::isupper(static_cast<unsigned char>(t[1])) || !std::islower(static_cast<unsigned char>(t[2])) ||
      !std::islower(static_cast<unsigned char>(t[3])) || t[4] != ' ')
    return 0;
  const std::string_view d = t.substr(5, 16);  // YYYY-MM-DD HH:MM
  const char* shape = "dddd-dd-dd dd:dd";
  for (std::size_t k = 0; k < 16; ++k)
    if (shape[k] == 'd' ? !digit(d[k]) : d[k] != shape[k]) return 0;
  auto close = t.find(']', 21);
  auto nl = t.find('\n');
  if (close == std::string_view::npos || (nl != std::string_view::npos && nl < close)) return 0;
  std::size_t end = close + 1;
  while (end < t.size() && t[end] == ' ') ++end;
  return end;
}

// "<Label> (untrusted ...):" or "Untrusted context (metadata...):"
bool is_metadata_label(std::string_view line) {
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  if (line.size() < 4 || line.back() != ':' || line[line.size() - 2] != ')') return false;
  if (line.rfind("Untrusted context (", 0) == 0) return true;
  const auto open = line.rfind('(');
  if (open == std::string_view::npos || open == 0) return false;
  const auto inside = line.substr(open + 1);
  if (inside.rfind("untrusted", 0) != 0) return false;
  if (!std::isupper(static_cast<unsigned char>(line[0]))) return false;
  return line.find('\n') == std::string_view::npos;
}

// The metadata block after its label line: a fenced block, or lines up to a blank line.
std::string_view skip_metadata_body(std::string_view t) {
  if (first_line(t).rfind("```", 0) == 0) {
    t = after_line(t);
    while (!t.empty() && first_line(t).rfind("```", 0) != 0) t = after_line(t);
    return after_line(t);
  }
  while (!t.empty() && !first_line(t).empty()) t = after_line(t);
  return t;
}

}  // namespace

std::string strip_runtime_wrappers(std::string_view text) {
  std::string_view t = text;
  bool stripped = false;
  for (;;) {
    std::string_view s = skip_blank_lines(t);
    if (auto n = envelope_length(s)) {
      t = s.substr(n);
      stripped = true;
      continue;
    }
    const auto line = first_line(s);
    if (is_metadata_label(line)) {
      t = skip_metadata_body(after_line(s));
      stripped = true;
      continue;
    }
    if (line.rfind("System: ", 0) == 0) {
      t = after_line(s);
      stripped = true;
      continue;
    }
    if (line.rfind(kInterSessionHeader, 0) == 0) {
      s = after_line(s);
      if (first_line(s).rfind("This content was routed by OpenClaw", 0) == 0) s = after_line(s);
      t = s;
      stripped = true;
      continue;
    }
    if (stripped) t = s;
    break;
  }
  return std::string(t);
}

boost::json::object display_message(const boost::json::object& message) {
  boost::json::object out = message;
  if (string_field(out, "role") != "user") return out;
  auto* content = out.if_contains("content");
  if (!content) return out;
  if (content->is_string()) {
    *content = strip_runtime_wrappers(content->get_string());
    return out;
  }
  if (!content->is_array()) return out;
  auto& blocks = content->get_array();
  for (std::size_t k = blocks.size(); k-- > 0;) {
    if (block_type(blocks[k]) != "text") continue;
    auto* t = blocks[k].get_object().if_contains("text");
    if (!t || !t->is_string()) continue;
    std::string projected = strip_runtime_wrappers(t->get_string());
    if (projected.empty() && !t->get_string().empty()) {
      blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(k));
      continue;
    }
    *t = projected;
  }
  return out;
}

boost::json::array display_messages(const boost::json::array& messages) {
  boost::json::array out;
  out.reserve(messages.size());
  for (const auto& m : messages) out.push_back(m.is_object() ? boost::json::value(display_message(m.get_object())) : m);
  return out;
}

std::optional<std::string> display_title(const boost::json::object& user_message, std::size_t max_chars) {
  const std::string shown = strip_runtime_wrappers(message_text(user_message.if_contains("content"), " "));
  std::string line;
  for (char c : shown) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.empty() || line.front() == '/') return std::nullopt;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && chars++ == max_chars) return line.substr(0, i) + "\u2026";
  return line;
}

}  // namespace sessionrt::actors::hygiene
