#include "messages/iso_time.hpp"

#include <date/date.h>

#include <chrono>

namespace sessionrt {
namespace {

void put2(std::string& out, unsigned v) {
  out += static_cast<char>('0' + v / 10);
  out += static_cast<char>('0' + v % 10);
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

void append_iso_ms(std::string& out, std::int64_t epoch_ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> tp{milliseconds{epoch_ms}};
  const auto day = floor<days>(tp);
  const date::year_month_day ymd{day};
  auto ms_of_day = (tp - day).count();
  int y = static_cast<int>(ymd.year());
  if (y < 0 || y > 9999) {  // JavaScript writes expanded years as ±YYYYYY
    out += y < 0 ? '-' : '+';
    int ay = y < 0 ? -y : y;
    char b[7];
    for (int i = 5; i >= 0; --i, ay /= 10) b[i] = static_cast<char>('0' + ay % 10);
    out.append(b, 6);
  } else {
    char b[4];
    for (int i = 3; i >= 0; --i, y /= 10) b[i] = static_cast<char>('0' + y % 10);
    out.append(b, 4);
  }
  out += '-';
  put2(out, static_cast<unsigned>(ymd.month()));
  out += '-';
  put2(out, static_cast<unsigned>(ymd.day()));
  out += 'T';
  put2(out, static_cast<unsigned>(ms_of_day / 3600000));
  out += ':';
  put2(out, static_cast<unsigned>(ms_of_day / 60000 % 60));
  out += ':';
  put2(out, static_cast<unsigned>(ms_of_day / 1000 % 60));
  out += '.';
  const auto ms = static_cast<unsigned>(ms_of_day % 1000);
  out += static_cast<char>('0' + ms / 100);
  put2(out, ms % 100);
  out += 'Z';
}

std::string format_iso_ms(std::int64_t epoch_ms) {
  std::string s;
  s.reserve(24);
  append_iso_ms(s, epoch_ms);
  return s;
}

std::optional<std::int64_t> parse_iso_ms(std::string_view s) {
  int y, mo, d;
  if (!digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' || !digits(s, 8, 2, d))
    return std::nullopt;
  int h = 0, mi = 0, sec = 0, ms = 0;
  std::size_t p = 10;
  std::int64_t offset_min = 0;
  if (p < s.size()) {
    if (s[p] != 'T' && s[p] != 't') return std::nullopt;
    if (!digits(s, p + 1, 2, h) || p + 3 >= s.size() || s[p + 3] != ':' || !digits(s, p + 4, 2, mi)) return std::nullopt;
    p += 6;
    if (p < s.size() && s[p] == ':') {
      if (!digits(s, p + 1, 2, sec)) return std::nullopt;
      p += 3;
      if (p < s.size() && s[p] == '.') {
        ++p;
        std::size_t start = p;
        int scale = 100;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
          ms += (s[p] - '0') * scale;
          scale /= 10;
          ++p;
        }
        if (p == start) return std::nullopt;
      }
    }
    if (p < s.size()) {
      if ((s[p] == 'Z' || s[p] == 'z') && p + 1 == s.size()) {
        ++p;
      } else if ((s[p] == '+' || s[p] == '-') && p + 6 == s.size() && s[p + 3] == ':') {
        int oh, om;
        if (!digits(s, p + 1, 2, oh) || !digits(s, p + 4, 2, om) || oh > 23 || om > 59) return std::nullopt;
        offset_min = (oh * 60 + om) * (s[p] == '+' ? 1 : -1);
        p = s.size();
      } else {
        return std::nullopt;
      }
    }
  }
  if (mo < 1 || mo > 12 || d < 1 || h > 24 || mi > 59 || sec > 59 || (h == 24 && (mi || sec || ms))) return std::nullopt;
  const date::year_month_day ymd{date::year{y}, date::month{static_cast<unsigned>(mo)}, date::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  const auto days = date::sys_days{ymd}.time_since_epoch().count();
  return static_cast<std::int64_t>(days) * 86400000 + h * 3600000LL + mi * 60000LL + sec * 1000LL + ms -
         offset_min * 60000;
}

std::string format_archive_ts(std::int64_t epoch_ms) {
  std::string s = format_iso_ms(epoch_ms);
  for (char& c : s)
    if (c == ':') c = '-';
  return s;
}

std::optional<std::int64_t> parse_archive_ts(std::string_view text) {
  // ^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{3})?Z$
  if (text.size() != 20 && text.size() != 24) return std::nullopt;
  std::string iso(text);
  if (iso[10] != 'T' || iso[13] != '-' || iso[16] != '-' || iso.back() != 'Z') return std::nullopt;
  if (iso.size() == 24 && iso[19] != '.') return std::nullopt;
  iso[13] = ':';
  iso[16] = ':';
  return parse_iso_ms(iso);
}

}  // namespace sessionrt
