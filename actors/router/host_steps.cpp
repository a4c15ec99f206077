#include "actors/router/host_steps.hpp"

#include <memory>
#include <utility>

namespace sessionrt::actors {

namespace {

// The links, shared by the continuations of every request in flight.
using links_ptr = std::shared_ptr<const host_steps_links>;

std::string named_error(host_steps_type::pointer self, const char* who, const caf::error& e) {
  return std::string(who) + ": " + self->system().render(e);
}

// The tick's and the maintenance check's answer: the first actor that did not answer, or "".
struct first_failure {
  std::string text;
  void note(host_steps_type::pointer self, const char* who, const caf::error& e) {
    if (text.empty()) text = named_error(self, who, e);
  }
};

// ---- (settle): relay, commit log, bus ---------------------------------------------------------
struct settling {
  caf::typed_response_promise<settle_report, std::vector<std::string>> promise;
  settle_report report;
  std::vector<std::string> failures;
};
using settling_ptr = std::shared_ptr<settling>;

void settle_bus(host_steps_type::pointer self, const links_ptr& l, settling_ptr s) {
  self->request(l->bus, caf::infinite, settle_atom::value)
      .then([s]() { s->promise.deliver(std::move(s->report), std::move(s->failures)); },
            [self, s](caf::error& e) {
              s->failures.push_back(named_error(self, "the event bus", e));
              s->promise.deliver(std::move(s->report), std::move(s->failures));
            });
}

void settle_log(host_steps_type::pointer self, const links_ptr& l, settling_ptr s) {
  if (!l->commit_log) return settle_bus(self, l, std::move(s));
  self->request(l->commit_log, caf::infinite, settle_atom::value)
      .then([self, l, s](bool) { settle_bus(self, l, s); },
            [self, l, s](caf::error& e) {
              s->failures.push_back(named_error(self, "the commit log", e));
              settle_bus(self, l, s);
            });
}

void settle_relay(host_steps_type::pointer self, const links_ptr& l, settling_ptr s) {
  self->request(l->relay, l->relay_wait, settle_atom::value)
      .then(
          [self, l, s](settle_report& r) {
            s->report = std::move(r);
            settle_log(self, l, s);
          },
          [self, l, s](caf::error& e) {
            s->failures.push_back(named_error(self, "the router", e));
            settle_log(self, l, s);
          });
}

// ---- (tick): timers, relay, bus; every one asked, the first failure kept -------------------------
struct ticking {
  caf::typed_response_promise<std::string> promise;
  first_failure failure;
};
using ticking_ptr = std::shared_ptr<ticking>;

void tick_bus(host_steps_type::pointer self, const links_ptr& l, ticking_ptr t) {
  self->request(l->bus, caf::infinite, settle_atom::value)
      .then([t]() { t->promise.deliver(std::move(t->failure.text)); },
            [self, t](caf::error& e) {
              t->failure.note(self, "the event bus", e);
              t->promise.deliver(std::move(t->failure.text));
            });
}

void tick_relay(host_steps_type::pointer self, const links_ptr& l, ticking_ptr t) {
  self->request(l->relay, l->relay_wait, tick_atom::value, settle_atom::value)
      .then([self, l, t](bool) { tick_bus(self, l, t); },
            [self, l, t](caf::error& e) {
              t->failure.note(self, "the router", e);
              tick_bus(self, l, t);
            });
}

void tick_timers(host_steps_type::pointer self, const links_ptr& l, ticking_ptr t) {
  self->request(l->timers, caf::infinite, tick_atom::value)
      .then([self, l, t]() { tick_relay(self, l, t); },
            [self, l, t](caf::error& e) {
              t->failure.note(self, "the timers", e);
              tick_relay(self, l, t);
            });
}

// ---- (maintain): each store, the maintenance actor, the bus if a pass ran ----------------------
struct maintaining {
  caf::typed_response_promise<bool, std::string> promise;
  std::map<std::string, store_actor_type>::const_iterator next_store;  // into the shared links
  bool ran = false;
  first_failure failure;
};
using maintaining_ptr = std::shared_ptr<maintaining>;

void maintain_end(host_steps_type::pointer self, const links_ptr& l, maintaining_ptr m) {
  if (!m->ran) return (void)m->promise.deliver(false, std::move(m->failure.text));
  self->request(l->bus, caf::infinite, settle_atom::value)
      .then([m]() { m->promise.deliver(true, std::move(m->failure.text)); },
            [self, m](caf::error& e) {
              m->failure.note(self, "the event bus", e);
              m->promise.deliver(true, std::move(m->failure.text));
            });
}

void maintain_pass(host_steps_type::pointer self, const links_ptr& l, maintaining_ptr m) {
  self->request(l->maintenance, caf::infinite, tick_atom::value, settle_atom::value)
      .then(
          [self, l, m](bool pass) {
            m->ran = pass;
            maintain_end(self, l, m);
          },
          [self, l, m](caf::error& e) {
            m->failure.note(self, "the maintenance actor", e);
            maintain_end(self, l, m);
          });
}

void maintain_stores(host_steps_type::pointer self, const links_ptr& l, maintaining_ptr m) {
  if (m->next_store == l->stores.end()) return maintain_pass(self, l, std::move(m));
  const store_actor_type& store = (m->next_store++)->second;
  self->request(store, caf::infinite, get_atom::value, std::string())
      .then([self, l, m](const entry_reply&) { maintain_stores(self, l, m); },
            [self, l, m](caf::error& e) {
              m->failure.note(self, "a store", e);
              maintain_stores(self, l, m);
            });
}

}  // namespace

host_steps_type::behavior_type host_steps(host_steps_type::pointer self, host_steps_links links) {
  auto l = std::make_shared<const host_steps_links>(std::move(links));
  return {
      [self, l](settle_atom) {
        auto s = std::make_shared<settling>();
        s->promise = self->make_response_promise<settle_report, std::vector<std::string>>();
        settle_relay(self, l, s);
        return s->promise;
      },
      [self, l](tick_atom) {
        auto t = std::make_shared<ticking>();
        t->promise = self->make_response_promise<std::string>();
        tick_timers(self, l, t);
        return t->promise;
      },
      [self, l](maintain_atom) {
        auto m = std::make_shared<maintaining>();
        m->promise = self->make_response_promise<bool, std::string>();
        m->next_store = l->stores.begin();
        maintain_stores(self, l, m);
        return m->promise;
      },
  };
}

}  // namespace sessionrt::actors
