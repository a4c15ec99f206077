// session_watchers: for each session key, the connections that watch it (the reverse of each
// connection_state's watched keys), so that a run's `chat` events cost O(watchers of its key),
// not O(connections). frame_dispatch owns it, on the loop thread: no lock.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace sessionrt::gateway {

class session_watchers {
 public:
  void add(const std::string& key, std::uint64_t conn);
  void remove(const std::string& key, std::uint64_t conn);
  // Empty when nobody watches the key. Valid until the next add / remove.
  const std::vector<std::uint64_t>& of(const std::string& key) const;
  std::size_t keys() const { return by_key_.size(); }

 private:
  std::unordered_map<std::string, std::vector<std::uint64_t>> by_key_;
};

}  // namespace sessionrt::gateway
