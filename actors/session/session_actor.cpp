// The session's actor: its behaviour list turns messages into session_machine inputs and
// carries out the plans they return (carry_out). Every decision is the machine's
// (session_machine.hpp); the model and summary calls cross threads through the call_bridge
// (call_bridge.hpp), whose mailbox is this actor's (session_mailbox.hpp): what the runner, the
// gate, the pool and the timeout alarm say comes back here as messages.
#include "actors/session/session_actor.hpp"

#include <chrono>
#include <variant>

#include "actors/events/event_bus.hpp"
#include "actors/session/call_bridge.hpp"
#include "actors/session/session_mailbox.hpp"
#include "actors/session/session_machine.hpp"

namespace sessionrt::actors {

namespace {

struct session_state;
using session_self = session_actor_type::stateful_pointer<session_state>;

struct session_state {
  session_self self = nullptr;
  std::shared_ptr<const session_actor_deps> deps;
  std::optional<call_bridge> bridge;
  std::optional<alarms::id> debounce;
  passivated_port passivate_reply_to;  // the router, which asked
  std::optional<session_machine> machine;  // last: it ends its call through the bridge

  // Runs when the actor exits (CAF destroys a stateful actor's state in on_exit).
  ~session_state() {
    if (!deps) return;  // never started
    if (debounce && deps->timers_clock) deps->timers_clock->cancel(*debounce);
    machine.reset();  // ends its call, abandons its turn, closes the transcript
  }

  void start(std::string key, entry_reply row);
  // The machine's wait, with the bridge's word on whether the gate still holds its call.
  session_wait wait() const {
    session_wait w = machine->wait();
    if (w.on_runner && bridge->wait() == call_bridge::waiting::gate) {
      w.on_runner = false;
      w.on_gate = true;
    }
    return w;
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
};

void session_state::start(std::string key, entry_reply row) {
  call_bridge_deps b;
  b.runner = deps->runner;
  b.gate = deps->gate;
  b.pool = deps->pool;
  b.timers = deps->timers_clock;
  b.time = deps->core->time;
  b.timeout_ms = deps->core->settings->model.timeout_ms;
  bridge.emplace(b, session_mailbox(self->address()));
  session_machine::options opts;
  opts.commit_log = static_cast<bool>(deps->commit_log);
  opts.timers = static_cast<bool>(deps->timers);
  opts.alarms = deps->timers_clock != nullptr;
  machine.emplace(std::move(key), row.found ? std::optional<session_entry>(std::move(row.entry)) : std::nullopt,
                  deps->core, *bridge, opts);
  if (!row.found && !row.fork_parent_key.empty()) machine->core().set_fork_parent(row.fork_parent_key, row.fork_parent_row);
  bridge->deliver_inline_to({[this](std::uint64_t id, std::string_view piece) { machine->stream_text(id, piece); },
                             [this](std::uint64_t id, boost::json::object m) { machine->stream_message(id, std::move(m)); }});
}

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

// ---- behaviour ----

session_actor_type::behavior_type session_actor(session_self self, std::string key, entry_reply row,
                                                std::shared_ptr<const session_actor_deps> deps) {
  session_state* st = &self->state;
  st->self = self;
  st->deps = std::move(deps);
  st->start(std::move(key), std::move(row));
  auto answer_to = [](caf::response_promise rp) {
    return [rp](turn_outcome out) mutable { rp.deliver(std::move(out)); };
  };
  auto passivate = [self, st](const std::string& why) {
    st->passivate_reply_to = caf::actor_cast<passivated_port>(self->current_sender());
    st->carry_out(st->machine->passivate(why));
  };
  return {
      [self, st, answer_to](chat_atom, chat_event_ptr& ev, route_facts& route) -> caf::result<turn_outcome> {
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
        st->bridge->timeout_fired(id);
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
      [st](settle_atom) { return st->wait(); },
      [st](stats_atom) { return st->machine->describe(); },
  };
}

}  // namespace

session_actor_type spawn_session_actor(caf::actor_system& sys, std::string key, entry_reply row,
                                       std::shared_ptr<const session_actor_deps> deps) {
  return sys.spawn(session_actor, std::move(key), std::move(row), std::move(deps));
}

}  // namespace sessionrt::actors
