// For tests that run session_core or a session actor without a runtime: a synchronous model
// runner behind the asynchronous contracts, answering at once on the calling thread.
//   inline_runner   async_model_runner over a model_runner (completes inside start())
//   sync_turn_io    turn_io for session_core (actors::inline_turn_io)
//   drive(task)     runs a turn that never waits to its end and returns its value
//   direct_route()  the route of a direct message from telegram peer "1" (testing::dm's default)
#pragma once
#include <catch2/catch.hpp>

#include "actors/session/inline_turn_io.hpp"
#include "actors/session/route_facts.hpp"

namespace sessionrt::testing {

inline actors::route_facts direct_route() {
  actors::route_facts r;
  r.channel = "telegram";
  r.peer_id = "1";
  return r;
}

class inline_runner final : public async_model_runner {
 public:
  explicit inline_runner(model_runner& m) : m_(m) {}
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation>) override {
    done->complete(m_.run(*request));
  }

 private:
  model_runner& m_;
};

using sync_turn_io = actors::inline_turn_io;

template <class T>
T drive(actors::task<T> t) {
  auto v = actors::run_inline(std::move(t));
  REQUIRE(v.has_value());
  return std::move(*v);
}

}  // namespace sessionrt::testing
