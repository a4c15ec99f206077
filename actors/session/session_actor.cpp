// The session's actor: its behaviour list turns messages into session_machine inputs and
// carries out the plans they return (carry_out); the call_port below is the turn_io bridge
// that takes the machine's model and summary calls across threads (the model_gate, the
// asynchronous runner, the blocking pool, the model.timeoutMs alarm). Every decision is the
// machine's (session_machine.hpp).
#include "actors/session/session_actor.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>
#include <variant>

#include "actors/events/event_bus.hpp"
#include "actors/session/session_machine.hpp"

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

// The running call's transport. At namespace scope: a nested struct with default member
// initializers is not default-constructible inside its enclosing class for clang 14
// (optional::emplace() fails there; GCC accepts it).
struct call_transport {
  std::uint64_t id = 0;
  std::shared_ptr<model_request> request;  // until handed to the runner
  std::shared_ptr<cancellation> cancel;
  std::optional<model_gate::ticket> ticket;
  std::optional<alarms::id> timeout;
};

struct session_state : call_port {
  session_self self = nullptr;
  std::shared_ptr<const session_actor_deps> deps;
  std::optional<call_transport> call;  // the running call's (the machine keeps its bookkeeping)
  std::optional<alarms::id> debounce;
  passivated_port passivate_reply_to;  // the router, which asked
  std::optional<session_machine> machine;  // last: it ends its call through this port

  // Runs when the actor exits (CAF destroys a stateful actor's state in on_exit).
  ~session_state() override {
    if (!deps) return;  // never started
    if (debounce && deps->timers_clock) deps->timers_clock->cancel(*debounce);
    machine.reset();  // ends its call, abandons its turn, closes the transcript
  }

  void carry_out(session_plan plan);
  void carry_out(plan_publish& s) { publish(self, deps->bus, *deps->hub, std::move(s.event)); }
  void carry_out(plan_put& s);
  void carry_out(plan_log& s) { self->send(deps->commit_log, log_append_atom::value, std::move(s.append)); }
  void carry_out(plan_schedule& s) {
    if (deps->timers) self->send(deps->timers, schedule_atom::value, s.key, s.at_ms, s.reason);
  }
  void carry_out(plan_retry& s) { self->delayed_send(self, std::chrono::milliseconds(s.after_ms), retry_atom::value); }
  void carry_out(plan_wake& s);
  void carry_out(plan_cancel_wake&);
  void carry_out(plan_fetch_row&);
  void carry_out(plan_reply& s) { s.sink(std::move(s.outcome)); }
  void carry_out(plan_quit&);

  // ---- call_port ----
  bool has_runner() const override { return deps->runner != nullptr; }
  bool steering_supported() const override { return deps->runner && deps->runner->supports_steering(); }
  std::optional<model_answer> start_model(std::uint64_t id, std::shared_ptr<model_request> request, streams s,
                                          std::shared_ptr<cancellation> cancel) override;
  std::optional<model_answer> launch(std::uint64_t id) override {
    if (!call || call->id != id || !call->request) return std::nullopt;
    return hand_to_runner();
  }
  bool can_summarize() const override { return deps->pool != nullptr; }
  void start_summary(std::uint64_t id, std::shared_ptr<compaction_provider> provider,
                     std::shared_ptr<summarize_request> request, std::shared_ptr<cancellation> cancel) override;
  void end(std::uint64_t id) override;

  std::optional<model_answer> hand_to_runner();
  void arm_timeout();
};

void session_state::carry_out(session_plan plan) {
  for (auto& s : plan.steps) std::visit([this](auto& step) { carry_out(step); }, s);
}

