#include "actors/session/session_actor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include "actors/events/event_bus.hpp"
#include "actors/session/ack_order.hpp"
#include "actors/session/chat_commands.hpp"
#include "actors/session/turn_queue.hpp"

namespace sessionrt::actors {

namespace {

struct session_state;
using session_self = session_actor_type::stateful_pointer<session_state>;

// Set while runner->start() runs on the actor's thread: a runner that answers (or streams)
// before start() returns is heard here instead of through a message.
struct inline_answer {
  std::thread::id thread;
  std::atomic<bool> in_start{false};
  std::optional<model_answer> answer;
  bool here() const { return in_start.load() && std::this_thread::get_id() == thread; }
};

// The call the running turn waits on.
struct call_state {
  std::uint64_t id = 0;
  std::function<void(model_answer)> resume_model;
  std::function<void(result<std::string>)> resume_summary;
  std::shared_ptr<cancellation> cancel = std::make_shared<cancellation>();
  std::optional<model_gate::ticket> ticket;
  std::optional<alarms::id> timeout;
  std::function<void(std::string_view)> deliver_text;  // the turn's stream, on this thread
  // The turn's handlers of a runner's notes (tool-loop messages, fallbacks), on this thread.
  std::function<void(boost::json::object)> deliver_message;
  std::function<void(std::string, std::string, std::string)> deliver_fallback;
  std::shared_ptr<model_request> request;              // until launched
};

// The turn that runs (a chat turn or a system event); its event and route are referenced by
// the coroutine, so they live here, at a fixed address, until it ends.
struct running_turn {
  bool is_chat = true;
  chat_event ev;
  route_facts route;
  system_event sys;
  outcome_fn sink;                  // null for a system event nobody waits for
  // Queue mode steer: messages handed to the running call (in order), and its inbox.
  std::vector<queued_chat> steered;
  std::shared_ptr<steer_inbox> inbox;
  std::vector<outcome_fn> extra;    // collect: the other senders of a merged turn
  core_effects fx;
  std::string cancel_reason;
  int attempt = 1;                  // the write-lock attempt this is (1-based)
  std::int64_t waited_ms = 0;       // lock waits scheduled so far (real time: delayed_send)
  task<turn_outcome> t;
};

struct session_state : turn_io {
  session_self self = nullptr;
  std::shared_ptr<const session_actor_deps> deps;
  std::unique_ptr<session_core> core;
  ack_order acks;
  turn_queue queue;
  std::unique_ptr<running_turn> turn;       // running
  std::unique_ptr<running_turn> lock_wait;  // waiting for the transcript's write lock
  std::optional<call_state> call;
  std::uint64_t next_call_id = 1;
  bool fetching_row = false;
  std::optional<alarms::id> debounce;
  std::optional<std::int64_t> scheduled_stale_at;
  bool passivating = false;
  std::string passivate_why;
  caf::actor passivate_reply_to;

  // Runs when the actor exits (CAF destroys a stateful actor's state in on_exit).
  ~session_state() override {
    if (!deps) return;  // never started
    if (call) end_call();
    if (debounce && deps->timers_clock) deps->timers_clock->cancel(*debounce);
    turn.reset();  // the coroutine frames reference the core
    if (core) (void)core->close();
  }

  // ---- turn_io ----
  std::optional<model_answer> start_model_call(std::shared_ptr<model_request> request,
                                               std::function<void(model_answer)> resume) override;
  std::optional<result<std::string>> start_summary(std::shared_ptr<compaction_provider> provider,
                                                   std::shared_ptr<summarize_request> request,
                                                   std::function<void(result<std::string>)> resume) override;
  void publish_progress() override;
  std::string cancel_reason() const override { return turn ? turn->cancel_reason : std::string(); }
  bool steering_supported() const override { return deps->runner && deps->runner->supports_steering(); }

