// report_html: the simulation report (the JSON `sessionrt simulate --json` writes, issue #16's
// contract (b)) as one self-contained HTML page: inline CSS and SVG, no script, no network
// reference, so it opens from a file anywhere and prints.
// Layout: a header (scenario, seed, zone, span) with the summary as tiles; the numbered list of
// fault and crash marks; one chart per entry of "charts", in order (report_chart.hpp), each
// with the marks on its time axis and a legend with each series' total (bars) or peak (lines);
// the faults table with what each cost; the expectations, failures first, in red.
// The renderer never fails: a malformed part of the report is skipped and named in a
// "problems" box at the top of the page (e.g. "charts[2].series[0].points[5]: expected
// [ms, number]"), and everything else still renders. Every string from the JSON is escaped.
#pragma once
#include <boost/json/object.hpp>
#include <string>

namespace sessionrt::sim {

std::string render_report_html(const boost::json::object& report);

}  // namespace sessionrt::sim
