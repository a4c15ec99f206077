// admission_queue: who may start a model call now (model.maxConcurrent, and per provider
// model.maxConcurrentByProvider). A plain state machine, not thread-safe (model_gate wraps it).
// - acquire(): admitted at once when the global bound and the provider's bound have room,
//   else the ticket waits.
// - Waiting tickets are admitted first come, first served; a ticket whose provider is full does
//   not hold back a later ticket of another provider.
// - release(): a running ticket ends, or a waiting one gives up; returns the tickets admitted
//   by the room it made, oldest first.
// A bound of 0 means none.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace sessionrt::actors {

struct admission_stats {
  std::size_t running = 0;
  std::size_t waiting = 0;
  std::uint64_t admitted = 0;       // ever
  std::uint64_t admitted_late = 0;  // ever, after waiting
  std::size_t peak_running = 0;
};

class admission_queue {
 public:
  using ticket = std::uint64_t;
  admission_queue(std::size_t max_total, std::map<std::string, std::size_t> per_provider);

  struct acquired {
    ticket id;
    bool admitted;
  };
  acquired acquire(const std::string& provider);
  std::vector<ticket> release(ticket id);
  bool running(ticket id) const;
  admission_stats stats() const;

 private:
  bool has_room(const std::string& provider) const;
  void admit(ticket id, const std::string& provider);

  std::size_t max_total_;
  std::map<std::string, std::size_t> per_provider_;
  std::unordered_map<ticket, std::string> running_;  // ticket -> provider
  std::map<std::string, std::size_t> running_by_provider_;
  std::deque<std::pair<ticket, std::string>> waiting_;
  ticket next_ = 1;
  admission_stats stats_;
};

}  // namespace sessionrt::actors
