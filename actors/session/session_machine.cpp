#include "actors/session/session_machine.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/json/parse.hpp>
#include <limits>

#include "actors/session/chat_commands.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::actors {

namespace {

// One sink for every sender a (collected) turn answers.
outcome_fn answer_all(outcome_fn first, std::vector<outcome_fn> more) {
  if (more.empty()) return first;
  return [first = std::move(first), more = std::move(more)](turn_outcome out) {
    for (const auto& s : more) s(out);
    first(std::move(out));
  };
}

status cancelled_because(const std::string& reason) {
  return status(errc::cancelled, fmt::format("the turn was cancelled ({})", reason));
}

}  // namespace

session_machine::session_machine(std::string key, std::optional<session_entry> row,
                                 std::shared_ptr<const session_core_deps> deps, call_port& port, options opts)
    : deps_(deps), port_(port), opts_(opts) {
  // Streamed text (reply.delta) joins the plan of the input that runs the turn, in order with
  // the turn's other steps.
  auto publish_now = [this](lifecycle_event e) { step(plan_publish{std::move(e)}); };
  core_ = std::make_unique<session_core>(std::move(key), std::move(row), std::move(deps), std::move(publish_now));
  core_->set_io(this);
}

session_machine::~session_machine() {
  if (call_) end_call();
  turn_.reset();  // the coroutine frames reference the core
  (void)core_->close();
}

// ---- turn_io ----

std::optional<model_answer> session_machine::start_model_call(std::shared_ptr<model_request> request,
                                                              std::function<void(model_answer)> resume) {
  if (!turn_->cancel_reason.empty()) return model_answer(cancelled_because(turn_->cancel_reason));
  if (!port_.has_runner()) return model_answer(errc::unsupported, "no model runner is registered");
  call_.emplace();
  call_->id = next_call_id_++;
  call_->resume_model = std::move(resume);
  // The runner speaks from its threads: the port carries what it says to text() / note().
  call_port::streams s;
  if (request->on_text) {
    call_->deliver_text = std::exchange(request->on_text, {});
    s.text = true;
  }
  if (request->on_message) {
    call_->deliver_message = std::exchange(request->on_message, {});
    s.message = true;
  }
  if (request->on_fallback) {
    call_->deliver_fallback = std::exchange(request->on_fallback, {});
    s.fallback = true;
  }
  if (auto answer = port_.start_model(call_->id, std::move(request), s, call_->cancel)) {
    call_.reset();  // answered before start() returned: the port holds nothing of it
    return answer;
  }
  log_while_waiting();
  return std::nullopt;
}

// The turn waits for its model (the runner took the call, or the gate holds it): what its
// transcript holds unacknowledged (the user's line, durability batch) goes to the commit log
// now, so a crash during the call keeps the line; the call is not held for the log's sync.
// A call answered at once sends nothing here: the turn's final record carries the line. A
// failed record fails no turn by itself: the turn's final record carries its bytes again.
void session_machine::log_while_waiting() {
  if (!turn_ || !opts_.commit_log) return;
  if (auto rec = core_->log_record_while_waiting()) {
    waiting_record_ = {core_->transcript_file_id(), rec->seq};
    step(plan_log{std::move(*rec)});
  }
}

std::optional<result<std::string>> session_machine::start_summary(std::shared_ptr<compaction_provider> provider,
                                                                  std::shared_ptr<summarize_request> request,
                                                                  std::function<void(result<std::string>)> resume) {
  if (!turn_->cancel_reason.empty()) return result<std::string>(cancelled_because(turn_->cancel_reason));
  if (!port_.can_summarize()) return result<std::string>(errc::unsupported, "no thread pool for compaction providers");
  call_.emplace();
  call_->id = next_call_id_++;
  call_->resume_summary = std::move(resume);
  port_.start_summary(call_->id, std::move(provider), std::move(request), call_->cancel);
  return std::nullopt;
}

void session_machine::publish_progress() {
  if (turn_) publish(turn_->fx.events);
}

