// turn_task: the coroutine type of a session's turn (C++20). A turn reads as straight-line
// code and waits on model calls with co_await; it runs only on its session actor's thread:
//   - a task starts suspended; the actor starts the outermost one with resume() and, after
//     every resume it makes, checks done() and take()s the value;
//   - co_await on a task runs it and continues the awaiting coroutine when it finishes
//     (symmetric transfer, so long chains do not grow the stack);
//   - a call awaiter (turn_io.hpp) suspends the turn until the actor resumes it with the
//     call's answer, from a message handler on the same thread.
// Destroying a suspended task destroys the whole chain of frames it owns. Exceptions are not
// used across our code; one escaping a turn terminates.
// GCC 12: a braced temporary (an aggregate, `T{...}`) inside a co_await expression is
// destroyed twice — name it first: `T x{...}; co_await f(x);` (tests/actors/session/
// turn_task_test.cpp checks the pattern we use).
#pragma once
#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace sessionrt::actors {

template <class T>
class [[nodiscard]] task {
 public:
  struct promise_type {
    std::optional<T> value;
    std::coroutine_handle<> continuation;

    task get_return_object() { return task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct final_awaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        auto next = h.promise().continuation;
        return next ? next : std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    final_awaiter final_suspend() noexcept { return {}; }
    template <class U>
    void return_value(U&& v) {
      value.emplace(std::forward<U>(v));
    }
    void unhandled_exception() noexcept { std::terminate(); }
  };

  task() = default;
  explicit task(std::coroutine_handle<promise_type> h) : h_(h) {}
  task(task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  task& operator=(task&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() { reset(); }

  bool valid() const { return static_cast<bool>(h_); }
  bool done() const { return h_ && h_.done(); }
  // The outermost task: run until its first suspension (or its end).
  void resume() { h_.resume(); }
  T take() { return std::move(*h_.promise().value); }
  void reset() {
    if (h_) h_.destroy();
    h_ = {};
  }

  // Awaiting a task runs it.
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  T await_resume() { return std::move(*h_.promise().value); }

 private:
  std::coroutine_handle<promise_type> h_;
};

}  // namespace sessionrt::actors
