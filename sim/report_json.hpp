// report_json: the figures of one simulation run, gathered from the runtime's lifecycle events
// and the engine's samples, bucketed over simulated time, and written as the report JSON of
// issue #16's contract (b) (the page of report_html.hpp renders it).
// - Bucket size from the span: 10 min up to 12 h, 1 h up to 7 days, else 6 h. A point's time
//   is its bucket's start. Counts per bucket for resets (by reason), lifecycle events and model
//   calls; p50 / p99 of turn latency per bucket (nearest rank); store rows, disk bytes and the
//   context use of the 5 largest sessions are levels (the last value seen in the bucket). Store
//   rows and disk bytes are sampled by the engine at bucket boundaries, not taken from
//   store.flushed events, whose timing follows the store's real-clock coalescing window.
// - Determinism: every number is an integer or a fixed decimal; maps are ordered; nothing
//   depends on wall-clock time or thread timing (the engine feeds virtual times only).
// - observe() may be called from the event bus thread while the engine samples; a mutex
//   guards the figures.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "messages/lifecycle_event.hpp"

namespace sessionrt::sim {

struct fault_record {
  std::string step, kind, label;
  std::int64_t from = 0, until = 0;
  boost::json::object cost;
};

struct expectation_record {
  std::string step;
  bool ok = true;
  std::string what, detail;
};

std::int64_t bucket_size_for(std::int64_t span_ms);

class report_figures {
 public:
  report_figures(std::int64_t start_ms, std::int64_t end_ms, std::int64_t context_window);

  void observe(const lifecycle_event& e);
  void model_call(std::int64_t at_ms);
  void sample_disk(std::int64_t at_ms, std::int64_t bytes);
  void sample_rows(std::int64_t at_ms, std::int64_t rows);
  void set_disk_budget(std::int64_t bytes) { disk_budget_ = bytes; }
  void add_fault(fault_record f);
  void add_mark(std::int64_t at_ms, std::string kind, std::string label, std::int64_t until_ms = 0);
  void add_expectation(expectation_record e);

  std::int64_t turns() const;
  std::int64_t count(const std::string& what) const;  // "compactions", "resets.daily", ...
  std::size_t failed_expectations() const;
  std::vector<expectation_record> expectations() const;

  boost::json::object to_json(const std::string& scenario, std::uint64_t seed, const std::string& zone,
                              std::int64_t end_ms) const;

 private:
  std::int64_t bucket_of(std::int64_t at_ms) const;

  const std::int64_t start_, bucket_, window_;
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::int64_t, std::int64_t>> counts_;  // series -> bucket -> n
  std::map<std::string, std::int64_t> totals_;
  std::map<std::int64_t, std::vector<std::int64_t>> latency_;
  std::map<std::int64_t, std::int64_t> store_rows_, disk_;
  // Looked up by session key or id at every turn (hundreds of thousands of them in a month);
  // the report sorts what it takes from them.
  std::unordered_map<std::string, std::map<std::int64_t, std::int64_t>> context_;  // key -> bucket -> tokens
  std::unordered_map<std::string, std::int64_t> context_peak_;
  std::unordered_set<std::string> sessions_;
  std::int64_t disk_budget_ = 0;
  std::vector<fault_record> faults_;
  struct mark {
    std::int64_t at = 0, until = 0;
    std::string kind, label;
  };
  std::vector<mark> marks_;
  std::vector<expectation_record> expectations_;
};

}  // namespace sessionrt::sim
