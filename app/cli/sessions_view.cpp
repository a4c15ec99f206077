#include "app/cli/sessions_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "actors/session/session_model.hpp"
#include "actors/router/session_key.hpp"
#include "runtime/cli/offline_stores.hpp"

namespace sessionrt::runtime {

namespace bj = boost::json;

std::optional<std::int64_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 15 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return std::stoll(std::string(text));
}

std::string_view session_kind(std::string_view key, const session_entry& entry) {
  if (key == actors::global_session_key) return "global";
  auto parsed = actors::parse_agent_session_key(key);
  std::string_view rest = parsed ? std::string_view(parsed->rest) : key;
  if (rest.rfind("cron:", 0) == 0) return "cron";
  if (rest.rfind("subagent:", 0) == 0 || entry.spawned_by()) return "spawn-child";
  auto chat = entry.chat_type();
  if (actors::is_group_key(key) || (chat && (*chat == "group" || *chat == "channel"))) return "group";
  if (parsed) return "direct";
  return "unknown";
}

std::string display_model(const session_entry& e, const actors::runtime_settings& s) {
  if (auto m = e.model_override(); m && !m->empty()) return std::string(*m);
  if (auto m = e.model(); m && !m->empty()) return std::string(*m);
  return actors::default_model(s).model;
}

std::string display_provider(const session_entry& e, const actors::runtime_settings& s) {
  if (auto p = e.provider_override(); p && !p->empty()) return std::string(*p);
  if (auto p = e.model_provider(); p && !p->empty()) return std::string(*p);
  return actors::default_model(s).provider;
}

std::int64_t context_tokens_of(const session_entry& e, const actors::runtime_settings& s) {
  if (auto c = e.context_tokens(); c && *c > 0) return *c;
  const std::int64_t window = actors::default_model(s).context_window;
  return window > 0 ? window : 200000;
}

namespace {

std::string k_text(std::int64_t n) {
  if (n < 1000) return std::to_string(n);
  if (n % 1000 == 0) return fmt::format("{}k", n / 1000);
  return fmt::format("{:.1f}k", static_cast<double>(n) / 1000);
}

}  // namespace

std::string tokens_text(const session_entry& e, const actors::runtime_settings& s) {
  const std::int64_t ctx = context_tokens_of(e, s);
  auto total = e.total_tokens();
  if (!total) return fmt::format("-/{}", k_text(ctx));
  auto pct = std::min<std::int64_t>(999, std::llround(static_cast<double>(*total) / static_cast<double>(ctx) * 100));
  return fmt::format("{}/{} ({}%)", k_text(*total), k_text(ctx), pct);
}

bj::object session_json(const listed_row& row, const actors::runtime_settings& s, std::int64_t now) {
  const auto& src = row.entry->json();
  bj::object o;
  auto copy = [&](const char* field) {
    if (const auto* v = src.if_contains(field)) o[field] = *v;
  };
  o["key"] = row.key;
  copy("updatedAt");
  if (auto at = row.entry->updated_at()) o["ageMs"] = std::max<std::int64_t>(0, now - *at);
  for (const char* f : {"sessionId", "sessionFile", "spawnedBy", "spawnedWorkspaceDir", "spawnedCwd", "parentSessionKey",
                        "forkedFromParent", "spawnDepth", "subagentRole", "subagentControlScope", "sessionStartedAt",
                        "lastInteractionAt", "label", "status", "systemSent", "abortedLastRun", "thinkingLevel",
                        "verboseLevel", "traceLevel", "reasoningLevel", "elevatedLevel", "responseUsage",
                        "groupActivation", "inputTokens", "outputTokens"})
    copy(f);
  if (auto t = row.entry->total_tokens())
    o["totalTokens"] = *t;
  else
    o["totalTokens"] = nullptr;
  o["totalTokensFresh"] = row.entry->total_tokens_fresh().value_or(row.entry->total_tokens().has_value());
  if (auto m = display_model(*row.entry, s); !m.empty()) o["model"] = m;
  if (auto p = display_provider(*row.entry, s); !p.empty()) o["modelProvider"] = p;
  copy("providerOverride");
  copy("modelOverride");
  o["contextTokens"] = context_tokens_of(*row.entry, s);
  o["agentId"] = row.agent_id;
  o["acpRuntime"] = false;
  o["kind"] = std::string(session_kind(row.key, *row.entry));
  // Beyond [R§11.1]: where the row's messages come from (the audit's fixes point here).
  copy("chatType");
  copy("origin");
  copy("lastTo");
  copy("deliveryContext");
  return o;
}

std::size_t key_column_width(const std::vector<listed_row>& rows) {
  std::size_t width = 26;
  for (const auto& r : rows) width = std::max(width, r.key.size());
  return width;
}

std::string table_header(bool with_agent, std::size_t key_width) {
  std::string h;
  if (with_agent) h += pad("Agent", 10);
  h += pad("Kind", 11) + pad("Key", key_width) + pad("Age", 9) + pad("Model", 14) + pad("Runtime", 18) +
       pad("Tokens (ctx %)", 20) + "Flags";
  return h;
}

std::string table_line(const listed_row& row, const actors::runtime_settings& s, std::int64_t now, bool with_agent,
                       std::size_t key_width) {
  const auto& e = *row.entry;
  std::string line;
  if (with_agent) line += pad(row.agent_id, 10);
  auto at = e.updated_at();
  std::string model = display_model(e, s);
  line += pad(session_kind(row.key, e), 11) + pad(row.key, key_width) + pad(at ? age_text(now - *at) : "-", 9) +
          pad(model.empty() ? "-" : model, 14) + pad("sessionrt", 18) + pad(tokens_text(e, s), 20);
  std::vector<std::string> flags;
  const auto& j = e.json();
  auto flag = [&](const char* field, const char* name) {
    if (const auto* v = j.if_contains(field); v && v->is_string() && !v->get_string().empty())
      flags.push_back(fmt::format("{}:{}", name, std::string_view(v->get_string())));
  };
  flag("thinkingLevel", "think");
  flag("verboseLevel", "verbose");
  flag("traceLevel", "trace");
  flag("reasoningLevel", "reasoning");
  flag("elevatedLevel", "elev");
  flag("responseUsage", "usage");
  flag("groupActivation", "activation");
  if (auto v = json::get_bool(j, "systemSent"); v && *v) flags.push_back("system");
  if (auto v = json::get_bool(j, "abortedLastRun"); v && *v) flags.push_back("aborted");
  if (auto id = e.session_id()) flags.push_back(fmt::format("id:{}", *id));
  std::string joined;
  for (const auto& f : flags) joined += (joined.empty() ? "" : " ") + f;
  line += joined;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace sessionrt::runtime
