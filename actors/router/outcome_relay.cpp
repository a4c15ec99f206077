#include "actors/router/outcome_relay.hpp"

#include <utility>

namespace sessionrt::actors {

outcome_relay_type::behavior_type outcome_relay(outcome_relay_type::pointer self, router_actor_type router,
                                                subagent_actor_type subagents,
                                                std::shared_ptr<pending_outcomes> pending) {
  // Asks `target` and hands its outcome (or why there is none) to the callback under `id`.
  // No timeout: the router and the spawner answer every request (a refusal, a stop, a model
  // call past model.timeoutMs are outcomes too), and a request to an actor that exited fails at
  // once; a turn's length has no bound of its own to put here.
  auto ask = [self, pending](const auto& target, std::uint64_t id, std::string who, auto&&... msg) {
    auto answer = [pending, id](turn_outcome out) {
      if (auto fn = pending->take(id)) fn(std::move(out));
    };
    self->request(target, caf::infinite, std::forward<decltype(msg)>(msg)...)
        .then([answer](turn_outcome& out) { answer(std::move(out)); },
              [self, answer, who](caf::error& err) {
                turn_outcome out;
                out.st = status(errc::io_error, who + " did not answer: " + self->system().render(err));
                answer(std::move(out));
              });
  };
  return {
      [router, ask](chat_atom a, std::uint64_t id, chat_event& ev) {
        ask(router, id, "the router", a, std::make_shared<chat_event>(std::move(ev)));
      },
      // The host's other messages to the router go the same way, so they stay behind its turns.
      [router, ask](system_atom a, std::uint64_t id, system_event& ev) {
        ask(router, id, "the router", a, std::move(ev));
      },
      [subagents, ask](spawn_atom a, std::uint64_t id, std::string& parent_key, subagent_spec& spec) {
        ask(subagents, id, "the sub-agent spawner", a, std::move(parent_key), std::move(spec));
      },
      [self, router](settle_atom a) { return self->delegate(router, a); },
      [self, router](tick_atom a, settle_atom b) { return self->delegate(router, a, b); },
      [self, router](stop_atom a) { return self->delegate(router, a); },
  };
}

}  // namespace sessionrt::actors
