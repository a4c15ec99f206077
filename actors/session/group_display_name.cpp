#include "actors/session/group_display_name.hpp"

#include "messages/ascii_text.hpp"

namespace sessionrt::actors {
namespace {

bool kept(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '#' || c == '@' || c == '.' || c == '_' ||
         c == '+' || c == '-';
}

// normalizeGroupLabel (ASCII lowercasing; other bytes become '-').
std::string normalize_label(std::string_view raw) {
  std::string lowered = std::string(ascii_trim(raw));
  for (char& c : lowered)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  std::string out;
  bool dash = false;
  for (char c : lowered) {
    const char mapped = kept(c) ? c : '-';
    if (mapped == '-' && dash) continue;  // runs of blanks / other characters collapse to one dash
    dash = mapped == '-';
    out += mapped;
  }
  const auto first = out.find_first_not_of("-.");
  if (first == std::string::npos) return {};
  return out.substr(first, out.find_last_not_of("-.") - first + 1);
}

std::string shorten_id(std::string_view value) {
  std::string t = std::string(ascii_trim(value));
  if (t.size() <= 14) return t;
  return t.substr(0, 6) + "..." + t.substr(t.size() - 4);
}

}  // namespace

std::string group_display_name(std::string_view channel, std::string_view subject, std::string_view group_id) {
  std::string provider = normalize_label(channel);
  if (provider.empty()) provider = "group";
  const std::string detail = std::string(ascii_trim(subject));
  const std::string raw = detail.empty() ? std::string(ascii_trim(group_id)) : detail;
  std::string token = normalize_label(raw);
  if (token.empty()) token = normalize_label(shorten_id(raw));
  while (!token.empty() && token.front() == '#') token.erase(0, 1);  // no groupChannel: a leading '#' goes
  if (!token.empty() && token.front() != '@' && token.front() != '#' && token.rfind("g-", 0) != 0 &&
      token.find('#') == std::string::npos)
    token = "g-" + token;
  return token.empty() ? provider : provider + ":" + token;
}

}  // namespace sessionrt::actors
