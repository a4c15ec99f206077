// expiry_schedule: when each session goes stale (daily boundary / idle expiry), as a min-heap
// with lazy deletion: set() replaces a key's time, due() pops every key whose time has come.
// Pure data structure; the timer actor drives it with the clock.
#pragma once
#include <cstdint>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace sessionrt::actors {

class expiry_schedule {
 public:
  struct item {
    std::string key;
    std::int64_t at_ms;
    std::string reason;
  };
  void set(const std::string& key, std::int64_t at_ms, std::string reason);  // at_ms < 0: cancel
  std::vector<item> due(std::int64_t now_ms);  // removes them
  std::optional<std::int64_t> next() const;   // earliest pending time
  std::size_t size() const { return current_.size(); }

 private:
  struct slot {
    std::int64_t at_ms;
    std::string reason;
  };
  using entry = std::pair<std::int64_t, std::string>;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap_;
  std::unordered_map<std::string, slot> current_;
  void drop_stale_top();
};

}  // namespace sessionrt::actors
