// context_builder: the model context of a transcript, as pi's buildSessionContext() builds it
// [R§3.6]: the path from a leaf to the root, cut at the latest compaction on that path
// (summary first, then the kept entries from firstKeptEntryId up to the compaction, then
// everything after it); messages, custom messages and non-empty branch summaries enter it;
// thinkingLevel and model come from the last thinking_level_change / model_change / assistant
// message on the path.
// The walk stops as soon as the answer is known: after a compaction written by sessionrt
// (its details.sessionrt holds the thinking level and model at that point) the walk ends at
// firstKeptEntryId, so the cost follows the context, not the file. Compactions from other
// writers carry no such note; the walk then skims up to the root (index only, no parsing).
#pragma once
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "messages/status.hpp"
#include "storage/transcript_reader.hpp"

namespace sessionrt::storage {

struct session_context {
  boost::json::array messages;
  std::optional<boost::json::value> thinking_level;  // "off" by default; absent if the entry had none
  boost::json::value model = nullptr;                // {provider, modelId} or null
  std::optional<std::string> leaf_id;
  std::size_t path_entries_walked = 0;
  // Messages in the whole context; more than messages.size() when build_context was asked for
  // only the last ones.
  std::size_t total_messages = 0;
  std::size_t unreadable_entries = 0;  // context lines that did not parse (skipped)
  bool cycle_detected = false;

  // {messages, thinkingLevel, model}: what pi's buildSessionContext() returns.
  boost::json::object to_json() const;
};

// Which leaf to build from: the active leaf, an entry id, or explicitly none (empty context).
// An id that is not in the file falls back to the last entry, as pi does.
struct leaf_selector {
  enum class kind { active, id, none } which = kind::active;
  std::string id;
  static leaf_selector active() { return {}; }
  static leaf_selector of(std::string id) { return {kind::id, std::move(id)}; }
  static leaf_selector nothing() { return {kind::none, {}}; }
};

// `last_messages` > 0: only the context's last that many messages are read and returned (a
// history page): the path is walked on the index alone, and only the entries returned are
// parsed, so the cost follows the page, not the session (total_messages still counts all).
result<session_context> build_context(transcript_reader& reader, const leaf_selector& leaf = leaf_selector::active(),
                                      std::size_t last_messages = 0);

// Thinking level and model in effect at `leaf` (what a compaction appended after it records
// in details.sessionrt).
struct path_state {
  std::optional<boost::json::value> thinking_level;
  boost::json::value model = nullptr;
  boost::json::object to_json() const;  // {"thinkingLevel":..,"model":..}
};
result<path_state> state_at(transcript_reader& reader, std::optional<transcript_reader::position> leaf);

// The entries a compaction planner needs, root side first: from the latest compaction's
// firstKeptEntryId (or the root when there is none) to `leaf`. Planning on this stretch gives
// what planning on the whole path gives (the planner starts at that boundary anyway), and it
// costs what the context costs. Lines that do not parse are left out.
result<std::vector<std::shared_ptr<const boost::json::object>>> path_entries(
    transcript_reader& reader, std::optional<transcript_reader::position> leaf);

// Cuts a path (leaf first) that ran around a parent cycle just before its first repeated entry:
// pi stops its walk there too. Shared by build_context and the history page (context_page).
void truncate_at_repeat(std::vector<transcript_reader::position>& path);

// The key under a compaction's `details` where sessionrt records the path state.
inline constexpr const char* kCompactionStateKey = "sessionrt";

}  // namespace sessionrt::storage
