#include "actors/router/host_steps.hpp"

#include <memory>
#include <utility>

namespace sessionrt::actors {

namespace {

using settle_promise = caf::typed_response_promise<settle_report, std::vector<std::string>>;
using tick_promise = caf::typed_response_promise<std::string>;

struct settling {
  settle_promise promise;
  settle_report report;
  std::vector<std::string> failures;
};

std::string failure(host_steps_type::pointer self, const char* who, const caf::error& e) {
  return std::string(who) + ": " + self->system().render(e);
}

// The settle's last two asks, each after the one before; the answer once the bus answered.
void settle_bus(host_steps_type::pointer self, const host_steps_links& l, std::shared_ptr<settling> s) {
  self->request(l.bus, caf::infinite, settle_atom::value)
      .then([s]() { s->promise.deliver(std::move(s->report), std::move(s->failures)); },
            [self, s](caf::error& e) {
              s->failures.push_back(failure(self, "the event bus", e));
              s->promise.deliver(std::move(s->report), std::move(s->failures));
            });
}

void settle_log(host_steps_type::pointer self, const host_steps_links& l, std::shared_ptr<settling> s) {
  if (!l.commit_log) return settle_bus(self, l, std::move(s));
  self->request(l.commit_log, caf::infinite, settle_atom::value)
      .then([self, l, s](bool) { settle_bus(self, l, s); },
            [self, l, s](caf::error& e) {
              s->failures.push_back(failure(self, "the commit log", e));
              settle_bus(self, l, s);
            });
}

void settle_all(host_steps_type::pointer self, const host_steps_links& l, std::shared_ptr<settling> s) {
  self->request(l.relay, l.relay_wait, settle_atom::value)
      .then(
          [self, l, s](settle_report& r) {
            s->report = std::move(r);
            settle_log(self, l, s);
          },
          [self, l, s](caf::error& e) {
            s->failures.push_back(failure(self, "the router", e));
            settle_log(self, l, s);
          });
}

void tick_all(host_steps_type::pointer self, const host_steps_links& l, tick_promise rp) {
  auto fail = [self, rp](const char* who) mutable {
    return [self, rp, who](caf::error& e) mutable { rp.deliver(failure(self, who, e)); };
  };
  self->request(l.timers, caf::infinite, tick_atom::value)
      .then(
          [self, l, rp, fail]() mutable {
            self->request(l.relay, l.relay_wait, tick_atom::value, settle_atom::value)
                .then(
                    [self, l, rp, fail](bool) mutable {
                      self->request(l.bus, caf::infinite, settle_atom::value)
                          .then([rp]() mutable { rp.deliver(std::string()); }, fail("the event bus"));
                    },
                    fail("the router"));
          },
          fail("the timers"));
}

}  // namespace

host_steps_type::behavior_type host_steps(host_steps_type::pointer self, host_steps_links links) {
  return {
      [self, links](settle_atom) {
        auto s = std::make_shared<settling>();
        s->promise = self->make_response_promise<settle_report, std::vector<std::string>>();
        settle_all(self, links, s);
        return s->promise;
      },
      [self, links](tick_atom) {
        auto rp = self->make_response_promise<std::string>();
        tick_all(self, links, rp);
        return rp;
      },
  };
}

}  // namespace sessionrt::actors
