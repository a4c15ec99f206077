// report_chart: one chart of the simulation report as inline SVG (no xmlns, no external
// reference: it is meant to sit inside report_html's page, styled by the page's CSS classes).
// - Time runs left to right over [axis.start_ms, axis.end_ms], with a grid line at every local
//   midnight of axis.zone (labelled on a stride that keeps about ten labels), and 6-hour ticks
//   when the span is under two days. nullptr zone = UTC.
// - The y axis starts at 0 (or below, for negative values) and ends at a round number above the
//   highest bar, line point or limit, with 3 to 6 round ticks.
// - "stacked-bar": each series is one <path class="series s<i>"> of rectangles, stacked in
//   series order per time bucket (bucket width = the smallest gap between points).
//   "line": each series is one path through its points in time order.
//   A series with nothing to draw (no points, or all zero bars) gets no path.
// - limits: dashed horizontal lines with their name; marks: a shaded span (until > at) or a
//   vertical line, each numbered (1-based, as the page lists them) with a <title> tooltip.
// Every string is HTML-escaped here; the caller passes raw text.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace date {
class time_zone;
}

namespace sessionrt::sim {

struct chart_series {
  std::string name;
  std::vector<std::pair<std::int64_t, double>> points;  // (epoch ms, value)
};

struct chart_limit {
  std::string name;
  double value = 0;
};

struct chart_spec {
  std::string id, title, unit;
  bool stacked = true;  // "stacked-bar"; false: "line"
  std::vector<chart_series> series;
  std::vector<chart_limit> limits;
};

struct chart_mark {
  std::int64_t at_ms = 0;
  std::int64_t until_ms = 0;  // <= at_ms: an instant
  bool crash = false;         // crash (vertical line) or fault (shaded span)
  std::string label;
};

struct time_axis {
  std::int64_t start_ms = 0, end_ms = 0;
  const date::time_zone* zone = nullptr;
};

std::string html_escape(std::string_view text);
// Round tick values from lo to a round top >= hi (lo <= 0 <= hi after widening).
std::vector<double> round_ticks(double lo, double hi);
// "950", "1.2k", "3.4M": short labels for axis ticks.
std::string short_number(double v);
// "Mar 28 14:00" in the axis zone.
std::string local_time_label(std::int64_t at_ms, const date::time_zone* zone, std::string_view format = "%b %d %H:%M");
// Color of series i (a fixed 10-color palette, cycled).
std::string_view series_color(std::size_t i);

std::string render_chart_svg(const chart_spec& chart, const time_axis& axis, const std::vector<chart_mark>& marks);

}  // namespace sessionrt::sim
