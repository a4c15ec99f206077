#include "actors/session/reset_trigger.hpp"

#include <algorithm>
#include <set>

#include "messages/ascii_text.hpp"

namespace sessionrt::actors {
namespace {

bool ends_word(std::string_view rest) {
  return rest.empty() || ascii_is_blank(rest.front()) || rest.front() == ':' || rest.front() == ',';
}

// One leading "@bot", "<@bot>" or "<@!bot>" (plus an optional ':' or ','), if present.
bool strip_one_mention(std::string_view& s, const std::vector<std::string>& bot_names) {
  for (const auto& name : bot_names) {
    if (name.empty()) continue;
    for (const std::string& form : {"@" + name, "<@" + name + ">", "<@!" + name + ">"}) {
      if (!ascii_istarts_with(s, form) || !ends_word(s.substr(form.size()))) continue;
      s.remove_prefix(form.size());
      if (!s.empty() && (s.front() == ':' || s.front() == ',')) s.remove_prefix(1);
      return true;
    }
  }
  return false;
}

std::string_view strip_leading_mentions(std::string_view s, const std::vector<std::string>& bot_names) {
  s = ascii_trim_start(s);
  while (strip_one_mention(s, bot_names)) s = ascii_trim_start(s);
  return s;
}

bool is_bot_name(std::string_view name, const std::vector<std::string>& bot_names) {
  return std::any_of(bot_names.begin(), bot_names.end(), [&](const std::string& b) { return ascii_iequals(b, name); });
}

// "/cmd: rest" -> "/cmd rest"; "/cmd@bot rest" -> "/cmd rest" for one of our bots.
std::string normalize_command(std::string_view body, const std::vector<std::string>& bot_names) {
  if (body.empty() || body.front() != '/') return std::string(body);
  std::size_t end = 1;
  while (end < body.size() && !ascii_is_blank(body[end]) && body[end] != ':') ++end;
  std::string command(body.substr(0, end));
  if (auto at = command.find('@'); at != std::string::npos && is_bot_name(std::string_view(command).substr(at + 1), bot_names))
    command.resize(at);
  std::string_view rest = body.substr(end);
  std::size_t colon = rest.find_first_not_of(" \t");
  if (colon != std::string_view::npos && rest[colon] == ':') {
    rest = ascii_trim_start(rest.substr(colon + 1));
    return rest.empty() ? command : command + " " + std::string(rest);
  }
  return command + std::string(rest);
}

// parseSoftResetCommand: "/reset soft" or "/reset soft <tail>".
std::optional<std::string> soft_reset_tail(std::string_view body) {
  constexpr std::string_view reset = "/reset";
  if (!ascii_istarts_with(body, reset)) return std::nullopt;
  std::string_view rest = body.substr(reset.size());
  if (!rest.empty() && !ascii_is_blank(rest.front())) return std::nullopt;
  rest = ascii_trim_start(rest);
  constexpr std::string_view soft = "soft";
  if (!ascii_istarts_with(rest, soft)) return std::nullopt;
  rest = rest.substr(soft.size());
  if (!rest.empty() && !ascii_is_blank(rest.front())) return std::nullopt;
  return std::string(ascii_trim_start(rest));
}

std::vector<std::string_view> split_tokens(std::string_view s) {
  std::vector<std::string_view> tokens;
  while (true) {
    s = ascii_trim_start(s);
    if (s.empty()) return tokens;
    std::size_t n = 0;
    while (n < s.size() && !ascii_is_blank(s[n])) ++n;
    tokens.push_back(s.substr(0, n));
    s.remove_prefix(n);
  }
}

std::size_t code_points(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

class model_resolver {
 public:
  explicit model_resolver(const model_catalog& catalog) : catalog_(catalog) {
    for (const auto& key : catalog.allowed_keys)
      if (auto slash = key.find('/'); slash != std::string::npos && slash > 0) providers_.insert(ascii_lower(key.substr(0, slash)));
    for (const auto& id : catalog.provider_ids) providers_.insert(ascii_lower(id));
  }

  bool is_provider(std::string_view token) const { return providers_.count(ascii_lower(token)) > 0; }

  std::optional<model_selection> exact(std::string_view raw) const {
    for (const auto& key : catalog_.allowed_keys)
      if (ascii_iequals(key, raw)) return selection_of(key);
    return std::nullopt;
  }

  // resolveModelRefFromString: alias, then "provider/model", then default_provider/<token>.
  std::optional<model_selection> explicit_ref(std::string_view token) const {
    for (const auto& [alias, key] : catalog_.aliases)
      if (ascii_iequals(alias, token)) return exact(key);
    if (token.find('/') != std::string_view::npos) return exact(token);
    if (catalog_.default_provider.empty()) return std::nullopt;
    return exact(catalog_.default_provider + "/" + std::string(token));
  }

  std::optional<model_selection> fuzzy(std::string_view token) const {
    std::string needle = ascii_lower(token);
    const std::string* found = nullptr;
    for (const auto& key : catalog_.allowed_keys) {
      if (ascii_lower(key).find(needle) == std::string::npos) continue;
      if (found && !ascii_iequals(*found, key)) return std::nullopt;  // ambiguous
      found = &key;
    }
    if (!found) return std::nullopt;
    return selection_of(*found);
  }

 private:
  model_selection selection_of(const std::string& key) const {
    auto slash = key.find('/');
    model_selection s;
    s.provider = slash == std::string::npos ? catalog_.default_provider : key.substr(0, slash);
    s.model = slash == std::string::npos ? key : key.substr(slash + 1);
    s.is_default = !catalog_.default_key.empty() && ascii_iequals(key, catalog_.default_key);
    return s;
  }

  const model_catalog& catalog_;
  std::set<std::string> providers_;
};

std::string join_from(const std::vector<std::string_view>& tokens, std::size_t first) {
  std::string out;
  for (std::size_t i = first; i < tokens.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += tokens[i];
  }
  return out;
}

}  // namespace

const std::vector<std::string>& default_reset_triggers() {
  static const std::vector<std::string> triggers{"/new", "/reset"};
  return triggers;
}

session_end_reason reset_trigger_result::explicit_reason() const {
  return matched_trigger == "/reset" ? session_end_reason::reset : session_end_reason::new_session;
}

reset_trigger_result parse_reset_trigger(std::string_view body, const reset_trigger_options& options) {
  reset_trigger_result result;
  if (!options.sender_authorized) return result;
  std::string_view trimmed = ascii_trim(body);
  if (options.is_group) trimmed = strip_leading_mentions(trimmed, options.bot_names);
  const std::string normalized = normalize_command(trimmed, options.bot_names);
  const std::optional<std::string> soft_tail = soft_reset_tail(normalized);
  const auto& triggers = options.triggers.empty() ? default_reset_triggers() : options.triggers;
  for (const auto& trigger : triggers) {
    if (trigger.empty()) continue;
    std::string_view rest = std::string_view(normalized);
    if (ascii_iequals(rest, trigger)) {
      result.command = reset_command::reset;
      result.matched_trigger = ascii_lower(trigger);
      return result;
    }
    if (!soft_tail && ascii_istarts_with(rest, trigger) && rest.size() > trigger.size() && ascii_is_blank(rest[trigger.size()])) {
      result.command = reset_command::reset;
      result.matched_trigger = ascii_lower(trigger);
      result.first_message = std::string(ascii_trim_start(rest.substr(trigger.size())));
      return result;
    }
  }
  if (soft_tail) {
    result.command = reset_command::soft_reset;
    result.first_message = *soft_tail;
  }
  return result;
}

reset_model_choice parse_reset_model(std::string_view first_message, const model_catalog& catalog) {
  reset_model_choice choice{std::nullopt, std::string(first_message)};
  const std::vector<std::string_view> tokens = split_tokens(first_message);
  if (tokens.empty() || catalog.allowed_keys.empty()) return choice;
  const model_resolver models(catalog);
  const std::string_view first = tokens[0];
  std::size_t consumed = 0;
  std::optional<model_selection> selection;
  if (models.is_provider(first) && tokens.size() >= 2) {
    selection = models.exact(ascii_lower(first) + "/" + std::string(tokens[1]));
    if (selection) consumed = 2;
  }
  if (!selection && (selection = models.explicit_ref(first))) consumed = 1;
  if (!selection && (models.is_provider(first) || code_points(first) >= 6) && (selection = models.fuzzy(first)))
    consumed = 1;
  if (!selection) return choice;
  choice.selection = std::move(selection);
  choice.first_message = join_from(tokens, consumed);
  return choice;
}

}  // namespace sessionrt::actors