// ---- steps ----

void session_machine::publish(std::vector<lifecycle_event>& events) {
  for (auto& e : events) step(plan_publish{std::move(e)});
  events.clear();
}

void session_machine::reply(outcome_fn sink, turn_outcome out) { step(plan_reply{std::move(sink), std::move(out)}); }

turn_outcome session_machine::refused(status why) const {
  turn_outcome out;
  out.session_key = core_->key();
  out.session_id = core_->session_id();
  out.st = std::move(why);
  return out;
}

// Durability batch (and a commit log to write to).
bool session_machine::rows_in_log() const {
  return opts_.commit_log && deps_->settings->storage.durability == storage::durability::batch;
}

void session_machine::release_ready() {
  for (auto& [sink, out] : acks_.take_ready()) reply(std::move(sink), std::move(out));
}

// The row goes to the store and the ack waits until sessions.json holds it (storeDurableAck,
// or a batch row that is not text): `w.store`.
void session_machine::put_durably(core_effects& fx, bool as_text, ack_order::waits& w) {
  w.store = true;
  if (as_text)
    step(plan_put{core_->key(), std::move(fx.store_text), std::nullopt, true});
  else
    step(plan_put{core_->key(), {}, *core_->entry(), true});
}

// Durability batch: the turn's rows are records of its commit log append (with its bytes, or
// alone), so the ack waits for nothing more (storeDurableAck costs nothing); the log hands
// them to the store once written. A row that is not valid UTF-8 text goes to the store as the
// object, which records it itself, and the ack waits for that too.
void session_machine::rows_to_log(core_effects& fx, ack_order::waits& w) {
  std::vector<logged_row> rows;
  for (auto& [key, text] : fx.extra_rows) rows.push_back({key, std::move(text), 0});
  if (fx.store_put && !fx.store_text.empty())
    rows.push_back({core_->key(), std::move(fx.store_text), 0});
  else if (fx.store_put && core_->entry())
    put_durably(fx, false, w);
  if (rows.empty()) return;
  // The rows alone, answered for (0, seq).
  auto row_only = [&] {
    commit_log_append a;
    a.seq = ++rows_only_seq_;
    a.agent = deps_->agent_id;
    a.rows = std::move(rows);
    return a;
  };
  if (!fx.log_append) {  // nothing new in the transcript
    fx.log_append = row_only();
    return;
  }
  if (fx.log_append->file && std::make_pair(core_->transcript_file_id(), fx.log_append->seq) == waiting_record_) {
    // Nothing was written since the record sent while the model ran (a turn that failed or was
    // cancelled): that record's answer, for the same (file, seq), would release the ack before
    // a record carrying these rows is written. They go alone, and the ack waits for them too.
    commit_log_append apart = row_only();
    w.rows_seq = apart.seq;
    step(plan_log{std::move(apart)});
    return;
  }
  fx.log_append->agent = deps_->agent_id;
  fx.log_append->rows = std::move(rows);
}

// Does what the core asked for after a turn and queues the acknowledgement (or fails it).
void session_machine::apply(core_effects& fx, outcome_fn sink, turn_outcome out) {
  publish(fx.events);
  ack_order::waits w;
  // The row goes to the store as its text when the core kept it so (the usual case), else as
  // the object.
  const bool as_text = !fx.store_text.empty();
  if (rows_in_log()) {
    rows_to_log(fx, w);
  } else {
    for (auto& [key, text] : fx.extra_rows) step(plan_put{key, std::move(text)});
    if (fx.store_put && (as_text || core_->entry())) {
      if (fx.store_durable)
        put_durably(fx, as_text, w);
      else if (as_text)
        step(plan_put{core_->key(), std::move(fx.store_text)});
      else
        step(plan_put{core_->key(), {}, *core_->entry()});
    }
  }
  if (fx.log_append) {
    w.sync_seq = fx.log_append->seq;
    w.sync_file = fx.log_append->file ? core_->transcript_file_id() : 0;
    step(plan_log{std::move(*fx.log_append)});
    waiting_record_ = {};
  }
  if (fx.stale_at != scheduled_stale_at_ && opts_.timers) {
    scheduled_stale_at_ = fx.stale_at;
    step(plan_schedule{core_->key(), fx.stale_at.value_or(-1), fx.stale_reason});
  }
  acks_.push(sink ? std::move(sink) : outcome_fn([](turn_outcome) {}), std::move(out), w);
  release_ready();
}

