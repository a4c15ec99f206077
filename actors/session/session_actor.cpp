#include "actors/session/session_actor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <vector>

#include "actors/events/event_bus.hpp"

namespace sessionrt::actors {
namespace {

struct pending_ack {
  outcome_sink sink;
  turn_outcome outcome;
  std::uint64_t sync_seq = 0;  // 0: nothing to wait for from the syncer
  std::uint64_t sync_file = 0;  // ... in the transcript with this shared_fd id
  bool store_wait = false;     // a durable store write is outstanding
};

// A turn waiting for its transcript's write lock: retried after storage's backoff.
struct retry_slot {
  chat_event ev;
  route_facts route;
  outcome_sink sink;
  int attempt = 1;             // the lock attempt the retry makes (1-based)
  std::int64_t waited_ms = 0;  // sum of the waits scheduled so far (real time: delayed_send)
};

struct session_state {
  std::unique_ptr<session_core> core;
  std::shared_ptr<const session_actor_deps> deps;
  // Acks in turn order; a handful at most, so a vector (a std::deque would allocate ~600 bytes
  // up front for every session).
  std::vector<pending_ack> pending;
  std::unique_ptr<retry_slot> waiting;  // a pointer: a chat_event is ~600 bytes, rarely waiting
  bool in_waiting_behavior = false;  // waiting_behavior is on top of the behavior stack
  std::optional<std::int64_t> scheduled_stale_at;
  bool passivating = false;
  std::string passivate_why;
  caf::actor passivate_reply_to;
};

void release_ready(session_state& st) {
  while (!st.pending.empty() && st.pending.front().sync_seq == 0 && !st.pending.front().store_wait) {
    auto p = std::move(st.pending.front());
    st.pending.erase(st.pending.begin());
    p.sink(std::move(p.outcome));
  }
  if (st.pending.empty()) st.pending.shrink_to_fit();  // nothing kept between turns
}

void finish_passivation(caf::event_based_actor* self, session_state& st) {
  if (!st.passivating || !st.pending.empty() || st.waiting) return;
  status closed = st.core->close();
  lifecycle_event e;
  e.type = std::string(event_types::session_passivated);
  e.session_key = st.core->key();
  e.agent_id = st.deps->core->agent_id;
  e.session_id = st.core->session_id();
  e.at_ms = st.deps->core->time->now_ms();
  e.data["why"] = st.passivate_why;
  if (!closed.ok()) e.data["closeError"] = closed.message();
  publish(self, st.deps->bus, *st.deps->hub, std::move(e));
  if (st.passivate_reply_to) self->send(st.passivate_reply_to, passivated_atom::value, st.core->key());
  self->quit();
}

// Does what the core asked for and queues the acknowledgement (or fails it).
void apply(caf::event_based_actor* self, session_state& st, core_effects& fx, outcome_sink sink, turn_outcome out) {
  for (auto& e : fx.events) publish(self, st.deps->bus, *st.deps->hub, std::move(e));
  pending_ack ack{std::move(sink), std::move(out)};
  // The row goes to the store as its text when the core kept it so (the usual case), else as
  // the object.
  const bool as_text = !fx.store_text.empty();
  if (fx.store_put && (as_text || st.core->entry())) {
    if (fx.store_durable) {
      ack.store_wait = true;
      auto stored = [self, &st](bool) {
        // Acks complete in order; the oldest one still waiting on the store is ours.
        for (auto& p : st.pending)
          if (p.store_wait) {
            p.store_wait = false;
            break;
          }
        release_ready(st);
        finish_passivation(self, st);
      };
      auto failed = [self, &st](caf::error& err) {
        for (auto& p : st.pending)
          if (p.store_wait) {
            p.store_wait = false;
            p.outcome.st = status(errc::io_error, "saving the session row failed: " + self->system().render(err));
            break;
          }
        release_ready(st);
        finish_passivation(self, st);
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
  if (fx.sync_seq) {
    ack.sync_seq = *fx.sync_seq;
    ack.sync_file = st.core->transcript_file_id();
    self->send(st.deps->syncer, sync_atom::value, st.core->transcript_handle(), *fx.sync_seq, fx.sync_dir);
  }
  if (fx.stale_at != st.scheduled_stale_at && st.deps->timers) {
    st.scheduled_stale_at = fx.stale_at;
    self->send(st.deps->timers, schedule_atom::value, st.core->key(), fx.stale_at.value_or(-1), fx.stale_reason);
  }
  st.pending.push_back(std::move(ack));
  release_ready(st);
}

void run_chat(caf::event_based_actor* self, session_state& st, const chat_event& ev, const route_facts& route,
              outcome_sink sink, int attempt, std::int64_t waited_ms);

caf::behavior waiting_behavior(caf::event_based_actor* self, session_state& st);

void schedule_retry(caf::event_based_actor* self, session_state& st, retry_slot slot, std::int64_t delay) {
  st.waiting = std::make_unique<retry_slot>(std::move(slot));
  self->delayed_send(self, std::chrono::milliseconds(delay), retry_atom::value);
  // Chat and system messages are not handled while waiting: the skip default handler keeps
  // them in the mailbox until unbecome().
  if (!st.in_waiting_behavior) {
    self->become(caf::keep_behavior, waiting_behavior(self, st));
    st.in_waiting_behavior = true;
  }
}

// A turn. If the transcript's write lock is busy (the core changed nothing), storage's backoff
// says how long to wait before the next attempt, or that the acquire timeout is reached: the
// turn then fails with storage's timeout error. Every other error, a final lock error too
// (a stale lock that cannot be removed), fails the turn at once.
void run_chat(caf::event_based_actor* self, session_state& st, const chat_event& ev, const route_facts& route,
              outcome_sink sink, int attempt, std::int64_t waited_ms) {
  core_effects fx;
  turn_outcome out = st.core->chat(ev, route, fx);
  if (out.st.code() == errc::locked && st.core->lock_busy()) {
    const std::int64_t timeout = st.deps->core->settings->session.write_lock.acquire_timeout_ms;
    if (auto delay = storage::lock_retry_delay_ms(attempt, waited_ms, timeout)) {
      for (auto& e : fx.events) publish(self, st.deps->bus, *st.deps->hub, std::move(e));
      schedule_retry(self, st, retry_slot{ev, route, std::move(sink), attempt + 1, waited_ms + *delay}, *delay);
      return;
    }
    out.st = storage::lock_timeout_error(timeout, st.core->lock_busy()->holder);
  }
  apply(self, st, fx, std::move(sink), std::move(out));
}


// The syncer made the appends up to `seq` of transcript `file` durable (or failed to). Seqs
// count per transcript, so only that file's acks are matched (after a rollover or a trim the
// session may be writing another file).
void on_synced(caf::event_based_actor* self, session_state& st, std::uint64_t file, std::uint64_t seq,
               const std::string& error) {
  if (file == st.core->transcript_file_id() && error.empty()) st.core->note_synced(seq, true);
  for (auto& p : st.pending) {
    if (p.sync_seq == 0 || p.sync_file != file || p.sync_seq > seq) continue;
    p.sync_seq = 0;
    if (!error.empty()) {
      p.outcome.st = status(errc::io_error, "transcript sync failed: " + error);
      p.outcome.reply.reset();
    }
  }
  release_ready(st);
  finish_passivation(self, st);
}

void on_passivate(caf::event_based_actor* self, session_state& st, const std::string& why) {
  st.passivating = true;
  st.passivate_why = why;
  st.passivate_reply_to = caf::actor_cast<caf::actor>(self->current_sender());
  finish_passivation(self, st);
}

// After a trim that left the row to the store: asks the store for it and runs `next` with it
// restored. Meanwhile every other message waits in the mailbox (the skip default handler), so
// events keep their order. A row the store cannot read fails `next`'s turn via `failed`.
void with_row(caf::event_based_actor* self, session_state& st, std::function<void()> next,
              std::function<void(const std::string& why)> failed) {
  if (!st.core->needs_row()) return next();
  self->become(caf::keep_behavior,
               caf::behavior{[self, &st](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) {
                 on_synced(self, st, file, seq, error);
               }});
  // Back to the behavior below first: the turn may push its own (waiting for a lock).
  self->request(st.deps->store, caf::infinite, get_atom::value, st.core->key())
      .then(
          [self, &st, next, failed](entry_reply& row) {
            self->unbecome();
            if (!row.error.empty()) return failed("the session row cannot be read: " + row.error);
            st.core->restore_row(row.found ? std::optional<session_entry>(std::move(row.entry)) : std::nullopt);
            next();
          },
          [self, failed](caf::error& err) {
            self->unbecome();
            failed("reading the session row failed: " + self->system().render(err));
          });
}

// Between turns (a turn waiting for a lock has no file open). Acks still waiting for the
// syncer stay pending: its request holds the transcript's fd open, and trim() syncs it too.
void on_trim(session_state& st) {
  if (st.waiting || st.passivating) return;
  (void)st.core->trim();
}

std::string describe(const session_state& st) {
  return fmt::format("key={} open={} trimmed={} pending={} queued={} waiting={}", st.core->key(),
                     st.core->transcript_open(), st.core->trimmed(),
                     st.pending.size(), st.core->queued_system_events(), st.waiting != nullptr);
}

caf::behavior waiting_behavior(caf::event_based_actor* self, session_state& st) {
  return {
      [self, &st](retry_atom) {
        retry_slot slot = std::move(*st.waiting);
        st.waiting.reset();
        run_chat(self, st, slot.ev, slot.route, std::move(slot.sink), slot.attempt, slot.waited_ms);
        if (!st.waiting) {
          self->unbecome();
          st.in_waiting_behavior = false;
          finish_passivation(self, st);
        }
      },
      [self, &st](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) { on_synced(self, st, file, seq, error); },
      [self, &st](passivate_atom, const std::string& why) { on_passivate(self, st, why); },
      [&st](stats_atom) { return describe(st); },
  };
}

}  // namespace

caf::behavior session_actor(caf::event_based_actor* self, std::string key, entry_reply row,
                            std::shared_ptr<const session_actor_deps> deps) {
  auto st = std::make_shared<session_state>();
  st->deps = std::move(deps);
  auto publish_now = [self, raw = st.get()](lifecycle_event e) {
    publish(self, raw->deps->bus, *raw->deps->hub, std::move(e));
  };
  st->core = std::make_unique<session_core>(std::move(key), row.found ? std::optional<session_entry>(std::move(row.entry))
                                                                     : std::nullopt,
                                            st->deps->core, std::move(publish_now));
  self->set_default_handler(caf::skip);
  self->attach_functor([st] {
    if (st->core) (void)st->core->close();
  });
  return {
      [self, st](chat_atom, chat_event& ev, route_facts& route, outcome_sink& sink) {
        if (!st->core->needs_row()) return run_chat(self, *st, ev, route, std::move(sink), 1, 0);
        auto shared_sink = std::make_shared<outcome_sink>(std::move(sink));
        with_row(
            self, *st,
            [self, st, ev = std::move(ev), route = std::move(route), shared_sink] {
              run_chat(self, *st, ev, route, std::move(*shared_sink), 1, 0);
            },
            [st, shared_sink](const std::string& why) {
              turn_outcome out;
              out.session_key = st->core->key();
              out.st = status(errc::io_error, why);
              (*shared_sink)(std::move(out));
            });
      },
      [self, st](system_atom, system_event& ev) {
        with_row(
            self, *st,
            [self, st, ev = std::move(ev)] {
              core_effects fx;
              st->core->system(ev, fx);
              apply(self, *st, fx, [](turn_outcome) {}, turn_outcome{});
            },
            [st](const std::string& why) {
              spdlog::warn("{}: system event dropped: {}", st->core->key(), why);
            });
      },
      [self, st](synced_atom, std::uint64_t file, std::uint64_t seq, const std::string& error) {
        on_synced(self, *st, file, seq, error);
      },
      [self, st](passivate_atom, const std::string& why) { on_passivate(self, *st, why); },
      [st](trim_atom) { on_trim(*st); },
      [st](stats_atom) { return describe(*st); },
  };
}

}  // namespace sessionrt::actors
