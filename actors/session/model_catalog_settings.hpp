// model_catalog_settings: the models a session may be switched to with `/new <model>` [R§4.4],
// as the config's `models.catalog[]` lists them: {"provider", "id", "aliases": [...],
// "contextWindow"}. Plain values read by runtime/config.cpp; an empty catalog means `/new
// <text>` never picks a model (the whole text is the new session's first message).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sessionrt::actors {

struct catalog_model {
  std::string provider;                        // "openai"
  std::string id;                              // "gpt-4o"
  std::vector<std::string> aliases;            // "4o", "fast", ... (matched case-insensitively)
  std::optional<std::int64_t> context_window;  // tokens; unset: model.contextWindow
};

using model_catalog_settings = std::vector<catalog_model>;

}  // namespace sessionrt::actors
