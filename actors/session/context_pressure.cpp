#include "actors/session/context_pressure.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "messages/json_access.hpp"

namespace sessionrt::actors {
namespace {

// Shortest text that reads back as the same double ("0.75", "1.2", "nan").
std::string format_fraction(double value) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

// The smallest token count at which `fraction` of `threshold` is reached.
std::int64_t tokens_at(double fraction, std::int64_t threshold) {
  const double exact = fraction * static_cast<double>(threshold);
  const double nearest = std::round(exact);
  if (std::fabs(exact - nearest) <= 1e-9 * std::max(1.0, exact))
    return static_cast<std::int64_t>(nearest);
  return static_cast<std::int64_t>(std::ceil(exact));
}

bool contains(const std::vector<double>& values, double v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

status corrupt_field(const char* field) {
  return status(errc::corrupt, std::string("context pressure state: \"") + field +
                                   "\" is missing or has the wrong type");
}

}  // namespace

status validate_pressure_config(const pressure_config& config) {
  const auto& f = config.fractions;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (!(f[i] > 0.0 && f[i] < 1.0)) {
      return status(errc::invalid_argument,
                    "context.pressure fraction " + format_fraction(f[i]) +
                        " is outside (0, 1); give fractions of the compaction threshold, such "
                        "as 0.75");
    }
    if (i > 0 && !(f[i] > f[i - 1])) {
      return status(errc::invalid_argument,
                    "context.pressure fraction " + format_fraction(f[i]) + " follows " +
                        format_fraction(f[i - 1]) +
                        "; list the fractions in ascending order without repeats");
    }
  }
  return status::success();
}

result<pressure_config> make_pressure_config(std::vector<double> fractions) {
  pressure_config config{std::move(fractions)};
  SRT_RETURN_IF_ERROR(validate_pressure_config(config));
  return config;
}

pressure_check check_pressure(const pressure_config& config, const pressure_state& state,
                              std::int64_t context_tokens, std::int64_t threshold,
                              std::int64_t compaction_count) {
  pressure_check out;
  out.next = state;
  if (state.compaction_count != compaction_count) out.next = {compaction_count, {}};
  if (threshold <= 0) return out;
  for (const double fraction : config.fractions) {
    if (contains(out.next.fired, fraction) || context_tokens < tokens_at(fraction, threshold))
      continue;
    out.crossed.push_back(fraction);
    out.next.fired.push_back(fraction);
  }
  std::sort(out.next.fired.begin(), out.next.fired.end());
  return out;
}

boost::json::object pressure_state_to_json(const pressure_state& state) {
  boost::json::object o;
  o["compactionCount"] = state.compaction_count;
  boost::json::array fired;
  for (const double f : state.fired) fired.emplace_back(f);
  o["fired"] = std::move(fired);
  return o;
}

result<pressure_state> pressure_state_from_json(const boost::json::value& json) {
  if (!json.is_object())
    return status(errc::corrupt, "context pressure state: expected a JSON object");
  const auto& o = json.as_object();
  const auto count = json::get_int(o, "compactionCount");
  if (!count) return corrupt_field("compactionCount");
  const auto* fired = json::get_array(o, "fired");
  if (!fired) return corrupt_field("fired");
  pressure_state state{*count, {}};
  for (const auto& v : *fired) {
    const auto f = json::as_number(v);
    if (!f) return corrupt_field("fired");
    state.fired.push_back(*f);
  }
  std::sort(state.fired.begin(), state.fired.end());
  return state;
}

}  // namespace sessionrt::actors
