// session_plan: what a session's actor does after one input to its machine
// (session_machine.hpp), as slot_plan is for the router: the machine decides, the actor sends.
// The steps are carried out in the order given — the order the machine produced them in, which
// is the order the turn's effects happened (a turn's events before its reply, the user's line's
// commit log record before the turn's own record) — and every step is one send, one timer or one
// reply. No CAF: a reply is the sender's sink (a function the actor made from its promise).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/commit_log/commit_log_append.hpp"
#include "actors/session/turn_queue.hpp"
#include "messages/chat_event.hpp"
#include "messages/lifecycle_event.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::actors {

// An event for the bus (published only if someone wants its type).
struct plan_publish {
  lifecycle_event event;
};
// A row for the store: as the text the store writes (`text` set) or as the object (`row`).
// durable: a request that waits for sessions.json to hold it; its answer is the machine's
// stored() input (in the order the requests were made).
struct plan_put {
  std::string key;
  std::string text;
  std::optional<session_entry> row;
  bool durable = false;
};
// The transcript's bytes (and with durability batch the turn's rows) for the commit log; its
// answer is the machine's synced() input.
struct plan_log {
  commit_log_append append;
};
// When the session goes stale, for the timers (at -1: never).
struct plan_schedule {
  std::string key;
  std::int64_t at_ms = -1;
  std::string reason;
};
// retry() after this long (the write lock's backoff; real time).
struct plan_retry {
  std::int64_t after_ms = 0;
};
// wake() once the runtime's clock reaches at_ms (the queue's debounce); cancel: drop that alarm.
struct plan_wake {
  std::int64_t at_ms = 0;
};
struct plan_cancel_wake {};
// Ask the store for the session's row; its answer is the machine's row_fetched() input.
struct plan_fetch_row {};
// Answer a sender.
struct plan_reply {
  outcome_fn sink;
  turn_outcome outcome;
};
// Passivated: tell whoever asked ((passivated, key)), then stop the actor.
struct plan_quit {};

using plan_step = std::variant<plan_publish, plan_put, plan_log, plan_schedule, plan_retry, plan_wake,
                               plan_cancel_wake, plan_fetch_row, plan_reply, plan_quit>;

struct session_plan {
  std::vector<plan_step> steps;

  bool empty() const { return steps.empty(); }
  // The steps of one kind, in order (tests, and the actor's logging).
  template <class Step>
  std::vector<const Step*> all() const {
    std::vector<const Step*> out;
    for (const auto& s : steps)
      if (const auto* p = std::get_if<Step>(&s)) out.push_back(p);
    return out;
  }
};

}  // namespace sessionrt::actors
