#include "actors/session/compaction_runner.hpp"

#include <cmath>

#include <fmt/format.h>

#include "actors/session/compaction_planner.hpp"
#include "actors/session/staged_summary.hpp"
#include "actors/session/summary_prompt.hpp"
#include "actors/session/token_estimate.hpp"
#include "messages/ids.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/context_builder.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::actors {
namespace {

#define SRT_CO_RETURN_IF_ERROR(expr)      \
  do {                                    \
    ::sessionrt::status srt_st_ = (expr); \
    if (!srt_st_.ok()) co_return srt_st_; \
  } while (0)


// One built-in summarization call: the summary prompt as a single user message.
task<result<std::string>> ask_model(const compaction_env& env, summary_request sr, std::string key) {
  auto mr = std::make_shared<model_request>();
  mr->session_key = key;
  mr->purpose = "compaction_summary";
  mr->system_prompt = sr.system_prompt;
  mr->messages.emplace_back(user_message(sr.user_text, env.time->now_ms()));
  mr->max_tokens = sr.max_tokens;
  mr->context_window = env.model.context_window;
  mr->provider = env.model.provider;
  mr->model = env.model.model;
  mr->api = env.model.api;
  model_call waiting{*env.io, std::move(mr), std::nullopt};  // named: see turn_io.hpp
  auto reply = co_await waiting;
  if (!reply.ok()) co_return reply.error().with_context("summarizing the conversation");
  co_return message_text(reply->if_contains("content"));
}

// Whether one summary request fits the window: its text at 4 bytes a token (bytes >= UTF-16
// units, so never under pi's estimate) with the safety margin, plus the answer.
bool fits_window(const summary_request& sr, std::int64_t window) {
  const auto chars = static_cast<double>(sr.system_prompt.size() + sr.user_text.size());
  return static_cast<std::int64_t>(std::ceil(chars / 4.0 * kSummarySafetyMargin)) + sr.max_tokens <= window;
}

// Nothing when the single request fits the window; else `messages` in chunks that each fit a
// summary call, oversized messages replaced by placeholders (staged_summary.hpp).
std::optional<std::vector<std::vector<boost::json::object>>> summary_stages(
    const compaction_env& env, std::span<const boost::json::object> messages, const summary_request& single) {
  const std::int64_t window = env.model.context_window;
  if (fits_window(single, window)) return std::nullopt;
  return chunk_messages(replace_oversized(messages, window), chunk_budget_tokens(window, single.max_tokens));
}

// The history summary: pi's single call when it fits, else in stages.
task<result<std::string>> summarize_history(const compaction_env& env, const compaction_plan& plan,
                                            const summary_options& so, const summary_request& single,
                                            std::string key) {
  const auto stages = summary_stages(env, plan.messages_to_summarize, single);
  if (!stages) co_return co_await ask_model(env, single, key);
  const auto& chunks = *stages;
  std::optional<std::string> running = plan.previous_summary;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    auto r = co_await ask_model(env, history_summary_request(chunks[i], running, so), key);
    if (!r.ok()) co_return r.error().with_context(fmt::format("summary stage {} of {}", i + 1, chunks.size()));
    running = std::move(*r);
  }
  co_return running.value_or("");
}

// A split turn's prefix summary; a prefix too large for one call is summarized from its
// first chunk (which holds the turn's original request), oversized messages replaced.
task<result<std::string>> summarize_turn_prefix(const compaction_env& env, const compaction_plan& plan,
                                                const summary_options& so, const summary_request& single,
                                                std::string key) {
  const auto stages = summary_stages(env, plan.turn_prefix_messages, single);
  if (!stages || stages->empty()) co_return co_await ask_model(env, single, key);
  co_return co_await ask_model(env, turn_prefix_summary_request(stages->front(), so), key);
}

