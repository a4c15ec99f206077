// write_lock: the transcript write lock "<file>.lock" of OpenClaw [R§9], byte-compatible so a
// Node gateway and sessionrt sharing a state dir exclude each other.
// - lock path: <realpath(dirname(file))>/<basename(file)>.lock (the directory is created 0700
//   when missing);
// - acquire: open O_CREAT|O_EXCL|O_NOFOLLOW 0600, write the payload through that fd, close it
//   (the file's inode and bytes identify the holder; OpenClaw keeps the fd, but a process
//   holding thousands of locks must not spend a descriptor on each). Payload = JSON.stringify({pid, createdAt, maxHoldMs, starttime}, null, 2)
//   + "\n" (starttime omitted when the probe cannot read it);
// - reentrant per process: a second acquire of a lock this process holds adds a hold; the file
//   goes when the last hold is released;
// - release: unlink only if the file is still ours (same dev/ino, same bytes
//   as written); a replaced or vanished lock is left alone and reported (errc::locked);
// - contention: the existing lock is read and judged (stale reasons and removal policy of [R§9]);
//   a removable stale lock is removed only if its bytes are unchanged since read, and the
//   attempt is made again at once; a stale but not removable lock (too-old / hold-exceeded of a
//   live owner) fails at once with "session file lock stale (...)" (final: waiting cannot help);
//   otherwise the lock is busy: wait (lock_retry_delay_ms: 50 ms growing by 50 ms per attempt to
//   a 1000 ms cap, never past acquire_timeout_ms) and try again; at the timeout fail with
//   lock_timeout_error: "session file locked (timeout <ms>ms): <owner> <lockPath>". Both
//   failures are errc::locked.
// - two ways to acquire, one policy: try_acquire_write_lock is one attempt that never waits
//   (for an actor that schedules its own retries); acquire_write_lock loops over it, waiting
//   through clock::sleep_ms.
// - files go through fs&; process questions through process_probe&; time through clock&.
// Thread-safe: the process-wide table of held locks is guarded by a mutex; each acquire attempt
// (create or judge) runs under it, so two threads of this process never judge each other's
// fresh lock as an orphan.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/process_probe.hpp"

namespace sessionrt::storage {

struct lock_contention;

struct write_lock_options {
  static constexpr std::int64_t infinite = std::numeric_limits<std::int64_t>::max();
  std::int64_t acquire_timeout_ms = 60000;  // `infinite` waits forever ("Infinity")
  std::int64_t stale_ms = 1800000;          // a createdAt older than this is "too-old"
  std::int64_t max_hold_ms = 300000;        // written into the payload
  // false: a lock this process already holds counts as held by someone else (errc::locked at
  // once), for owners that must be unique even within one process (a runtime's store).
  bool reentrant = true;
  // Called once per acquire attempt that finds the lock held by someone else (outside the
  // table's mutex, on the acquiring thread). For the actor layer's `lock.contended` event.
  std::function<void(const lock_contention&)> on_contended;
};

// Applies SESSIONRT_SESSION_WRITE_LOCK_{ACQUIRE_TIMEOUT_MS,STALE_MS,MAX_HOLD_MS}, or when a
// SESSIONRT_ name is unset/empty the OPENCLAW_SESSION_WRITE_LOCK_... name ([R§9]: the
// environment wins over config). `lookup` returns a variable's value or nullopt. Values are
// trimmed; they must be positive digit strings up to 2^53-1; "Infinity" is accepted for the
// acquire timeout only. A bad value is invalid_argument naming the variable and the value;
// `options` is then unchanged.
using env_lookup = std::function<std::optional<std::string>(std::string_view name)>;
status apply_write_lock_env(write_lock_options& options, const env_lookup& lookup);

// What a lock file says and what it is judged to be.
struct lock_inspection {
  std::string lock_path;
  std::optional<std::int64_t> pid;          // a positive integer, else absent
  bool pid_alive = false;
  std::optional<std::string> created_at;    // the raw string
  std::optional<std::int64_t> age_ms;       // max(0, now - createdAt), absent when unparsable
  std::optional<std::int64_t> max_hold_ms;  // the holder's, when written
  std::optional<std::int64_t> starttime;    // the holder's, when written
  std::int64_t mtime_age_ms = 0;            // max(0, now - file mtime)
  // In [R§9] order: missing-pid | dead-pid | recycled-pid, invalid-createdAt | too-old,
  // hold-exceeded, orphan-self-pid. ("non-openclaw-owner" is not implemented: see write_lock.cpp.)
  std::vector<std::string> stale_reasons;
  bool held_by_this_process = false;
  bool removable = false;  // the removal policy says this lock may be deleted (if unchanged)

  bool stale() const { return !stale_reasons.empty(); }
  // "pid=<pid> alive=<bool> ageMs=<n>" (ageMs only when createdAt parses), or "owner=unknown".
  std::string owner() const;
  std::string reasons_text() const;  // "dead-pid, too-old"
};

enum class contention_outcome {
  waiting,        // not stale (or not yet removable): the acquire waits and retries. Also a
                  // stale lock that changed between read and removal: retried at once
                  // (remove-if-unchanged refused to delete the newer file)
  removed_stale,  // removed as stale; the acquire retries at once
  stale_error,    // stale but not removable: the acquire fails with the stale error
};

struct lock_contention {
  const lock_inspection& inspection;
  int attempt = 0;             // 1-based
  std::int64_t waited_ms = 0;  // since the acquire began
  contention_outcome outcome = contention_outcome::waiting;
};

// One hold of a write lock. Move-only; the destructor releases (logging a failure).
class write_lock {
 public:
  write_lock() = default;
  ~write_lock();
  write_lock(write_lock&& other) noexcept;
  write_lock& operator=(write_lock&& other) noexcept;
  write_lock(const write_lock&) = delete;
  write_lock& operator=(const write_lock&) = delete;

