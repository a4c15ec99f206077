// The turn of a session (session_core's coroutines): context management around one model
// call, with overflow recovery, and the isolated cron run. See session_core.hpp.
#include <fmt/format.h>

#include "actors/session/chat_commands.hpp"
#include "actors/session/compaction_planner.hpp"
#include "actors/session/dock_command.hpp"
#include "actors/session/heartbeat_run.hpp"
#include "actors/session/hygiene/clean_check.hpp"
#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "actors/session/memory_flush_planner.hpp"
#include "actors/session/midturn_precheck.hpp"
#include "actors/session/overflow_detector.hpp"
#include "actors/session/queue_settings.hpp"
#include "actors/session/reply_stream.hpp"
#include "actors/session/reset_policy.hpp"
#include "actors/session/session_core.hpp"
#include "messages/runner_reply_check.hpp"
#include "actors/session/session_rollover.hpp"
#include "actors/session/silent_reply.hpp"
#include "actors/session/token_estimate.hpp"
#include "actors/session/turn_queue.hpp"
#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::actors {
namespace {

// The host's run id (chat_event::run_id) on a turn's reply.delta and turn.* events.
lifecycle_event with_run_id(lifecycle_event e, const std::string& run_id) {
  if (!run_id.empty()) e.data["runId"] = run_id;
  return e;
}

payloads::memory_flush_decision flush_decision_payload(const flush_decision& d) {
  return {std::string(flush_reason_name(d.reason)), d.token_count, d.threshold};
}

// The reply as delivered: its text blocks, one per line.
std::string reply_text(const boost::json::object& message) { return message_text(message.if_contains("content"), "\n"); }

// The user's message as the model sees it this turn: runtime context and queued notices go
// in front, the stored message stays what the user sent.
void prefix_for_model(boost::json::object& message, const std::string& prefix) {
  if (prefix.empty()) return;
  auto* content = message.if_contains("content");
  if (!content) return;
  if (content->is_string()) {
    *content = prefix + "\n\n" + std::string(content->get_string());
  } else if (content->is_array()) {
    content->get_array().insert(content->get_array().begin(), boost::json::value(text_block(prefix)));
  }
}


}  // namespace

task<turn_outcome> session_core::chat(const chat_event& ev, const route_facts& route, core_effects& fx) {
  if (needs_row()) {
    turn_outcome out;
    out.session_key = key_;
    out.st = status(errc::internal, "the session's row was not restored after a trim");
    co_return out;
  }
  turn_outcome out = co_await chat_turn(ev, route, fx);
  if (row_) {
    // Where replies go (the route this turn left, docked or not), so a host knows where to
    // deliver; turn.completed carries it too.
    out.delivery = delivery_route_of(*row_);
  }
  row_for_store(fx);
  co_return out;
}

task<turn_outcome> session_core::system(const system_event& ev, core_effects& fx) {
  turn_outcome out;
  out.session_key = key_;
  if (needs_row()) co_return out;  // the actor restores the row first
  if (ev.kind == system_event_kind::cron && !ev.job_id.empty())
    out = co_await cron_run(ev, fx);
  else if (ev.kind == system_event_kind::heartbeat && is_isolated_heartbeat_key(key_))
    out = co_await heartbeat_run(ev, fx);
  else
    system_turn(ev, out, fx);
  if (out.session_id.empty()) out.session_id = session_id();
  row_for_store(fx);
  co_return out;
}

const boost::json::array& session_core::context_view() const { return in_flight_ ? in_flight_->messages : context_; }