// The provider's summary, or why it could not be used; errc::cancelled is an error to
// propagate, anything else means "fall back" (returned as a warning with an empty summary).
task<result<std::pair<std::string, std::string>>> provider_summary(const compaction_env& env,
                                                                   const compaction_plan& plan,
                                                                   const compaction_request& req,
                                                                   std::int64_t max_tokens) {
  using answer = std::pair<std::string, std::string>;
  const std::string& id = env.settings->compaction_provider;
  auto provider = env.providers ? env.providers->find(id) : nullptr;
  if (!provider) co_return answer(std::string(), fmt::format("compaction provider {} is not registered", id));
  auto sr = std::make_shared<summarize_request>();
  sr->session_key = req.session_key;
  for (const auto& m : plan.messages_to_summarize) sr->messages.emplace_back(m);
  for (const auto& m : plan.turn_prefix_messages) sr->messages.emplace_back(m);
  sr->previous_summary = plan.previous_summary.value_or("");
  sr->custom_instructions = req.instructions;
  sr->max_tokens = max_tokens;
  provider_summary_call waiting{*env.io, std::move(provider), std::move(sr), std::nullopt};  // named: see turn_io.hpp
  auto r = co_await waiting;
  if (!r.ok() && r.error().code() == errc::cancelled) co_return r.error().with_context("compaction provider " + id);
  if (!r.ok())
    co_return answer(std::string(), fmt::format("compaction provider {} failed: {}", id, r.error().message()));
  if (js_trim(*r).empty())
    co_return answer(std::string(), fmt::format("compaction provider {} returned an empty summary", id));
  co_return answer(std::move(*r), std::string());
}

// A kept message as the successor stores it: thinking signatures made before the compaction
// are stripped [R§6.5].
boost::json::object without_signatures(boost::json::object entry) {
  if (auto* m = entry.if_contains("message"); m && m->is_object())
    if (auto* c = m->get_object().if_contains("content"); c && c->is_array())
      for (auto& b : c->get_array())
        if (b.is_object()) json::erase(b.get_object(), "thinkingSignature");
  return entry;
}

// Writes the successor transcript: header (parentSession = old file), the thinking level and
// model in effect, the kept entries re-parented into one chain, the compaction.
result<std::string> write_successor(const compaction_env& env, storage::transcript_file& tf,
                                    const std::vector<std::shared_ptr<const boost::json::object>>& kept,
                                    const std::string& new_id) {
  const std::int64_t now = env.time->now_ms();
  auto path = storage::successor_transcript_path(storage::path_dirname(tf.path()), new_id, now);
  if (!path.ok()) return path.error();
  header_fields h;
  h.id = new_id;
  h.timestamp_ms = now;
  h.cwd = std::string(json::get_string(tf.header(), "cwd").value_or(""));
  h.parent_session = tf.path();
  if (auto key = json::get_string(tf.header(), "sessionKey")) h.session_key = std::string(*key);
  std::string text = json::to_compact(make_header(h)) + "\n";
  std::optional<std::string> parent;
  auto put = [&](boost::json::object e) {
    const std::string id(json::get_string(e, "id").value_or(""));
    if (parent)
      e["parentId"] = *parent;
    else
      e["parentId"] = nullptr;
    json::append_compact(text, e);
    text += '\n';
    parent = id;
  };
  // The state before the kept stretch, as entries pi reads too (our reader also has the note).
  if (!kept.empty())
    if (const auto* d = json::get_object(*kept.back(), "details"))
      if (const auto* state = json::get_object(*d, storage::kCompactionStateKey)) {
        if (auto level = json::get_string(*state, "thinkingLevel"); level && *level != "off")
          put(make_thinking_level_entry(new_entry_id(), std::nullopt, now, *level));
        if (const auto* model = json::get_object(*state, "model"))
          put(make_model_change_entry(new_entry_id(), std::nullopt, now,
                                      json::get_string(*model, "provider").value_or(""),
                                      json::get_string(*model, "modelId").value_or("")));
      }
  for (const auto& e : kept) put(without_signatures(*e));
  storage::replace_options ro;
  ro.durable = env.settings->storage.durability != storage::durability::none;
  SRT_RETURN_IF_ERROR(storage::create_file_exclusive(*env.files, *path, text, ro));
  return *path;
}

}  // namespace

