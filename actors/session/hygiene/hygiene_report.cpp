#include "actors/session/hygiene/hygiene_report.hpp"

#include <string_view>
#include <utility>

namespace sessionrt::actors::hygiene {
namespace {

template <class F>
void each_counter(const hygiene_report& r, F&& f) {
  f("convertedMessages", r.converted_messages);
  f("provenanceMarked", r.provenance_marked);
  f("blankUsersDropped", r.blank_users_dropped);
  f("mirrorsDropped", r.mirrors_dropped);
  f("silentBlocksDropped", r.silent_blocks_dropped);
  f("reasoningOnlyLengthDropped", r.reasoning_only_length_dropped);
  f("errorTurnsRewritten", r.error_turns_rewritten);
  f("trailingErrorSentinelsPopped", r.trailing_error_sentinels_popped);
  f("imagesDownscaled", r.images_downscaled);
  f("imagesReplaced", r.images_replaced);
  f("blankTextBlocksDropped", r.blank_text_blocks_dropped);
  f("signaturesStripped", r.signatures_stripped);
  f("thoughtSignaturesDropped", r.thought_signatures_dropped);
  f("reasoningPlaceholders", r.reasoning_placeholders);
  f("thinkingBlocksDropped", r.thinking_blocks_dropped);
  f("toolCallsDropped", r.tool_calls_dropped);
  f("toolNamesTrimmed", r.tool_names_trimmed);
  f("emptyAssistantsDropped", r.empty_assistants_dropped);
  f("toolCallIdsRewritten", r.tool_call_ids_rewritten);
  f("syntheticResultsInserted", r.synthetic_results_inserted);
  f("syntheticResultsReplaced", r.synthetic_results_replaced);
  f("displacedResultsMoved", r.displaced_results_moved);
  f("orphanResultsDropped", r.orphan_results_dropped);
  f("duplicateResultsDropped", r.duplicate_results_dropped);
  f("erroredResultsDropped", r.errored_results_dropped);
  f("unansweredCallsRemoved", r.unanswered_calls_removed);
  f("resultDetailsStripped", r.result_details_stripped);
  f("bootstrapInserted", r.bootstrap_inserted);
  f("assistantTurnsMerged", r.assistant_turns_merged);
  f("userTurnsMerged", r.user_turns_merged);
  f("danglingToolUsesDropped", r.dangling_tool_uses_dropped);
}

}  // namespace

bool hygiene_report::changed() const {
  bool any = false;
  each_counter(*this, [&](std::string_view key, std::size_t n) {
    // Routine on every turn of a session that has them: not worth an event.
    if (key == "convertedMessages" || key == "resultDetailsStripped") return;
    any = any || n > 0;
  });
  return any;
}

boost::json::object hygiene_report::to_json() const {
  boost::json::object o;
  each_counter(*this, [&](std::string_view key, std::size_t n) {
    if (n > 0) o[key] = n;
  });
  return o;
}

}  // namespace sessionrt::actors::hygiene
