// runtime: the facade's calls that are not start() (runtime_start.cpp) nor the session
// administration (session_admin.cpp): turns, reads, counters, virtual time, maintenance, stop.
#include "runtime/runtime.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/router/session_key.hpp"
#include "runtime/runtime_impl.hpp"

namespace sessionrt::runtime {

using namespace sessionrt::actors;

status put_row_now(caf::scoped_actor& self, const store_actor_type& store, const std::string& agent,
                   const std::string& key, const session_entry& entry) {
  status failed;
  // No timeout: a store answers a durable put once the write (or, with durability batch, the
  // commit log's sync) ended, well or not; it waits on no session.
  self->request(store, caf::infinite, put_atom::value, key, entry, flush_atom::value)
      .receive([&](bool ok) { if (!ok) failed = status(errc::io_error, "writing the store of agent " + agent + " failed"); },
               [&](caf::error& e) { failed = status(errc::io_error, "writing the row of " + key + ": " + self->system().render(e)); });
  return failed;
}

status write_stores(caf::scoped_actor& self, const std::map<std::string, store_actor_type>& stores,
                    caf::duration timeout) {
  status result;
  for (const auto& [agent, store] : stores)
    self->request(store, timeout, flush_atom::value, stop_atom::value)
        .receive([](bool) {},
                 [&, agent = agent](caf::error& e) {
                   if (result.ok())
                     result = status(errc::io_error,
                                     fmt::format("writing the store of agent {}: {}", agent, self->system().render(e)));
                 });
  return result;
}

std::string agent_of_key(const std::string& key, const actors::runtime_settings& s) {
  auto parsed = parse_agent_session_key(key);
  return parsed ? parsed->agent_id : default_agent_of(s.routing);
}

runtime::runtime(std::unique_ptr<runtime_impl> p) : impl_(std::move(p)) {}

runtime::~runtime() {
  if (impl_ && !impl_->stopped) (void)stop();
}

namespace {

// The future form of a send(ev, done).
template <class Event>
std::future<turn_outcome> future_of(runtime& rt, Event ev) {
  auto p = std::make_shared<std::promise<turn_outcome>>();
  auto f = p->get_future();
  rt.send(std::move(ev), [p](turn_outcome out) { p->set_value(std::move(out)); });
  return f;
}

// After stop() every send is answered at once.
bool refused_when_stopped(bool stopped, const std::function<void(turn_outcome)>& done) {
  if (!stopped) return false;
  turn_outcome out;
  out.st = status(errc::cancelled, "the runtime is stopped");
  done(std::move(out));
  return true;
}

}  // namespace

std::future<turn_outcome> runtime::send(chat_event ev) { return future_of(*this, std::move(ev)); }

void runtime::send(chat_event ev, std::function<void(turn_outcome)> done) {
  if (refused_when_stopped(impl_->stopped, done)) return;
  caf::anon_send(impl_->actors.relay, chat_atom::value, impl_->pending->add(std::move(done)), std::move(ev));
}

std::future<turn_outcome> runtime::send(system_event ev) { return future_of(*this, std::move(ev)); }

void runtime::send(system_event ev, std::function<void(turn_outcome)> done) {
  if (refused_when_stopped(impl_->stopped, done)) return;
  // Through the relay: behind the turns sent before it.
  caf::anon_send(impl_->actors.relay, system_atom::value, impl_->pending->add(std::move(done)), std::move(ev));
}

// ---- Sub-agents ----

std::future<turn_outcome> runtime::spawn_subagent(const std::string& parent_key, actors::subagent_spec spec) {
  auto p = std::make_shared<std::promise<turn_outcome>>();
  auto f = p->get_future();
  spawn_subagent(parent_key, std::move(spec), [p](turn_outcome out) { p->set_value(std::move(out)); });
  return f;
}

void runtime::spawn_subagent(const std::string& parent_key, actors::subagent_spec spec,
                             std::function<void(turn_outcome)> done) {
  if (refused_when_stopped(impl_->stopped, done)) return;
  // Through the relay, as the turns: the outcome reaches `done` through `pending` (stop()
  // cancels what is still unanswered).
  caf::anon_send(impl_->actors.relay, spawn_atom::value, impl_->pending->add(std::move(done)), parent_key, std::move(spec));
}

const actor_handles& runtime::handles() const { return impl_->actors; }

void runtime::register_compaction_provider(const std::string& id, std::shared_ptr<compaction_provider> provider) {
  impl_->providers.add(id, std::move(provider));
}

std::uint64_t runtime::subscribe(event_filter filter, std::function<void(const lifecycle_event&)> fn) {
  return impl_->hub->subscribe(std::move(filter), std::move(fn));
}

bool runtime::unsubscribe(std::uint64_t id) { return impl_->hub->unsubscribe(id); }

// Issue #36 (helper-node): events of a layer above, the cluster node's shard.* events.
void runtime::publish(lifecycle_event e) { actors::publish(impl_->actors.bus, *impl_->hub, std::move(e)); }

namespace {
// Asks every store (the agents', and with sessions per shard the open shards' "<agent>/<nnn>",
// whose rows are the agent's) `msg`, and hands each answer to on_rows(agent, answer). No
// timeout here nor in session(): a store answers every request from its mailbox.
template <class Answer, class OnRows, class... Msg>
status ask_every_store(runtime_impl& impl, const char* what, OnRows on_rows, Msg... msg) {
  host_self self{*impl.sys};
  status failed;
  auto stores = impl.actors.stores;
  for (auto& [unit, store] : shard_store_actors(impl)) stores[unit] = store;
  for (auto& [unit, store] : stores)
    self->request(store, caf::infinite, msg...)
        .receive([&, agent = unit.substr(0, unit.find('/'))](Answer& a) { on_rows(agent, a); },
                 [&, agent = unit](caf::error& e) {
                   if (failed.ok())
                     failed = status(errc::io_error,
                                     fmt::format("{} of {}: {}", what, agent, self->system().render(e)));
                 });
  return failed;
}
}  // namespace

result<std::vector<session_row>> runtime::sessions() {
  std::vector<session_row> out;
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  SRT_RETURN_IF_ERROR(ask_every_store<entry_rows>(
      *impl_, "listing the sessions",
      [&](const std::string& agent, entry_rows& rows) {
        for (auto& [k, e] : rows) out.push_back({agent, k, std::move(e)});
      },
      list_atom::value));
  return out;
}

result<std::size_t> runtime::session_count() {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  std::size_t n = 0;
  SRT_RETURN_IF_ERROR(ask_every_store<std::size_t>(
      *impl_, "counting the sessions", [&](const std::string&, std::size_t rows) { n += rows; }, list_atom::value,
      actors::count_atom::value));
  return n;
}

result<std::optional<session_entry>> runtime::session(const std::string& key, const std::string& agent_id) {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  std::string agent = agent_id;
  if (agent.empty()) {
    auto parsed = parse_agent_session_key(key);
    agent = parsed ? parsed->agent_id : default_agent_of(impl_->settings.routing);
  }
  auto place = place_of_key(*impl_, key, agent);
  if (!place.ok()) return place.error();
  std::optional<session_entry> out;
  status failed;
  host_self self{*impl_->sys};
  self->request(place->store, caf::infinite, get_atom::value, key)
      .receive(
          [&](entry_reply& r) {
            if (!r.error.empty())
              failed = status(errc::corrupt, "the session row of " + key + " cannot be read: " + r.error);
            else if (r.found)
              out = std::move(r.entry);
          },
          [&](caf::error& e) {
            failed = status(errc::io_error, "asking the store for " + key + ": " + self->system().render(e));
          });
  if (!failed.ok()) return failed;
  return out;
}

runtime::model_call_stats runtime::model_calls() const {
  const auto s = impl_->gate->stats();
  return {s.running, s.waiting, s.peak_running, s.admitted, s.admitted_late};
}

runtime_stats runtime::stats() {
  runtime_stats out;
  if (impl_->stopped) {
    out.stopped = true;
    return out;
  }
  host_self self{*impl_->sys};
  // No timeouts: the router and the timers answer (stats) from their mailbox, waiting on nothing.
  self->request(impl_->actors.router, caf::infinite, stats_atom::value)
      .receive(
          [&](actors::router_stats& r) {
            out.live = r.slots.live;
            out.trimmed = r.slots.trimmed;
            out.slots = r.slots.slots;
            out.open = r.slots.open;
            out.passivating = r.slots.passivating;
            out.queued = r.slots.queued;
            out.waiting = r.slots.waiting;
            out.turns = r.turns;
            out.routes = r.routes;
          },
          [&](caf::error& e) { out.router_error = self->system().render(e); });
  self->request(impl_->actors.timers, caf::infinite, stats_atom::value)
      .receive([&](std::size_t n) { out.timers = n; },
               [&](caf::error& e) { out.timers_error = self->system().render(e); });
  const auto calls = impl_->gate->stats();
  out.model_running = calls.running;
  out.model_waiting = calls.waiting;
  out.model_peak = calls.peak_running;
  return out;
}

actors::settle_report runtime::settle() {
  if (impl_->stopped) return {};
  auto lease = impl_->step.take(*impl_->sys, impl_->opt.virtual_time);
  caf::scoped_actor& self = lease.self();
  // The router, then every session it has, handled what was sent before (through the relay:
  // behind the turns sent before, which wait there for the router; a key held for an
  // administration call gets the settle after the hold, which waits for its turn); the records
  // those sessions sent (a turn's, or the user's line of a model call that waits) are answered
  // and no log sync runs: a power cut now finds what a later one would; then the bus published
  // the events that produced. One request: host_steps asks each in turn.
  actors::settle_report waits;
  self->request(impl_->actors.steps, caf::infinite, settle_atom::value)
      .receive(
          [&](actors::settle_report& r, std::vector<std::string>& failures) {
            waits = std::move(r);
            for (const auto& f : failures) spdlog::warn("settle: did not answer: {}", f);
          },
          [&](caf::error& e) { spdlog::warn("settle: host_steps did not answer: {}", self->system().render(e)); });
  return waits;
}

status runtime::flush() {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  auto lease = impl_->step.take(*impl_->sys, impl_->opt.virtual_time);
  caf::scoped_actor& self = lease.self();
  status out = write_stores(self, impl_->actors.stores, caf::infinite);  // a store answers every write, well or not
  if (status shards = write_stores(self, shard_store_actors(*impl_), caf::infinite); out.ok()) out = shards;
  return out;
}

status runtime::advance(std::int64_t ms) {
  SRT_RETURN_IF_ERROR(advance_clock(ms));
  auto ran = run_due_maintenance();
  if (!ran.ok()) return ran.error();
  return flush();
}

namespace {
// A blocking request's error, as the first failure of a virtual-time step.
auto step_failure(caf::scoped_actor& self, status& failed, const char* what) {
  return [&self, &failed, what](caf::error& e) {
    if (failed.ok()) failed = status(errc::io_error, fmt::format("advance: {}: {}", what, self->system().render(e)));
  };
}
}  // namespace

status runtime::advance_clock(std::int64_t ms) {
  if (!impl_->opt.virtual_time) return status(errc::unsupported, "advance() needs virtual time (runtime_options.virtual_time)");
  auto* manual = dynamic_cast<manual_clock*>(impl_->time);
  if (!manual) return status(errc::invalid_argument, "virtual time needs a manual_clock");
  manual->advance(ms);  // fires the alarms that became due (model answers, timeouts)
  auto lease = impl_->step.take(*impl_->sys, impl_->opt.virtual_time);
  caf::scoped_actor& self = lease.self();
  // The timers fire what became due (their passivation requests reach the router before the
  // sweep, being sent earlier to the same router); the router sweeps, and answers once every
  // passivation it started (or the timers asked for) is done, after their running turns; then
  // the bus has every event those passivations published. One request: host_steps asks each
  // in turn.
  status failed;
  self->request(impl_->actors.steps, caf::infinite, tick_atom::value)
      .receive(
          [&](std::string& failure) {
            if (!failure.empty()) failed = status(errc::io_error, "advance: " + failure);
          },
          step_failure(self, failed, "host_steps"));
  return failed;
}

result<bool> runtime::run_due_maintenance() {
  if (!impl_->opt.virtual_time) return status(errc::unsupported, "run_due_maintenance() needs virtual time");
  auto lease = impl_->step.take(*impl_->sys, impl_->opt.virtual_time);
  caf::scoped_actor& self = lease.self();
  // Each store answers a read first: a put it took before has then told the maintenance actor
  // of high water (sent while taking the put, so ahead of the tick in that mailbox); otherwise
  // whether this tick sees it would be thread timing. Then the pass, and the bus has its
  // events. One request: host_steps asks each in turn. No timeout: the stores answer from
  // their mailbox, and a pass always ends (its waits on sessions are bounded, turn_wait.hpp).
  status failed;
  bool ran = false;
  self->request(impl_->actors.steps, caf::infinite, actors::maintain_atom::value)
      .receive(
          [&](bool pass, std::string& failure) {
            if (!failure.empty()) failed = status(errc::io_error, "advance: " + failure);
            ran = pass;
          },
          step_failure(self, failed, "host_steps"));
  if (!failed.ok()) return failed;
  return ran;
}

status runtime::stop(std::chrono::milliseconds deadline) {
  if (impl_->stopped) return {};
  impl_->stopped = true;
  status result;
  {
    host_self self{*impl_->sys};
    const auto t = caf::duration(deadline);
    self->send_exit(impl_->actors.maintenance, caf::exit_reason::user_shutdown);  // no file moves while stopping
    self->request(impl_->actors.relay, t, stop_atom::value)
        .receive([](bool) {},
                 [&](caf::error& e) {
                   result = status(errc::timeout, "stopping the sessions: " + self->system().render(e));
                 });
    if (status written = write_stores(self, impl_->actors.stores, t); result.ok()) result = written;
    if (status shards = stop_shards(self, *impl_, t); result.ok()) result = shards;  // written, logs closed, stopped
    // Let the last events reach subscribers.
    self->request(impl_->actors.bus, t, settle_atom::value).receive([] {}, [&](caf::error& e) {
      spdlog::warn("stopping: the last lifecycle events may not have reached subscribers: {}", self->system().render(e));
    });
    // The relay has every outcome the sessions sent before they passivated.
    self->request(impl_->actors.relay, t, settle_atom::value).receive([](const actors::settle_report&) {}, [&](caf::error& e) {
      spdlog::warn("stopping: the outcome relay did not answer: {}", self->system().render(e));
    });
    // The sessions are stopped: what the commit log holds goes into the transcripts for good.
    if (impl_->actors.commit_log)
      self->request(impl_->actors.commit_log, t, actors::checkpoint_atom::value)
          .receive([](const std::string&) {},
                   [&](caf::error& e) { spdlog::warn("stopping: the commit log's checkpoint: {}", self->system().render(e)); });
    const auto& a = impl_->actors;
    auto exit = [&](const auto& handle) { self->send_exit(handle, caf::exit_reason::user_shutdown); };
    exit(a.subagents), exit(a.steps), exit(a.relay), exit(a.router), exit(a.timers), exit(a.bus), exit(a.commit_log);
    for (auto& [agent, store] : a.stores) exit(store);
  }
  impl_->step.reset();
  impl_->actors = actor_handles{};
  impl_->sys.reset();  // waits for every actor to finish
  // Every send is answered: what no session answered (it raced the stop) is cancelled.
  impl_->pending->cancel_all(status(errc::cancelled, "the runtime stopped before this turn was answered"));
  impl_->store_locks.clear();
  // Calls still running in a synchronous runner finish on their own threads (their answers
  // reach no actor); the pool does not wait for them.
  impl_->adapter.reset();
  impl_->pool.reset();
  return result;
}

result<lifecycle_event> runtime::maintain() {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  host_self self{*impl_->sys};
  std::optional<lifecycle_event> report;
  status failed;
  // No timeout, here nor in cleanup(): the pass (after the one running) always ends, its
  // waits on sessions being bounded (turn_wait.hpp), and is answered then.
  self->request(impl_->actors.maintenance, caf::infinite, maintain_atom::value)
      .receive([&](lifecycle_event& e) { report = std::move(e); },
               [&](caf::error& e) {
                 failed = status(errc::io_error, "the maintenance pass did not answer: " + self->system().render(e));
               });
  if (!failed.ok()) return failed;
  return std::move(*report);
}

result<actors::cleanup_result> runtime::cleanup(const actors::cleanup_request& req) {
  if (impl_->stopped) return status(errc::invalid_argument, "the runtime is stopped");
  host_self self{*impl_->sys};
  std::optional<actors::cleanup_result> out;
  status failed;
  self->request(impl_->actors.maintenance, caf::infinite, maintain_atom::value, req)
      .receive([&](actors::cleanup_result& r) { out = std::move(r); },
               [&](caf::error& e) { failed = status(errc::invalid_argument, "sessions cleanup: " + self->system().render(e)); });
  if (!failed.ok()) return failed;
  return std::move(*out);
}

bool runtime::stopped() const { return impl_->stopped; }
const startup_report& runtime::startup() const { return impl_->report; }
const actors::runtime_settings& runtime::settings() const { return impl_->settings; }
const std::string& runtime::state_dir() const { return impl_->state_dir; }
}  // namespace sessionrt::runtime
