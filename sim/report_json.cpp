#include "sim/report_json.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "messages/json_access.hpp"

namespace sessionrt::sim {

namespace {
constexpr std::int64_t kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;

std::int64_t nearest_rank(std::vector<std::int64_t>& v, int pct) {
  std::sort(v.begin(), v.end());
  std::size_t rank = (v.size() * static_cast<std::size_t>(pct) + 99) / 100;
  return v[std::max<std::size_t>(rank, 1) - 1];
}

boost::json::array points(const std::map<std::int64_t, std::int64_t>& m) {
  boost::json::array a;
  for (const auto& [t, n] : m) a.push_back(boost::json::array{t, n});
  return a;
}

boost::json::object series(const std::string& name, boost::json::array pts) {
  return {{"name", name}, {"points", std::move(pts)}};
}

boost::json::object chart(std::string id, std::string title, std::string unit, std::string kind, boost::json::array s) {
  return {{"id", std::move(id)}, {"title", std::move(title)}, {"unit", std::move(unit)}, {"kind", std::move(kind)},
          {"series", std::move(s)}};
}
}  // namespace

std::int64_t bucket_size_for(std::int64_t span_ms) {
  if (span_ms <= 12 * kHour) return 10 * kMinute;
  if (span_ms <= 7 * kDay) return kHour;
  return 6 * kHour;
}

report_figures::report_figures(std::int64_t start_ms, std::int64_t end_ms, std::int64_t context_window)
    : start_(start_ms), bucket_(bucket_size_for(end_ms - start_ms)), window_(std::max<std::int64_t>(context_window, 1)) {}

std::int64_t report_figures::bucket_of(std::int64_t at_ms) const {
  const std::int64_t d = std::max<std::int64_t>(at_ms - start_, 0);
  return start_ + d / bucket_ * bucket_;
}

void report_figures::observe(const lifecycle_event& e) {
  std::lock_guard<std::mutex> g(mu_);
  const std::int64_t b = bucket_of(e.at_ms);
  auto bump = [&](const std::string& series, std::int64_t n = 1) {
    counts_[series][b] += n;
    totals_[series] += n;
  };
  const std::string& t = e.type;
  if (t == event_types::session_reset) {
    bump("resets." + std::string(json::get_string(e.data, "reason").value_or("other")));
  } else if (t == event_types::compaction_completed) {
    bump("compactions");
  } else if (t == event_types::compaction_failed) {
    bump("compactionsFailed");
  } else if (t == event_types::memory_flush_completed) {
    bump("memoryFlushes");
  } else if (t == event_types::reply_suppressed) {
    bump("suppressedReplies");
  } else if (t == event_types::overflow_recovered) {
    bump("overflowRecoveries");
  } else if (t == event_types::turn_failed) {
    bump("turnsFailed");
  } else if (t == event_types::maintenance_report) {
    bump("maintenanceActions", json::get_int(e.data, "plannedActions").value_or(0));
  } else if (t == event_types::memory_flush_skipped) {
    bump("memoryFlushesSkipped");
  } else if (t == event_types::turn_completed) {
    bump("turns");
    latency_[b].push_back(json::get_int(e.data, "latencyMs").value_or(0));
    sessions_.insert(e.session_id);
    const std::int64_t tokens = json::get_int(e.data, "totalTokens").value_or(0);
    context_[e.session_key][b] = tokens;
    auto& peak = context_peak_[e.session_key];
    peak = std::max(peak, tokens);
  }
}

void report_figures::model_call(std::int64_t at_ms) {
  std::lock_guard<std::mutex> g(mu_);
  counts_["modelCalls"][bucket_of(at_ms)] += 1;
  totals_["modelCalls"] += 1;
}

void report_figures::sample_disk(std::int64_t at_ms, std::int64_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  disk_[bucket_of(at_ms)] = bytes;
}

void report_figures::sample_rows(std::int64_t at_ms, std::int64_t rows) {
  std::lock_guard<std::mutex> g(mu_);
  store_rows_[bucket_of(at_ms)] = rows;
}

void report_figures::add_fault(fault_record f) {
  std::lock_guard<std::mutex> g(mu_);
  totals_[f.kind == "crash" ? "crashes" : "faults"] += 1;
  faults_.push_back(std::move(f));
}

void report_figures::add_mark(std::int64_t at_ms, std::string kind, std::string label, std::int64_t until_ms) {
  std::lock_guard<std::mutex> g(mu_);
  marks_.push_back({at_ms, until_ms, std::move(kind), std::move(label)});
}

void report_figures::add_expectation(expectation_record e) {
  std::lock_guard<std::mutex> g(mu_);
  expectations_.push_back(std::move(e));
}

std::int64_t report_figures::turns() const { return count("turns"); }

std::int64_t report_figures::count(const std::string& what) const {
  std::lock_guard<std::mutex> g(mu_);
  if (what == "sessions") return static_cast<std::int64_t>(sessions_.size());
  auto it = totals_.find(what);
  return it == totals_.end() ? 0 : it->second;
}

std::size_t report_figures::failed_expectations() const {
  std::lock_guard<std::mutex> g(mu_);
  return static_cast<std::size_t>(std::count_if(expectations_.begin(), expectations_.end(), [](const auto& e) { return !e.ok; }));
}

std::vector<expectation_record> report_figures::expectations() const {
  std::lock_guard<std::mutex> g(mu_);
  return expectations_;
}

boost::json::object report_figures::to_json(const std::string& scenario, std::uint64_t seed, const std::string& zone,
                                            std::int64_t end_ms) const {
  std::lock_guard<std::mutex> g(mu_);
  auto total = [&](const std::string& k) -> std::int64_t {
    auto it = totals_.find(k);
    return it == totals_.end() ? 0 : it->second;
  };
  auto counts_of = [&](const std::string& k) {
    auto it = counts_.find(k);
    return it == counts_.end() ? std::map<std::int64_t, std::int64_t>{} : it->second;
  };
  boost::json::object out;
  out["scenario"] = scenario;
  out["seed"] = seed;
  out["timeZone"] = zone;
  out["start"] = start_;
  out["end"] = end_ms;
  out["bucketMs"] = bucket_;

  boost::json::object resets;
  for (const char* r : {"daily", "idle", "new", "reset"}) resets[r] = total(std::string("resets.") + r);
  for (const auto& [k, n] : totals_)
    if (k.starts_with("resets.") && !resets.contains(k.substr(7))) resets[k.substr(7)] = n;
  std::int64_t passed = 0, failed = 0;
  for (const auto& e : expectations_) (e.ok ? passed : failed) += 1;
  out["summary"] = boost::json::object{
      {"turns", total("turns")},
      {"turnsFailed", total("turnsFailed")},
      {"sessions", static_cast<std::int64_t>(sessions_.size())},
      {"modelCalls", total("modelCalls")},
      {"resets", resets},
      {"compactions", total("compactions")},
      {"memoryFlushes", total("memoryFlushes")},
      {"memoryFlushesSkipped", total("memoryFlushesSkipped")},
      {"suppressedReplies", total("suppressedReplies")},
      {"overflowRecoveries", total("overflowRecoveries")},
      {"maintenanceActions", total("maintenanceActions")},
      {"faults", total("faults")},
      {"crashes", total("crashes")},
      {"expectations", boost::json::object{{"passed", passed}, {"failed", failed}}}};

  boost::json::array charts;
  {
    boost::json::array s;
    for (const auto& [k, m] : counts_)
      if (k.starts_with("resets.")) s.push_back(series(k.substr(7), points(m)));
    charts.push_back(chart("resets", "Resets by reason", "per bucket", "stacked-bar", std::move(s)));
  }
  {
    boost::json::array s;
    for (const char* k : {"compactions", "memoryFlushes", "suppressedReplies", "maintenanceActions"})
      s.push_back(series(k, points(counts_of(k))));
    charts.push_back(chart("lifecycle", "Compactions, memory flushes, suppressed replies, maintenance actions",
                           "per bucket", "stacked-bar", std::move(s)));
  }
  charts.push_back(chart("store", "Store rows", "rows", "line", boost::json::array{series("rows", points(store_rows_))}));
  {
    auto c = chart("disk", "Disk bytes of the sessions dirs", "bytes", "line",
                   boost::json::array{series("disk bytes", points(disk_))});
    if (disk_budget_ > 0) c["limits"] = boost::json::array{boost::json::object{{"name", "budget"}, {"value", disk_budget_}}};
    charts.push_back(std::move(c));
  }
  {
    std::vector<std::pair<std::int64_t, std::string>> largest;
    for (const auto& [k, p] : context_peak_) largest.emplace_back(-p, k);
    std::sort(largest.begin(), largest.end());
    boost::json::array s;
    for (std::size_t i = 0; i < largest.size() && i < 5; ++i) {
      boost::json::array pts;
      for (const auto& [t, tokens] : context_.at(largest[i].second)) {
        // Tenths of a percent as a fixed decimal, the same bytes on every run.
        const std::int64_t permille = tokens * 1000 / window_;
        pts.push_back(boost::json::array{t, static_cast<double>(permille) / 10.0});
      }
      s.push_back(series(largest[i].second, std::move(pts)));
    }
    charts.push_back(chart("context", "Context use of the 5 largest sessions", "% of window", "line", std::move(s)));
  }
  charts.push_back(chart("model", "Model calls", "per bucket", "stacked-bar",
                         boost::json::array{series("calls", points(counts_of("modelCalls")))}));
  {
    std::map<std::int64_t, std::int64_t> p50, p99;
    for (const auto& [b, v] : latency_) {
      auto copy = v;
      p50[b] = nearest_rank(copy, 50);
      p99[b] = nearest_rank(copy, 99);
    }
    charts.push_back(chart("latency", "Turn latency", "ms", "line",
                           boost::json::array{series("p50", points(p50)), series("p99", points(p99))}));
  }
  out["charts"] = std::move(charts);

  boost::json::array marks;
  for (const auto& m : marks_) {
    boost::json::object o{{"at", m.at}, {"kind", m.kind}, {"label", m.label}};
    if (m.until > 0) o["until"] = m.until;
    marks.push_back(std::move(o));
  }
  out["marks"] = std::move(marks);
  boost::json::array faults;
  for (const auto& f : faults_)
    faults.push_back(boost::json::object{{"step", f.step}, {"kind", f.kind}, {"label", f.label}, {"from", f.from},
                                         {"until", f.until}, {"cost", f.cost}});
  out["faults"] = std::move(faults);
  boost::json::array ex;
  for (const auto& e : expectations_) {
    boost::json::object o{{"step", e.step}, {"ok", e.ok}, {"what", e.what}};
    if (!e.detail.empty()) o["detail"] = e.detail;
    ex.push_back(std::move(o));
  }
  out["expectations"] = std::move(ex);
  return out;
}

}  // namespace sessionrt::sim
