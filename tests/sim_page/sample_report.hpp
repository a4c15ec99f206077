// A report JSON in the shape `sessionrt simulate --json` writes (issue #16, contract (b)), made
// up for the page's tests: three days across Berlin's DST change (2026-03-29), every chart
// the engine emits, a fault span and a crash, a failed expectation, and strings that must be
// escaped (markup in the scenario name and in a failure's detail). The figures follow simple
// daily curves so each chart has something to draw.
#pragma once
#include <boost/json.hpp>
#include <cmath>
#include <cstdint>
#include <string>

namespace sessionrt::testing {

inline constexpr std::int64_t kSampleStartMs = 1'774'566'000'000;  // 2026-03-27T00:00 CET
inline constexpr std::int64_t kSampleHourMs = 3'600'000;
inline constexpr int kSampleHours = 72;

inline boost::json::object sample_report() {
  namespace bj = boost::json;
  auto curve = [](int h, double base, double amp) {  // a daily wave, peak in the afternoon
    return std::round(base + amp * (1 + std::sin((h % 24 - 9) * 3.14159265358979 / 12)) / 2);
  };
  auto series = [&](const char* name, auto value_of) {
    bj::array points;
    for (int h = 0; h < kSampleHours; ++h)
      points.push_back(bj::array{kSampleStartMs + h * kSampleHourMs, value_of(h)});
    return bj::object{{"name", name}, {"points", std::move(points)}};
  };
  auto chart = [](const char* id, const char* title, const char* unit, const char* kind, bj::array s) {
    return bj::object{{"id", id}, {"title", title}, {"unit", unit}, {"kind", kind}, {"series", std::move(s)}};
  };
  bj::array charts;
  charts.push_back(chart("resets", "Resets by reason", "per hour", "stacked-bar",
                         {series("daily", [](int h) { return h % 24 == 4 ? 40.0 : 0.0; }),
                          series("idle", [&](int h) { return curve(h, 0, 6); }),
                          series("new", [&](int h) { return curve(h + 3, 1, 4); }),
                          series("reset", [](int h) { return h % 7 == 0 ? 1.0 : 0.0; })}));
  charts.push_back(chart("lifecycle", "Compactions, flushes, suppressed replies, maintenance", "per hour", "stacked-bar",
                         {series("compactions", [&](int h) { return curve(h, 0, 5); }),
                          series("memory flushes", [&](int h) { return curve(h, 0, 4); }),
                          series("suppressed replies", [&](int h) { return curve(h + 6, 0, 3); }),
                          series("maintenance actions", [](int h) { return h % 12 == 0 ? 2.0 : 0.0; })}));
  charts.push_back(chart("store", "Store rows", "rows", "line", {series("rows", [](int h) { return 200.0 + 9 * h; })}));
  bj::object disk = chart("disk", "Disk bytes against the budget", "bytes", "line",
                          {series("disk bytes", [](int h) { return 1.0e6 * (4 + (h % 24) * 0.2); })});
  disk["limits"] = bj::array{bj::object{{"name", "budget"}, {"value", 9'000'000}},
                             bj::object{{"name", "high water"}, {"value", 7'200'000}}};
  charts.push_back(std::move(disk));
  bj::array context;
  for (int k = 0; k < 5; ++k) {
    std::string name = "agent:main:telegram:direct:10000000" + std::to_string(k);
    context.push_back(series(name.c_str(), [k](int h) { return static_cast<double>((h * (7 + k)) % 90); }));
  }
  charts.push_back(chart("context", "Context use of the 5 largest sessions", "% of window", "line", std::move(context)));
  charts.push_back(chart("model", "Model calls", "per hour", "stacked-bar", {series("model calls", [&](int h) { return curve(h, 5, 120); })}));
  charts.push_back(chart("latency", "Turn latency", "ms", "line",
                         {series("p50", [&](int h) { return curve(h, 300, 200); }),
                          series("p99", [&](int h) { return curve(h, 900, 1400); })}));

  std::int64_t fault_from = kSampleStartMs + 34 * kSampleHourMs, fault_until = fault_from + 2 * kSampleHourMs;
  std::int64_t crash_at = kSampleStartMs + 63 * kSampleHourMs + 30 * 60'000;
  return bj::object{
      {"scenario", "demo <week> & \"friends\""},
      {"seed", 42},
      {"timeZone", "Europe/Berlin"},
      {"start", kSampleStartMs},
      {"end", kSampleStartMs + kSampleHours * kSampleHourMs},
      {"summary",
       {{"turns", 12345},
        {"sessions", 321},
        {"modelCalls", 12800},
        {"resets", {{"daily", 120}, {"idle", 33}, {"new", 41}, {"reset", 0}}},
        {"compactions", 17},
        {"memoryFlushes", 15},
        {"suppressedReplies", 96},
        {"maintenanceActions", 4},
        {"faults", 1},
        {"crashes", 1},
        {"expectations", {{"passed", 3}, {"failed", 1}}}}},
      {"charts", std::move(charts)},
      {"marks", bj::array{bj::object{{"at", fault_from}, {"kind", "fault"}, {"label", "ENOSPC on store writes"}, {"until", fault_until}},
                          bj::object{{"at", crash_at}, {"kind", "crash"}, {"label", "crash during a compaction"}}}},
      {"faults", bj::array{bj::object{{"step", "disk-full"}, {"kind", "enospc"}, {"from", fault_from}, {"until", fault_until},
                                      {"cost", {{"failedTurns", 7}, {"lostUnacked", 0}}}},
                           bj::object{{"step", "power-cut"}, {"kind", "crash"}, {"from", crash_at}, {"until", crash_at},
                                      {"cost", {{"failedTurns", 2}, {"lostUnacked", 1}, {"tornWrites", 1}}}}}},
      {"expectations",
       bj::array{bj::object{{"step", "day-1"}, {"ok", true}, {"what", "daily reset at 04:00 Europe/Berlin"}, {"detail", ""}},
                 bj::object{{"step", "after-crash"}, {"ok", true}, {"what", "every acknowledged message is in its transcript"}, {"detail", ""}},
                 bj::object{{"step", "budget"}, {"ok", false}, {"what", "disk bytes stay under the budget"},
                            {"detail", "peak 9,400,000 > 9,000,000 <script>alert(1)</script>"}},
                 bj::object{{"step", "end"}, {"ok", true}, {"what", "sessions.json agrees with the transcripts"}, {"detail", ""}}}},
  };
}

}  // namespace sessionrt::testing
