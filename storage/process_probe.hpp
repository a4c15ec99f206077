// process_probe: the questions the write lock asks about other processes, behind an interface
// because they are not file I/O (kill(2) and /proc reads) and tests must be able to fake a dead,
// zombie or recycled pid.
// - self_pid(): the pid written into lock payloads (getpid() for the real probe);
// - alive(pid): kill(pid, 0) succeeds (EPERM counts as alive: the process exists) and the
//   process is not a zombie (Linux /proc/<pid>/status "State: Z"). pid <= 0 or beyond pid_t
//   is never alive;
// - start_time(pid): /proc/<pid>/stat field 22 (clock ticks since boot), nullopt when it cannot
//   be read (not Linux, no such process, unparsable).
// The real probe is stateless and thread-safe. The fake is for tests; it is thread-safe too.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace sessionrt::storage {

class process_probe {
 public:
  virtual ~process_probe() = default;
  virtual std::int64_t self_pid() const = 0;
  virtual bool alive(std::int64_t pid) const = 0;
  virtual std::optional<std::int64_t> start_time(std::int64_t pid) const = 0;
};

// The real processes of this machine.
process_probe& real_process_probe();

// A world of made-up processes. The probe's own process exists from construction.
class fake_process_probe final : public process_probe {
 public:
  explicit fake_process_probe(std::int64_t self_pid = 4242, std::optional<std::int64_t> self_start_time = 1000);

  // Adds or replaces process `pid`. `zombie` makes it exist but not be alive.
  void set_process(std::int64_t pid, std::optional<std::int64_t> start_time, bool zombie = false);
  void remove_process(std::int64_t pid);

  std::int64_t self_pid() const override { return self_pid_; }
  bool alive(std::int64_t pid) const override;
  std::optional<std::int64_t> start_time(std::int64_t pid) const override;

 private:
  struct process {
    std::optional<std::int64_t> start_time;
    bool zombie = false;
  };
  std::int64_t self_pid_;
  mutable std::mutex mutex_;
  std::map<std::int64_t, process> processes_;
};

}  // namespace sessionrt::storage