// A durable put waits for sessions.json (its answer is the machine's stored()); the others are
// sent. The row goes as its text when the core kept it so (the usual case), else as the object.
void session_state::carry_out(plan_put& s) {
  if (!s.durable) {
    if (s.row)
      self->send(deps->store, put_atom::value, s.key, std::move(*s.row));
    else
      self->send(deps->store, put_atom::value, s.key, std::move(s.text));
    return;
  }
  auto stored = [this](bool) { carry_out(machine->stored("")); };
  auto failed = [this](caf::error& err) { carry_out(machine->stored(self->system().render(err))); };
  // No timeouts here nor in the row fetch below: the store answers every request from its
  // mailbox (a failed write is an answer).
  if (s.row)
    self->request(deps->store, caf::infinite, put_atom::value, s.key, std::move(*s.row), flush_atom::value)
        .then(stored, failed);
  else
    self->request(deps->store, caf::infinite, put_atom::value, s.key, std::move(s.text), flush_atom::value)
        .then(stored, failed);
}

void session_state::carry_out(plan_wake& s) {
  if (!deps->timers_clock) return;
  debounce = deps->timers_clock->at(s.at_ms, [addr = self->address()] {
    if (auto a = caf::actor_cast<session_actor_type>(addr)) caf::anon_send(a, wake_atom::value);
  });
}

void session_state::carry_out(plan_cancel_wake&) {
  if (debounce && deps->timers_clock) deps->timers_clock->cancel(*debounce);
  debounce.reset();
}

// After a trim that left the row to the store: fetches it; the machine goes on with the queue.
void session_state::carry_out(plan_fetch_row&) {
  self->request(deps->store, caf::infinite, get_atom::value, machine->core().key())
      .then(
          [this](entry_reply& row) {
            if (!row.error.empty())
              carry_out(machine->row_fetched(std::nullopt, "the session row cannot be read: " + row.error));
            else
              carry_out(machine->row_fetched(row.found ? std::optional<session_entry>(std::move(row.entry))
                                                       : std::nullopt,
                                             ""));
          },
          [this](caf::error& err) {
            carry_out(machine->row_fetched(std::nullopt, "reading the session row failed: " + self->system().render(err)));
          });
}

void session_state::carry_out(plan_quit&) {
  // (A typed actor sends to a dynamic handle as itself.)
  if (passivate_reply_to)
    self->send(passivate_reply_to, passivated_atom::value, machine->core().key());
  self->quit();
}

// ---- the bridge: calls across threads ----

// Releases what the call holds (gate ticket, alarm).
void session_state::end(std::uint64_t id) {
  if (!call || call->id != id) return;
  if (call->ticket && deps->gate) deps->gate->release(*call->ticket);
  if (call->timeout && deps->timers_clock) deps->timers_clock->cancel(*call->timeout);
  call.reset();
}

void session_state::arm_timeout() {
  const std::int64_t ms = deps->core->settings->model.timeout_ms;
  if (ms <= 0 || !deps->timers_clock) return;
  call->timeout = deps->timers_clock->at(deps->core->time->now_ms() + ms,
                                         [addr = self->address(), id = call->id] {
                                           if (auto a = caf::actor_cast<session_actor_type>(addr))
                                             caf::anon_send(a, timeout_atom::value, id);
                                         });
}

