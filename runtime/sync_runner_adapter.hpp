// sync_runner_adapter: a synchronous model_runner behind the asynchronous contract
// (messages/model_runner.hpp). Each call runs run() on the blocking pool; a call cancelled
// before a thread takes it completes with errc::cancelled without running. The runner and the
// pool must outlive the adapter's calls.
#pragma once
#include <memory>

#include "runtime/blocking_pool.hpp"
#include "messages/model_runner.hpp"

namespace sessionrt::runtime {

class sync_runner_adapter final : public async_model_runner {
 public:
  sync_runner_adapter(std::shared_ptr<model_runner> runner, blocking_pool& pool)
      : runner_(std::move(runner)), pool_(pool) {}
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation> cancel) override;

 private:
  std::shared_ptr<model_runner> runner_;
  blocking_pool& pool_;
};

}  // namespace sessionrt::runtime
