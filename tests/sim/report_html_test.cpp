#include "sim/report_html.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "messages/json_reader.hpp"
#include "tests/sim_page/sample_report.hpp"

using namespace sessionrt;

namespace {

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// The <svg>...</svg> blocks of the page, in order.
std::vector<std::string> svgs_of(const std::string& html) {
  std::vector<std::string> out;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    out.push_back(html.substr(at, html.find("</svg>", at) - at));
  return out;
}

std::vector<std::string> series_paths(const std::string& svg) {
  static const std::regex path(R"re(<path class="series[^"]*"[^>]* d="([^"]*)")re");
  std::vector<std::string> out;
  for (std::sregex_iterator it(svg.begin(), svg.end(), path), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("report page: one svg per chart, each with drawn series paths") {
  auto report = testing::sample_report();
  std::string html = sim::render_report_html(report);
  auto svgs = svgs_of(html);
  REQUIRE(svgs.size() == report.at("charts").as_array().size());
  const char* ids[] = {"resets", "lifecycle", "store", "disk", "context", "model", "latency"};
  for (std::size_t i = 0; i < svgs.size(); ++i) {
    INFO("chart " << ids[i]);
    CHECK(svgs[i].find(std::string("data-chart=\"") + ids[i] + "\"") != std::string::npos);
    auto paths = series_paths(svgs[i]);
    REQUIRE(!paths.empty());
    for (const auto& d : paths) CHECK(d.size() > 10);
  }
  // Every series of the context chart is its own line; the disk chart shows both limits dashed.
  CHECK(series_paths(svgs[4]).size() == 5);
  CHECK(count_of(svgs[3], "class=\"limit\"") == 2);
  CHECK(svgs[3].find("budget 9M") != std::string::npos);
  // Three days: a line at each local midnight inside the span (Mar 27 00:00 is the start).
  CHECK(count_of(svgs[0], "class=\"day\"") == 4);
  CHECK(svgs[0].find(">Mar 28<") != std::string::npos);
  CHECK(svgs[0].find(">Mar 29<") != std::string::npos);
}

TEST_CASE("report page: fault spans and crash lines on every chart, numbered as listed") {
  auto report = testing::sample_report();
  std::string html = sim::render_report_html(report);
  auto svgs = svgs_of(html);
  REQUIRE(svgs.size() == 7);
  for (const auto& svg : svgs) {
    CHECK(count_of(svg, "class=\"mark-span\"") == 1);
    CHECK(count_of(svg, "class=\"mark-line crash\"") == 1);
    CHECK(svg.find("<title>ENOSPC on store writes</title>") != std::string::npos);
  }
  CHECK(html.find("ENOSPC on store writes <span class=\"empty\">Mar 28 10:00 – Mar 28 12:00</span>") != std::string::npos);
  // The crash is 63.5 h after the start: 16:30 on Mar 29, after the DST change (CEST).
  CHECK(html.find("crash during a compaction <span class=\"empty\">Mar 29 16:30</span>") != std::string::npos);
}

TEST_CASE("report page: header, summary tiles, faults table, expectations with failures first") {
  auto report = testing::sample_report();
  std::string html = sim::render_report_html(report);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("seed 42 · Europe/Berlin · 2026-03-27 00:00 → 2026-03-30 01:00 · 3 days") != std::string::npos);
  CHECK(html.find(R"(<div class="k">turns</div><div class="v">12,345</div>)") != std::string::npos);
  CHECK(html.find(R"(<div class="k">resets</div><div class="v">194</div><div class="sub">daily 120 · idle 33 · new 41</div>)") !=
        std::string::npos);
  CHECK(html.find(R"(<div class="tile bad"><div class="k">expectations</div><div class="v">1 failed</div>)") != std::string::npos);
  CHECK(html.find("<td>disk-full</td><td>enospc</td>") != std::string::npos);
  CHECK(html.find("<span>failed turns <b>7</b></span>") != std::string::npos);
  CHECK(html.find("<td class=\"num\">2 h</td>") != std::string::npos);
  auto fail = html.find(R"(<li class="fail">)");
  auto pass = html.find(R"(<li class="pass">)");
  REQUIRE(fail != std::string::npos);
  REQUIRE(pass != std::string::npos);
  CHECK(fail < pass);
  CHECK(html.find("<span class=\"step\">budget</span>disk bytes stay under the budget") != std::string::npos);
  CHECK(html.find("1 failed, 3 passed") != std::string::npos);
}

TEST_CASE("report page: every string from the JSON is escaped and nothing refers to the network") {
  auto report = testing::sample_report();
  report["charts"].as_array()[0].as_object()["title"] = "Resets <b>by</b> \"reason\" & 'why'";
  std::string html = sim::render_report_html(report);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("<h1>demo &lt;week&gt; &amp; &quot;friends&quot;</h1>") != std::string::npos);
  CHECK(html.find("Resets &lt;b&gt;by&lt;/b&gt; &quot;reason&quot; &amp; &#39;why&#39;") != std::string::npos);
  CHECK(html.find("<b>by</b>") == std::string::npos);
  CHECK(html.find("http") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
}

TEST_CASE("report page: a malformed part is named in the problems box and the rest still renders") {
  auto report = testing::sample_report();
  auto& charts = report["charts"].as_array();
  charts[1].as_object()["kind"] = "pie";
  charts[2].as_object()["series"].as_array()[0].as_object()["points"].as_array()[5] = "noon";
  report["timeZone"] = "Mars/Olympus";
  std::string html = sim::render_report_html(report);
  CHECK(html.find("Parts of this report could not be shown") != std::string::npos);
  CHECK(html.find("charts[1].kind: expected &quot;stacked-bar&quot; or &quot;line&quot;, got &quot;pie&quot;; chart skipped") !=
        std::string::npos);
  CHECK(html.find("charts[2].series[0].points[5]: expected [ms, number]; 1 such point skipped") != std::string::npos);
  CHECK(html.find("timeZone: &quot;Mars/Olympus&quot; is not an IANA time zone; times are shown in UTC") != std::string::npos);
  CHECK(svgs_of(html).size() == 6);
  // An empty report is still a page.
  std::string empty = sim::render_report_html(boost::json::object{});
  CHECK(empty.find("No charts in this report.") != std::string::npos);
  CHECK(empty.find("This scenario checks no expectations.") != std::string::npos);
}

TEST_CASE("report page: a chart whose bars are all zero says so instead of drawing") {
  auto report = testing::sample_report();
  auto& resets = report["charts"].as_array()[0].as_object();
  for (auto& s : resets["series"].as_array())
    for (auto& p : s.as_object()["points"].as_array()) p.as_array()[1] = 0;
  std::string html = sim::render_report_html(report);
  auto svgs = svgs_of(html);
  REQUIRE(svgs.size() == 7);
  CHECK(series_paths(svgs[0]).empty());
  CHECK(count_of(html, "None in this span.") == 1);
  CHECK(html.find("daily <b>0 total</b>") != std::string::npos);
}
