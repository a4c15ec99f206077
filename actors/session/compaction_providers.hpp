// compaction_providers: the compaction providers a host registered, by id (SPEC §4). Shared by
// every session of a runtime; register and look up from any thread.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "messages/model_runner.hpp"

namespace sessionrt::actors {

class compaction_providers {
 public:
  void add(const std::string& id, std::shared_ptr<compaction_provider> provider) {
    std::lock_guard<std::mutex> g(mu_);
    providers_[id] = std::move(provider);
  }
  std::shared_ptr<compaction_provider> find(const std::string& id) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = providers_.find(id);
    return it == providers_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<compaction_provider>> providers_;
};

}  // namespace sessionrt::actors