// The request's messages, with `prefix` in front of the last (the user's) message, cleaned for
// the provider (SPEC §5); the cached context stays what the transcript says. A plainly clean
// context (hygiene/clean_check.hpp: no rule would change it) moves into the request and comes
// back with restore_context(); any other is copied and cleaned. Returns whether it moved.
bool session_core::messages_for_model(const std::shared_ptr<model_request>& req, const std::string& prefix,
                                      core_effects& fx, boost::json::value& saved_last) {
  clean_upto_ = hygiene::plainly_clean_upto(context_, clean_upto_);  // only what was appended since
  if (clean_upto_ == context_.size()) {
    req->messages = std::move(context_);
    if (!prefix.empty() && !req->messages.empty()) {
      saved_last = req->messages.back();
      prefix_for_model(req->messages.back().as_object(), prefix);
    }
    in_flight_ = req;
    return true;
  }
  req->messages = context_;
  if (!prefix.empty() && !req->messages.empty()) prefix_for_model(req->messages.back().as_object(), prefix);
  const auto& settings = *deps_->settings;
  const auto policy = hygiene::resolve_transcript_policy(req->provider, req->api, req->model);
  hygiene::hygiene_options opts;
  opts.image_max_dimension_px = settings.model.image_max_dimension_px;
  opts.now_ms = deps_->time->now_ms();
  const auto report = hygiene::sanitize_for_provider(req->messages, policy, opts);
  if (report.changed() && wants(event_types::context_sanitized)) {
    fx.events.push_back(event(payloads::context_sanitized{req->purpose, report.to_json()}));
  }
  return false;
}

void session_core::restore_context(std::shared_ptr<model_request>& req, boost::json::value& saved_last) {
  in_flight_.reset();
  // Moved back when the runtime holds the only reference to the request, else copied (the
  // runner still keeps it).
  context_ = req.use_count() == 1 ? std::move(req->messages) : req->messages;
  if (!saved_last.is_null() && !context_.empty()) context_.back() = std::move(saved_last);
  saved_last = nullptr;
}

status session_core::cancelled_status() const {
  return status(errc::cancelled, fmt::format("the turn was cancelled ({})", io_ ? io_->cancel_reason() : ""));
}

task<model_answer> session_core::call_model(std::shared_ptr<model_request> req) {
  if (!io_) co_return model_answer(errc::unsupported, "no model runner is registered");
  // A named awaiter: GCC 12 destroys a temporary aggregate awaiter twice.
  model_call waiting{*io_, req, std::nullopt};
  co_return co_await waiting;
}

task<turn_outcome> session_core::chat_turn(const chat_event& ev, const route_facts& route, core_effects& fx) {
  turn_outcome out;
  out.session_key = key_;
  last_route_ = route;
  const auto& settings = *deps_->settings;
  const std::size_t size = ev.text.size() + (ev.content.empty() ? 0 : json::to_compact(ev.content).size());
  if (size > settings.session.max_message_bytes) {
    out.st = status(errc::limit_exceeded, fmt::format("message of {} bytes exceeds session.maxMessageBytes ({} bytes)",
                                                      size, settings.session.max_message_bytes));
    co_return out;
  }
  // The current transcript's lock first: if another process holds it, nothing changes here.
  if (row_ && row_->session_id())
    if (status st = open_current(fx); !st.ok()) {
      out.st = st;
      co_return out;
    }
  // Before the rollover: a retry changes nothing, not even a reset's freshness.
  if (answer_seen_run(ev, out)) co_return out;

  const std::int64_t now = deps_->time->now_ms();
  const recognized_command cmd = recognize(ev, route);
  const auto policy =
      resolve_reset_policy(settings.session.reset, resolve_reset_type(key_, route.is_group, route.is_thread), route.channel);
  rollover_input in;
  in.current = row_ ? &*row_ : nullptr;
  in.session_key = key_;
  in.kind = inbound_kind::message;
  // A legacy row without sessionStartedAt began when its transcript's header says, not when it
  // was last touched [R§4.2]; the rollover writes that time into the row.
  std::optional<double> header_started;
  if (row_ && !row_->json().contains("sessionStartedAt") && header_started_ms_)
    header_started = static_cast<double>(*header_started_ms_);
  in.recovered_started_at = header_started;
  if (row_ && deps_->zone)
    in.freshness = evaluate_freshness(lifecycle_timestamps_of(*row_, header_started), now, policy, *deps_->zone);
  in.trigger = cmd.trigger;
  in.now_ms = now;
  in.new_session_id = next_session_id(now, "message");
  in.transcript_path = [this](std::string_view id) { return transcript_path_for(std::string(id)); };
  in.inbound_patch_ref = &inbound_patch_for(ev, route);
  const std::string old_id = row_ ? std::string(row_->session_id().value_or("")) : std::string();
  // The row is rolled in place (moved in, not copied); row_ takes it back at once.
  rollover_result roll = row_ ? roll_session(in, std::move(*row_)) : roll_session(in);
  row_ = std::move(roll.entry);
  if (roll.new_session) {
    if (roll.drop_queued_system_events) queued_.clear();
    pressure_ = {};  // a new session starts a new pressure cycle
    pressure_loaded_ = true;
    row_->erase(kPressureField);
    if (status st = start_new_session(old_id, fx); !st.ok()) {
      out.st = st;
      co_return out;
    }
    note_new_session(old_id, roll, out, fx);
    // The row is written with the store's next window; the ack does not wait for it: after a
    // crash the runtime adopts this transcript from its header (store_reconcile) at start-up.
  } else if (status st = open_current(fx); !st.ok()) {
    out.st = st;
    co_return out;
  }
  out.session_id = std::string(row_->session_id().value_or(""));

  std::string text = ev.text;
  if (cmd.id == chat_command::reset) {
    text = after_reset(cmd.trigger, ev, out);
    if (!out.command.empty()) {
      finish_effects(fx, route);
      co_return out;
    }
  }
  // A command (after a reset: in its first message) that is a turn of its own; /stop here is text.
  const recognized_command next = cmd.id == chat_command::reset ? recognize_chat_command(text) : cmd;
  if (next.id != chat_command::none && chat_command_info(next.id).timing != command_timing::stop)
    co_return co_await command_turn(next, ev, route, fx, std::move(out));
  co_return co_await run_turn(ev, std::move(text), fx, std::move(out));
}