// ---- turns ----

void session_machine::finish_turn() {
  auto& t = *turn_;
  turn_outcome out = t.t.take();
  t.t.reset();
  if (t.is_chat && out.st.code() == errc::locked && core_->lock_busy() && t.cancel_reason.empty()) {
    const std::int64_t timeout = deps_->settings->session.write_lock.acquire_timeout_ms;
    if (auto delay = storage::lock_retry_delay_ms(t.attempt, t.waited_ms, timeout)) {
      publish(t.fx.events);
      t.fx = core_effects{};
      ++t.attempt;
      t.waited_ms += *delay;
      lock_wait_ = std::move(turn_);
      step(plan_retry{*delay});
      return;
    }
    out.st = storage::lock_timeout_error(timeout, core_->lock_busy()->holder);
  }
  auto done = std::move(turn_);
  // Steered messages the runner took were stored ahead of the reply: their senders get the
  // turn's outcome; the ones it did not take wait as follow-ups, first, in order.
  const std::size_t taken = done->inbox ? done->inbox->taken().size() : 0;
  for (std::size_t i = done->steered.size(); i-- > taken;) queue_.push_front(std::move(done->steered[i]));
  for (std::size_t i = 0; i < taken && i < done->steered.size(); ++i) done->extra.push_back(std::move(done->steered[i].sink));
  apply(done->fx, answer_all(std::move(done->sink), std::move(done->extra)), std::move(out));
  pump(true);
}

// After the machine resumed the turn (or started it): a turn that reached its end is finished.
void session_machine::after_resume() {
  if (turn_ && turn_->t.done()) finish_turn();
}

void session_machine::run(std::unique_ptr<running_turn> t) {
  turn_ = std::move(t);
  auto& r = *turn_;
  r.t = r.is_chat ? core_->chat(*r.ev, r.route, r.fx) : core_->system(r.sys, r.fx);
  r.t.resume();
  after_resume();
}

// The queued piece of work that gets no turn (the row could not be read) fails.
void session_machine::fail_next(const std::string& why) {
  auto q = effective_queue(deps_->settings->queue, nullptr);
  auto w = queue_.pop(q);
  if (!w) return;
  turn_outcome out;
  out.session_key = core_->key();
  out.st = status(errc::io_error, why);
  if (w->system) {
    spdlog::warn("{}: system event dropped: {}", core_->key(), why);
    if (w->system_sink) reply(std::move(w->system_sink), std::move(out));
    return;
  }
  reply(answer_all(std::move(w->chat->sink), std::move(w->extra_sinks)), std::move(out));
}

// Starts the next waiting piece of work when nothing holds the session.
void session_machine::pump(bool after_turn) {
  if (holding()) return;
  if (queue_.empty()) return finish_passivation();
  if (core_->needs_row()) {  // after a trim that left the row to the store
    fetching_row_ = true;
    return step(plan_fetch_row{});
  }
  const auto q = effective_queue(deps_->settings->queue, core_->entry() ? &*core_->entry() : nullptr);
  const std::int64_t now = deps_->time->now_ms();
  if (after_turn && q.debounce_ms > 0 && queue_.chats() && opts_.alarms &&
      now < queue_.last_arrival_ms() + q.debounce_ms) {
    debounce_ = true;
    wake_at_ms_ = queue_.last_arrival_ms() + q.debounce_ms;
    return step(plan_wake{wake_at_ms_});
  }
  auto w = queue_.pop(q);
  auto t = std::make_unique<running_turn>();
  if (w->system) {
    t->is_chat = false;
    t->sys = std::move(*w->system);
    t->sink = std::move(w->system_sink);
  } else {
    t->ev = std::move(w->chat->ev);
    t->route = std::move(w->chat->route);
    t->sink = std::move(w->chat->sink);
    t->extra = std::move(w->extra_sinks);
  }
  run(std::move(t));
}

