// Fuzzes the sessions.json loader (load_from_text: parse, migrate, normalize).
// Whatever it accepts must be stable: serializing it and loading that again gives the same bytes
// and reports no further change (normalization is idempotent), and the per-row serialization
// cache agrees with a one-shot JSON.stringify of the same rows. Any violation aborts.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "messages/json_writer.hpp"
#include "storage/session_store_file.hpp"

using namespace sessionrt;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json::parse_limits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = 64;
  auto first = storage::load_from_text(text, limits);
  if (!first.ok()) return 0;

  const std::string bytes = storage::serialize_store(first->store, first->trailing_newline);
  auto second = storage::load_from_text(bytes, limits);
  if (!second.ok() || !second->changes.empty()) std::abort();
  if (second->trailing_newline != first->trailing_newline) std::abort();
  if (storage::serialize_store(second->store, second->trailing_newline) != bytes) std::abort();

  // The cached text after touching every other row equals a one-shot serialization.
  boost::json::object whole;
  bool touch = false;
  for (const auto& row : second->store) whole[row.key] = row.entry.json();
  for (const auto& [key, value] : whole) {
    if ((touch = !touch)) (void)second->store.find_for_update(key);
  }
  if (second->store.to_pretty() != json::to_pretty(whole)) std::abort();
  return 0;
}
