// store_marks: which commit logs hold row changes that no write of their sessions.json covers
// yet (the commit log actor's bookkeeping, without CAF or I/O). A checkpoint may drop a log
// only when none does: the rows would be lost with it. Per log and agent it keeps the highest
// session row sequence written there (0 when only the store's own changes were). A store's
// written record with order N (log_format.hpp kStoreWritten) covers, in every log, the session
// rows up to N and the store's own changes that reached the log before it (the store sends in
// order), so it clears each (log, agent) whose highest row is <= N.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sessionrt::actors {

class store_marks {
 public:
  void session_row(std::uint64_t log, const std::string& agent, std::uint64_t seq);
  void store_change(std::uint64_t log, const std::string& agent);
  void written(const std::string& agent, std::uint64_t order);
  bool held(std::uint64_t log) const;
  // The agents whose stores hold a log numbered below `log` (the retired ones), each once.
  std::vector<std::string> holders_below(std::uint64_t log) const;
  void forget(std::uint64_t log) { pending_.erase(log); }

 private:
  std::map<std::uint64_t, std::map<std::string, std::uint64_t>> pending_;
};

}  // namespace sessionrt::actors
