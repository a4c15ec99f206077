// midturn_precheck: the answer to a runner's mid-turn question "does the context still fit?"
// (messages/model_runner.hpp context_precheck; OpenClaw compaction.midTurnPrecheck, the fix
// for [R table row 5]: tool loops that overflow right after each compaction).
//   tokens = the request's estimate + estimate_tokens of every added message
//   tokens <= threshold (window - effective reserve)            -> fits
//   else, when cutting the added tool results can win back the excess (they hold more tokens
//   than tokens - threshold), and each keeps at least kMinToolResultChars -> truncate, with
//   the largest per-result size that fits: (budget left for tool results) / (count) x 4 chars
//   else                                                        -> compact
// Pure: no clock, no I/O; the precheck object captures the numbers when the request is built.
#pragma once
#include <boost/json/array.hpp>
#include <cstdint>
#include <memory>

#include "messages/model_runner.hpp"

namespace sessionrt::actors {

inline constexpr std::size_t kMinToolResultChars = 2000;

precheck_answer decide_precheck(std::int64_t request_tokens, std::int64_t threshold, const boost::json::array& added);

std::shared_ptr<const context_precheck> make_context_precheck(std::int64_t request_tokens, std::int64_t threshold);

}  // namespace sessionrt::actors