bool session_core::answer_seen_run(const chat_event& ev, turn_outcome& out) const {
  if (!transcript_ || !runs_seen_.contains(ev.run_id)) return false;
  out.run_id = ev.run_id;
  out.session_id = std::string(row_->session_id().value_or(""));
  if (const boost::json::object* reply = stored_reply_of_run(context_, ev.run_id)) {
    const silent_reply_verdict verdict = final_reply_verdict(reply_text(*reply));
    if (verdict.silent)
      out.suppressed = true;
    else
      out.reply = verdict.text;
  }
  return true;
}

turn_outcome session_core::end_failed_turn(const status& cause, std::string_view context, core_effects& fx,
                                           turn_outcome out) {
  const bool was_cancelled = cause.code() == errc::cancelled;
  if (was_cancelled)
    fx.events.push_back(
        with_run_id(event(payloads::turn_cancelled{io_ ? io_->cancel_reason() : std::string()}), out.run_id));
  else
    fx.events.push_back(with_run_id(event(payloads::turn_failed{cause.message()}), out.run_id));
  out.turn_event = true;
  out.st = was_cancelled ? cause : cause.with_context(std::string(context));
  if (status st = durability_commit(fx); !st.ok()) out.st = st;
  finish_effects(fx, last_route_);
  return out;
}

