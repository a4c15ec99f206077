// sessions_view: one row of sessions.json as `sessionrt sessions` shows it [R§11.1]: the JSON
// object of a listed session (fields the row does not have are omitted, as JavaScript drops
// `undefined`) and the table line `[Agent(10)] Kind(11) Key(26, or the longest key) Age(9)
// Model(14) Runtime(18) Tokens (ctx %)(20) Flags`. Pure formatting over a row the caller keeps alive.
#pragma once
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/runtime_settings.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::runtime {

struct listed_row {
  std::string agent_id;
  std::string key;
  const session_entry* entry = nullptr;
};

// "direct" | "group" | "cron" | "spawn-child" | "global" | "unknown".
std::string_view session_kind(std::string_view key, const session_entry& entry);
// modelOverride > model > the configured model.model; likewise the provider.
std::string display_model(const session_entry& entry, const actors::runtime_settings& settings);
std::string display_provider(const session_entry& entry, const actors::runtime_settings& settings);
// contextTokens of the row, else the configured model.contextWindow.
std::int64_t context_tokens_of(const session_entry& entry, const actors::runtime_settings& settings);
// "12.3k/200k (6%)"; "-/200k" when totalTokens is unknown.
std::string tokens_text(const session_entry& entry, const actors::runtime_settings& settings);

boost::json::object session_json(const listed_row& row, const actors::runtime_settings& settings, std::int64_t now_ms);
// Keys are printed whole (they are what --session, --active-key and the gateway take): the Key
// column is as wide as the longest key shown, 26 at least.
std::size_t key_column_width(const std::vector<listed_row>& rows);
std::string table_header(bool with_agent, std::size_t key_width = 26);
std::string table_line(const listed_row& row, const actors::runtime_settings& settings, std::int64_t now_ms,
                       bool with_agent, std::size_t key_width = 26);

// A whole number >= 0 written in decimal digits only (no sign, no spaces), else nullopt.
std::optional<std::int64_t> parse_count(std::string_view text);

}  // namespace sessionrt::runtime