  bool held() const noexcept { return token_ != 0; }
  const std::string& lock_path() const noexcept { return lock_path_; }
  // Drops this hold; the last hold removes the file if it is unchanged.
  // Releasing twice, or after release_all_held_locks(), is a no-op returning ok. errc::locked
  // when the file was replaced or removed by someone else while held (it is left as found).
  status release();

 private:
  friend class write_lock_table;
  write_lock(std::string lock_path, std::uint64_t token) : lock_path_(std::move(lock_path)), token_(token) {}
  std::string lock_path_;
  std::uint64_t token_ = 0;
};

// "<realpath(dirname(file))>/<basename(file)>.lock".
result<std::string> write_lock_path(fs& files, const std::string& file);

// The backoff between attempts, shared by every acquirer (the blocking loop below and the
// session actor's delayed retries): after busy attempt `attempt` (1-based) of an acquire that
// has waited `waited_ms` so far, wait min(50 * attempt, 1000) ms, cut so the wait ends no later
// than `acquire_timeout_ms`; nullopt once waited_ms >= acquire_timeout_ms: give up with
// lock_timeout_error. An `infinite` timeout never gives up.
struct lock_backoff {
  static constexpr std::int64_t first_ms = 50;  // after the first attempt
  static constexpr std::int64_t step_ms = 50;   // added per further attempt
  static constexpr std::int64_t cap_ms = 1000;  // the longest single wait
};
std::optional<std::int64_t> lock_retry_delay_ms(int attempt, std::int64_t waited_ms, std::int64_t acquire_timeout_ms);

// The one timeout error: errc::locked, "session file locked (timeout <ms>ms): <owner> <lockPath>"
// with the holder as the last attempt found it ("Infinity" for an infinite timeout).
status lock_timeout_error(std::int64_t acquire_timeout_ms, const lock_inspection& holder);

// An attempt found the lock held by someone else (or stale but not yet removable): retry later.
struct lock_busy {
  lock_inspection holder;  // as this attempt judged it: for lock_timeout_error
};

// One attempt; never waits (clock::sleep_ms is not called). The lock (a new hold, or one more
// hold of a lock this process holds when options.reentrant), or lock_busy: ask
// lock_retry_delay_ms how long to wait before attempt `attempt + 1`, or whether to give up.
// An error is final, retrying it does not help: "session file lock stale (...)" (stale, not
// removable), a non-reentrant lock this process holds, I/O and path errors.
// A removable stale lock is removed (if unchanged) and the attempt made again at once, a few
// times at most within this call (then it reports busy). Every contention is reported to
// options.on_contended with `attempt` and `waited_ms` (how long the acquire has waited so far:
// the caller keeps it). options.acquire_timeout_ms is not waited for here; it picks the
// missing-payload grace ([R§9]: 5 s under a 30 s timeout, else 30 s).
using lock_attempt = std::variant<write_lock, lock_busy>;
result<lock_attempt> try_acquire_write_lock(fs& files, clock& time, process_probe& probe, const std::string& file,
                                            const write_lock_options& options = {}, int attempt = 1,
                                            std::int64_t waited_ms = 0);

// Attempts until the lock is taken, waiting lock_retry_delay_ms between attempts through
// time.sleep_ms (it blocks the calling thread: not for an actor's handler), then fails with
// lock_timeout_error; try_acquire_write_lock's final errors end it at once.
result<write_lock> acquire_write_lock(fs& files, clock& time, process_probe& probe, const std::string& file,
                                      const write_lock_options& options = {});

// Reads and judges the lock at `lock_path` as an acquire would (hold-exceeded counts unless
// this process holds it; the short missing-payload grace applies when acquire_timeout_ms <
// 30 s). not_found when there is no lock.
result<lock_inspection> inspect_lock(fs& files, clock& time, process_probe& probe, const std::string& lock_path,
                                     const write_lock_options& options = {});

struct removed_lock {
  std::string lock_path;
  std::vector<std::string> reasons;
};
// Scans realpath(sessions_dir) for "*.jsonl.lock" in byte order of name, removes the removable
// stale ones (if unchanged since read) and returns each removed lock (its path under the
// realpath'd dir) with its reasons; the caller logs "removed stale session lock: <path>
// (<reasons>)". Judged as
// OpenClaw's cleanStaleLockFiles: no hold-exceeded, a self-pid lock without starttime is not an
// orphan, the missing-payload grace is min(staleMs, 30 s). Locks this process holds are never
// removed (OpenClaw's cleanup does not look). A missing dir is an empty result; a lock that
// cannot be read (not a regular file, I/O error) is skipped.
result<std::vector<removed_lock>> clean_stale_locks(fs& files, clock& time, process_probe& probe,
                                                    const std::string& sessions_dir,
                                                    const write_lock_options& options = {});

// Releases every lock this process holds (all holds), removing each file if unchanged;
// returns how many were released. For the runtime's stop path and its SIGINT/SIGTERM/SIGQUIT/
// SIGABRT handling ([R§9]). NOT async-signal-safe (it takes a mutex and allocates): call it
// from a normal thread, e.g. the libuv signal watcher or a stop request, then re-raise the
// signal. Outstanding write_lock handles become no-ops.
std::size_t release_all_held_locks();

struct held_lock_info {
  std::string lock_path;
  int holds = 0;
  std::int64_t acquired_at_ms = 0;
  std::int64_t max_hold_ms = 0;
};
// The locks this process holds now (for a watchdog, /status and tests).
std::vector<held_lock_info> held_write_locks();

}  // namespace sessionrt::storage