task<turn_outcome> session_core::run_turn(const chat_event& ev, std::string text, core_effects& fx, turn_outcome out) {
  const auto& settings = *deps_->settings;
  const std::int64_t started = deps_->time->now_ms();
  const std::int64_t ts = ev.timestamp_ms ? ev.timestamp_ms : started;
  out.run_id = ev.run_id;
  boost::json::object user = ev.content.empty() ? user_message(text, ts) : user_message(ev.content, ts);
  for (const auto& f : ev.message_fields) user[f.key()] = f.value();
  const session_model m = model();
  const std::string system = system_prompt();
  const std::int64_t system_tokens = estimate_text_tokens(system);
  const std::int64_t prompt_estimate = estimate_tokens(user);
  // What the context costs now: the last call's prompt plus what was appended since, from the
  // cached context (an adopted or legacy transcript has no fresh totalTokens in its row), plus
  // the system prompt when no call has counted it yet.
  const auto estimate_now = estimate_context_tokens(context_);
  const std::int64_t context_tokens_now = estimate_now.tokens + (estimate_now.last_usage_index ? 0 : system_tokens);
  // Once a turn starts, the user's message is kept, even if the turn is cancelled before the
  // model answers.
  if (!cancelled()) co_await maybe_flush_memory(m, prompt_estimate, context_tokens_now, fx, out);
  if (!cancelled()) co_await maybe_compact_before_turn(m, prompt_estimate, context_tokens_now, fx);
  // Kept before the model runs, so a crash during a long call or a tool loop keeps the user's
  // message (and below, each round the loop finished): written, then with durability sync
  // fdatasync'd, with batch its commit log record handed over as the call starts (the call
  // does not wait for the log; the ack still does). message.appended follows the write. It
  // stays when the call fails or is cancelled, as pi keeps it (docs/guarantees.md). A message
  // the transcript refuses (over storage.maxLineBytes) fails the turn before any model call.
  if (auto kept = append_and_track(user, fx); !kept.ok())
    co_return end_failed_turn(kept.error(), "storing the user's message", fx, std::move(out));
  if (status st = durability_commit(fx, /*turn_end=*/false); !st.ok())
    co_return end_failed_turn(st, "storing the user's message", fx, std::move(out));
  runs_seen_.add(ev.run_id);

  // The request: the cached context, with this turn's runtime context in front of the last
  // (the user's) message — in the request only.
  std::string prefix;
  for (const auto& notice : queued_) prefix += notice + "\n";
  queued_.clear();
  prefix += ev.runtime_context;
  while (!prefix.empty() && prefix.back() == '\n') prefix.pop_back();
  result<boost::json::object> reply(errc::internal, "not run");
  int overflow_compactions = 0;
  for (;;) {
    auto req = std::make_shared<model_request>();
    req->session_key = key_;
    req->session_id = std::string(row_->session_id().value_or(""));
    req->provider = m.provider;
    req->model = m.model;
    req->api = m.api;
    req->context_window = m.context_window;
    req->max_tokens = m.max_tokens;
    req->fallbacks = m.fallbacks;
    req->max_tool_iterations = settings.models.max_tool_iterations;
    req->system_prompt = system;
    boost::json::value saved_last;
    const bool moved = messages_for_model(req, prefix, fx, saved_last);
    // A tool loop's finished rounds: appended to the transcript as they come (the actor calls
    // this between the runner's notes), into the context once the call gave it back.
    std::vector<boost::json::object> loop_messages;
    status loop_error;
    req->on_message = [this, &fx, &loop_messages, &loop_error](boost::json::object message) {
      if (!message.contains("timestamp")) message["timestamp"] = deps_->time->now_ms();
      if (!transcript_ || !loop_error.ok()) return;
      if (status valid = check_runner_message(message, runner_message_kind::loop_round); !valid.ok()) {
        loop_error = valid;
        return;
      }
      if (auto written = append_with_event(message, fx); !written.ok()) {
        // The line was taken back (no message.appended for it); the turn fails once the call
        // returns and nothing after the failed line is kept.
        loop_error = written.error().with_context("storing a tool-loop message");
        return;
      }
      loop_messages.push_back(std::move(message));
    };
    req->on_fallback = [this, &fx](std::string from, std::string to, std::string reason) {
      if (wants(event_types::model_fallback))
        fx.events.push_back(event(payloads::model_fallback{std::move(from), std::move(to), std::move(reason)}));
    };
    // Queue mode steer: messages that arrive during the call can reach the runner at its next
    // tool boundary (the actor puts them in this inbox; see steering_inbox()).
    if (io_ && io_->steering_supported() &&
        effective_queue(settings.queue, &*row_).mode == queue_mode::steer)
      req->steering = std::make_shared<steer_inbox>();
    steering_ = req->steering;
    if (settings.compaction.mid_turn_precheck)
      req->precheck = make_context_precheck(
          estimate_context_tokens(req->messages).tokens + system_tokens,
          m.context_window - effective_reserve(settings.compaction, m.context_window));
    // Streamed pieces reach the stream on the actor's thread (the actor forwards them).
    std::optional<reply_stream> stream;
    if (publish_now_ && wants(event_types::reply_delta)) {
      auto publish = ev.run_id.empty() ? publish_now_
                                       : publish_now_fn([p = publish_now_, run = ev.run_id](lifecycle_event e) {
                                           p(with_run_id(std::move(e), run));
                                         });
      stream.emplace(std::move(publish), *deps_->time, subject(), overflow_compactions + 1);
      req->on_text = [&stream](std::string_view piece) { stream->on_text(piece); };
    }
    reply = co_await call_model(req);
    if (reply.ok())
      if (status valid = check_runner_message(*reply, runner_message_kind::final_reply); !valid.ok()) reply = valid;
    if (moved) restore_context(req, saved_last);
    for (auto& done : loop_messages) context_.emplace_back(std::move(done));
    if (!loop_error.ok()) reply = loop_error;
    if (req->steering) {
      // What the runner took is the user's, stored ahead of the reply; what it did not take
      // waits as a follow-up (the actor re-queues it).
      (void)req->steering->close();
      steering_.reset();
      for (const auto& text : req->steering->taken()) {
        boost::json::object steered = user_message(text, deps_->time->now_ms());
        if (auto kept = append_and_track(steered, fx); !kept.ok() && reply.ok())
          reply = kept.error().with_context("storing a steered message");
      }
    }
    // A context overflow (an error, or a reply that used more than the window): drop it,
    // compact, retry — at most 3 times per turn [R§6.2].
    const bool overflow = reply.ok() ? is_context_overflow(*reply, m.context_window)
                                     : is_context_overflow_error(reply.error().message());
    bool retry = overflow && overflow_compactions < 3 && settings.compaction.enabled && !cancelled();
    if (retry) {
      ++overflow_compactions;
      auto done = co_await compact("overflow", "", fx);
      retry = done.ok() && done->compacted && !cancelled();
    }
    if (stream) stream->end(reply.ok() && !retry);  // the closing delta: shown text kept or dropped
    if (!retry) break;
  }
  if (reply.ok() && overflow_compactions > 0 && wants(event_types::overflow_recovered)) {
    fx.events.push_back(event(payloads::overflow_recovered{overflow_compactions}));
  }

  if (!reply.ok()) co_return end_failed_turn(reply.error(), "model call failed", fx, std::move(out));
  if (!reply->contains("timestamp")) (*reply)["timestamp"] = deps_->time->now_ms();
  // The reply as kept in the context (no copy); read only until the compaction check below,
  // which may rebuild the context. A reply the transcript refuses is not delivered.
  auto kept_reply = append_and_track(*reply, fx);
  if (!kept_reply.ok()) co_return end_failed_turn(kept_reply.error(), "storing the reply", fx, std::move(out));
  const boost::json::object& msg = **kept_reply;
  std::int64_t context_tokens = 0;
  if (const auto* usage = json::get_object(msg, "usage")) {
    row_->set_input_tokens(json::get_int(*usage, "input").value_or(0));
    row_->set_output_tokens(json::get_int(*usage, "output").value_or(0));
    row_->set_cache_read(json::get_int(*usage, "cacheRead").value_or(0));
    row_->set_cache_write(json::get_int(*usage, "cacheWrite").value_or(0));
    row_->set_total_tokens(prompt_tokens_of_usage(*usage));
    row_->set_total_tokens_fresh(true);
    context_tokens = calculate_context_tokens(*usage);
  }
  row_->set_context_tokens(m.context_window);
  if (auto p = json::get_string(msg, "provider")) row_->set_model_provider(*p);
  if (auto m = json::get_string(msg, "model")) row_->set_model(*m);

  // NO_REPLY: recorded in the transcript, never delivered [R§7.3].
  const silent_reply_verdict verdict = final_reply_verdict(reply_text(msg));
  if (verdict.silent) {
    out.suppressed = true;
    if (wants(event_types::reply_suppressed)) fx.events.push_back(event(payloads::reply_suppressed{}));
  } else {
    out.reply = verdict.text;
  }
  if (wants(event_types::turn_completed)) {
    fx.events.push_back(with_run_id(
        event(payloads::turn_completed{row_->total_tokens().value_or(0), deps_->time->now_ms() - started,
                                       delivery_route_of(*row_)}),
        out.run_id));
    out.turn_event = true;
  }
  check_context_pressure(m, context_tokens, fx);
  if (settings.compaction.enabled &&
      should_compact_after_turn(context_tokens, m.context_window, effective_reserve(settings.compaction, m.context_window)))
    (void)co_await compact("threshold", "", fx);  // a failure is an event; the turn itself succeeded
  if (status st = durability_commit(fx); !st.ok()) {
    out.st = st;
    out.reply.reset();
  }
  out.session_id = std::string(row_->session_id().value_or(""));
  finish_effects(fx, last_route_);
  co_return out;
}

