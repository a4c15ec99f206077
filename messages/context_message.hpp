// The messages a context holds for entries that are not plain messages, as pi builds them
// (messages.js createCustomMessage / createBranchSummaryMessage /
// createCompactionSummaryMessage): fields copied when present (absent ones stay absent, as
// JSON.stringify drops undefined), and timestamp = new Date(entry.timestamp).getTime() —
// epoch ms from an ISO string or a number, null where JavaScript gets NaN.
#pragma once
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace sessionrt {

boost::json::value entry_time_ms(const boost::json::object& entry);
boost::json::object custom_context_message(const boost::json::object& custom_message_entry);
boost::json::object branch_summary_context_message(const boost::json::object& branch_summary_entry);
boost::json::object compaction_summary_context_message(const boost::json::object& compaction_entry);

}  // namespace sessionrt
