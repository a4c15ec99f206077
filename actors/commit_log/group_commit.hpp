// group_commit: the bookkeeping of the commit log actor, without CAF or I/O (the actor writes,
// syncs and sends; this class says what to sync and whom to answer).
// - Logs: numbered files, the last one taking the writes; begin_log() retires the previous one
//   (its records are still answered by its own syncs).
// - Each request of a round that was written ends up a waiter: (log, end offset). A sync job
//   covers one log up to what was written when it started, plus the new transcripts (their data
//   and their directories) of the requests it covers. Several jobs may run at once; a log's
//   results are taken in job order, so a waiter is answered only when every byte and every new
//   file before its end is durable.
// - Waiters are answered strictly in arrival order across logs (a session's later turn is
//   never acknowledged before an earlier one). A failed write is a waiter answered with its
//   error in that order. A failed sync fails every waiter of that log not yet answered and
//   marks the log failed (current_failed(): the caller starts a new log; no write follows an
//   fdatasync error in the same file).
// - A job that is the only one running may take the waiters at the front that it covers
//   (hand_off): whoever runs it answers them as soon as its sync returns, with its result,
//   which is what the book would answer (the job is its log's only one, and nothing before
//   them is unanswered). They stay in the book, holding back every waiter behind them, until
//   synced() of that job drops them unanswered.
// - Checkpoint: a retired log whose waiters are answered and whose jobs are done can go once
//   its dirty transcripts are durable: take_checkpoint() hands them over (checkpoint_failed()
//   gives them back to be retried with the next one). take_all() (shutdown) takes every log.
//   A caller may hold a log back (take_checkpoint's `held`: the commit log keeps a log whose
//   row changes no sessions.json write covers yet).
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "actors/commit_log/dirty_files.hpp"

namespace sessionrt::actors {

template <class Waiter>
class group_commit {
 public:
  struct sync_job {
    std::uint64_t id = 0;
    std::uint64_t log = 0;
    std::uint64_t upto = 0;
    std::vector<storage::shared_fd_ptr> new_files;
    std::vector<std::string> dirs;
  };
  struct checkpoint {
    std::vector<std::uint64_t> logs;
    std::vector<storage::shared_fd_ptr> files;
    std::vector<std::string> dirs;
    bool sync_home = false;  // syncfs the log's own filesystem (its transcripts were not kept open)
  };
  // The log's filesystem (st_dev): its transcripts are synced by one syncfs at a checkpoint.
  explicit group_commit(std::optional<std::uint64_t> home = std::nullopt) : home_(home) {}
  struct answer {
    Waiter waiter;
    std::string error;  // "" when durable
  };

  void begin_log(std::uint64_t number, std::uint64_t length) {
    log_state l;
    l.dirty = dirty_files(home_);
    l.number = number;
    l.length = l.requested = l.durable = length;
    logs_.push_back(std::move(l));
  }
  bool has_log() const { return !logs_.empty(); }
  std::uint64_t current_log() const { return logs_.back().number; }
  bool current_failed() const { return !logs_.empty() && logs_.back().failed; }

  // A request whose record (if any) the current log's write put before `end`; `sync_file`: the
  // file itself is synced by the job covering it, and `dir` (a new file's) fsync'd, when given.
  void wrote(Waiter w, std::uint64_t end, const storage::shared_fd_ptr& file, std::optional<std::uint64_t> device,
             bool sync_file, const std::string& dir) {
    auto& l = logs_.back();
    l.length = std::max(l.length, end);
    if (file) l.dirty.add(file, device);
    if (sync_file && file) l.new_files.push_back(file);
    if (!dir.empty()) {
      // Each job fsyncs the directories of the new files it covers (a name created after a
      // directory's fsync needs another one).
      if (std::find(l.dirs.begin(), l.dirs.end(), dir) == l.dirs.end()) l.dirs.push_back(dir);
      l.all_dirs.insert(dir);
    }
    waiting_.push_back({std::move(w), l.number, end, {}});
  }
  // A request that failed before it reached a log: answered with `error`, in its turn.
  void failed(Waiter w, std::string error) { waiting_.push_back({std::move(w), 0, 0, std::move(error)}); }

  // The next sync to start: the oldest log with bytes or new files no started sync covers.
  std::optional<sync_job> next_sync() {
    for (auto& l : logs_) {
      if (l.failed || (l.length <= l.requested && l.new_files.empty())) continue;
      sync_job j;
      j.id = next_job_++;
      j.log = l.number;
      j.upto = l.length;
      j.new_files = std::exchange(l.new_files, {});
      j.dirs = std::exchange(l.dirs, {});
      l.requested = l.length;
      l.jobs.push_back({j.id, j.upto, false, {}});
      return j;
    }
    return std::nullopt;
  }
  bool syncs_running() const {
    return std::any_of(logs_.begin(), logs_.end(), [](const log_state& l) { return !l.jobs.empty(); });
  }

  // The waiters job `j` (just taken from next_sync()) answers itself: those at the front that
  // it covers, when no other job runs (else none, and the book answers them as usual). Take
  // ready() first: a waiter that can be answered now would wait for the job.
  std::vector<Waiter> hand_off(const sync_job& j) {
    for (const auto& l : logs_)
      for (const auto& job : l.jobs)
        if (job.id != j.id) return {};
    std::vector<Waiter> out;
    for (auto& e : waiting_) {
      if (e.handed || e.log != j.log || e.end > j.upto) break;
      e.handed = j.id;
      out.push_back(e.waiter);
    }
    return out;
  }