task<result<compaction_outcome>> session_core::compact(std::string reason, std::string instructions,
                                                       core_effects& fx) {
  const std::string old_path = transcript_->path();
  if (wants(event_types::compaction_started)) {
    fx.events.push_back(event(payloads::compaction_started{reason}));
  }
  if (!io_) co_return result<compaction_outcome>(errc::unsupported, "no model runner is registered");
  // compaction.model writes the summary when set; the session's window decides what fits.
  session_model summarizer = model();
  if (const auto ref = resolve_model_ref(*deps_->settings, deps_->settings->compaction_model, summarizer.provider)) {
    const session_model chosen = model_of(*deps_->settings, ref->provider, ref->model);
    summarizer.provider = chosen.provider;
    summarizer.model = chosen.model;
    summarizer.api = chosen.api;
  }
  compaction_env env{deps_->files, deps_->time, deps_->settings, io_, deps_->providers, deps_->ids, summarizer};
  session_entry next = *row_;
  // A named request: GCC 12 destroys a braced temporary inside a co_await expression twice.
  const compaction_request what{reason, instructions, key_};
  auto done = co_await compact_session(env, what, transcript_, next);
  if (!done.ok()) {
    fx.events.push_back(
        event(payloads::compaction_failed{reason, done.error().message(), done.error().code() == errc::cancelled}));
    co_return done;
  }
  if (!done->compacted) co_return done;
  if (done->successor_path) {
    // The session continues in the successor: its lock, its writer; the old file stays.
    storage::write_lock_options lo = deps_->settings->session.write_lock;
    lo.acquire_timeout_ms = 0;
    lo.max_hold_ms = std::max(lo.max_hold_ms, kSessionLockMaxHoldMs);
    auto lock = storage::acquire_write_lock(*deps_->files, *deps_->time, *deps_->probe, *done->successor_path, lo);
    if (!lock.ok()) co_return lock.error().with_context("locking the successor transcript");
    auto opened = storage::transcript_file::open(*deps_->files, *deps_->time, *done->successor_path, transcript_opts());
    if (!opened.ok()) co_return opened.error().with_context("opening the successor transcript");
    (void)(transcript_->sync());
    transcript_ = std::move(*opened);
    lock_ = std::move(*lock);
  }
  row_ = std::move(next);
  if (!done->successor_path) {
    context_ = std::move(done->context);
    clean_upto_ = 0;  // a new context: its cleanliness is unknown
  } else if (auto ctx = transcript_->context(); ctx.ok()) {
    context_ = std::move(ctx->messages);
    clean_upto_ = 0;  // a new context: its cleanliness is unknown
  }
  if (wants(event_types::compaction_completed)) {
    payloads::compaction_completed p;
    p.reason = reason;
    p.provider = done->provider;
    p.tokens_before = done->tokens_before;
    p.tokens_after = done->tokens_after;
    p.first_kept_entry_id = done->first_kept_entry_id;
    p.compaction_count = row_->compaction_count().value_or(0);
    p.warning = done->fallback_warning;
    if (done->successor_session_id) {
      p.successor_session_id = *done->successor_session_id;
      p.checkpoint = old_path;
    }
    fx.events.push_back(event(p));
  }
  co_return done;
}

