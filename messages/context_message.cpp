#include "messages/context_message.hpp"

#include <cmath>
#include <initializer_list>

#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"

namespace sessionrt {
namespace {
// {role, the listed fields of the entry that are present, timestamp}, in that order.
boost::json::object synthetic_message(std::string_view role, const boost::json::object& e,
                                      std::initializer_list<std::string_view> fields) {
  boost::json::object m;
  m["role"] = role;
  for (auto key : fields)
    if (const auto* v = e.if_contains(key)) m[key] = *v;
  m["timestamp"] = entry_time_ms(e);
  return m;
}
}  // namespace

boost::json::value entry_time_ms(const boost::json::object& e) {
  const auto* ts = e.if_contains("timestamp");
  if (!ts) return nullptr;
  if (ts->is_string()) {
    auto ms = parse_iso_ms(ts->get_string());
    return ms ? boost::json::value(*ms) : boost::json::value(nullptr);
  }
  // JavaScript's Date holds at most ±8.64e15 ms; beyond it getTime() is NaN (and the cast UB).
  if (auto n = json::as_number(*ts); n && std::isfinite(*n) && std::fabs(*n) <= 8.64e15)
    return static_cast<std::int64_t>(*n);
  return nullptr;
}

boost::json::object custom_context_message(const boost::json::object& e) {
  return synthetic_message("custom", e, {"customType", "content", "display", "details"});
}

boost::json::object branch_summary_context_message(const boost::json::object& e) {
  return synthetic_message("branchSummary", e, {"summary", "fromId"});
}

boost::json::object compaction_summary_context_message(const boost::json::object& e) {
  return synthetic_message("compactionSummary", e, {"summary", "tokensBefore"});
}

}  // namespace sessionrt