  std::optional<model_answer> launch();
  void end_call();
  void arm_timeout();
};

void publish_events(session_state& st, std::vector<lifecycle_event>& events) {
  for (auto& e : events) publish(st.self, st.deps->bus, *st.deps->hub, std::move(e));
  events.clear();
}

void session_state::publish_progress() {
  if (turn) publish_events(*this, turn->fx.events);
}

// Releases what the call holds (gate ticket, alarm); the resume functions stay with the caller.
void session_state::end_call() {
  if (call->ticket && deps->gate) deps->gate->release(*call->ticket);
  if (call->timeout && deps->timers_clock) deps->timers_clock->cancel(*call->timeout);
  call->ticket.reset();
  call->timeout.reset();
}

void session_state::arm_timeout() {
  const std::int64_t ms = deps->core->settings->model.timeout_ms;
  if (ms <= 0 || !deps->timers_clock) return;
  call->timeout = deps->timers_clock->at(deps->core->time->now_ms() + ms,
                                         [addr = self->address(), id = call->id] {
                                           if (auto a = caf::actor_cast<caf::actor>(addr))
                                             caf::anon_send(a, timeout_atom::value, id);
                                         });
}

// A runner's note reaches the turn that made the call; a note that does not parse as the
// object it was sent as is dropped (the runner's own bug: nothing half-read is stored).
void deliver_note(call_state& call, const std::string& kind, const std::string& text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return;
  if (kind == "message" && call.deliver_message) {
    call.deliver_message(std::move(v.as_object()));
  } else if (kind == "fallback" && call.deliver_fallback) {
    const auto& o = v.as_object();
    auto str = [&](const char* k) { return o.contains(k) && o.at(k).is_string() ? std::string(o.at(k).as_string()) : std::string(); };
    call.deliver_fallback(str("from"), str("to"), str("reason"));
  }
}

std::optional<model_answer> session_state::start_model_call(std::shared_ptr<model_request> request,
                                                            std::function<void(model_answer)> resume) {
  if (!turn->cancel_reason.empty())
    return model_answer(errc::cancelled, fmt::format("the turn was cancelled ({})", turn->cancel_reason));
  if (!deps->runner) return model_answer(errc::unsupported, "no model runner is registered");
  call.emplace();
  call->id = next_call_id++;
  call->resume_model = std::move(resume);
  call->request = std::move(request);
  // Streamed pieces come from the runner's threads: they reach the turn's stream here.
  if (call->request->on_text) {
    call->deliver_text = std::move(call->request->on_text);
    call->request->on_text = [addr = self->address(), id = call->id](std::string_view piece) {
      if (auto a = caf::actor_cast<caf::actor>(addr)) caf::anon_send(a, model_text_atom::value, id, std::string(piece));
    };
  }
  // Notes come from the runner's threads too; they carry JSON text (CAF copies strings).
  if (call->request->on_message) {
    call->deliver_message = std::move(call->request->on_message);
    call->request->on_message = [addr = self->address(), id = call->id](boost::json::object m) {
      if (auto a = caf::actor_cast<caf::actor>(addr))
        caf::anon_send(a, model_note_atom::value, id, std::string("message"), std::string(boost::json::serialize(m)));
    };
  }
  if (call->request->on_fallback) {
    call->deliver_fallback = std::move(call->request->on_fallback);
    call->request->on_fallback = [addr = self->address(), id = call->id](std::string from, std::string to,
                                                                         std::string why) {
      boost::json::object note{{"from", from}, {"to", to}, {"reason", why}};
      if (auto a = caf::actor_cast<caf::actor>(addr))
        caf::anon_send(a, model_note_atom::value, id, std::string("fallback"), std::string(boost::json::serialize(note)));
    };
  }
  if (!deps->gate) return launch();
  // 0: acquire() runs, 1: it granted before returning, 2: it returned without room (a later
  // grant, from whichever thread, comes as a message).
  auto phase = std::make_shared<std::atomic<int>>(0);
  const std::string provider = call->request->provider;
  call->ticket = deps->gate->acquire(provider, [phase, addr = self->address(), id = call->id] {
    int expected = 0;
    if (phase->compare_exchange_strong(expected, 1)) return;
    if (auto a = caf::actor_cast<caf::actor>(addr)) caf::anon_send(a, granted_atom::value, id);
  });
  int expected = 0;
  if (phase->compare_exchange_strong(expected, 2)) return std::nullopt;  // waits for room
  return launch();
}

// Hands the admitted call to the runner; its answer when the runner gave it before start()
// returned (the call is then over), else nullopt.
std::optional<model_answer> session_state::launch() {
  auto box = std::make_shared<inline_answer>();
  box->thread = std::this_thread::get_id();
  auto done = std::make_shared<model_completion>([addr = self->address(), id = call->id, box](model_answer a) {
    if (box->here()) {
      box->answer = std::move(a);
      return;
    }
    auto actor = caf::actor_cast<caf::actor>(addr);
    if (!actor) return;
    model_reply r;
    if (a.ok())
      r.message = std::move(*a);
    else
      r.st = a.error();
    caf::anon_send(actor, model_done_atom::value, id, std::move(r));
  });
  if (call->deliver_text) {
    // Pieces streamed before start() returns go straight to the stream (this thread).
    auto forward = std::move(call->request->on_text);
    call->request->on_text = [box, forward, this](std::string_view piece) {
      if (box->here() && call && call->deliver_text) return call->deliver_text(piece);
      forward(piece);
    };
  }
  if (call->deliver_message) {
    // Likewise a note made before start() returns: straight to the turn, ahead of the answer.
    auto forward = std::move(call->request->on_message);
    call->request->on_message = [box, forward, this](boost::json::object m) {
      if (box->here() && call && call->deliver_message) return call->deliver_message(std::move(m));
      forward(std::move(m));
    };
  }
  std::shared_ptr<const model_request> req = std::move(call->request);
  box->in_start = true;
  deps->runner->start(std::move(req), done, call->cancel);
  box->in_start = false;
  if (box->answer) {
    end_call();
    std::optional<model_answer> out = std::move(box->answer);
    call.reset();
    return out;
  }
  arm_timeout();
  return std::nullopt;
}

std::optional<result<std::string>> session_state::start_summary(std::shared_ptr<compaction_provider> provider,
                                                                std::shared_ptr<summarize_request> request,
                                                                std::function<void(result<std::string>)> resume) {
  if (!turn->cancel_reason.empty())
    return result<std::string>(errc::cancelled, fmt::format("the turn was cancelled ({})", turn->cancel_reason));
  if (!deps->pool) return result<std::string>(errc::unsupported, "no thread pool for compaction providers");
  call.emplace();
  call->id = next_call_id++;
  call->resume_summary = std::move(resume);
  deps->pool->post([provider = std::move(provider), request = std::move(request), cancel = call->cancel,
                    addr = self->address(), id = call->id] {
    auto r = provider->summarize(*request, *cancel);
    auto actor = caf::actor_cast<caf::actor>(addr);
    if (!actor) return;
    summary_reply reply;
    if (r.ok())
      reply.text = std::move(*r);
    else
      reply.st = r.error();
    caf::anon_send(actor, summary_done_atom::value, id, std::move(reply));
  });
  arm_timeout();
  return std::nullopt;
}

// ---- turns ----

void pump(session_state& st, bool after_turn);
void finish_passivation(session_state& st);

void release_ready(session_state& st) {
  for (auto& [sink, out] : st.acks.take_ready()) sink(std::move(out));
}

// Does what the core asked for after a turn and queues the acknowledgement (or fails it).
void apply(session_state& st, core_effects& fx, outcome_fn sink, turn_outcome out) {
  auto* self = st.self;
  publish_events(st, fx.events);
  ack_order::waits w;
  // The row goes to the store as its text when the core kept it so (the usual case), else as
  // the object.
  const bool as_text = !fx.store_text.empty();
  for (auto& [key, text] : fx.extra_rows) self->send(st.deps->store, put_atom::value, key, std::move(text));
  if (fx.store_put && (as_text || st.core->entry())) {
    if (fx.store_durable) {
      w.store = true;
      auto stored = [&st](bool) {
        st.acks.stored("");
        release_ready(st);
        finish_passivation(st);
      };
      auto failed = [&st](caf::error& err) {
        st.acks.stored(st.self->system().render(err));
        release_ready(st);
        finish_passivation(st);
      };
      if (as_text)
        self->request(st.deps->store, caf::infinite, put_atom::value, st.core->key(), std::move(fx.store_text),
                      flush_atom::value)
            .then(stored, failed);
      else
        self->request(st.deps->store, caf::infinite, put_atom::value, st.core->key(), *st.core->entry(), flush_atom::value)
            .then(stored, failed);
    } else if (as_text) {
      self->send(st.deps->store, put_atom::value, st.core->key(), std::move(fx.store_text));
    } else {
      self->send(st.deps->store, put_atom::value, st.core->key(), *st.core->entry());
    }
  }
  if (fx.log_append) {
    w.sync_seq = fx.log_append->seq;
    w.sync_file = st.core->transcript_file_id();
    self->send(st.deps->commit_log, log_append_atom::value, std::move(*fx.log_append));
  }
  if (fx.stale_at != st.scheduled_stale_at && st.deps->timers) {
    st.scheduled_stale_at = fx.stale_at;
    self->send(st.deps->timers, schedule_atom::value, st.core->key(), fx.stale_at.value_or(-1), fx.stale_reason);
  }
  st.acks.push(sink ? std::move(sink) : outcome_fn([](turn_outcome) {}), std::move(out), w);
  release_ready(st);
}

// One sink for every sender a (collected) turn answers.
outcome_fn answer_all(outcome_fn first, std::vector<outcome_fn> more) {
  if (more.empty()) return first;
  return [first = std::move(first), more = std::move(more)](turn_outcome out) {
    for (const auto& s : more) s(out);
    first(std::move(out));
  };
}

void finish_turn(session_state& st) {
  auto& t = *st.turn;
  turn_outcome out = t.t.take();
  t.t.reset();
  if (t.is_chat && out.st.code() == errc::locked && st.core->lock_busy() && t.cancel_reason.empty()) {
    const std::int64_t timeout = st.deps->core->settings->session.write_lock.acquire_timeout_ms;
    if (auto delay = storage::lock_retry_delay_ms(t.attempt, t.waited_ms, timeout)) {
      publish_events(st, t.fx.events);
      t.fx = core_effects{};
      ++t.attempt;
      t.waited_ms += *delay;
      st.lock_wait = std::move(st.turn);
      st.self->delayed_send(st.self, std::chrono::milliseconds(*delay), retry_atom::value);
      return;
    }
    out.st = storage::lock_timeout_error(timeout, st.core->lock_busy()->holder);
  }
  auto done = std::move(st.turn);
  // Steered messages the runner took were stored ahead of the reply: their senders get the
  // turn's outcome; the ones it did not take wait as follow-ups, first, in order.
  const std::size_t taken = done->inbox ? done->inbox->taken().size() : 0;
  for (std::size_t i = done->steered.size(); i-- > taken;) st.queue.push_front(std::move(done->steered[i]));
  for (std::size_t i = 0; i < taken && i < done->steered.size(); ++i) done->extra.push_back(std::move(done->steered[i].sink));
  apply(st, done->fx, answer_all(std::move(done->sink), std::move(done->extra)), std::move(out));
  pump(st, true);
}

// After the actor resumed the turn (or started it): a turn that reached its end is finished.
void after_resume(session_state& st) {
  if (st.turn && st.turn->t.done()) finish_turn(st);
}

void run(session_state& st, std::unique_ptr<running_turn> t) {
  st.turn = std::move(t);
  auto& r = *st.turn;
  r.t = r.is_chat ? st.core->chat(r.ev, r.route, r.fx) : st.core->system(r.sys, r.fx);
  r.t.resume();
  after_resume(st);
}

// The queued piece of work that gets no turn (the row could not be read) fails.
void fail_next(session_state& st, const std::string& why) {
  auto q = effective_queue(st.deps->core->settings->queue, nullptr);
  auto w = st.queue.pop(q);
  if (!w) return;
  turn_outcome out;
  out.session_key = st.core->key();
  out.st = status(errc::io_error, why);
  if (w->system) {
    spdlog::warn("{}: system event dropped: {}", st.core->key(), why);
    if (w->system_sink) w->system_sink(std::move(out));
    return;
  }
  answer_all(std::move(w->chat->sink), std::move(w->extra_sinks))(std::move(out));
}

// After a trim that left the row to the store: fetches it, then goes on with the queue.
void fetch_row(session_state& st) {
  st.fetching_row = true;
  st.self->request(st.deps->store, caf::infinite, get_atom::value, st.core->key())
      .then(
          [&st](entry_reply& row) {
            st.fetching_row = false;
            if (!row.error.empty()) {
              fail_next(st, "the session row cannot be read: " + row.error);
            } else {
              st.core->restore_row(row.found ? std::optional<session_entry>(std::move(row.entry)) : std::nullopt);
            }
            pump(st, false);
          },
          [&st](caf::error& err) {
            st.fetching_row = false;
            fail_next(st, "reading the session row failed: " + st.self->system().render(err));
            pump(st, false);
          });
}

// Starts the next waiting piece of work when nothing runs.
void pump(session_state& st, bool after_turn) {
  if (st.turn || st.lock_wait || st.fetching_row || st.debounce) return;
  if (st.queue.empty()) return finish_passivation(st);
  if (st.core->needs_row()) return fetch_row(st);
  const auto q = effective_queue(st.deps->core->settings->queue, st.core->entry() ? &*st.core->entry() : nullptr);
  const std::int64_t now = st.deps->core->time->now_ms();
  if (after_turn && q.debounce_ms > 0 && st.queue.chats() && st.deps->timers_clock &&
      now < st.queue.last_arrival_ms() + q.debounce_ms) {
    st.debounce = st.deps->timers_clock->at(st.queue.last_arrival_ms() + q.debounce_ms, [addr = st.self->address()] {
      if (auto a = caf::actor_cast<caf::actor>(addr)) caf::anon_send(a, wake_atom::value);
    });
    return;
  }
  auto w = st.queue.pop(q);
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
  run(st, std::move(t));
}

turn_outcome refused(const session_state& st, status why) {
  turn_outcome out;
  out.session_key = st.core->key();
  out.session_id = st.core->session_id();
  out.st = std::move(why);
  return out;
}

// Cancels the running turn's call (the turn then ends without a reply).
void cancel_turn(session_state& st, const std::string& reason) {
  if (!st.turn || !st.turn->cancel_reason.empty()) return;
  st.turn->cancel_reason = reason;
  if (!st.call) return;
  st.call->cancel->cancel();
  st.end_call();
  auto c = std::move(*st.call);
  st.call.reset();
  const status why(errc::cancelled, fmt::format("the turn was cancelled ({})", reason));
  if (c.resume_model) c.resume_model(model_answer(why));
  if (c.resume_summary) c.resume_summary(result<std::string>(why));
  after_resume(st);
}

void on_chat(session_state& st, chat_event ev, route_facts route, outcome_fn sink) {
  const bool running = st.turn && !st.turn->t.done();
  std::string args;
  const chat_command cmd = parse_chat_command(ev.text, args);
  if (cmd == chat_command::stop) {
    turn_outcome out = refused(st, status());
    out.command = "/stop";
    if (running) {
      auto dropped = st.queue.take_chats();  // first: the cancelled turn's end would start them
      cancel_turn(st, "stop");
      for (auto& d : dropped) d.sink(refused(st, status(errc::cancelled, "dropped by /stop")));
      out.command_output = dropped.empty() ? "Stopped the running turn."
                                           : fmt::format("Stopped the running turn; {} waiting message(s) dropped.",
                                                         dropped.size());
    } else {
      out.command_output = "Nothing is running.";
    }
    return sink(std::move(out));
  }
  if (!running) {
    queued_chat c{std::move(ev), std::move(route), std::move(sink), st.deps->core->time->now_ms()};
    // Nothing runs: no cap applies to what starts now or waits for a lock / a row.
    queue_settings unbounded = st.deps->core->settings->queue;
    unbounded.cap = std::numeric_limits<std::size_t>::max();
    (void)st.queue.push(std::move(c), unbounded);
    return pump(st, false);
  }
  if (auto answer = st.core->answer_while_busy(ev)) {
    if (answer->command == "/status") {
      const auto q = effective_queue(st.deps->core->settings->queue, &*st.core->entry());
      answer->command_output += fmt::format(" {} message(s) wait ({}).", st.queue.chats(), queue_mode_name(q.mode));
    }
    return sink(std::move(*answer));
  }
  const auto q = effective_queue(st.deps->core->settings->queue, st.core->entry() ? &*st.core->entry() : nullptr);
  queued_chat c{std::move(ev), std::move(route), std::move(sink), st.deps->core->time->now_ms()};
  if (st.core->is_reset_command(c.ev, c.route)) {
    // /new or /reset: the running turn is cancelled and the reset runs next.
    st.queue.push_front(std::move(c));
    cancel_turn(st, "reset");
    return;
  }
  if (q.mode == queue_mode::steer && c.ev.content.empty())
    if (auto inbox = st.core->steering_inbox(); inbox && inbox->try_put(c.ev.text)) {
      st.turn->inbox = std::move(inbox);
      st.turn->steered.push_back(std::move(c));
      return;
    }
  const std::string key = st.core->key();
  if (st.deps->hub->wants(event_types::turn_queued))
    publish(st.self, st.deps->bus, *st.deps->hub,
            payloads::make_event(st.core->subject(), c.arrived_ms,
                                 payloads::turn_queued{std::string(queue_mode_name(q.mode)),
                                                       std::int64_t(st.queue.chats() + 1)}));
  for (auto& d : st.queue.push(std::move(c), q))
    d.sink(refused(st, status(errc::limit_exceeded,
                              fmt::format("dropped: {} messages were already waiting (messages.queue.cap {}, drop {})",
                                          q.cap, q.cap, queue_drop_name(q.drop)))));
  if (q.mode == queue_mode::interrupt) cancel_turn(st, "interrupt");
}

// A chat request: answered through `rp` once its turn is acknowledged (the queue and ack_order
// keep a local sink that delivers it).
caf::response_promise on_chat_request(session_state& st, caf::response_promise rp, chat_event ev, route_facts route) {
  on_chat(st, std::move(ev), std::move(route), [rp](turn_outcome out) mutable { rp.deliver(std::move(out)); });
  return rp;
}

void on_system(session_state& st, system_event ev, outcome_fn sink) {
  st.queue.push(std::move(ev), std::move(sink));
  pump(st, false);
}

void on_passivate(session_state& st, const std::string& why) {
  st.passivating = true;
  st.passivate_why = why;
  st.passivate_reply_to = caf::actor_cast<caf::actor>(st.self->current_sender());
  if (why == "stop") {
    // Shutting down: nothing more starts; what runs is cancelled and what waits is refused.
    for (auto& d : st.queue.take_chats()) d.sink(refused(st, status(errc::cancelled, "the runtime is stopping")));
    while (auto w = st.queue.pop(st.deps->core->settings->queue))  // system events: their senders learn it too
      if (w->system_sink) w->system_sink(refused(st, status(errc::cancelled, "the runtime is stopping")));
    st.queue = turn_queue();
    if (st.lock_wait) {
      auto w = std::move(st.lock_wait);
      answer_all(std::move(w->sink), std::move(w->extra))(refused(st, status(errc::cancelled, "the runtime is stopping")));
    }
    if (st.debounce && st.deps->timers_clock) st.deps->timers_clock->cancel(*st.debounce);
    st.debounce.reset();
    cancel_turn(st, "shutdown");
  }
  finish_passivation(st);
}

// Store maintenance asks before it moves a session's files: a session running or holding a
// turn declines (false) and goes on; its files stay for a later pass. (Waiting for the turn
// would hold the pass behind a slow model, and under virtual time for ever: the clock waits
// for the pass.)
bool passivate_if_idle(session_state& st, const std::string& why) {
  if (st.turn || st.lock_wait || st.fetching_row || st.debounce || !st.queue.empty()) return false;
  on_passivate(st, why);
  return true;
}

void finish_passivation(session_state& st) {
  if (!st.passivating || st.turn || st.lock_wait || st.fetching_row || !st.acks.empty() || !st.queue.empty()) return;
  status closed = st.core->close();
  publish(st.self, st.deps->bus, *st.deps->hub,
          st.core->event(payloads::session_passivated{st.passivate_why, closed.ok() ? std::string() : closed.message()}));
  // (A typed actor sends to a dynamic handle as itself.)
  if (st.passivate_reply_to)
    caf::send_as(caf::actor_cast<caf::actor>(st.self), st.passivate_reply_to, passivated_atom::value, st.core->key());
  st.self->quit();
}

// The commit log made the appends up to `seq` of transcript `file` durable (or failed to). Seqs
// count per transcript, so only that file's acks are matched (after a rollover or a trim the
// session may be writing another file).
void on_synced(session_state& st, std::uint64_t file, std::uint64_t seq, const std::string& error) {
  if (file == st.core->transcript_file_id() && error.empty()) st.core->note_synced(seq, true);
  st.acks.synced(file, seq, error);
  release_ready(st);
  finish_passivation(st);
}

// The call `id` answered: the turn goes on (a late answer to a call that was cancelled or
// timed out is ignored).
template <class Answer>
void on_answer(session_state& st, std::uint64_t id, Answer answer) {
  if (!st.call || st.call->id != id) return;
  st.end_call();
  auto c = std::move(*st.call);
  st.call.reset();
  if constexpr (std::is_same_v<Answer, model_answer>) {
    if (c.resume_model) c.resume_model(std::move(answer));
  } else {
    if (c.resume_summary) c.resume_summary(std::move(answer));
  }
  after_resume(st);
}

void on_timeout(session_state& st, std::uint64_t id) {
  if (!st.call || st.call->id != id) return;
  st.call->timeout.reset();  // fired
  st.call->cancel->cancel();
  const std::int64_t ms = st.deps->core->settings->model.timeout_ms;
  const status why(errc::timeout, fmt::format("the model call took longer than model.timeoutMs ({} ms)", ms));
  if (st.call->resume_model)
    on_answer(st, id, model_answer(why));
  else
    on_answer(st, id, result<std::string>(why));
}

void on_granted(session_state& st, std::uint64_t id) {
  if (!st.call || st.call->id != id || !st.call->request) return;
  auto resume = st.call->resume_model;  // launch() ends the call when the runner answers at once
  if (auto now = st.launch()) {
    resume(std::move(*now));
    after_resume(st);
  }
}

// Between turns (nothing open while a turn waits for a lock). Acks still waiting for the
// commit log stay pending: its request holds the transcript's fd open, and trim() syncs it too.
void on_trim(session_state& st) {
  if (st.turn || st.lock_wait || st.fetching_row || st.passivating || !st.queue.empty()) return;
  (void)st.core->trim();
}

std::string describe(const session_state& st) {
  return fmt::format("key={} open={} trimmed={} pending={} queued={} waiting={} running={} calling={} inbox={}",
                     st.core->key(), st.core->transcript_open(), st.core->trimmed(), st.acks.size(),
                     st.core->queued_system_events(), st.lock_wait != nullptr, st.turn != nullptr,
                     st.call.has_value(), st.queue.chats());
}

}  // namespace

namespace {

session_actor_type::behavior_type session_actor(session_self self, std::string key, entry_reply row,
                                                std::shared_ptr<const session_actor_deps> deps) {
  session_state* st = &self->state;
  st->self = self;
  st->deps = std::move(deps);
  auto publish_now = [st](lifecycle_event e) { publish(st->self, st->deps->bus, *st->deps->hub, std::move(e)); };
  st->core = std::make_unique<session_core>(std::move(key), row.found ? std::optional<session_entry>(std::move(row.entry))
                                                                     : std::nullopt,
                                            st->deps->core, std::move(publish_now));
  st->core->set_io(st);
  if (!row.found && !row.fork_parent_key.empty()) st->core->set_fork_parent(row.fork_parent_key, row.fork_parent_row);
  return {
      [self, st](chat_atom, chat_event& ev, route_facts& route) -> caf::result<turn_outcome> {
        return on_chat_request(*st, self->make_response_promise(), std::move(ev), std::move(route));
      },
      [self, st](system_atom, system_event& ev) -> caf::result<turn_outcome> {
        auto rp = self->make_response_promise();
        on_system(*st, std::move(ev), [rp](turn_outcome out) mutable { rp.deliver(std::move(out)); });
        return rp;
      },
      [st](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) {
        on_synced(*st, file, seq, error);
      },
      [st](granted_atom, std::uint64_t id) { on_granted(*st, id); },
      [st](model_done_atom, std::uint64_t id, model_reply& r) {
        on_answer(*st, id, r.st.ok() ? model_answer(std::move(r.message)) : model_answer(std::move(r.st)));
      },
      [st](model_text_atom, std::uint64_t id, const std::string& piece) {
        if (st->call && st->call->id == id && st->call->deliver_text) st->call->deliver_text(piece);
      },
      [st](model_note_atom, std::uint64_t id, const std::string& kind, const std::string& text) {
        if (st->call && st->call->id == id) deliver_note(*st->call, kind, text);
      },
      [st](summary_done_atom, std::uint64_t id, summary_reply& r) {
        on_answer(*st, id, r.st.ok() ? result<std::string>(std::move(r.text)) : result<std::string>(std::move(r.st)));
      },
      [st](timeout_atom, std::uint64_t id) { on_timeout(*st, id); },
      [st](retry_atom) {
        if (!st->lock_wait) return;
        auto t = std::move(st->lock_wait);
        run(*st, std::move(t));
        finish_passivation(*st);
      },
      [st](wake_atom) {
        st->debounce.reset();
        pump(*st, false);
      },
      [st](passivate_atom, const std::string& why) { on_passivate(*st, why); },
      [st](passivate_atom, const std::string& why, settle_atom) { return passivate_if_idle(*st, why); },
      [st](trim_atom) { on_trim(*st); },
      [](settle_atom) { return true; },
      [st](stats_atom) { return describe(*st); },
  };
}

}  // namespace

session_actor_type spawn_session_actor(caf::actor_system& sys, std::string key, entry_reply row,
                                       std::shared_ptr<const session_actor_deps> deps) {
  return sys.spawn(session_actor, std::move(key), std::move(row), std::move(deps));
}

}  // namespace sessionrt::actors