task<bool> session_core::maybe_flush_memory(const session_model& m, std::int64_t prompt_estimate,
                                            std::int64_t context_tokens, core_effects& fx, turn_outcome& out) {
  const auto& settings = *deps_->settings;
  if (!settings.memory_flush.enabled || !transcript_) co_return false;
  flush_inputs in;
  in.context_window = m.context_window;
  in.reserve_tokens_floor = settings.compaction.reserve_tokens_floor;
  in.prompt_estimate = prompt_estimate;
  in.transcript_prompt_tokens = context_tokens;
  in.last_output_tokens = row_->output_tokens().value_or(0);
  in.transcript_bytes = static_cast<std::int64_t>(transcript_->reader().data_end() + transcript_->pending_bytes());
  in.workspace_writable = settings.workspace_writable;
  const flush_decision d = decide_flush(*row_, in, settings.memory_flush);
  if (!d.run) {
    // A flush that was due but cannot run is said; the everyday "not yet" is not.
    if (d.due && wants(event_types::memory_flush_skipped)) {
      fx.events.push_back(event(payloads::memory_flush_skipped{flush_decision_payload(d)}));
    }
    co_return false;
  }
  const std::int64_t now = deps_->time->now_ms();
  auto plan = build_flush_plan(settings.memory_flush, now, settings.session.reset.timezone);
  if (!plan.ok()) co_return false;
  if (wants(event_types::memory_flush_started)) {
    fx.events.push_back(event(payloads::memory_flush_started{flush_decision_payload(d)}));
  }
  const std::int64_t cycle = row_->compaction_count().value_or(0);
  auto req = std::make_shared<model_request>();
  req->session_key = key_;
  req->session_id = std::string(row_->session_id().value_or(""));
  req->purpose = "memory_flush";
  req->system_prompt = plan->system_prompt;
  // memoryFlush.model "provider/model" (or an alias); unset: the session's own model.
  const auto flush_ref = plan->model.empty() ? std::nullopt : resolve_model_ref(settings, plan->model, m.provider);
  const session_model fm = flush_ref ? model_of(settings, flush_ref->provider, flush_ref->model) : m;
  req->provider = fm.provider;
  req->model = fm.model;
  req->api = fm.api;
  req->context_window = fm.context_window;
  boost::json::value saved_last;
  const bool moved = messages_for_model(req, "", fx, saved_last);
  req->messages.emplace_back(user_message(plan->prompt, now));
  auto reply = co_await call_model(req);
  if (moved) {
    restore_context(req, saved_last);
    context_.pop_back();  // the flush prompt
  }
  if (!reply.ok() && reply.error().code() == errc::cancelled) co_return false;  // not the flush's failure
  if (reply.ok()) {
    apply_flush_success(*row_, now, cycle);
    if (wants(event_types::memory_flush_completed)) {
      fx.events.push_back(
          event(payloads::memory_flush_completed{final_reply_verdict(reply_text(*reply)).silent, plan->relative_path}));
    }
  } else {
    auto notice = apply_flush_failure(*row_, now, reply.error().message());
    fx.events.push_back(
        event(payloads::memory_flush_failed{reply.error().message(), row_->memory_flush_failure_count().value_or(0)}));
    if (notice) out.notices.push_back(*notice);
  }
  co_return true;
}

