#include "sim/report_html.hpp"

#include <date/tz.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "runtime/config_values.hpp"
#include "sim/report_chart.hpp"

namespace sessionrt::sim {
namespace {

constexpr std::int64_t kDayMs = 86'400'000;

constexpr std::string_view kStyle = R"(
:root{--ink:#1f2933;--muted:#616e7c;--line:#d9e2ec;--bg:#f5f7fa;--card:#fff;--bad:#c62828;--bad-bg:#fdecea;--ok:#2e7d32;--warn:#b26a00}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1040px;margin:0 auto;padding:24px 20px 48px}
header h1{margin:0 0 2px;font-size:26px}
.meta{color:var(--muted);margin:0 0 16px}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin-bottom:20px}
.tile{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.tile .v{font-size:24px;font-weight:650;font-variant-numeric:tabular-nums}
.tile .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.tile .sub{color:var(--muted);font-size:12px}
.tile.bad{border-color:var(--bad);background:var(--bad-bg)}.tile.bad .v{color:var(--bad)}
.tile.good .v{color:var(--ok)}.tile.warn .v{color:var(--warn)}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin-bottom:16px}
.card h2{margin:0 0 6px;font-size:16px}.card h2 .unit{color:var(--muted);font-weight:400;font-size:13px;margin-left:6px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:0 0 6px;font-size:12px;color:var(--muted)}
.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-2px}
.legend i.dash{height:0;border-top:2px dashed var(--bad);border-radius:0;vertical-align:3px}
.legend b{color:var(--ink);font-weight:600}
svg.chart{width:100%;height:auto;display:block}
svg .grid{stroke:#eef2f6}svg .day{stroke:#d9e2ec}svg .day.minor{stroke:#eef2f6}svg .axis{stroke:#9aa5b1;fill:none}
svg .hour{stroke:#9aa5b1}
svg .tick{font-size:11px;fill:var(--muted)}
svg .series.line{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
svg .series:hover{opacity:.75}
svg .limit{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 4}svg .limit-label{font-size:11px;fill:var(--bad)}
svg .mark-span{fill:var(--bad);opacity:.12}
svg .mark-line{stroke:var(--warn);stroke-width:1.5;stroke-dasharray:3 3}svg .mark-line.crash{stroke:#6a1b9a;stroke-width:2;stroke-dasharray:none}
svg .mark-num{font-size:11px;font-weight:700;fill:var(--bad)}svg .mark-num.crash{fill:#6a1b9a}
.marks{margin:0 0 16px;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:6px 18px;font-size:13px}
.marks .n{display:inline-block;min-width:18px;height:18px;border-radius:9px;background:var(--bad);color:#fff;text-align:center;font-size:11px;font-weight:700;line-height:18px;margin-right:5px}
.marks .crash .n{background:#6a1b9a}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.03em}
td.num{font-variant-numeric:tabular-nums}
.cost span{display:inline-block;margin-right:12px}.cost b{font-weight:600}
.expect li{list-style:none;padding:6px 10px;border-radius:6px;margin:3px 0}
.expect{padding:0;margin:0}
.expect .fail{background:var(--bad-bg);color:var(--bad)}.expect .fail .detail{color:var(--ink)}
.expect .pass{color:var(--ink)}.expect .pass .icon{color:var(--ok)}
.expect .step{font-weight:600;margin-right:6px}.expect .icon{font-weight:700;margin-right:6px}
.expect .detail{display:block;margin-left:22px;font-size:12px}
.problems{border:1px solid var(--warn);background:#fff8e1;border-radius:8px;padding:10px 14px;margin-bottom:16px}
.problems h2{margin:0 0 4px;font-size:14px;color:var(--warn)}.problems ul{margin:0;padding-left:18px}
.empty{color:var(--muted)}
)";

std::string with_commas(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

// Integers with thousands separators; fixed decimals as the JSON wrote them.
std::string figure(const boost::json::value& v) {
  if (auto i = json::as_int(v)) return with_commas(*i);
  if (v.is_number()) return json::to_compact(v);
  if (v.is_string()) return std::string(v.get_string());
  return json::to_compact(v);
}

// "modelCalls" -> "model calls"
std::string words_of(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c >= 'A' && c <= 'Z') {
      if (!out.empty()) out += ' ';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

struct page_context {
  std::vector<std::string> problems;
  time_axis axis;
  std::string zone_name = "UTC";
};

std::string time_text(const page_context& pc, std::int64_t ms) { return local_time_label(ms, pc.axis.zone, "%b %d %H:%M"); }

std::string duration_text(std::int64_t ms) {
  if (ms < 0) ms = 0;
  std::int64_t minutes = ms / 60'000;
  if (minutes < 60) return fmt::format("{} min", minutes);
  if (minutes < 48 * 60) return minutes % 60 ? fmt::format("{} h {} min", minutes / 60, minutes % 60) : fmt::format("{} h", minutes / 60);
  if (ms % kDayMs == 0) return fmt::format("{} days", ms / kDayMs);
  return fmt::format("{:.1f} days", static_cast<double>(ms) / kDayMs);
}

std::optional<std::int64_t> int_at(const boost::json::object& o, std::string_view key) { return json::get_int(o, key); }

std::string string_at(const boost::json::object& o, std::string_view key) {
  auto s = json::get_string(o, key);
  return s ? std::string(*s) : std::string();
}

// ---- pieces of the report ---------------------------------------------------------------------

std::vector<chart_mark> read_marks(const boost::json::object& report, page_context& pc) {
  std::vector<chart_mark> out;
  const auto* marks = json::get_array(report, "marks");
  if (marks == nullptr) return out;
  for (std::size_t i = 0; i < marks->size(); ++i) {
    std::string path = runtime::item_key_path("marks", i);
    const auto* m = (*marks)[i].if_object();
    auto at = m ? int_at(*m, "at") : std::nullopt;
    if (!at) {
      pc.problems.push_back(path + ": expected an object with \"at\" in epoch ms");
      continue;
    }
    chart_mark cm;
    cm.at_ms = *at;
    cm.until_ms = int_at(*m, "until").value_or(0);
    cm.crash = string_at(*m, "kind") == "crash";
    cm.label = string_at(*m, "label");
    if (cm.label.empty()) cm.label = cm.crash ? "crash" : "fault";
    out.push_back(std::move(cm));
  }
  return out;
}

std::optional<chart_spec> read_chart(const boost::json::value& v, const std::string& path, page_context& pc) {
  const auto* o = v.if_object();
  if (o == nullptr) {
    pc.problems.push_back(path + ": expected a chart object, got " + runtime::describe_json_value(v));
    return std::nullopt;
  }
  chart_spec c;
  c.id = string_at(*o, "id");
  c.title = string_at(*o, "title");
  if (c.title.empty()) c.title = c.id.empty() ? path : c.id;
  c.unit = string_at(*o, "unit");
  std::string kind = string_at(*o, "kind");
  if (kind != "stacked-bar" && kind != "line") {
    const auto* k = json::find(*o, "kind");
    pc.problems.push_back(path + ".kind: expected \"stacked-bar\" or \"line\", got " +
                          (k ? runtime::describe_json_value(*k) : std::string("nothing")) + "; chart skipped");
    return std::nullopt;
  }
  c.stacked = kind == "stacked-bar";
  const auto* series = json::get_array(*o, "series");
  if (series == nullptr) pc.problems.push_back(path + ".series: expected an array of series");
  for (std::size_t i = 0; series != nullptr && i < series->size(); ++i) {
    std::string sp = runtime::item_key_path(path + ".series", i);
    const auto* so = (*series)[i].if_object();
    const auto* points = so ? json::get_array(*so, "points") : nullptr;
    if (points == nullptr) {
      pc.problems.push_back(sp + ": expected {\"name\": ..., \"points\": [[ms, number], ...]}");
      continue;
    }
    chart_series s;
    s.name = string_at(*so, "name");
    std::size_t bad = 0;
    std::string first_bad;
    for (std::size_t k = 0; k < points->size(); ++k) {
      const auto* pt = (*points)[k].if_array();
      std::optional<std::int64_t> t = pt && pt->size() == 2 ? json::as_int((*pt)[0]) : std::nullopt;
      std::optional<double> y = t ? json::as_number((*pt)[1]) : std::nullopt;
      if (!t || !y || !std::isfinite(*y)) {
        if (bad++ == 0) first_bad = runtime::item_key_path(sp + ".points", k);
        continue;
      }
      s.points.emplace_back(*t, *y);
    }
    if (bad > 0) pc.problems.push_back(fmt::format("{}: expected [ms, number]; {} such point{} skipped", first_bad, bad, bad == 1 ? "" : "s"));
    c.series.push_back(std::move(s));
  }
  if (const auto* limits = json::get_array(*o, "limits"))
    for (std::size_t i = 0; i < limits->size(); ++i) {
      const auto* lo = (*limits)[i].if_object();
      auto value = lo ? json::get_number(*lo, "value") : std::nullopt;
      if (!value || !std::isfinite(*value)) {
        pc.problems.push_back(runtime::item_key_path(path + ".limits", i) + ": expected {\"name\": ..., \"value\": number}");
        continue;
      }
      c.limits.push_back({string_at(*lo, "name"), *value});
    }
  return c;
}

void render_tiles(std::string& out, const boost::json::object* summary) {
  if (summary == nullptr) return;
  out += R"(<section class="tiles">)";
  for (const auto& kv : *summary) {
    std::string key = kv.key();
    std::string cls, value, sub;
    if (key == "expectations" && kv.value().is_object()) {
      const auto& e = kv.value().get_object();
      std::int64_t passed = json::get_int(e, "passed").value_or(0), failed = json::get_int(e, "failed").value_or(0);
      value = failed > 0 ? with_commas(failed) + " failed" : with_commas(passed) + " passed";
      sub = failed > 0 ? with_commas(passed) + " passed" : (passed > 0 ? "none failed" : "none checked");
      cls = failed > 0 ? "bad" : "good";
    } else if (kv.value().is_object()) {
      // A breakdown (resets by reason): its total, and the parts that are not zero.
      double total = 0;
      std::string parts;
      for (const auto& part : kv.value().get_object()) {
        auto n = json::as_number(part.value());
        if (!n) continue;
        total += *n;
        if (*n != 0) parts += (parts.empty() ? "" : " · ") + std::string(part.key()) + " " + figure(part.value());
      }
      value = total == std::floor(total) ? with_commas(static_cast<std::int64_t>(total)) : fmt::format("{}", total);
      sub = parts.empty() ? "none" : parts;
    } else {
      value = figure(kv.value());
      if ((key == "faults" || key == "crashes") && json::as_int(kv.value()).value_or(0) > 0) cls = "warn";
    }
    out += fmt::format(R"(<div class="tile {}"><div class="k">{}</div><div class="v">{}</div>)", cls,
                       html_escape(words_of(key)), html_escape(value));
    if (!sub.empty()) out += fmt::format(R"(<div class="sub">{}</div>)", html_escape(sub));
    out += "</div>";
  }
  out += "</section>";
}

void render_marks_list(std::string& out, const std::vector<chart_mark>& marks, const page_context& pc) {
  if (marks.empty()) return;
  out += R"(<ul class="marks" aria-label="faults and crashes on the time axis">)";
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const chart_mark& m = marks[i];
    std::string when = time_text(pc, m.at_ms);
    if (m.until_ms > m.at_ms) when += " – " + time_text(pc, m.until_ms);
    out += fmt::format(R"(<li class="{}"><span class="n">{}</span>{} <span class="empty">{}</span></li>)",
                       m.crash ? "crash" : "fault", i + 1, html_escape(m.label), html_escape(when));
  }
  out += "</ul>";
}

void render_chart_card(std::string& out, const chart_spec& c, const std::vector<chart_mark>& marks, const page_context& pc) {
  out += fmt::format(R"(<section class="card" id="chart-{}"><h2>{}<span class="unit">{}</span></h2><div class="legend">)",
                     html_escape(c.id), html_escape(c.title), html_escape(c.unit));
  bool anything = false;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    double total = 0, peak = 0;
    for (const auto& p : c.series[i].points) total += p.second, peak = std::max(peak, p.second);
    for (const auto& p : c.series[i].points) anything = anything || !c.stacked || p.second > 0;
    out += fmt::format(R"(<span><i style="background:{}"></i>{} <b>{}</b></span>)", series_color(i),
                       html_escape(c.series[i].name),
                       html_escape(c.stacked ? short_number(total) + " total" : "peak " + short_number(peak)));
  }
  for (const auto& l : c.limits)
    out += fmt::format(R"(<span><i class="dash"></i>{} <b>{}</b></span>)", html_escape(l.name),
                       html_escape(short_number(l.value)));
  out += "</div>";
  out += render_chart_svg(c, pc.axis, marks);
  if (!anything) out += R"(<p class="empty">None in this span.</p>)";
  out += "</section>";
}

void render_faults(std::string& out, const boost::json::object& report, const page_context& pc) {
  const auto* faults = json::get_array(report, "faults");
  out += R"(<section class="card" id="faults"><h2>Faults and what they cost</h2>)";
  if (faults == nullptr || faults->empty()) {
    out += R"(<p class="empty">No faults were injected.</p></section>)";
    return;
  }
  out += "<table><thead><tr><th>Step</th><th>Kind</th><th>From</th><th>Until</th><th>Lasted</th><th>Cost</th></tr></thead><tbody>";
  for (const auto& fv : *faults) {
    const auto* f = fv.if_object();
    if (f == nullptr) continue;
    auto from = int_at(*f, "from"), until = int_at(*f, "until");
    std::string cost;
    if (const auto* c = json::get_object(*f, "cost"))
      for (const auto& kv : *c)
        cost += fmt::format("<span>{} <b>{}</b></span>", html_escape(words_of(kv.key())), html_escape(figure(kv.value())));
    out += fmt::format(R"(<tr><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="cost">{}</td></tr>)",
                       html_escape(string_at(*f, "step")), html_escape(string_at(*f, "kind")),
                       from ? html_escape(time_text(pc, *from)) : "", until ? html_escape(time_text(pc, *until)) : "",
                       from && until ? html_escape(duration_text(*until - *from)) : "", cost.empty() ? "–" : cost);
  }
  out += "</tbody></table></section>";
}

void render_expectations(std::string& out, const boost::json::object& report) {
  const auto* list = json::get_array(report, "expectations");
  std::vector<const boost::json::object*> items;
  if (list != nullptr)
    for (const auto& v : *list)
      if (const auto* o = v.if_object()) items.push_back(o);
  std::stable_partition(items.begin(), items.end(),
                        [](const boost::json::object* o) { return json::get_bool(*o, "ok") != std::optional<bool>(true); });
  std::size_t failed = static_cast<std::size_t>(std::count_if(
      items.begin(), items.end(), [](const boost::json::object* o) { return json::get_bool(*o, "ok") != std::optional<bool>(true); }));
  out += fmt::format(R"(<section class="card" id="expectations"><h2>Expectations<span class="unit">{} failed, {} passed</span></h2>)",
                     failed, items.size() - failed);
  if (items.empty()) {
    out += R"(<p class="empty">This scenario checks no expectations.</p></section>)";
    return;
  }
  out += R"(<ul class="expect">)";
  for (const auto* o : items) {
    bool ok = json::get_bool(*o, "ok") == std::optional<bool>(true);
    std::string detail = string_at(*o, "detail");
    out += fmt::format(R"(<li class="{}"><span class="icon">{}</span><span class="step">{}</span>{})", ok ? "pass" : "fail",
                       ok ? "✓" : "✗", html_escape(string_at(*o, "step")), html_escape(string_at(*o, "what")));
    if (!ok && !detail.empty()) out += fmt::format(R"(<span class="detail">{}</span>)", html_escape(detail));
    out += "</li>";
  }
  out += "</ul></section>";
}

}  // namespace

std::string render_report_html(const boost::json::object& report) {
  page_context pc;
  std::string scenario = string_at(report, "scenario");
  if (scenario.empty()) scenario = "simulation";
  if (auto zone = json::get_string(report, "timeZone"); zone && !zone->empty()) {
    try {
      pc.axis.zone = date::locate_zone(std::string(*zone));
      pc.zone_name = std::string(*zone);
    } catch (const std::exception&) {
      pc.problems.push_back("timeZone: \"" + std::string(*zone) + "\" is not an IANA time zone; times are shown in UTC");
    }
  }
  auto start = int_at(report, "start"), end = int_at(report, "end");
  if (!start || !end || *end < *start) pc.problems.push_back("start / end: expected epoch ms with end >= start; the span is taken from the charts");
  pc.axis.start_ms = start.value_or(0);
  pc.axis.end_ms = end.value_or(0);

  std::vector<chart_mark> marks = read_marks(report, pc);
  std::vector<chart_spec> charts;
  if (const auto* list = json::get_array(report, "charts")) {
    for (std::size_t i = 0; i < list->size(); ++i)
      if (auto c = read_chart((*list)[i], runtime::item_key_path("charts", i), pc)) charts.push_back(std::move(*c));
  } else if (json::find(report, "charts") != nullptr) {
    pc.problems.push_back("charts: expected an array of charts");
  }

  std::string body;
  body += fmt::format("<header><h1>{}</h1>", html_escape(scenario));
  std::string meta;
  if (const auto* seed = json::find(report, "seed")) meta += "seed " + figure(*seed) + " · ";
  meta += pc.zone_name;
  if (start && end && *end >= *start)
    meta += fmt::format(" · {} → {} · {}", local_time_label(*start, pc.axis.zone, "%Y-%m-%d %H:%M"),
                        local_time_label(*end, pc.axis.zone, "%Y-%m-%d %H:%M"), duration_text(*end - *start));
  body += fmt::format(R"(<p class="meta">{}</p></header>)", html_escape(meta));
  render_tiles(body, json::get_object(report, "summary"));
  render_marks_list(body, marks, pc);
  for (const auto& c : charts) render_chart_card(body, c, marks, pc);
  if (charts.empty()) body += R"(<section class="card"><p class="empty">No charts in this report.</p></section>)";
  render_faults(body, report, pc);
  render_expectations(body, report);

  std::string problems;
  if (!pc.problems.empty()) {
    problems = R"(<section class="problems"><h2>Parts of this report could not be shown</h2><ul>)";
    for (const auto& p : pc.problems) problems += "<li>" + html_escape(p) + "</li>";
    problems += "</ul></section>";
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>{} · sessionrt simulation</title><style>{}</style></head>\n<body><main>{}{}</main></body></html>\n",
      html_escape(scenario), kStyle, problems, body);
}

}  // namespace sessionrt::sim