std::optional<model_answer> session_state::start_model(std::uint64_t id, std::shared_ptr<model_request> request,
                                                       streams s, std::shared_ptr<cancellation> cancel) {
  call.emplace();
  call->id = id;
  call->request = std::move(request);
  call->cancel = std::move(cancel);
  // Streamed pieces and notes come from the runner's threads: they reach the turn as messages
  // (notes as JSON text: CAF copies strings).
  if (s.text)
    call->request->on_text = [addr = self->address(), id](std::string_view piece) {
      if (auto a = caf::actor_cast<session_actor_type>(addr)) caf::anon_send(a, model_text_atom::value, id, std::string(piece));
    };
  if (s.message)
    call->request->on_message = [addr = self->address(), id](boost::json::object m) {
      if (auto a = caf::actor_cast<session_actor_type>(addr))
        caf::anon_send(a, model_note_atom::value, id, std::string("message"), std::string(boost::json::serialize(m)));
    };
  if (s.fallback)
    call->request->on_fallback = [addr = self->address(), id](std::string from, std::string to, std::string why) {
      boost::json::object note{{"from", from}, {"to", to}, {"reason", why}};
      if (auto a = caf::actor_cast<session_actor_type>(addr))
        caf::anon_send(a, model_note_atom::value, id, std::string("fallback"), std::string(boost::json::serialize(note)));
    };
  if (!deps->gate) return hand_to_runner();
  // 0: acquire() runs, 1: it granted before returning, 2: it returned without room (a later
  // grant, from whichever thread, comes as a message).
  auto phase = std::make_shared<std::atomic<int>>(0);
  const std::string provider = call->request->provider;
  call->ticket = deps->gate->acquire(provider, [phase, addr = self->address(), id] {
    int expected = 0;
    if (phase->compare_exchange_strong(expected, 1)) return;
    if (auto a = caf::actor_cast<session_actor_type>(addr)) caf::anon_send(a, granted_atom::value, id);
  });
  int expected = 0;
  if (phase->compare_exchange_strong(expected, 2)) return std::nullopt;  // waits for room
  return hand_to_runner();
}

// Hands the admitted call to the runner; its answer when the runner gave it before start()
// returned (the call is then over), else nullopt.
std::optional<model_answer> session_state::hand_to_runner() {
  const std::uint64_t id = call->id;
  auto box = std::make_shared<inline_answer>();
  box->thread = std::this_thread::get_id();
  auto done = std::make_shared<model_completion>([addr = self->address(), id, box](model_answer a) {
    if (box->here()) {
      box->answer = std::move(a);
      return;
    }
    auto actor = caf::actor_cast<session_actor_type>(addr);
    if (!actor) return;
    model_reply r;
    if (a.ok())
      r.message = std::move(*a);
    else
      r.st = a.error();
    caf::anon_send(actor, model_done_atom::value, id, std::move(r));
  });
  if (call->request->on_text) {
    // Pieces streamed before start() returns go straight to the turn (this thread).
    auto forward = std::move(call->request->on_text);
    call->request->on_text = [box, forward, this, id](std::string_view piece) {
      if (box->here()) return machine->stream_text(id, piece);
      forward(piece);
    };
  }
  if (call->request->on_message) {
    // Likewise a note made before start() returns: straight to the turn, ahead of the answer.
    auto forward = std::move(call->request->on_message);
    call->request->on_message = [box, forward, this, id](boost::json::object m) {
      if (box->here()) return machine->stream_message(id, std::move(m));
      forward(std::move(m));
    };
  }
  std::shared_ptr<const model_request> req = std::move(call->request);
  box->in_start = true;
  deps->runner->start(std::move(req), done, call->cancel);
  box->in_start = false;
  if (box->answer) {
    end(id);
    return std::move(box->answer);
  }
  arm_timeout();
  return std::nullopt;
}

void session_state::start_summary(std::uint64_t id, std::shared_ptr<compaction_provider> provider,
                                  std::shared_ptr<summarize_request> request, std::shared_ptr<cancellation> cancel) {
  call.emplace();
  call->id = id;
  call->cancel = cancel;
  deps->pool->post([provider = std::move(provider), request = std::move(request), cancel = std::move(cancel),
                    addr = self->address(), id] {
    auto r = provider->summarize(*request, *cancel);
    auto actor = caf::actor_cast<session_actor_type>(addr);
    if (!actor) return;
    summary_reply reply;
    if (r.ok())
      reply.text = std::move(*r);
    else
      reply.st = r.error();
    caf::anon_send(actor, summary_done_atom::value, id, std::move(reply));
  });
  arm_timeout();
}

// ---- behaviour ----

