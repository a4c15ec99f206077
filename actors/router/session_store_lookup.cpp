#include "actors/router/session_store_lookup.hpp"

#include <algorithm>

#include "actors/router/session_key.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::actors {
namespace {

std::string string_field(const boost::json::object* o, std::string_view key) {
  if (o == nullptr) return {};
  auto v = json::get_string(*o, key);
  return v ? std::string(*v) : std::string();
}

// "room:!AbC:server" -> "!AbC:server": the opaque room id starts at the first '!' or '#'.
std::string delivery_target(std::string_view raw) {
  const std::string trimmed = js_trimmed(raw);
  const std::size_t sigil = trimmed.find_first_of("!#");
  return sigil == std::string::npos ? trimmed : trimmed.substr(sigil);
}

std::vector<std::string> entry_delivery_targets(const session_entry& entry) {
  const boost::json::object& o = entry.json();
  const boost::json::object* delivery = entry.delivery_context();
  const boost::json::object* origin = entry.origin();
  std::vector<std::string> targets;
  for (const std::string& raw : {string_field(delivery, "to"), string_field(&o, "lastTo"),
                                 string_field(origin, "nativeChannelId"),
                                 string_field(origin, "to"), string_field(&o, "groupId")}) {
    std::string target = delivery_target(raw);
    if (!target.empty()) targets.push_back(std::move(target));
  }
  return targets;
}

// String(value).trim() for a string or number id; "" otherwise.
std::string thread_id_text(const boost::json::value* v) {
  if (v == nullptr) return {};
  if (v->is_string()) return js_trimmed(v->get_string());
  if (v->is_number()) return json::to_compact(*v);
  return {};
}

// deliveryContext.threadId ?? lastThreadId ?? origin.threadId
std::string entry_thread_id(const session_entry& entry) {
  const boost::json::object* delivery = entry.delivery_context();
  const boost::json::object* origin = entry.origin();
  for (const boost::json::value* v : {delivery ? json::find(*delivery, "threadId") : nullptr,
                                      json::find(entry.json(), "lastThreadId"),
                                      origin ? json::find(*origin, "threadId") : nullptr})
    if (v != nullptr && !v->is_null()) return thread_id_text(v);
  return {};
}

bool proves_same_room(const session_entry* entry, const thread_suffix& key) {
  if (entry == nullptr) return false;
  const auto targets = entry_delivery_targets(*entry);
  const bool room_matches = std::any_of(targets.begin(), targets.end(),
                                        [&](const auto& t) { return key.base_key.find(t) != std::string::npos; });
  return room_matches && (key.thread_id.empty() || entry_thread_id(*entry) == key.thread_id);
}

double updated_at_of(const session_entry* entry) {
  if (entry == nullptr) return 0;
  return json::get_number(entry->json(), "updatedAt").value_or(0);
}

}  // namespace

store_lookup resolve_store_entry(std::string_view lookup_key,
                                 const std::vector<stored_session_row>& rows) {
  store_lookup out;
  out.normalized_key = normalize_session_key(lookup_key);
  const std::string folded = js_lowercase(out.normalized_key);
  const bool fold_needs_proof = requires_fold_proof(out.normalized_key);
  const thread_suffix key_thread = split_thread_suffix(out.normalized_key);

  const stored_session_row* winner = nullptr;
  for (const stored_session_row& row : rows)
    if (row.key == out.normalized_key) winner = &row;
  for (const stored_session_row& row : rows) {
    if (row.key == out.normalized_key) continue;
    const std::string normalized = normalize_session_key(row.key);
    const bool alias = normalized == out.normalized_key;
    const bool fold = !alias && folded != out.normalized_key && normalized == folded &&
                      (!fold_needs_proof || proves_same_room(row.entry, key_thread));
    if (!alias && !fold) continue;
    out.legacy_keys.emplace_back(row.key);
    if (winner == nullptr || updated_at_of(row.entry) > updated_at_of(winner->entry)) winner = &row;
  }
  if (winner != nullptr) out.found_key = std::string(winner->key);
  return out;
}

}  // namespace sessionrt::actors
