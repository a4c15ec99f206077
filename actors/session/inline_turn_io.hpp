// inline_turn_io: a turn_io that answers every call at once, on the calling thread, from a
// synchronous model runner (and a provider's summarize()), and run_inline() to run such a
// task to its end. For tools that compact or run a turn offline (the benches, tests); the
// runtime never uses it: there a call must not hold the thread.
#pragma once
#include <optional>

#include "actors/session/turn_io.hpp"
#include "actors/session/turn_task.hpp"

namespace sessionrt::actors {

class inline_turn_io final : public turn_io {
 public:
  explicit inline_turn_io(model_runner* m) : m_(m) {}
  std::optional<model_answer> start_model_call(std::shared_ptr<model_request> request,
                                               std::function<void(model_answer)>) override {
    if (!m_) return model_answer(errc::unsupported, "no model runner is registered");
    return m_->run(*request);
  }
  std::optional<result<std::string>> start_summary(std::shared_ptr<compaction_provider> provider,
                                                   std::shared_ptr<summarize_request> request,
                                                   std::function<void(result<std::string>)>) override {
    return provider->summarize(*request, cancel_);
  }
  void publish_progress() override {}
  std::string cancel_reason() const override { return ""; }

 private:
  model_runner* m_;
  cancellation cancel_;
};

// The task's value; nullopt if it waited on something (it cannot with inline_turn_io).
template <class T>
std::optional<T> run_inline(task<T> t) {
  t.resume();
  if (!t.done()) return std::nullopt;
  return t.take();
}

}  // namespace sessionrt::actors
