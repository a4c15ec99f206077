// hygiene_report / hygiene_options: what the in-memory hygiene pipeline is told (config, the
// turn's facts) and what it did — one counter per rule, so the caller can emit an event.
// Counters only ever grow; `changed()` says whether a rule repaired something (the routine
// conversion to LLM form and the stripping of toolResult details do not count).
#pragma once
#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>

namespace sessionrt::actors::hygiene {

struct hygiene_options {
  // agents.defaults.imageMaxDimensionPx: the longer side of an image after sanitizing.
  int image_max_dimension_px = 1200;
  // Images larger than this many pixels (width x height) are not decoded; they become the
  // placeholder text (a decode would need width x height x 4 bytes).
  std::uint64_t image_max_pixels = 64ull << 20;
  int jpeg_quality = 85;
  // Tool names a call may use; empty = any non-blank name.
  std::unordered_set<std::string> allowed_tool_names;
  // Stamps synthetic tool results (the caller's clock); 0 = the assistant's own timestamp.
  std::int64_t now_ms = 0;
  // Time of the latest compaction; nullopt = taken from the context's compactionSummary message.
  std::optional<std::int64_t> latest_compaction_ms;
  // Turn bashExecution / custom / branchSummary / compactionSummary messages into the user
  // messages the provider sees (pi convertToLlm) before the rules run. Turn validation needs
  // it (those messages are user turns to the provider).
  bool llm_form = true;
};

struct hygiene_report {
  std::size_t converted_messages = 0;         // llm_form: non-LLM roles turned into user turns (or dropped)
  std::size_t provenance_marked = 0;          // inter-session marker added
  std::size_t blank_users_dropped = 0;
  std::size_t mirrors_dropped = 0;            // provider "openclaw" delivery-mirror / gateway-injected
  std::size_t silent_blocks_dropped = 0;      // NO_REPLY text blocks
  std::size_t reasoning_only_length_dropped = 0;
  std::size_t error_turns_rewritten = 0;      // empty error / zero-usage turn -> placeholder text
  std::size_t trailing_error_sentinels_popped = 0;
  std::size_t images_downscaled = 0;
  std::size_t images_replaced = 0;            // corrupted base64 / undecodable -> placeholder text
  std::size_t blank_text_blocks_dropped = 0;
  std::size_t signatures_stripped = 0;        // thinking blocks whose signature could not be replayed
  std::size_t thought_signatures_dropped = 0; // Gemini: non-base64 signature fields
  std::size_t reasoning_placeholders = 0;     // assistants emptied by thinking cleanup
  std::size_t thinking_blocks_dropped = 0;    // drop_thinking_blocks / drop_reasoning_from_history
  std::size_t tool_calls_dropped = 0;         // invalid input, id or name; partialJson
  std::size_t tool_names_trimmed = 0;
  std::size_t empty_assistants_dropped = 0;
  std::size_t tool_call_ids_rewritten = 0;    // ids changed (calls and results)
  std::size_t synthetic_results_inserted = 0;
  std::size_t synthetic_results_replaced = 0; // a real result later in the history took its place
  std::size_t displaced_results_moved = 0;
  std::size_t orphan_results_dropped = 0;
  std::size_t duplicate_results_dropped = 0;
  std::size_t errored_results_dropped = 0;    // errored_result_policy::drop
  std::size_t unanswered_calls_removed = 0;   // no result and no synthesis allowed / errored turn
  std::size_t result_details_stripped = 0;
  std::size_t bootstrap_inserted = 0;         // "(session bootstrap)"
  std::size_t assistant_turns_merged = 0;
  std::size_t user_turns_merged = 0;
  std::size_t dangling_tool_uses_dropped = 0;

  bool changed() const;
  // Non-zero counters only, camelCase keys ({"blankUsersDropped":1, ...}).
  boost::json::object to_json() const;
};

}  // namespace sessionrt::actors::hygiene