task<bool> session_core::maybe_compact_before_turn(const session_model& m, std::int64_t prompt_estimate,
                                                   std::int64_t context_tokens, core_effects& fx) {
  const auto& settings = *deps_->settings;
  if (!settings.compaction.enabled || !transcript_) co_return false;
  preflight_state ps;
  ps.context_window = m.context_window;
  ps.soft_threshold_tokens = settings.memory_flush.soft_threshold_tokens;
  if (auto total = row_->total_tokens()) {
    if (row_->total_tokens_fresh() == std::optional<bool>(true))
      ps.fresh_persisted_total_tokens = *total;
    else
      ps.stale_persisted_total_tokens = *total;
  }
  ps.last_output_tokens = row_->output_tokens().value_or(0);
  ps.prompt_estimate_tokens = prompt_estimate;
  ps.transcript_prompt_tokens = context_tokens;
  ps.transcript_bytes = transcript_->reader().data_end() + transcript_->pending_bytes();
  if (const auto trigger = should_compact_before_turn(settings.compaction, ps)) {
    (void)co_await compact(preflight_reason(*trigger), "", fx);
    co_return true;
  }
  co_return false;
}

void session_core::check_context_pressure(const session_model& m, std::int64_t context_tokens, core_effects& fx) {
  const auto& settings = *deps_->settings;
  const std::int64_t window = m.context_window;
  const std::int64_t threshold = window - effective_reserve(settings.compaction, window);
  // The cycle's state lives in the row, so a passivated or restarted session does not report
  // a fraction again before the next compaction.
  if (!pressure_loaded_) {
    if (const auto* kept = row_->json().if_contains(kPressureField))
      if (auto state = pressure_state_from_json(*kept); state.ok()) pressure_ = std::move(*state);
    pressure_loaded_ = true;
  }
  auto check = actors::check_pressure(settings.pressure, pressure_, context_tokens, threshold,
                                      row_->compaction_count().value_or(0));
  if (!(check.next == pressure_)) row_->json()[kPressureField] = pressure_state_to_json(check.next);
  pressure_ = std::move(check.next);
  for (double fraction : check.crossed) {
    if (!wants(event_types::context_pressure)) break;
    fx.events.push_back(
        event(payloads::context_pressure{fraction, context_tokens, threshold, window}));
  }
}



}  // namespace sessionrt::actors
