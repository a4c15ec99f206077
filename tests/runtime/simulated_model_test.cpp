#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "actors/session/memory_flush_planner.hpp"
#include "actors/session/overflow_detector.hpp"
#include "actors/session/silent_reply.hpp"
#include "actors/session/summary_prompt.hpp"
#include "actors/session/token_estimate.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "runtime/simulated_model.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr std::int64_t kNow = 1767225600000;

boost::json::object assistant_reply(std::string_view text) {
  assistant_fields a;
  a.content.push_back(text_block(text));
  a.model = "claude-sonnet-4-6";
  a.usage.input = 5000;  // an old usage the simulated model must not reuse
  a.usage.output = 40;
  return assistant_message(std::move(a));
}

model_request turn_request(std::vector<boost::json::object> messages, std::string system_prompt = "") {
  model_request r;
  r.session_key = "agent:main:main";
  r.session_id = "s1";
  r.system_prompt = std::move(system_prompt);
  for (auto& m : messages) r.messages.push_back(std::move(m));
  return r;
}

std::string text_of(const boost::json::object& assistant) {
  const auto* content = json::get_array(assistant, "content");
  REQUIRE(content != nullptr);
  REQUIRE(content->size() == 1);
  return std::string(json::get_string(content->at(0).as_object(), "text").value_or(""));
}

const boost::json::object& usage_of(const boost::json::object& assistant) {
  const auto* usage = json::get_object(assistant, "usage");
  REQUIRE(usage != nullptr);
  return *usage;
}

std::int64_t int_at(const boost::json::object& o, std::string_view key) {
  auto v = json::get_int(o, key);
  REQUIRE(v.has_value());
  return *v;
}

// A user message whose estimate is exactly `tokens` (4 ASCII chars per token).
boost::json::object user_of_tokens(std::int64_t tokens) {
  return user_message(std::string(static_cast<std::size_t>(tokens) * 4, 'a'), kNow);
}

std::vector<boost::json::object> sample_conversation() {
  return {
      user_message("Refactor storage/session_store.cpp to use replace_file_atomic\nand keep the 0600 mode.", kNow),
      assistant_reply("Done: session_store.cpp now writes through replace_file_atomic."),
      user_message("You must never call system_clock::now() in rules.", kNow),
      assistant_reply("Agreed, the rules take a clock&."),
      user_message("Now add a test for the lock timeout.", kNow),
  };
}

model_request summary_request_for(const actors::summary_request& s) {
  model_request r;
  r.purpose = "compaction_summary";
  r.system_prompt = s.system_prompt;
  r.messages.push_back(user_message(s.user_text, kNow));
  r.max_tokens = s.max_tokens;
  return r;
}

std::string summary_via_model(simulated_model& model, const actors::summary_request& s) {
  auto answer = model.run(summary_request_for(s));
  REQUIRE(answer.ok());
  return text_of(*answer);
}

bool has_in_order(const std::string& text, const std::vector<std::string>& needles) {
  std::size_t at = 0;
  for (const auto& n : needles) {
    at = text.find(n, at);
    if (at == std::string::npos) return false;
    at += n.size();
  }
  return true;
}

const std::vector<std::string> kHeadings = {"## Goal\n", "## Constraints & Preferences\n", "## Progress\n",
                                            "### Done\n", "### In Progress\n", "### Blocked\n",
                                            "## Key Decisions\n", "## Next Steps\n", "## Critical Context\n"};

}  // namespace

TEST_CASE("simulated model: the same request gives byte-identical replies, other texts other replies") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto request = turn_request({user_message("Hello there, how is the build going today?", kNow)}, "You are terse.");
  auto first = model.run(request);
  auto second = model.run(request);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(json::to_compact(*first) == json::to_compact(*second));
  CHECK(text_of(*first).find("\"Hello there, how is the build going today?\"") != std::string::npos);

  simulated_model other_instance(clock);
  CHECK(json::to_compact(*other_instance.run(request)) == json::to_compact(*first));

  auto different = model.run(turn_request({user_message("Something else entirely", kNow)}));
  REQUIRE(different.ok());
  CHECK(text_of(*different) != text_of(*first));
}

