// reset_trigger: is an inbound body a session reset command, and what is left of it [R§4.3, R§4.4].
// The reset row's rule of the command table: sessions recognize commands through
// recognize_chat_command (chat_commands.hpp), which reads these rules first; the rollover's
// tests and benches call parse_reset_trigger directly. Pure text rules, no state. The caller passes the command body (BodyForCommands: the text the
// user typed, without structural prefixes such as "[Dec 4 17:35] "), whether the chat is a
// group, the bot's names, and whether the sender may reset; it owns the result.
//
// Matching (case-insensitive, ASCII case folding; whitespace is ASCII whitespace):
//   - the body is trimmed; in groups leading bot mentions ("@bot", "<@bot>", "<@!bot>", with an
//     optional ':' or ',') are stripped; "/cmd@bot ..." becomes "/cmd ..." when bot is one of
//     the bot names; "/cmd: rest" becomes "/cmd rest";
//   - "/reset soft [tail]" is a soft reset (keeps the session), never a rollover;
//   - otherwise, for each trigger in order: body == trigger -> reset with no first message;
//     body starts with trigger + whitespace -> reset, the rest (leading whitespace removed,
//     its own case and line breaks kept) is the first message of the new session. OpenClaw
//     only accepts a space there; a line break is accepted too so that "/new\nhello" keeps
//     "hello" instead of being sent to the old session;
//   - an unauthorized sender matches nothing (the text is an ordinary message).
// `/new <model>`: parse_reset_model() reads the first message against a model catalog.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/session/reset_policy.hpp"

namespace sessionrt::actors {

const std::vector<std::string>& default_reset_triggers();  // {"/new", "/reset"}

struct reset_trigger_options {
  std::vector<std::string> triggers;  // session.resetTriggers; empty = default_reset_triggers()
  bool sender_authorized = true;
  bool is_group = false;
  std::vector<std::string> bot_names;  // without '@'; used for mentions and "/cmd@bot"
};

enum class reset_command { none, reset, soft_reset };

struct reset_trigger_result {
  reset_command command = reset_command::none;
  std::string matched_trigger;  // lowercase; set for reset
  std::string first_message;    // reset: text after the trigger; soft_reset: the tail

  // resolveExplicitSessionEndReason: "/reset" -> reset, any other trigger -> new.
  session_end_reason explicit_reason() const;
};

reset_trigger_result parse_reset_trigger(std::string_view body, const reset_trigger_options& options);

// The models `/new <model>` may pick.
struct model_catalog {
  std::vector<std::string> allowed_keys;          // "provider/model"
  std::map<std::string, std::string> aliases;     // alias -> "provider/model" (alias case-insensitive)
  std::vector<std::string> provider_ids;          // besides the providers of allowed_keys
  std::string default_provider;                   // a bare model name resolves to default_provider/name
  std::string default_key;                        // "provider/model" of the configured default
};

// The override `/new <model>` writes: providerOverride, modelOverride, modelOverrideSource "user".
struct model_selection {
  std::string provider;
  std::string model;
  bool is_default = false;  // the configured default: clears the override instead
};

struct reset_model_choice {
  std::optional<model_selection> selection;
  std::string first_message;  // what is sent as the first prompt
};

// applyResetModelOverride [R§4.4] on the reset's first message:
//   1. first token a provider id and a second token: "<provider>/<second>" (consumes 2);
//   2. first token as an alias, a "provider/model" key, or default_provider/first (consumes 1);
//   3. only if the first token is a provider id or has >= 6 characters: fuzzy — the unique
//      allowed key containing it (case-insensitive substring); none or several -> no match.
// On a match the remaining tokens, joined by single spaces, are the first message; otherwise
// (or with an empty catalog) the whole text is, unchanged.
reset_model_choice parse_reset_model(std::string_view first_message, const model_catalog& catalog);

}  // namespace sessionrt::actors
