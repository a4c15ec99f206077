#include "messages/context_message.hpp"

#include <cmath>

#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"

namespace sessionrt {
namespace {
void copy_if(boost::json::object& out, const boost::json::object& in, std::string_view key) {
  if (const auto* v = in.if_contains(key)) out[key] = *v;
}
}  // namespace

boost::json::value entry_time_ms(const boost::json::object& e) {
  const auto* ts = e.if_contains("timestamp");
  if (!ts) return nullptr;
  if (ts->is_string()) {
    auto ms = parse_iso_ms(ts->get_string());
    return ms ? boost::json::value(*ms) : boost::json::value(nullptr);
  }
  if (auto n = json::as_number(*ts); n && std::isfinite(*n)) return static_cast<std::int64_t>(*n);
  return nullptr;
}

boost::json::object custom_context_message(const boost::json::object& e) {
  boost::json::object m;
  m["role"] = "custom";
  copy_if(m, e, "customType");
  copy_if(m, e, "content");
  copy_if(m, e, "display");
  copy_if(m, e, "details");
  m["timestamp"] = entry_time_ms(e);
  return m;
}

boost::json::object branch_summary_context_message(const boost::json::object& e) {
  boost::json::object m;
  m["role"] = "branchSummary";
  copy_if(m, e, "summary");
  copy_if(m, e, "fromId");
  m["timestamp"] = entry_time_ms(e);
  return m;
}

boost::json::object compaction_summary_context_message(const boost::json::object& e) {
  boost::json::object m;
  m["role"] = "compactionSummary";
  copy_if(m, e, "summary");
  copy_if(m, e, "tokensBefore");
  m["timestamp"] = entry_time_ms(e);
  return m;
}

}  // namespace sessionrt
