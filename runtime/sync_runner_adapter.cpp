#include "runtime/sync_runner_adapter.hpp"

namespace sessionrt::runtime {

void sync_runner_adapter::start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
                                std::shared_ptr<const cancellation> cancel) {
  pool_.post([runner = runner_, request = std::move(request), done = std::move(done), cancel = std::move(cancel)] {
    if (cancel && cancel->cancelled()) {
      done->complete(result<boost::json::object>(errc::cancelled, "cancelled before the model call started"));
      return;
    }
    done->complete(runner->run(*request));
  });
}

}  // namespace sessionrt::runtime