TEST_CASE("simulated model: the assistant message has pi-ai shape, defaults and the clock's timestamp") {
  manual_clock clock(kNow + 42);
  simulated_model model(clock);
  auto answer = model.run(turn_request({user_message("hi", kNow)}));
  REQUIRE(answer.ok());
  CHECK(json::get_string(*answer, "role") == "assistant");
  CHECK(json::get_string(*answer, "api") == "sim");
  CHECK(json::get_string(*answer, "provider") == "sessionrt");
  CHECK(json::get_string(*answer, "model") == "sim-1");
  CHECK(json::get_string(*answer, "stopReason") == "stop");
  CHECK(int_at(*answer, "timestamp") == kNow + 42);
  CHECK(json::find(*answer, "errorMessage") == nullptr);

  auto request = turn_request({user_message("hi", kNow)});
  request.provider = "anthropic";
  request.model = "claude-sonnet-4-6";
  auto named = model.run(request);
  REQUIRE(named.ok());
  CHECK(json::get_string(*named, "provider") == "anthropic");
  CHECK(json::get_string(*named, "model") == "claude-sonnet-4-6");
}

TEST_CASE("simulated model: usage equals the token estimator on the same messages") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  std::vector<boost::json::object> context = {user_message("first question about the café ☕ menu", kNow),
                                              user_message("and a second, longer question 🙂", kNow)};
  std::string system_prompt = "You are a helpful assistant.";
  auto answer = model.run(turn_request(context, system_prompt));
  REQUIRE(answer.ok());
  const auto& usage = usage_of(*answer);

  auto context_estimate = actors::estimate_context_tokens(context).tokens;
  auto system_estimate = actors::estimate_tokens(user_message(system_prompt, 0));
  CHECK(int_at(usage, "input") == context_estimate + system_estimate);
  CHECK(int_at(usage, "output") == actors::estimate_tokens(*answer));
  CHECK(int_at(usage, "cacheRead") == 0);
  CHECK(int_at(usage, "cacheWrite") == 0);
  CHECK(int_at(usage, "totalTokens") == int_at(usage, "input") + int_at(usage, "output"));
  CHECK(actors::prompt_tokens_of_usage(usage) == int_at(usage, "input"));

  const auto* cost = json::get_object(usage, "cost");
  REQUIRE(cost != nullptr);
  CHECK(json::get_number(*cost, "input").value() == Approx(static_cast<double>(int_at(usage, "input")) * 3e-6));
  CHECK(json::get_number(*cost, "output").value() == Approx(static_cast<double>(int_at(usage, "output")) * 15e-6));
  CHECK(json::get_number(*cost, "total").value() ==
        Approx(json::get_number(*cost, "input").value() + json::get_number(*cost, "output").value()));

  auto counters = model.counters();
  CHECK(counters.turn_calls == 1);
  CHECK(counters.input_tokens == int_at(usage, "input"));
  CHECK(counters.output_tokens == int_at(usage, "output"));
}

TEST_CASE("simulated model: prompt tokens are counted afresh, not taken from an old usage in the context") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  std::vector<boost::json::object> context = {user_message("question", kNow), assistant_reply("answer"),
                                              user_message("follow-up", kNow)};
  auto answer = model.run(turn_request(context));
  REQUIRE(answer.ok());
  std::int64_t fresh = 0;
  for (const auto& m : context) fresh += actors::estimate_tokens(m);
  CHECK(int_at(usage_of(*answer), "input") == fresh);
  CHECK(actors::estimate_context_tokens(context).tokens > fresh);  // the usage base would be 5040 + ...
}

TEST_CASE("simulated model: ordinary replies are about reply_tokens long and max_tokens cuts them") {
  manual_clock clock(kNow);
  simulated_model_options options;
  options.reply_tokens = 100;
  simulated_model model(clock, options);
  auto answer = model.run(turn_request({user_message("Tell me about compaction", kNow)}));
  REQUIRE(answer.ok());
  auto output = int_at(usage_of(*answer), "output");
  CHECK(output >= 100);
  CHECK(output <= 130);

  auto request = turn_request({user_message("Tell me about compaction", kNow)});
  request.max_tokens = 10;
  auto cut = model.run(request);
  REQUIRE(cut.ok());
  CHECK(int_at(usage_of(*cut), "output") <= 10);
  CHECK(json::get_string(*cut, "stopReason") == "length");
}