void session_machine::end_call() { port_.end(call_->id); }

// Cancels the running turn's call (the turn then ends without a reply).
void session_machine::cancel_turn(const std::string& reason) {
  if (!turn_ || !turn_->cancel_reason.empty()) return;
  turn_->cancel_reason = reason;
  if (!call_) return;
  call_->cancel->cancel();
  end_call();
  auto c = std::move(*call_);
  call_.reset();
  const status why = cancelled_because(reason);
  if (c.resume_model) c.resume_model(model_answer(why));
  if (c.resume_summary) c.resume_summary(result<std::string>(why));
  after_resume();
}

void session_machine::finish_passivation() {
  if (!passivating_ || passivated_ || !idle() || !acks_.empty()) return;
  passivated_ = true;
  status closed = core_->close();
  step(plan_publish{
      core_->event(payloads::session_passivated{passivate_why_, closed.ok() ? std::string() : closed.message()})});
  step(plan_quit{});
}

// The call `id` answered: the turn goes on (a late answer to a call that was cancelled or
// timed out is ignored).
template <class Answer>
void session_machine::answer(std::uint64_t id, Answer a) {
  if (!call_ || call_->id != id) return;
  end_call();
  auto c = std::move(*call_);
  call_.reset();
  if constexpr (std::is_same_v<Answer, model_answer>) {
    if (c.resume_model) c.resume_model(std::move(a));
  } else {
    if (c.resume_summary) c.resume_summary(std::move(a));
  }
  after_resume();
}

// ---- chat messages ----

// A chat message goes by the command table (chat_commands.hpp; a reset trigger, told apart by
// its sender and route, is read first): /stop never waits, /status and /context list are
// answered at once while a turn runs, a reset trigger cancels the running turn and runs next;
// everything else waits by the session's queue mode.
void session_machine::on_chat(chat_event_ptr ev, route_facts route, outcome_fn sink) {
  const recognized_command command = core_->recognize(*ev, route);
  const command_timing timing = chat_command_info(command.id).timing;
  if (timing == command_timing::stop) return stop_command(std::move(sink));
  if (!running()) {
    // Nothing runs: no cap applies to what starts now or waits for a lock / a row.
    queued_chat c{std::move(ev), std::move(route), std::move(sink), deps_->time->now_ms()};
    queue_settings unbounded = deps_->settings->queue;
    unbounded.cap = std::numeric_limits<std::size_t>::max();
    (void)queue_.push(std::move(c), unbounded);
    return pump(false);
  }
  if (timing == command_timing::answer_if_busy)
    if (auto answer = core_->answer_while_busy(command.id)) {
      if (command.id == chat_command::status) {
        const auto q = effective_queue(deps_->settings->queue, &*core_->entry());
        answer->command_output += fmt::format(" {} message(s) wait ({}).", queue_.chats(), queue_mode_name(q.mode));
      }
      return reply(std::move(sink), std::move(*answer));
    }
  if (timing == command_timing::run_next) {
    queue_.push_front(queued_chat{std::move(ev), std::move(route), std::move(sink), deps_->time->now_ms()});
    return cancel_turn("reset");
  }
  enqueue(std::move(ev), std::move(route), std::move(sink));
}

// /stop: cancels the running turn and drops the waiting messages (system events stay).
void session_machine::stop_command(outcome_fn sink) {
  turn_outcome out = refused(status());
  out.command = "/stop";
  if (running()) {
    auto dropped = queue_.take_chats();  // first: the cancelled turn's end would start them
    cancel_turn("stop");
    for (auto& d : dropped) reply(std::move(d.sink), refused(status(errc::cancelled, "dropped by /stop")));
    out.command_output = dropped.empty() ? "Stopped the running turn."
                                         : fmt::format("Stopped the running turn; {} waiting message(s) dropped.",
                                                       dropped.size());
  } else {
    out.command_output = "Nothing is running.";
  }
  reply(std::move(sink), std::move(out));
}

