// context_pressure: when to emit `context.pressure` events (SPEC §4; a sessionrt addition,
// no reference system has it). Pure rules: no CAF, no I/O.
// - A config is a list of fractions of the compaction threshold (default 0.75, 0.90); each
//   in (0, 1), ascending, no repeats. make_pressure_config() checks that and names the bad
//   value in an errc::invalid_argument status. An empty list disables the events.
// - A fraction f is crossed when contextTokens >= ceil(f × threshold) (f × threshold is
//   first rounded to the nearest integer when it is within 1e-9 of one, so 0.9 × 176000
//   is 158400). Each fraction fires at most once per compaction cycle; a cycle is identified
//   by compactionCount, so a new count re-arms every fraction.
// - The state is a value the session actor keeps (and may persist as JSON); the caller
//   owns it and replaces it with the state check_pressure() returns.
#pragma once
#include <boost/json/value.hpp>
#include <cstdint>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt::actors {

struct pressure_config {
  std::vector<double> fractions{0.75, 0.90};
};

// Ok, or the first offending value: not in (0, 1) (NaN included), or not above its
// predecessor (unsorted or repeated).
status validate_pressure_config(const pressure_config& config);
result<pressure_config> make_pressure_config(std::vector<double> fractions);

struct pressure_state {
  std::int64_t compaction_count = 0;  // the cycle `fired` belongs to
  std::vector<double> fired;          // fractions already reported in that cycle, ascending
  bool operator==(const pressure_state&) const = default;
};

struct pressure_check {
  std::vector<double> crossed;  // newly crossed fractions, lowest first (often empty)
  pressure_state next;          // the state to keep
};

// `threshold` is the compaction threshold in tokens; <= 0 means unknown and fires nothing.
pressure_check check_pressure(const pressure_config& config, const pressure_state& state,
                              std::int64_t context_tokens, std::int64_t threshold,
                              std::int64_t compaction_count);

// {"compactionCount":N,"fired":[0.75]}; from_json rejects anything else (errc::corrupt,
// naming the field).
boost::json::object pressure_state_to_json(const pressure_state& state);
result<pressure_state> pressure_state_from_json(const boost::json::value& json);

}  // namespace sessionrt::actors