session_actor_type::behavior_type session_actor(session_self self, std::string key, entry_reply row,
                                                std::shared_ptr<const session_actor_deps> deps) {
  session_state* st = &self->state;
  st->self = self;
  st->deps = std::move(deps);
  session_machine::options opts;
  opts.commit_log = static_cast<bool>(st->deps->commit_log);
  opts.timers = static_cast<bool>(st->deps->timers);
  opts.alarms = st->deps->timers_clock != nullptr;
  st->machine.emplace(std::move(key), row.found ? std::optional<session_entry>(std::move(row.entry)) : std::nullopt,
                      st->deps->core, *st, opts);
  if (!row.found && !row.fork_parent_key.empty())
    st->machine->core().set_fork_parent(row.fork_parent_key, row.fork_parent_row);
  auto answer_to = [](caf::response_promise rp) {
    return [rp](turn_outcome out) mutable { rp.deliver(std::move(out)); };
  };
  auto passivate = [self, st](const std::string& why) {
    st->passivate_reply_to = caf::actor_cast<passivated_port>(self->current_sender());
    st->carry_out(st->machine->passivate(why));
  };
  return {
      [self, st, answer_to](chat_atom, chat_event& ev, route_facts& route) -> caf::result<turn_outcome> {
        auto rp = self->make_response_promise();
        st->carry_out(st->machine->chat(std::move(ev), std::move(route), answer_to(rp)));
        return rp;
      },
      [self, st, answer_to](system_atom, system_event& ev) -> caf::result<turn_outcome> {
        auto rp = self->make_response_promise();
        st->carry_out(st->machine->system(std::move(ev), answer_to(rp)));
        return rp;
      },
      [st](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) {
        st->carry_out(st->machine->synced(file, seq, error));
      },
      [st](granted_atom, std::uint64_t id) { st->carry_out(st->machine->granted(id)); },
      [st](model_done_atom, std::uint64_t id, model_reply& r) {
        st->carry_out(st->machine->model_answered(
            id, r.st.ok() ? model_answer(std::move(r.message)) : model_answer(std::move(r.st))));
      },
      [st](model_text_atom, std::uint64_t id, const std::string& piece) {
        st->carry_out(st->machine->text(id, piece));
      },
      [st](model_note_atom, std::uint64_t id, const std::string& kind, const std::string& text) {
        st->carry_out(st->machine->note(id, kind, text));
      },
      [st](summary_done_atom, std::uint64_t id, summary_reply& r) {
        st->carry_out(st->machine->summary_answered(
            id, r.st.ok() ? result<std::string>(std::move(r.text)) : result<std::string>(std::move(r.st))));
      },
      [st](timeout_atom, std::uint64_t id) {
        if (st->call && st->call->id == id) st->call->timeout.reset();  // fired
        st->carry_out(st->machine->timed_out(id));
      },
      [st](retry_atom) { st->carry_out(st->machine->retry()); },
      [st](wake_atom) {
        st->debounce.reset();
        st->carry_out(st->machine->wake());
      },
      [passivate](passivate_atom, const std::string& why) { passivate(why); },
      // Store maintenance asks before it moves a session's files: a session running or holding
      // a turn declines (false) and goes on; its files stay for a later pass. (Waiting for the
      // turn would hold the pass behind a slow model, and under virtual time for ever: the
      // clock waits for the pass.)
      [st, passivate](passivate_atom, const std::string& why, settle_atom) {
        if (!st->machine->idle()) return false;
        passivate(why);
        return true;
      },
      [st](trim_atom) { st->carry_out(st->machine->trim()); },
      [](settle_atom) { return true; },
      [st](stats_atom) { return st->machine->describe(); },
  };
}

}  // namespace

session_actor_type spawn_session_actor(caf::actor_system& sys, std::string key, entry_reply row,
                                       std::shared_ptr<const session_actor_deps> deps) {
  return sys.spawn(session_actor, std::move(key), std::move(row), std::move(deps));
}

}  // namespace sessionrt::actors