TEST_CASE("simulated model: an overflow error is raised exactly when the prompt exceeds the window") {
  manual_clock clock(kNow);
  simulated_model_options options;
  options.context_window = 1000;
  simulated_model model(clock, options);

  auto at_limit = model.run(turn_request({user_of_tokens(1000)}));
  REQUIRE(at_limit.ok());
  CHECK(int_at(usage_of(*at_limit), "input") == 1000);

  auto over = model.run(turn_request({user_of_tokens(1001)}));
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().code() == errc::limit_exceeded);
  CHECK(over.error().message() == "prompt is too long: 1001 tokens > 1000 maximum");
  CHECK(actors::is_context_overflow_error(over.error().message()));
  CHECK(actors::matches_pi_overflow_pattern(over.error().message()));
  CHECK(actors::extract_observed_overflow_token_count(over.error().message()) == 1001);

  auto counters = model.counters();
  CHECK(counters.turn_calls == 2);
  CHECK(counters.window_overflows == 1);
  CHECK(counters.failed_calls == 1);
  CHECK(counters.input_tokens == 1000);  // failed calls add no usage
}

TEST_CASE("simulated model: the request's context_window does not change the model's limit") {
  manual_clock clock(kNow);
  simulated_model_options options;
  options.context_window = 1000;
  simulated_model model(clock, options);
  auto request = turn_request({user_of_tokens(1500)});
  request.context_window = 200000;
  auto answer = model.run(request);
  REQUIRE_FALSE(answer.ok());
  CHECK(answer.error().message() == simulated_overflow_text(1500, 1000));
}

TEST_CASE("simulated model: fail_next fails the next n calls, then the model answers again") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto request = turn_request({user_message("hi", kNow)});

  model.fail_next(2, "503 upstream connect error");
  for (int i = 0; i < 2; ++i) {
    auto failed = model.run(request);
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().code() == errc::io_error);
    CHECK(failed.error().message() == "503 upstream connect error");
    CHECK_FALSE(actors::is_context_overflow_error(failed.error().message()));
  }
  CHECK(model.run(request).ok());

  model.fail_next(1, "prompt is too long: 213456 tokens > 200000 maximum");
  auto overflow = model.run(request);
  REQUIRE_FALSE(overflow.ok());
  CHECK(overflow.error().code() == errc::limit_exceeded);
  CHECK(actors::is_context_overflow_error(overflow.error().message()));

  model.fail_next(1, "quota", errc::unsupported);
  auto coded = model.run(request);
  REQUIRE_FALSE(coded.ok());
  CHECK(coded.error().code() == errc::unsupported);

  model.fail_next(5, "never seen");
  model.fail_next(0, "");
  CHECK(model.run(request).ok());

  auto counters = model.counters();
  CHECK(counters.forced_failures == 4);
  CHECK(counters.failed_calls == 4);
  CHECK(counters.window_overflows == 0);
  CHECK(counters.turn_calls == 6);
}

TEST_CASE("simulated model: fail_next is consumed exactly once across concurrent callers") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  model.fail_next(37, "503 upstream connect error");
  constexpr int kThreads = 4, kCallsEach = 50;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto request = turn_request({user_message("thread " + std::to_string(t), kNow)});
      for (int i = 0; i < kCallsEach; ++i)
        if (!model.run(request).ok()) ++failures[static_cast<std::size_t>(t)];
    });
  }
  for (auto& th : threads) th.join();
  int total = 0;
  for (int f : failures) total += f;
  CHECK(total == 37);
  auto counters = model.counters();
  CHECK(counters.turn_calls == kThreads * kCallsEach);
  CHECK(counters.forced_failures == 37);
}