task<result<compaction_outcome>> compact_session(compaction_env env, compaction_request req,
                                                 std::unique_ptr<storage::transcript_file>& transcript,
                                                 session_entry& row) {
  auto& tf = *transcript;
  SRT_CO_RETURN_IF_ERROR(tf.flush());
  std::optional<storage::transcript_reader::position> leaf;
  if (tf.leaf_id()) {
    auto p = tf.reader().locate(*tf.leaf_id());
    if (!p.ok()) co_return p.error();
    leaf = *p;
  }
  auto entries = storage::path_entries(tf.reader(), leaf);
  if (!entries.ok()) co_return entries.error();
  std::vector<const boost::json::object*> path;
  for (const auto& e : *entries) path.push_back(e.get());
  const auto& cs = env.settings->compaction;
  auto plan = plan_compaction(path, cs);
  compaction_outcome out;
  if (!plan) co_return out;

  summary_options so;
  so.reserve_tokens = effective_reserve(cs, env.model.context_window);
  if (!req.instructions.empty()) so.custom_instructions = req.instructions;
  so.identifiers = identifier_policy::strict;  // OpenClaw's default wrapper
  const summary_requests reqs = summary_requests_for(*plan, so);
  std::string summary;
  if (!env.settings->compaction_provider.empty()) {
    auto from_provider =
        co_await provider_summary(env, *plan, req, reqs.history ? reqs.history->max_tokens : so.reserve_tokens);
    if (!from_provider.ok()) co_return from_provider.error();
    summary = std::move(from_provider->first);
    out.fallback_warning = std::move(from_provider->second);
    if (!summary.empty()) out.provider = env.settings->compaction_provider;
  }
  if (summary.empty()) {
    std::optional<std::string> history, prefix;
    if (reqs.history) {
      auto r = co_await summarize_history(env, *plan, so, *reqs.history, req.session_key);
      if (!r.ok()) co_return r.error();
      history = std::move(*r);
    }
    if (reqs.turn_prefix) {
      auto r = co_await summarize_turn_prefix(env, *plan, so, *reqs.turn_prefix, req.session_key);
      if (!r.ok()) co_return r.error();
      prefix = std::move(*r);
    }
    summary = assemble_summary(*plan, history ? std::optional<std::string_view>(*history) : std::nullopt,
                               prefix ? std::optional<std::string_view>(*prefix) : std::nullopt);
    out.provider = "builtin";
  }

  // The summary calls may have taken long: the transcript is the one the session still holds
  // (nothing else appends while the turn waits), so the plan still describes its leaf.
  auto id = tf.append_compaction(summary, plan->first_kept_entry_id, plan->tokens_before, plan_details_json(*plan));
  if (!id.ok()) co_return id.error();
  out.compacted = true;
  out.first_kept_entry_id = plan->first_kept_entry_id;
  out.tokens_before = plan->tokens_before;
  auto ctx = tf.context();
  if (!ctx.ok()) co_return ctx.error();
  for (const auto& m : ctx->messages)
    if (m.is_object()) out.tokens_after += estimate_tokens(m.get_object());
  out.context = std::move(ctx->messages);

  count_compaction(row, out.tokens_after);

  if (cs.truncate_after_compaction) {
    auto kept_path = storage::path_entries(tf.reader(), tf.reader().index().find(*id));
    if (!kept_path.ok()) co_return kept_path.error();
    const std::string new_id =
        env.ids.next(req.session_key, env.time->now_ms(), row.session_id().value_or(""), "compaction");
    auto successor = write_successor(env, tf, *kept_path, new_id);
    if (!successor.ok()) co_return successor.error().with_context("writing the successor transcript");
    out.successor_session_id = new_id;
    out.successor_path = *successor;
    // The successor extends the usage lineage as a rollover does.
    extend_usage_family(row, req.session_key, new_id);
    row.set_session_id(new_id);
    row.set_session_file(*successor);
  }
  co_return out;
}

}  // namespace sessionrt::actors
