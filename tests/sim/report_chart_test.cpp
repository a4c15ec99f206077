#include "sim/report_chart.hpp"

#include <date/tz.h>

#include <catch2/catch.hpp>
#include <regex>
#include <string>

using namespace sessionrt::sim;

namespace {
constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;
constexpr std::int64_t kStartMs = 1'774'566'000'000;  // 2026-03-27T00:00 CET

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}
}  // namespace

TEST_CASE("report chart: round ticks cover the range with 1/2/2.5/5 steps") {
  CHECK(round_ticks(0, 37) == std::vector<double>{0, 10, 20, 30, 40});
  CHECK(round_ticks(0, 9'000'000) == std::vector<double>{0, 2.5e6, 5e6, 7.5e6, 1e7});
  CHECK(round_ticks(0, 3) == std::vector<double>{0, 1, 2, 3});
  CHECK(round_ticks(0, 0) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(round_ticks(-12, 30) == std::vector<double>{-20, 0, 20, 40});
  for (double hi : {0.7, 7.0, 13.0, 99.0, 101.0, 12345.0, 9.9e8}) {
    auto t = round_ticks(0, hi);
    INFO(hi);
    CHECK(t.front() == 0);
    CHECK(t.back() >= hi);
    CHECK(t.size() >= 3);
    CHECK(t.size() <= 6);
  }
}

TEST_CASE("report chart: short numbers and escaping") {
  CHECK(short_number(950) == "950");
  CHECK(short_number(12500) == "12.5k");
  CHECK(short_number(9'000'000) == "9M");
  CHECK(short_number(2.5) == "2.5");
  CHECK(html_escape(R"(<a href="x">&'</a>)") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
}

TEST_CASE("report chart: day lines at local midnights, across DST, labelled on a stride") {
  const date::time_zone* berlin = date::locate_zone("Europe/Berlin");
  chart_spec c{"x", "X", "", true, {{"a", {{kStartMs, 1}}}}, {}};
  std::string three = render_chart_svg(c, {kStartMs, kStartMs + 3 * kDayMs - kHourMs, berlin}, {});
  // Mar 27, 28, 29 (the 29th has 23 hours: the span ends at Mar 30 00:00 CEST).
  CHECK(count_of(three, "class=\"day\"") == 4);
  CHECK(three.find(">Mar 30<") != std::string::npos);
  std::string month = render_chart_svg(c, {kStartMs, kStartMs + 30 * kDayMs, berlin}, {});
  CHECK(count_of(month, "class=\"day") == 31);
  CHECK(count_of(month, "class=\"day\"") <= 10);
  CHECK(count_of(month, "class=\"day\"") >= 7);
  // Under two days: 6-hour ticks in local time.
  std::string day = render_chart_svg(c, {kStartMs, kStartMs + kDayMs, berlin}, {});
  CHECK(day.find(">06:00<") != std::string::npos);
  CHECK(day.find(">18:00<") != std::string::npos);
}

TEST_CASE("report chart: stacked bars stack, zero series draw nothing, lines go through every point") {
  chart_spec bars{"b", "B", "", true,
                  {{"low", {{kStartMs, 2}, {kStartMs + kHourMs, 0}}}, {"high", {{kStartMs, 2}, {kStartMs + kHourMs, 4}}}, {"none", {{kStartMs, 0}}}},
                  {{"cap", 5}}};
  std::string svg = render_chart_svg(bars, {kStartMs, kStartMs + 2 * kHourMs, nullptr}, {});
  std::regex path(R"re(<path class="series s(\d)"[^>]* d="([^"]*)")re");
  std::vector<std::string> ds;
  for (std::sregex_iterator it(svg.begin(), svg.end(), path), end; it != end; ++it) ds.push_back((*it)[2]);
  REQUIRE(ds.size() == 2);  // "none" has no bar
  CHECK(count_of(ds[0], "Z") == 1);  // low: one non-zero bucket
  CHECK(count_of(ds[1], "Z") == 2);
  // The limit (5) sets the top: the next round tick above it.
  CHECK(svg.find(">6</text>") != std::string::npos);
  CHECK(svg.find("cap 5") != std::string::npos);

  chart_spec line{"l", "L", "", false, {{"p99", {{kStartMs + 2 * kHourMs, 3}, {kStartMs, 1}, {kStartMs + kHourMs, 2}}}}, {}};
  std::string lsvg = render_chart_svg(line, {kStartMs, kStartMs + 2 * kHourMs, nullptr}, {});
  std::smatch m;
  REQUIRE(std::regex_search(lsvg, m, std::regex(R"re(<path class="series line s0"[^>]* d="([^"]*)")re")));
  std::string d = m[1];
  CHECK(d.rfind("M60 ", 0) == 0);  // the earliest point first, at the left edge
  CHECK(count_of(d, "L") == 2);
}

TEST_CASE("report chart: marks outside the plot are clamped to its edges") {
  chart_spec c{"x", "X", "", false, {{"a", {{kStartMs, 1}, {kStartMs + kHourMs, 1}}}}, {}};
  std::vector<chart_mark> marks{{kStartMs - kDayMs, kStartMs + 10 * kDayMs, false, "long fault"}};
  std::string svg = render_chart_svg(c, {kStartMs, kStartMs + kHourMs, nullptr}, marks);
  CHECK(svg.find(R"(<rect class="mark-span" x="60" y="22" width="882")") != std::string::npos);
}
