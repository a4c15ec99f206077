// Expectations from [R§4.3] (trigger matching, soft reset, groups, authorization) and [R§4.4]
// (`/new <model>`), plus the documented widenings in reset_trigger.hpp.
#include <catch2/catch.hpp>

#include "actors/session/reset_trigger.hpp"

using namespace sessionrt::actors;

namespace {

struct trigger_case {
  const char* body;
  reset_command command;
  const char* trigger;  // matched trigger (reset only)
  const char* first;    // first message / soft-reset tail
};

void check_table(const reset_trigger_options& options, std::initializer_list<trigger_case> table) {
  for (const auto& c : table) {
    INFO("body: \"" << c.body << "\"");
    auto r = parse_reset_trigger(c.body, options);
    CHECK(r.command == c.command);
    if (c.command == reset_command::reset) CHECK(r.matched_trigger == c.trigger);
    if (c.command != reset_command::none) CHECK(r.first_message == c.first);
  }
}

model_catalog catalog() {
  model_catalog c;
  c.allowed_keys = {"anthropic/claude-opus-4", "anthropic/claude-sonnet-4", "openai/gpt-4o", "openai/o3",
                    "google/gemini-2.5-pro"};
  c.aliases = {{"opus", "anthropic/claude-opus-4"}, {"sonnet", "anthropic/claude-sonnet-4"}};
  c.provider_ids = {"ollama"};
  c.default_provider = "anthropic";
  c.default_key = "anthropic/claude-sonnet-4";
  return c;
}

}  // namespace

TEST_CASE("default triggers /new and /reset: exact, with a first message, any case [R§4.3]") {
  reset_trigger_options dm;
  check_table(dm, {
                      {"/new", reset_command::reset, "/new", ""},
                      {"/reset", reset_command::reset, "/reset", ""},
                      {"  /NEW  ", reset_command::reset, "/new", ""},
                      {"/Reset", reset_command::reset, "/reset", ""},
                      {"/new hello there", reset_command::reset, "/new", "hello there"},
                      {"/NEW Hello World", reset_command::reset, "/new", "Hello World"},
                      {"/new    spaced out  ", reset_command::reset, "/new", "spaced out"},
                      {"/new: hello", reset_command::reset, "/new", "hello"},
                      {"/new\nfirst line\nsecond line", reset_command::reset, "/new", "first line\nsecond line"},
                      {"/newer", reset_command::none, "", ""},
                      {"/new-chat", reset_command::none, "", ""},
                      {"hello /new", reset_command::none, "", ""},
                      {"new", reset_command::none, "", ""},
                      {"", reset_command::none, "", ""},
                  });
  CHECK(parse_reset_trigger("/new", dm).explicit_reason() == sessionrt::actors::session_end_reason::new_session);
  CHECK(parse_reset_trigger("/RESET", dm).explicit_reason() == sessionrt::actors::session_end_reason::reset);
}

TEST_CASE("/reset soft keeps the session, it is not a rollover [R§4.3]") {
  reset_trigger_options dm;
  check_table(dm, {
                      {"/reset soft", reset_command::soft_reset, "", ""},
                      {"/RESET SOFT", reset_command::soft_reset, "", ""},
                      {"/reset   soft   keep the plan", reset_command::soft_reset, "", "keep the plan"},
                      {"/reset softly", reset_command::reset, "/reset", "softly"},
                      {"/reset hard", reset_command::reset, "/reset", "hard"},
                      {"/resetsoft", reset_command::none, "", ""},
                  });
}

TEST_CASE("configured triggers replace the defaults [R§4.3]") {
  reset_trigger_options options;
  options.triggers = {"/fresh", "!Restart"};
  check_table(options, {
                           {"/fresh", reset_command::reset, "/fresh", ""},
                           {"!restart now please", reset_command::reset, "!restart", "now please"},
                           {"/new", reset_command::none, "", ""},
                           {"/reset", reset_command::none, "", ""},
                           // The soft form is recognized whatever the triggers are.
                           {"/reset soft", reset_command::soft_reset, "", ""},
                       });
  CHECK(parse_reset_trigger("/fresh", options).explicit_reason() == session_end_reason::new_session);
}

