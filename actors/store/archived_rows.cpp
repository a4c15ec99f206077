#include "actors/store/archived_rows.hpp"

namespace sessionrt::actors {

bool row_text_archived(std::string_view text) {
  return text.find("\n    \"archivedAt\": ") != std::string_view::npos;
}

void archived_rows::reset(const storage::session_store& store) {
  keys_.clear();
  for (const auto& r : store)
    if (r.entry.json().contains("archivedAt")) keys_.emplace(r.key);
  known_ = true;
}

void archived_rows::forget() {
  keys_.clear();
  known_ = false;
}

void archived_rows::put(std::string_view key, bool archived) {
  if (!known_) return;
  if (archived)
    keys_.emplace(key);
  else if (auto it = keys_.find(std::string(key)); it != keys_.end())
    keys_.erase(it);
}

void archived_rows::erase(std::string_view key) { put(key, false); }

}  // namespace sessionrt::actors