TEST_CASE("simulated model: NO_REPLY for the default flush prompt, the flush purpose and the silent marker") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto plan = actors::build_flush_plan(actors::memory_flush_settings{}, kNow, "Asia/Tokyo");
  REQUIRE(plan.ok());

  SECTION("the flush prompt as an ordinary turn") {
    auto answer = model.run(turn_request({user_message("earlier", kNow), user_message(plan->prompt, kNow)},
                                         plan->system_prompt));
    REQUIRE(answer.ok());
    CHECK(text_of(*answer) == "NO_REPLY");
    CHECK(actors::is_silent_reply_text(text_of(*answer)));
    CHECK(int_at(usage_of(*answer), "output") == 2);
    CHECK(int_at(usage_of(*answer), "input") > 0);
  }
  SECTION("purpose memory_flush with any prompt") {
    auto request = turn_request({user_message("Write down what matters.", kNow)});
    request.purpose = "memory_flush";
    auto answer = model.run(request);
    REQUIRE(answer.ok());
    CHECK(text_of(*answer) == "NO_REPLY");
    CHECK(model.counters().memory_flush_calls == 1);
  }
  SECTION("a user message with the silent marker") {
    auto answer = model.run(turn_request({user_message("ping [sim:silent]", kNow)}));
    REQUIRE(answer.ok());
    CHECK(text_of(*answer) == "NO_REPLY");
  }
  SECTION("only the last user message counts") {
    auto answer = model.run(turn_request({user_message(plan->prompt, kNow), user_message("and now?", kNow)}));
    REQUIRE(answer.ok());
    CHECK(text_of(*answer) != "NO_REPLY");
  }
}

TEST_CASE("simulated model: an unknown purpose is an invalid_argument error") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto request = turn_request({user_message("hi", kNow)});
  request.purpose = "poetry";
  auto answer = model.run(request);
  REQUIRE_FALSE(answer.ok());
  CHECK(answer.error().code() == errc::invalid_argument);
  CHECK(answer.error().message().find("poetry") != std::string::npos);
  CHECK(model.counters().failed_calls == 1);
}

TEST_CASE("simulated model: a compaction summary has the prompt's headings and lists the user turns") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto messages = sample_conversation();
  auto request = actors::history_summary_request(messages, std::nullopt, actors::summary_options{});
  auto summary = summary_via_model(model, request);

  CHECK(has_in_order(summary, kHeadings));
  CHECK(summary.find("## Goal\nRefactor storage/session_store.cpp to use replace_file_atomic\n") != std::string::npos);
  CHECK(summary.find("- [x] Refactor storage/session_store.cpp to use replace_file_atomic\n") != std::string::npos);
  CHECK(summary.find("- [x] You must never call system_clock::now() in rules.\n") != std::string::npos);
  CHECK(summary.find("- [ ] Now add a test for the lock timeout.") != std::string::npos);
  CHECK(summary.find("## Constraints & Preferences\n- You must never call system_clock::now() in rules.") !=
        std::string::npos);
  CHECK(summary.find("- **Answered**: Agreed, the rules take a clock&.") != std::string::npos);
  CHECK(summary.find("1. Continue with: Now add a test for the lock timeout.") != std::string::npos);
  CHECK(summary.find("Preserve all opaque identifiers") == std::string::npos);  // no focus without identifier policy
  CHECK(model.counters().compaction_summary_calls == 1);
  CHECK(summary_via_model(model, request) == summary);
}

TEST_CASE("simulated model: a compaction summary respects max_tokens") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto messages = sample_conversation();
  auto request = actors::history_summary_request(messages, std::nullopt, actors::summary_options{});
  auto full = summary_via_model(model, request);
  REQUIRE(full.size() > 200);

  request.max_tokens = 30;
  auto answer = model.run(summary_request_for(request));
  REQUIRE(answer.ok());
  auto cut = text_of(*answer);
  CHECK(int_at(usage_of(*answer), "output") <= 30);
  CHECK(actors::estimate_tokens(user_message(cut, 0)) <= 30);
  CHECK(json::get_string(*answer, "stopReason") == "length");
  CHECK(cut.starts_with("## Goal\n"));
  CHECK(full.starts_with(cut));
  CHECK(full[cut.size()] == '\n');  // cut at a line break
}