TEST_CASE("group bodies: leading bot mentions and /cmd@bot forms [R§4.3]") {
  reset_trigger_options group;
  group.is_group = true;
  group.bot_names = {"clawbot"};
  check_table(group, {
                         {"@clawbot /new", reset_command::reset, "/new", ""},
                         {"@ClawBot: /new hi there", reset_command::reset, "/new", "hi there"},
                         {"<@clawbot> /reset", reset_command::reset, "/reset", ""},
                         {"<@!clawbot>, /reset", reset_command::reset, "/reset", ""},
                         {"@clawbot @clawbot /new", reset_command::reset, "/new", ""},
                         {"/new@clawbot", reset_command::reset, "/new", ""},
                         {"/new@ClawBot hello", reset_command::reset, "/new", "hello"},
                         {"@clawbot /reset soft", reset_command::soft_reset, "", ""},
                         {"/new@otherbot", reset_command::none, "", ""},
                         {"@someone /new", reset_command::none, "", ""},
                         {"@clawbotty /new", reset_command::none, "", ""},
                     });
  // Mentions are stripped in groups only; "/cmd@bot" is normalized everywhere.
  reset_trigger_options dm;
  dm.bot_names = {"clawbot"};
  check_table(dm, {
                      {"@clawbot /new", reset_command::none, "", ""},
                      {"/new@clawbot", reset_command::reset, "/new", ""},
                  });
}

TEST_CASE("an unauthorized sender cannot reset, softly or not [R§4.3]") {
  reset_trigger_options options;
  options.sender_authorized = false;
  check_table(options, {
                           {"/new", reset_command::none, "", ""},
                           {"/reset hello", reset_command::none, "", ""},
                           {"/reset soft", reset_command::none, "", ""},
                       });
}

TEST_CASE("/new <model>: provider + model, alias or key, fuzzy, or plain first message [R§4.4]") {
  const auto c = catalog();
  struct row {
    const char* text;
    const char* provider;  // nullptr: no selection
    const char* model;
    const char* first;
  };
  const row table[] = {
      {"openai gpt-4o write a poem", "openai", "gpt-4o", "write a poem"},  // 2 tokens
      {"OpenAI GPT-4o hi", "openai", "gpt-4o", "hi"},
      {"opus summarize this", "anthropic", "claude-opus-4", "summarize this"},  // alias
      {"OPUS hi", "anthropic", "claude-opus-4", "hi"},
      {"openai/o3 hi", "openai", "o3", "hi"},                                   // key
      {"claude-opus-4 hi", "anthropic", "claude-opus-4", "hi"},                 // default provider
      {"gemini what is new", "google", "gemini-2.5-pro", "what is new"},        // fuzzy, 6 chars
      {"google", "google", "gemini-2.5-pro", ""},                               // fuzzy, provider id
      {"opus   multiple   spaces", "anthropic", "claude-opus-4", "multiple spaces"},
      {"o3 hello", nullptr, nullptr, "o3 hello"},                  // short, not a provider: no fuzzy
      {"hello there friend", nullptr, nullptr, "hello there friend"},  // 5 chars: no fuzzy
      {"claude what's up", nullptr, nullptr, "claude what's up"},  // fuzzy ambiguous (opus, sonnet)
      {"openai", nullptr, nullptr, "openai"},                      // provider, fuzzy ambiguous
      {"openai unknown  tell me", nullptr, nullptr, "openai unknown  tell me"},
      {"ollama llama3 hi", nullptr, nullptr, "ollama llama3 hi"},  // provider id without allowed key
  };
  for (const auto& r : table) {
    INFO(r.text);
    auto choice = parse_reset_model(r.text, c);
    CHECK(choice.first_message == r.first);
    if (!r.provider) {
      CHECK_FALSE(choice.selection);
      continue;
    }
    REQUIRE(choice.selection);
    CHECK(choice.selection->provider == r.provider);
    CHECK(choice.selection->model == r.model);
  }
  auto def = parse_reset_model("sonnet", c);
  REQUIRE(def.selection);
  CHECK(def.selection->is_default);
  CHECK_FALSE(parse_reset_model("opus", c).selection->is_default);

  auto empty = parse_reset_model("opus hi", model_catalog{});
  CHECK_FALSE(empty.selection);
  CHECK(empty.first_message == "opus hi");
  CHECK(parse_reset_model("", c).first_message.empty());
}