// A message that arrived while a turn runs: steered into the running call, or queued by the
// session's queue mode (the cap's drops answered; interrupt cancels the running turn).
void session_machine::enqueue(chat_event_ptr ev, route_facts route, outcome_fn sink) {
  const auto q = effective_queue(deps_->settings->queue, core_->entry() ? &*core_->entry() : nullptr);
  queued_chat c{std::move(ev), std::move(route), std::move(sink), deps_->time->now_ms()};
  if (q.mode == queue_mode::steer && c.ev->content.empty())
    if (auto inbox = core_->steering_inbox(); inbox && inbox->try_put(c.ev->text)) {
      turn_->inbox = std::move(inbox);
      turn_->steered.push_back(std::move(c));
      return;
    }
  if (!deps_->wants_event || deps_->wants_event(event_types::turn_queued))
    step(plan_publish{payloads::make_event(core_->subject(), c.arrived_ms,
                                           payloads::turn_queued{std::string(queue_mode_name(q.mode)),
                                                                 std::int64_t(queue_.chats() + 1)})});
  for (auto& d : queue_.push(std::move(c), q))
    reply(std::move(d.sink), refused(status(errc::limit_exceeded,
                                            fmt::format("dropped: {} messages were already waiting "
                                                        "(messages.queue.cap {}, drop {})",
                                                        q.cap, q.cap, queue_drop_name(q.drop)))));
  if (q.mode == queue_mode::interrupt) cancel_turn("interrupt");
}

// ---- inputs ----

session_plan session_machine::chat(chat_event_ptr ev, route_facts route, outcome_fn sink) {
  on_chat(std::move(ev), std::move(route), std::move(sink));
  return take();
}

session_plan session_machine::system(system_event ev, outcome_fn sink) {
  queue_.push(std::move(ev), std::move(sink));
  pump(false);
  return take();
}

// Seqs count per transcript, so only that file's acks are matched (after a rollover or a trim
// the session may be writing another file).
session_plan session_machine::synced(std::uint64_t file, std::uint64_t seq, const std::string& error) {
  if (file != 0 && file == core_->transcript_file_id() && error.empty()) core_->note_synced(seq, true);
  acks_.synced(file, seq, error);
  release_ready();
  finish_passivation();
  return take();
}

session_plan session_machine::stored(const std::string& error) {
  acks_.stored(error);
  release_ready();
  finish_passivation();
  return take();
}

session_plan session_machine::row_fetched(std::optional<session_entry> row, const std::string& failure) {
  fetching_row_ = false;
  if (!failure.empty())
    fail_next(failure);
  else
    core_->restore_row(std::move(row));
  pump(false);
  return take();
}

session_plan session_machine::model_answered(std::uint64_t id, model_answer a) {
  answer(id, std::move(a));
  return take();
}

session_plan session_machine::summary_answered(std::uint64_t id, result<std::string> a) {
  answer(id, std::move(a));
  return take();
}

session_plan session_machine::granted(std::uint64_t id) {
  if (!call_ || call_->id != id) return take();
  if (auto now = port_.launch(id)) {  // the runner answered before its start() returned
    auto resume = std::move(call_->resume_model);
    call_.reset();
    resume(std::move(*now));
    after_resume();
  }
  return take();
}

session_plan session_machine::timed_out(std::uint64_t id) {
  if (!call_ || call_->id != id) return take();
  call_->cancel->cancel();
  const std::int64_t ms = deps_->settings->model.timeout_ms;
  const status why(errc::timeout, fmt::format("the model call took longer than model.timeoutMs ({} ms)", ms));
  if (call_->resume_model)
    answer(id, model_answer(why));
  else
    answer(id, result<std::string>(why));
  return take();
}