TEST_CASE("simulated model: an update summary keeps the previous summary's Done items and completes its In Progress") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto first_span = sample_conversation();
  auto first = summary_via_model(model, actors::history_summary_request(first_span, std::nullopt, {}));

  std::vector<boost::json::object> second_span = {
      user_message("Add the lock timeout test in tests/storage/write_lock_test.cpp", kNow),
      assistant_reply("Added."),
  };
  auto update = actors::history_summary_request(second_span, first, {});
  REQUIRE(update.user_text.find("<previous-summary>") != std::string::npos);
  auto second = summary_via_model(model, update);

  CHECK(has_in_order(second, kHeadings));
  CHECK(second.find("- [x] Refactor storage/session_store.cpp to use replace_file_atomic\n") != std::string::npos);
  CHECK(second.find("- [x] You must never call system_clock::now() in rules.\n") != std::string::npos);
  CHECK(second.find("- [x] Add the lock timeout test in tests/storage/write_lock_test.cpp\n") != std::string::npos);
  CHECK(second.find("## Goal\nRefactor storage/session_store.cpp") != std::string::npos);
  CHECK(second.find("- You must never call system_clock::now() in rules.") != std::string::npos);
  CHECK(second.find("- [x] Now add a test for the lock timeout.\n") != std::string::npos);  // was in progress
  CHECK(second.find("- [ ] Now add a test") == std::string::npos);
  CHECK(second.find("### In Progress\n- (none)") != std::string::npos);
}

TEST_CASE("simulated model: Done items are capped at the most recent twenty") {
  std::string conversation;
  for (int i = 1; i <= 25; ++i)
    conversation += "[User]: request " + std::to_string(i) + "\n\n[Assistant]: ok\n\n";
  auto summary = simulated_summary({conversation, "", ""}, 0);
  CHECK(summary.find("- (5 earlier items omitted)\n- [x] request 6\n") != std::string::npos);
  CHECK(summary.find("- [x] request 25\n") != std::string::npos);
  CHECK(summary.find("- [x] request 5\n") == std::string::npos);
}

TEST_CASE("simulated model: a split-turn prefix request gets the prefix headings") {
  manual_clock clock(kNow);
  simulated_model model(clock);
  auto messages = sample_conversation();
  auto request = actors::turn_prefix_summary_request(messages, actors::summary_options{});
  auto summary = summary_via_model(model, request);
  CHECK(has_in_order(summary, {"## Original Request\nRefactor storage/session_store.cpp", "## Early Progress\n",
                               "## Context for Suffix\n"}));
  CHECK(summary.find("## Goal") == std::string::npos);
}

TEST_CASE("simulated model: summary_source_of reads the request layout") {
  actors::summary_options options;
  options.custom_instructions = "focus on the lock";
  auto request = actors::history_summary_request(sample_conversation(), std::string("## Goal\nold goal"), options);
  auto source = summary_source_of(request.user_text);
  CHECK(source.conversation.starts_with("[User]: Refactor"));
  CHECK(source.conversation.ends_with("[User]: Now add a test for the lock timeout."));
  CHECK(source.previous_summary == "## Goal\nold goal");
  CHECK(source.focus == "focus on the lock");
  CHECK_FALSE(source.turn_prefix);
  auto summary = simulated_summary(source, 0);
  CHECK(summary.find("## Goal\nold goal\nRefactor") != std::string::npos);
  CHECK(summary.find("- Focus: focus on the lock") != std::string::npos);
}

TEST_CASE("simulated compaction provider: the summary is the shared summarizer's") {
  simulated_compaction_provider provider;
  cancellation cancel;
  summarize_request request;
  for (auto& m : sample_conversation()) request.messages.push_back(m);
  request.previous_summary = "## Progress\n### Done\n- [x] an older task\n";
  auto summary = provider.summarize(request, cancel);
  REQUIRE(summary.ok());
  CHECK(has_in_order(*summary, kHeadings));
  CHECK(summary->find("- [x] an older task\n- [x] Refactor storage/session_store.cpp") != std::string::npos);

  std::vector<boost::json::object> messages = sample_conversation();
  auto conversation = actors::serialize_conversation(actors::convert_to_llm(messages));
  CHECK(*summary == simulated_summary({conversation, request.previous_summary, ""}, 0));

  request.max_tokens = 20;
  auto cut = provider.summarize(request, cancel);
  REQUIRE(cut.ok());
  CHECK(actors::estimate_tokens(user_message(*cut, 0)) <= 20);
  CHECK(provider.calls() == 2);
}