  // Job `id` finished ("" = durable). Returns the waiters it lets go, in order (not those it
  // was handed: they had its answer).
  std::vector<answer> synced(std::uint64_t id, const std::string& error) {
    while (!waiting_.empty() && waiting_.front().handed == id) waiting_.pop_front();
    for (auto& l : logs_) {
      auto it = std::find_if(l.jobs.begin(), l.jobs.end(), [&](const job_state& j) { return j.id == id; });
      if (it == l.jobs.end()) continue;
      it->done = true;
      it->error = error;
      while (!l.jobs.empty() && l.jobs.front().done) {
        const job_state& j = l.jobs.front();
        if (!j.error.empty() && !l.failed) {
          l.failed = true;
          l.failure = j.error;
        } else if (j.error.empty() && !l.failed) {
          l.durable = std::max(l.durable, j.upto);
        }
        l.jobs.pop_front();
      }
      break;
    }
    return ready();
  }

  // The waiters at the front that can be answered now.
  std::vector<answer> ready() {
    std::vector<answer> out;
    while (!waiting_.empty()) {
      entry& e = waiting_.front();
      if (e.handed) break;  // its job answers it; the ones behind wait for that
      if (e.log == 0) {
        out.push_back({std::move(e.waiter), std::move(e.error)});
      } else {
        const log_state* l = find(e.log);
        if (l && e.end <= l->durable)
          out.push_back({std::move(e.waiter), {}});
        else if (!l || l->failed)
          out.push_back({std::move(e.waiter), l ? l->failure : std::string("the commit log was closed")});
        else
          break;
      }
      waiting_.pop_front();
    }
    return out;
  }
  std::size_t waiting() const { return waiting_.size(); }

  // Retired logs ready to go (oldest first, stopping at the first that is not, or that
  // `held` keeps: its row changes are not in their sessions.json yet).
  template <class Held = bool (*)(std::uint64_t)>
  std::optional<checkpoint> take_checkpoint(Held held = [](std::uint64_t) { return false; }) {
    checkpoint cp = std::exchange(retry_, {});
    dirty_files dirty = std::exchange(retry_dirty_, dirty_files(home_));
    while (logs_.size() > 1 && !logs_.front().jobs.size() && !waits_on(logs_.front().number) &&
           !held(logs_.front().number)) {
      auto& l = logs_.front();
      cp.logs.push_back(l.number);
      dirty.merge(std::move(l.dirty));
      cp.dirs.insert(cp.dirs.end(), l.all_dirs.begin(), l.all_dirs.end());
      logs_.pop_front();
    }
    if (cp.logs.empty()) return std::nullopt;
    cp.files = dirty.files();
    cp.sync_home = cp.sync_home || dirty.home_dirty();
    return cp;
  }
  void checkpoint_failed(checkpoint cp) {
    for (auto& f : cp.files) retry_dirty_.add(f, std::nullopt);
    retry_.sync_home = retry_.sync_home || cp.sync_home;
    retry_.logs.insert(retry_.logs.end(), cp.logs.begin(), cp.logs.end());
    retry_.dirs.insert(retry_.dirs.end(), cp.dirs.begin(), cp.dirs.end());
  }
  // Every log, current included, with every file written since the last checkpoint; the waiters
  // not answered yet are answered as durable by the caller once that checkpoint succeeded
  // (take_waiters()).
  checkpoint take_all() {
    checkpoint cp = std::exchange(retry_, {});
    dirty_files dirty = std::exchange(retry_dirty_, dirty_files(home_));
    for (auto& l : logs_) {
      cp.logs.push_back(l.number);
      dirty.merge(std::move(l.dirty));
      cp.dirs.insert(cp.dirs.end(), l.all_dirs.begin(), l.all_dirs.end());
    }
    logs_.clear();
    cp.files = dirty.files();
    cp.sync_home = cp.sync_home || dirty.home_dirty();
    return cp;
  }
  // The waiters not answered yet, in order (their errors kept), leaving none. Those handed
  // to a job still running are left out: it answers them (shutdown comes after the sessions
  // stopped, which waited for their answers, so in practice there are none).
  std::vector<answer> take_waiters(const std::string& error) {
    std::vector<answer> out;
    for (auto& e : waiting_)
      if (!e.handed) out.push_back({std::move(e.waiter), e.log == 0 ? std::move(e.error) : error});
    waiting_.clear();
    return out;
  }

 private:
  struct job_state {
    std::uint64_t id = 0, upto = 0;
    bool done = false;
    std::string error;
  };
  struct log_state {
    std::uint64_t number = 0;
    std::uint64_t length = 0;     // written
    std::uint64_t requested = 0;  // covered by a started sync
    std::uint64_t durable = 0;    // covered by a finished one (in job order)
    bool failed = false;
    std::string failure;
    dirty_files dirty;
    std::vector<storage::shared_fd_ptr> new_files;  // files to sync with the next job (new or just opened)
    std::vector<std::string> dirs;                  // ... and their directories
    std::set<std::string> all_dirs;
    std::deque<job_state> jobs;
  };
  struct entry {
    Waiter waiter;
    std::uint64_t log = 0;  // 0: failed before any log (error holds why)
    std::uint64_t end = 0;
    std::string error;
    std::uint64_t handed = 0;  // the job that answers it (hand_off), 0: the book does
  };
  const log_state* find(std::uint64_t number) const {
    for (const auto& l : logs_)
      if (l.number == number) return &l;
    return nullptr;
  }
  bool waits_on(std::uint64_t number) const {
    return std::any_of(waiting_.begin(), waiting_.end(), [&](const entry& e) { return e.log == number; });
  }

  std::deque<log_state> logs_;
  std::deque<entry> waiting_;
  std::uint64_t next_job_ = 1;
  std::optional<std::uint64_t> home_;
  checkpoint retry_;
  dirty_files retry_dirty_;
};

}  // namespace sessionrt::actors
