#include "sim/report_chart.hpp"

#include <date/tz.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace sessionrt::sim {
namespace {

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kDayMs = 24 * kHourMs;

// The drawing area inside the SVG's viewBox.
constexpr double kWidth = 960, kHeight = 260;
constexpr double kLeft = 60, kRight = 18, kTop = 22, kBottom = 30;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

constexpr std::string_view kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string num(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

struct scale {
  double t0, t1, y0, y1;
  double x(double t) const { return kLeft + (t1 > t0 ? (t - t0) / (t1 - t0) : 0) * kPlotW; }
  double y(double v) const { return kTop + kPlotH - (y1 > y0 ? (v - y0) / (y1 - y0) : 0) * kPlotH; }
  double clamp_x(double t) const { return std::clamp(x(t), kLeft, kLeft + kPlotW); }
};

struct day_tick {
  std::int64_t at_ms;
  std::string label;
  bool labelled;
};

// Local midnights inside [start, end], in the zone; a label stride keeps about ten labels.
std::vector<day_tick> day_ticks(const time_axis& axis) {
  using namespace std::chrono;
  std::vector<day_tick> out;
  if (axis.end_ms <= axis.start_ms) return out;
  std::int64_t days = (axis.end_ms - axis.start_ms) / kDayMs + 1;
  std::int64_t stride = days <= 10 ? 1 : days <= 20 ? 2 : days <= 40 ? 4 : days <= 80 ? 7 : (days + 9) / 10;
  auto to_ms = [](auto tp) { return duration_cast<milliseconds>(tp.time_since_epoch()).count(); };
  date::sys_time<milliseconds> start{milliseconds(axis.start_ms)};
  date::local_days day = axis.zone != nullptr ? date::floor<date::days>(axis.zone->to_local(start))
                                              : date::local_days(date::floor<date::days>(start).time_since_epoch());
  for (std::int64_t i = 0; i < days + 2; ++i, day += date::days(1)) {
    std::int64_t at = axis.zone != nullptr ? to_ms(axis.zone->to_sys(date::local_seconds(day), date::choose::earliest))
                                           : to_ms(date::sys_days(day.time_since_epoch()));
    if (at < axis.start_ms) continue;
    if (at > axis.end_ms) break;
    std::int64_t ordinal = (day.time_since_epoch().count() % stride + stride) % stride;
    out.push_back({at, date::format("%b %d", day), ordinal == 0});
  }
  return out;
}

// Local 06:00, 12:00 and 18:00 inside [start, end) (midnights have their day line).
std::vector<std::int64_t> six_hour_ticks(const time_axis& axis) {
  using namespace std::chrono;
  std::vector<std::int64_t> out;
  date::sys_time<milliseconds> start{milliseconds(axis.start_ms)};
  date::local_days day = axis.zone != nullptr ? date::floor<date::days>(axis.zone->to_local(start))
                                              : date::local_days(date::floor<date::days>(start).time_since_epoch());
  for (int k = 1; k < 4 * 4; ++k) {
    if (k % 4 == 0) continue;
    date::local_seconds wall = date::local_seconds(day) + hours(6 * k);
    std::int64_t at = axis.zone != nullptr
                          ? duration_cast<milliseconds>(axis.zone->to_sys(wall, date::choose::earliest).time_since_epoch()).count()
                          : duration_cast<milliseconds>(wall.time_since_epoch()).count();
    if (at < axis.start_ms) continue;
    if (at >= axis.end_ms) break;
    out.push_back(at);
  }
  return out;
}

void axis_text(std::string& svg, double x, double y, std::string_view anchor, std::string_view text,
               std::string_view cls = "tick") {
  svg += fmt::format(R"(<text class="{}" x="{}" y="{}" text-anchor="{}">{}</text>)", cls, num(x), num(y), anchor,
                     html_escape(text));
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> round_ticks(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi - lo <= 0) hi = lo + 1;
  double raw = (hi - lo) / 4;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag * 10;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (mag * m >= raw) {
      step = mag * m;
      break;
    }
  std::vector<double> out;
  double first = std::floor(lo / step + 1e-9) * step;
  for (double v = first; v < hi + step * 0.999; v += step) out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::string short_number(double v) {
  double a = std::abs(v);
  auto trim = [](std::string s) {
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    return s;
  };
  if (a >= 1e9) return trim(fmt::format("{:.1f}", v / 1e9)) + "G";
  if (a >= 1e6) return trim(fmt::format("{:.1f}", v / 1e6)) + "M";
  if (a >= 1e4) return trim(fmt::format("{:.1f}", v / 1e3)) + "k";
  if (a >= 100 || a == std::round(a)) return fmt::format("{:.0f}", v);
  return trim(fmt::format("{:.2f}", v));
}

std::string local_time_label(std::int64_t at_ms, const date::time_zone* zone, std::string_view format) {
  using namespace std::chrono;
  date::sys_time<milliseconds> t{milliseconds(at_ms)};
  auto minutes_t = date::floor<std::chrono::minutes>(t);
  if (zone == nullptr) return date::format(std::string(format), minutes_t);
  return date::format(std::string(format), date::make_zoned(zone, minutes_t));
}

std::string_view series_color(std::size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string render_chart_svg(const chart_spec& chart, const time_axis& axis_in, const std::vector<chart_mark>& marks) {
  // The time domain: the report's span, widened to every point so nothing falls off.
  time_axis axis = axis_in;
  std::vector<std::int64_t> xs;
  for (const auto& s : chart.series)
    for (const auto& p : s.points) xs.push_back(p.first);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::int64_t bucket = kHourMs;
  for (std::size_t i = 1; i < xs.size(); ++i) bucket = i == 1 ? xs[1] - xs[0] : std::min(bucket, xs[i] - xs[i - 1]);
  if (!xs.empty()) {
    if (axis.end_ms <= axis.start_ms) axis.start_ms = xs.front(), axis.end_ms = xs.back();
    axis.start_ms = std::min(axis.start_ms, xs.front());
    axis.end_ms = std::max(axis.end_ms, chart.stacked ? xs.back() + bucket : xs.back());
  }
  if (axis.end_ms <= axis.start_ms) axis.end_ms = axis.start_ms + kDayMs;

  // Value range: stacked sums per bucket, or the points; limits too.
  double lo = 0, hi = 0;
  std::map<std::int64_t, double> stack_top;
  for (const auto& s : chart.series)
    for (const auto& [t, v] : s.points) {
      if (chart.stacked) {
        stack_top[t] += std::max(v, 0.0);
        hi = std::max(hi, stack_top[t]);
      } else {
        hi = std::max(hi, v);
        lo = std::min(lo, v);
      }
    }
  for (const auto& l : chart.limits) hi = std::max(hi, l.value), lo = std::min(lo, l.value);
  std::vector<double> ticks = round_ticks(lo, hi);
  scale sc{static_cast<double>(axis.start_ms), static_cast<double>(axis.end_ms), ticks.front(), ticks.back()};

  std::string svg = fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}" data-chart="{}">)",
                                num(kWidth), num(kHeight), html_escape(chart.title), html_escape(chart.id));
  // Grid: y ticks, then day lines with labels.
  for (double v : ticks) {
    double y = sc.y(v);
    svg += fmt::format(R"(<path class="grid" d="M{} {}H{}"/>)", num(kLeft), num(y), num(kLeft + kPlotW));
    axis_text(svg, kLeft - 6, y + 4, "end", short_number(v));
  }
  for (const auto& d : day_ticks(axis)) {
    double x = sc.x(static_cast<double>(d.at_ms));
    svg += fmt::format(R"(<path class="{}" d="M{} {}V{}"/>)", d.labelled ? "day" : "day minor", num(x), num(kTop),
                       num(kTop + kPlotH));
    if (d.labelled) axis_text(svg, x, kTop + kPlotH + 18, "middle", d.label);
  }
  if (axis.end_ms - axis.start_ms < 2 * kDayMs) {
    for (std::int64_t t : six_hour_ticks(axis)) {
      std::string label = local_time_label(t, axis.zone, "%H:%M");
      double x = sc.x(static_cast<double>(t));
      svg += fmt::format(R"(<path class="hour" d="M{} {}V{}"/>)", num(x), num(kTop + kPlotH), num(kTop + kPlotH + 4));
      axis_text(svg, x, kTop + kPlotH + 18, "middle", label);
    }
  }
  // Fault spans under the data, crash lines over it.
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const chart_mark& m = marks[i];
    double x0 = sc.clamp_x(static_cast<double>(m.at_ms));
    if (m.crash || m.until_ms <= m.at_ms) continue;
    double x1 = std::max(sc.clamp_x(static_cast<double>(m.until_ms)), x0 + 2);
    svg += fmt::format(R"(<rect class="mark-span" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>)", num(x0),
                       num(kTop), num(x1 - x0), num(kPlotH), html_escape(m.label));
  }
  // Data.
  if (chart.stacked) {
    std::map<std::int64_t, double> base;
    double bar_w = std::max(1.0, (sc.x(static_cast<double>(axis.start_ms + bucket)) - sc.x(static_cast<double>(axis.start_ms))) * 0.82);
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
      std::string d;
      for (const auto& [t, v] : chart.series[i].points) {
        if (!(v > 0)) continue;
        double& b = base[t];
        double x = sc.x(static_cast<double>(t)) + bar_w * 0.09;
        d += fmt::format("M{} {}V{}h{}V{}Z", num(x), num(sc.y(b)), num(sc.y(b + v)), num(bar_w), num(sc.y(b)));
        b += v;
      }
      if (d.empty()) continue;
      svg += fmt::format(R"(<path class="series s{}" fill="{}" d="{}"><title>{}</title></path>)", i, series_color(i), d,
                         html_escape(chart.series[i].name));
    }
  } else {
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
      auto pts = chart.series[i].points;
      std::stable_sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string d;
      for (const auto& [t, v] : pts)
        d += fmt::format("{}{} {}", d.empty() ? "M" : "L", num(sc.x(static_cast<double>(t))), num(sc.y(v)));
      if (pts.size() == 1) d += "h1";  // one point still shows (as a short stroke)
      if (d.empty()) continue;
      svg += fmt::format(R"(<path class="series line s{}" stroke="{}" d="{}"><title>{}</title></path>)", i,
                         series_color(i), d, html_escape(chart.series[i].name));
    }
  }
  for (const auto& l : chart.limits) {
    double y = sc.y(l.value);
    svg += fmt::format(R"(<path class="limit" d="M{} {}H{}"><title>{}</title></path>)", num(kLeft), num(y),
                       num(kLeft + kPlotW), html_escape(l.name + " " + short_number(l.value)));
    axis_text(svg, kLeft + kPlotW - 4, y - 5, "end", l.name + " " + short_number(l.value), "limit-label");
  }
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const chart_mark& m = marks[i];
    double x = sc.clamp_x(static_cast<double>(m.at_ms));
    if (m.crash || m.until_ms <= m.at_ms)
      svg += fmt::format(R"(<path class="mark-line{}" d="M{} {}V{}"><title>{}</title></path>)", m.crash ? " crash" : "",
                         num(x), num(kTop), num(kTop + kPlotH), html_escape(m.label));
    axis_text(svg, x + 3, kTop - 7, "start", std::to_string(i + 1), m.crash ? "mark-num crash" : "mark-num");
  }
  svg += fmt::format(R"(<path class="axis" d="M{} {}V{}H{}"/>)", num(kLeft), num(kTop), num(kTop + kPlotH),
                     num(kLeft + kPlotW));
  svg += "</svg>";
  return svg;
}

}  // namespace sessionrt::sim