TEST_CASE("simulated compaction provider: fail_with, return_empty and succeed") {
  simulated_compaction_provider provider;
  cancellation cancel;
  summarize_request request;
  request.messages.push_back(user_message("hello", kNow));

  provider.fail_with(status(errc::io_error, "summarizer backend unavailable"));
  auto failed = provider.summarize(request, cancel);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code() == errc::io_error);
  CHECK(provider.summarize(request, cancel).ok() == false);

  provider.return_empty();
  auto empty = provider.summarize(request, cancel);
  REQUIRE(empty.ok());
  CHECK(empty->empty());

  provider.succeed();
  auto normal = provider.summarize(request, cancel);
  REQUIRE(normal.ok());
  CHECK(normal->find("- [ ] hello") != std::string::npos);

  provider.fail_with(status());
  CHECK(provider.summarize(request, cancel).ok());
}

TEST_CASE("simulated compaction provider: a set cancellation gives errc cancelled, before or between steps") {
  simulated_compaction_provider provider;
  summarize_request request;
  request.messages.push_back(user_message("hello", kNow));

  SECTION("set before the call, even while failing") {
    cancellation cancel;
    cancel.cancel();
    provider.fail_with(status(errc::io_error, "down"));
    auto answer = provider.summarize(request, cancel);
    REQUIRE_FALSE(answer.ok());
    CHECK(answer.error().code() == errc::cancelled);
  }
  SECTION("set after a step") {
    for (std::string_view cancel_at : {"convert", "serialize", "summarize"}) {
      cancellation cancel;
      std::vector<std::string> seen;
      provider.observe_steps([&](std::string_view step) {
        seen.emplace_back(step);
        if (step == cancel_at) cancel.cancel();
      });
      auto answer = provider.summarize(request, cancel);
      REQUIRE_FALSE(answer.ok());
      CHECK(answer.error().code() == errc::cancelled);
      CHECK(seen.back() == cancel_at);
    }
  }
  SECTION("never set: every step runs") {
    cancellation cancel;
    std::vector<std::string> seen;
    provider.observe_steps([&](std::string_view step) { seen.emplace_back(step); });
    CHECK(provider.summarize(request, cancel).ok());
    CHECK(seen == std::vector<std::string>{"convert", "serialize", "summarize"});
  }
}

TEST_CASE("simulated model: the focus line shows the user's instructions under OpenClaw's identifier policy") {
  actors::summary_options options;
  options.identifiers = actors::identifier_policy::strict;
  options.custom_instructions = "keep the lock paths";
  auto request = actors::history_summary_request(sample_conversation(), std::nullopt, options);
  auto summary = simulated_summary(summary_source_of(request.user_text), 0);
  CHECK(summary.find("- Focus: keep the lock paths") != std::string::npos);

  options.custom_instructions.reset();
  auto plain = actors::history_summary_request(sample_conversation(), std::nullopt, options);
  CHECK(simulated_summary(summary_source_of(plain.user_text), 0).find("- Focus: Preserve all opaque identifiers") !=
        std::string::npos);
}

TEST_CASE("prompt tokens counted incrementally per session equal a full count, also after the context is rewritten") {
  manual_clock clk(1796000000000);
  runtime::simulated_model model(clk);
  runtime::simulated_model fresh(clk);
  model_request req;
  req.session_id = "s1";
  for (int i = 0; i < 30; ++i) {
    req.messages.emplace_back(user_message("message number " + std::to_string(i) + std::string(static_cast<std::size_t>(i * 7), 'x'), i));
    auto a = model.run(req);
    auto b = fresh.run([&] {
      model_request other = req;
      other.session_id = "other-" + std::to_string(i);  // never cached
      return other;
    }());
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->at("usage").as_object().at("input") == b->at("usage").as_object().at("input"));
  }
  // A compaction rewrites the context from its first message on. Same length, same last
  // message: only the first one changed, and the count must still follow it.
  req.messages[0] = user_message("summary", 99);
  auto rewritten = model.run(req);
  REQUIRE(rewritten.ok());
  CHECK(rewritten->at("usage").as_object().at("input") == runtime::simulated_prompt_tokens(req));
  // Fewer, different messages.
  req.messages.clear();
  req.messages.emplace_back(user_message("summary of everything", 99));
  auto a = model.run(req);
  model_request other = req;
  other.session_id = "uncached";
  auto b = fresh.run(other);
  REQUIRE(a.ok());
  CHECK(a->at("usage").as_object().at("input") == b->at("usage").as_object().at("input"));
}