void session_machine::stream_text(std::uint64_t id, std::string_view piece) {
  if (call_ && call_->id == id && call_->deliver_text) call_->deliver_text(piece);
}

void session_machine::stream_message(std::uint64_t id, boost::json::object message) {
  if (call_ && call_->id == id && call_->deliver_message) call_->deliver_message(std::move(message));
}

session_plan session_machine::text(std::uint64_t id, std::string_view piece) {
  stream_text(id, piece);
  return take();
}

// A note that does not parse as the object it was sent as is dropped (the runner's own bug:
// nothing half-read is stored).
session_plan session_machine::note(std::uint64_t id, const std::string& kind, const std::string& json) {
  if (!call_ || call_->id != id) return take();
  boost::system::error_code ec;
  auto v = boost::json::parse(json, ec);
  if (ec || !v.is_object()) return take();
  if (kind == "message" && call_->deliver_message) {
    call_->deliver_message(std::move(v.as_object()));
  } else if (kind == "fallback" && call_->deliver_fallback) {
    const auto& o = v.as_object();
    auto str = [&](const char* k) {
      return o.contains(k) && o.at(k).is_string() ? std::string(o.at(k).as_string()) : std::string();
    };
    call_->deliver_fallback(str("from"), str("to"), str("reason"));
  }
  return take();
}

session_plan session_machine::retry() {
  if (lock_wait_) {
    run(std::move(lock_wait_));
    finish_passivation();
  }
  return take();
}

session_plan session_machine::wake() {
  debounce_ = false;
  pump(false);
  return take();
}

session_plan session_machine::passivate(const std::string& why) {
  passivating_ = true;
  passivate_why_ = why;
  if (why == "stop") {
    // Shutting down: nothing more starts; what runs is cancelled and what waits is refused.
    for (auto& d : queue_.take_chats()) reply(std::move(d.sink), refused(status(errc::cancelled, "the runtime is stopping")));
    while (auto w = queue_.pop(deps_->settings->queue))  // system events: their senders learn it too
      if (w->system_sink) reply(std::move(w->system_sink), refused(status(errc::cancelled, "the runtime is stopping")));
    queue_ = turn_queue();
    if (lock_wait_) {
      auto w = std::move(lock_wait_);
      reply(answer_all(std::move(w->sink), std::move(w->extra)), refused(status(errc::cancelled, "the runtime is stopping")));
    }
    if (debounce_) step(plan_cancel_wake{});
    debounce_ = false;
    cancel_turn("shutdown");
  }
  finish_passivation();
  return take();
}

// Between turns (nothing open while a turn waits for a lock).
session_plan session_machine::trim() {
  if (!idle() || passivating_) return take();
  // Batch: a row the log has not answered for may not be in the store yet, and trim() leaves
  // the row to the store: the next sweep trims.
  if (rows_in_log() && !acks_.empty()) return take();
  (void)core_->trim();
  return take();
}

session_wait session_machine::wait() const {
  session_wait w;
  if (call_) (call_->resume_summary ? w.on_pool : w.on_runner) = true;
  w.lock_retry = lock_wait_ != nullptr;
  w.row_fetch = fetching_row_;
  if (debounce_) w.wake_at_ms = wake_at_ms_;
  w.acks_on_log = static_cast<std::uint32_t>(acks_.waiting_on_sync());
  w.acks_on_store = static_cast<std::uint32_t>(acks_.waiting_on_store());
  w.queued = static_cast<std::uint32_t>(queue_.size());
  return w;
}

std::string session_machine::describe() const {
  return fmt::format("key={} open={} trimmed={} pending={} queued={} waiting={} running={} calling={} inbox={}",
                     core_->key(), core_->transcript_open(), core_->trimmed(), acks_.size(),
                     core_->queued_system_events(), lock_wait_ != nullptr, turn_ != nullptr, call_.has_value(),
                     queue_.chats());
}

}  // namespace sessionrt::actors
