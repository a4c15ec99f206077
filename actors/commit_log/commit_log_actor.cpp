#include "actors/commit_log/commit_log_actor.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fmt/ranges.h>

#include <chrono>
#include <iterator>
#include <utility>

#include "storage/commit_log/log_record.hpp"
#include "storage/durable_file.hpp"
#include "storage/group_sync.hpp"

namespace sessionrt::actors {

// A worker's job: what to sync (the log's descriptor rides along, keeping the file open).
struct log_sync_job {
  std::uint64_t id = 0;
  storage::shared_fd_ptr log;
  std::string log_path;
  std::vector<storage::shared_fd_ptr> new_files;
  std::vector<std::string> dirs;
  // Answered by the worker once the sync returned, before it reports to the log (group_commit's
  // hand_off): a session's acknowledgement takes one hop, not two.
  std::vector<commit_log_waiter> answer;
};
struct log_checkpoint_job {
  std::vector<storage::shared_fd_ptr> files;
  std::vector<std::string> dirs;
  std::string dir;
  std::vector<std::uint64_t> logs;
  bool sync_home = false;  // one syncfs of the log's filesystem (through `dir`)
  std::size_t recycled = 0;  // how many dropped logs to keep as .free files
};

}  // namespace sessionrt::actors

// Jobs go to this actor's own workers only (in-process, never serialized).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::log_sync_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::log_checkpoint_job)

namespace sessionrt::actors {
namespace {

using self_ptr = commit_log_actor::stateful_pointer<commit_log_state>;
using book_t = group_commit<commit_log_waiter>;

// --- the blocking parts (run by a worker, or by the actor itself without workers) ---

// Makes the new transcripts of a job and the log up to where the job began durable.
std::string run_sync(storage::fs& files, const log_sync_job& job) {
  if (!job.new_files.empty() || !job.dirs.empty()) {
    auto synced = storage::sync_together(files, job.new_files, job.dirs);
    for (const auto& [id, err] : synced.files)
      if (!err.empty()) return "making a new transcript durable: " + err;
    for (const auto& [dir, err] : synced.dirs)
      if (!err.empty()) return "making a new transcript's name durable: " + err;
  }
  status st = files.fdatasync(job.log->fd());
  return st.ok() ? std::string() : fmt::format("syncing commit log {}: {}", job.log_path, st.message());
}

// Makes the checkpoint's transcripts durable, then removes its logs.
std::string run_checkpoint(storage::fs& files, const log_checkpoint_job& job) {
  if (job.sync_home) {
    auto fd = files.open(job.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!fd.ok()) return "checkpoint: " + fd.error().message();
    status st = files.syncfs(*fd).with_context("checkpoint of " + job.dir);
    (void)files.close(*fd);
    if (!st.ok()) return st.message();
  }
  auto synced = storage::sync_together(files, job.files, job.dirs);
  for (const auto& [id, err] : synced.files)
    if (!err.empty()) return "checkpoint: " + err;
  for (const auto& [dir, err] : synced.dirs)
    if (!err.empty()) return "checkpoint: " + err;
  status st = storage::commit_log::recycle_logs(files, job.dir, job.logs, job.recycled);
  return st.ok() ? std::string() : "checkpoint: " + st.message();
}

using sync_worker_actor = caf::typed_actor<caf::reacts_to<flush_atom, log_sync_job>,
                                           caf::reacts_to<checkpoint_atom, log_checkpoint_job>>;

sync_worker_actor::behavior_type log_worker(sync_worker_actor::pointer self, storage::fs* files,
                                            commit_log_actor log) {
  return {
      [self, files, log](flush_atom, log_sync_job& job) {
        std::string error = run_sync(*files, job);
        const std::uint64_t id = job.id;
        auto waiters = std::move(job.answer);
        job = log_sync_job();  // handles released before the answers
        for (auto& w : waiters) self->send(w.to, synced_atom::value, w.file_id, w.seq, error);
        self->send(log, log_synced_atom::value, id, std::move(error));
      },
      [self, files, log](checkpoint_atom, log_checkpoint_job& job) {
        std::string error = run_checkpoint(*files, job);
        job = log_checkpoint_job();
        self->send(log, checkpointed_atom::value, std::move(error));
      },
  };
}

// --- the actor's own steps ---

void send_answers(self_ptr self, std::vector<book_t::answer> answers) {
  for (auto& a : answers)
    self->send(a.waiter.to, synced_atom::value, a.waiter.file_id, a.waiter.seq, std::move(a.error));
}

storage::shared_fd_ptr fd_of_log(commit_log_state& st, std::uint64_t number) {
  for (const auto& [n, fd] : st.log_fds)
    if (n == number) return fd;
  return nullptr;
}

// The stores whose rows a retired log holds write sessions.json with their next window (or
// record at once that it holds them): that log may go only then.
void ask_stores(self_ptr self) {
  auto& st = self->state;
  for (const auto& agent : st.marks.holders_below(st.log_number))
    if (auto it = st.stores.find(agent); it != st.stores.end() && it->second.store)
      self->send(it->second.store, checkpoint_atom::value);
}

std::unique_ptr<storage::commit_log::log_writer> new_writer(const commit_log_config& cfg,
                                                            const storage::commit_log::new_log& log) {
  auto w = std::make_unique<storage::commit_log::log_writer>(*cfg.files, log.fd, log.path, log.length, log.number);
  w->preallocate(cfg.preallocate_bytes, log.allocated);
  return w;
}

// The next log file takes the writes; the current one is retired (its syncs go on).
status rotate(self_ptr self) {
  auto& st = self->state;
  const std::uint64_t number = st.log_number + 1;
  auto made = storage::commit_log::create_log(*st.cfg.files, *st.cfg.time, st.dir, number, st.cfg.state_id);
  if (!made.ok()) {
    spdlog::error("commit log: {}", made.error().message());
    // A log that is still sound takes the writes until a later rotation succeeds; one whose
    // write or sync failed takes none (the next round tries to start a log again).
    if (st.writer && (st.writer->broken() || st.book.current_failed())) st.writer.reset();
    return made.error();
  }
  st.log_fd = std::make_shared<const storage::shared_fd>(*st.cfg.files, made->fd);
  st.log_fds.emplace_back(number, st.log_fd);
  st.writer = new_writer(st.cfg, *made);
  st.log_number = number;
  st.log_header_bytes = made->length;
  st.log_started_ms = st.cfg.time->now_ms();
  st.book.begin_log(number, made->length);
  ask_stores(self);
  return {};
}

std::string relative_path(const commit_log_state& st, const std::string& path) {
  if (!st.prefix.empty() && path.size() > st.prefix.size() && path.compare(0, st.prefix.size(), st.prefix) == 0)
    return path.substr(st.prefix.size());
  return path;
}

// The rows of `r`, after its bytes, into the round (log_format.hpp kRowChange, kStoreWritten).
void add_rows(commit_log_state& st, const commit_log_append& r) {
  namespace cl = storage::commit_log;
  if (!r.store_written && r.rows.empty()) return;
  const auto route = st.stores.find(r.agent);
  if (route == st.stores.end()) {
    spdlog::error("commit log: row changes of agent {}, whose store it does not know: not recorded", r.agent);
    return;
  }
  const std::string& store = route->second.path;
  if (r.store_written) {
    st.scratch.clear();
    cl::encode(st.scratch, cl::store_written{r.store_order, store});
    st.writer->add_record(st.scratch);
    st.marks.written(r.agent, r.store_order);
    return;
  }
  for (const auto& row : r.rows) {
    st.scratch.clear();
    cl::encode_row_change(st.scratch, r.from_store ? cl::kFromStore : cl::kFromSession,
                          r.from_store ? r.store_order : row.seq, store, row.key, row.text);
    st.writer->add_record(st.scratch);
    if (r.from_store)
      st.marks.store_change(st.log_number, r.agent);
    else
      st.marks.session_row(st.log_number, r.agent, row.seq);
  }
}

// A session's rows go to their store once the round is written: that is how the store gets
// them (in their sequence, one batch per store and round).
void send_rows(self_ptr self, std::vector<commit_log_append>& reqs) {
  auto& st = self->state;
  std::map<std::string, row_batch> batches;
  for (auto& r : reqs) {
    if (r.from_store || r.rows.empty()) continue;
    auto& b = batches[r.agent].rows;
    std::move(r.rows.begin(), r.rows.end(), std::back_inserter(b));
  }
  for (auto& [agent, batch] : batches)
    if (auto it = st.stores.find(agent); it != st.stores.end() && it->second.store)
      self->send(it->second.store, log_rows_atom::value, std::move(batch));
}

// Writes the requests that arrived since the last round with one write.
void write_round(self_ptr self) {
  auto& st = self->state;
  if (st.pending.empty()) return;
  auto reqs = std::exchange(st.pending, {});
  auto from = std::exchange(st.pending_from, {});
  if (!st.writer && !st.closed) (void)rotate(self);  // a rotation failed before: try again
  status failed;
  if (st.closed)
    failed = status(errc::invalid_argument, "the commit log is closed (the runtime is stopping)");
  else if (!st.writer)
    failed = status(errc::io_error, fmt::format("no commit log could be started in {}", st.dir));
  // A session's rows are numbered whatever the write does: they go to the store either way.
  for (auto& r : reqs)
    if (!r.from_store)
      for (auto& row : r.rows) row.seq = st.next_row_seq++;
  if (failed.ok()) {
    for (const auto& r : reqs) {
      if (!r.bytes.empty()) {
        st.scratch.clear();
        storage::commit_log::encode_transcript_append(st.scratch, r.new_file ? storage::commit_log::kNewFile : 0,
                                                      r.inode, r.offset, relative_path(st, r.path), r.bytes);
        st.writer->add_record(st.scratch);
      }
      add_rows(st, r);
    }
    if (st.scratch.capacity() > (1u << 20)) std::string().swap(st.scratch);
    failed = st.writer->write();
  }
  send_rows(self, reqs);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    if (!failed.ok()) {
      st.book.failed(std::move(from[i]), failed.message());
      continue;
    }
    auto& r = reqs[i];
    std::optional<std::uint64_t> device;
    if (r.file)
      if (auto dev = r.file->device(*st.cfg.files); dev.ok()) device = *dev;
    st.book.wrote(std::move(from[i]), st.writer->written(), r.file, device, r.new_file || r.sync_file,
                  r.new_file ? storage::path_dirname(r.path) : std::string());
  }
  if (st.writer && st.writer->broken()) (void)rotate(self);
  else if (st.writer && st.writer->written() >= st.cfg.checkpoint_bytes) (void)rotate(self);
}

log_sync_job job_for(commit_log_state& st, book_t::sync_job j) {
  log_sync_job job;
  job.id = j.id;
  job.log = fd_of_log(st, j.log);
  job.log_path = storage::commit_log::log_path(st.dir, j.log);
  job.new_files = std::move(j.new_files);
  job.dirs = std::move(j.dirs);
  return job;
}

void on_log_synced(self_ptr self, std::uint64_t id, const std::string& error);

// Nothing arrived unwritten, every record is answered, no sync or checkpoint runs.
bool settled(const commit_log_state& st) {
  return st.pending.empty() && !st.flush_scheduled && st.book.waiting() == 0 && !st.book.syncs_running() &&
         !st.checkpoint_running;
}

void answer_settles(commit_log_state& st) {
  if (st.settle_waiters.empty() || !settled(st)) return;
  for (auto& rp : std::exchange(st.settle_waiters, {})) rp.deliver(true);
}

// Starts what can start: syncs on idle workers (or here), a checkpoint when one is ready.
void dispatch(self_ptr self) {
  auto& st = self->state;
  send_answers(self, st.book.ready());
  if (st.workers == 0) {
    while (auto j = st.book.next_sync()) {
      const std::uint64_t id = j->id;
      on_log_synced(self, id, run_sync(*st.cfg.files, job_for(st, std::move(*j))));
    }
  } else {
    while (!st.idle.empty()) {
      auto j = st.book.next_sync();
      if (!j) break;
      auto waiters = st.book.hand_off(*j);  // the book's ready() was sent above
      auto worker = caf::actor_cast<sync_worker_actor>(std::move(st.idle.back()));
      st.idle.pop_back();
      auto job = job_for(st, std::move(*j));
      job.answer = std::move(waiters);
      self->send(worker, flush_atom::value, std::move(job));
    }
  }
  if (st.checkpoint_running) return;
  auto cp = st.book.take_checkpoint([&st](std::uint64_t n) { return st.marks.held(n); });
  if (!cp) return;
  // The logs it removes need no more syncs: their descriptors go.
  for (auto n : cp->logs)
    st.log_fds.erase(std::remove_if(st.log_fds.begin(), st.log_fds.end(), [n](const auto& e) { return e.first == n; }),
                     st.log_fds.end());
  log_checkpoint_job job{std::move(cp->files), std::move(cp->dirs), st.dir, std::move(cp->logs), cp->sync_home,
                         st.cfg.recycled_logs};
  if (st.workers == 0) {
    std::string error = run_checkpoint(*st.cfg.files, job);
    if (!error.empty()) {
      spdlog::warn("commit log: {}; retried with the next checkpoint", error);
      st.book.checkpoint_failed({job.logs, job.files, job.dirs, job.sync_home});
    }
    return;
  }
  st.checkpoint_running = true;
  st.running_checkpoint = {job.logs, job.files, job.dirs, job.sync_home};
  self->send(caf::actor_cast<sync_worker_actor>(st.checkpointer), checkpoint_atom::value, std::move(job));
}

void on_log_synced(self_ptr self, std::uint64_t id, const std::string& error) {
  auto& st = self->state;
  if (!error.empty()) spdlog::error("commit log: {}", error);
  send_answers(self, st.book.synced(id, error));
  // No write follows a failed fdatasync in the same file: a new log takes the writes.
  if (st.book.current_failed() && st.writer && !st.closed) (void)rotate(self);
}

void on_append(self_ptr self, commit_log_append& req) {
  auto& st = self->state;
  st.pending_from.push_back({caf::actor_cast<synced_port>(self->current_sender()), req.file ? req.file->id() : 0, req.seq});
  st.pending.push_back(std::move(req));
  if (st.flush_scheduled) return;
  st.flush_scheduled = true;
  if (st.cfg.window_ms > 0)
    self->delayed_send(self, std::chrono::milliseconds(st.cfg.window_ms), flush_atom::value);
  else
    self->send(self, flush_atom::value);  // queued behind every request already in the mailbox
}

void on_tick(self_ptr self) {
  auto& st = self->state;
  if (st.closed) return;
  self->delayed_send(self, std::chrono::milliseconds(st.cfg.checkpoint_interval_ms), tick_atom::value);
  if (st.writer && st.writer->written() > st.log_header_bytes &&
      st.cfg.time->now_ms() - st.log_started_ms >= st.cfg.checkpoint_interval_ms) {
    (void)rotate(self);  // asks the stores
    dispatch(self);
  } else {
    ask_stores(self);  // a retired log still waits for a store's write (one that failed, say)
  }
}

// Everything durable now, every log removed, the log closed (shutdown).
std::string final_checkpoint(self_ptr self) {
  auto& st = self->state;
  write_round(self);
  st.closed = true;
  if (st.checkpoint_running) {  // a checkpoint running on its worker: redone here with the rest
    st.book.checkpoint_failed(std::exchange(st.running_checkpoint, {}));
    st.checkpoint_running = false;
  }
  auto cp = st.book.take_all();
  st.writer.reset();
  st.log_fd.reset();
  st.log_fds.clear();
  // A log holding rows that no sessions.json write covers stays for the next start's replay.
  std::vector<std::uint64_t> kept;
  std::erase_if(cp.logs, [&](std::uint64_t n) { return st.marks.held(n) ? (kept.push_back(n), true) : false; });
  if (!kept.empty())
    spdlog::warn("commit log: {} log(s) kept at shutdown: row changes of {} are not in sessions.json yet (the "
                 "next start applies them)",
                 kept.size(), fmt::join(st.marks.holders_below(~std::uint64_t{0}), ", "));
  log_checkpoint_job job{std::move(cp.files), std::move(cp.dirs), st.dir, std::move(cp.logs), cp.sync_home,
                         st.cfg.recycled_logs};
  std::string error = run_checkpoint(*st.cfg.files, job);
  // Whatever waited is durable in its transcript now, or failed with the checkpoint.
  send_answers(self, st.book.take_waiters(error.empty() ? std::string() : error));
  if (!error.empty()) spdlog::warn("commit log: {}; the next start replays the log", error);
  return error;
}

}  // namespace

commit_log_actor::behavior_type commit_log(self_ptr self, commit_log_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.dir = storage::commit_log::log_dir(st.cfg.state_dir);
  st.prefix = st.cfg.state_dir.empty() ? std::string() : storage::path_join(st.cfg.state_dir, "");
  if (st.prefix.empty() || st.prefix.back() != '/') st.prefix += '/';
  const auto& first = st.cfg.first;
  // The log's filesystem: transcripts there are synced by one syncfs at a checkpoint.
  if (first.fd >= 0)
    if (auto info = st.cfg.files->fstat(first.fd); info.ok()) st.book = group_commit<commit_log_waiter>(info->dev);
  if (first.fd >= 0) {
    st.log_fd = std::make_shared<const storage::shared_fd>(*st.cfg.files, first.fd);
    st.log_fds.emplace_back(first.number, st.log_fd);
    st.writer = new_writer(st.cfg, first);
    st.log_number = first.number;
    st.log_header_bytes = first.length;
    st.log_started_ms = st.cfg.time->now_ms();
    st.book.begin_log(first.number, first.length);
    st.next_row_seq = (first.number << 32) + 1;  // above every row of the logs before it
  }
  st.workers = std::max(0, st.cfg.parallel_syncs);
  const auto me = caf::actor_cast<commit_log_actor>(self);
  auto spawn_worker = [&] {
    return caf::actor_cast<caf::strong_actor_ptr>(st.cfg.files_block
                                                      ? self->spawn<caf::detached + caf::linked>(log_worker, st.cfg.files, me)
                                                      : self->spawn<caf::linked>(log_worker, st.cfg.files, me));
  };
  for (int i = 0; i < st.workers; ++i) st.idle.push_back(spawn_worker());
  if (st.workers > 0) st.checkpointer = spawn_worker();
  if (st.cfg.self_scheduling && st.cfg.checkpoint_interval_ms > 0)
    self->delayed_send(self, std::chrono::milliseconds(st.cfg.checkpoint_interval_ms), tick_atom::value);
  return {
      [self](log_append_atom, commit_log_append& req) { on_append(self, req); },
      [self](checkpoint_atom) -> std::string {
        std::string error = final_checkpoint(self);
        answer_settles(self->state);
        return error;
      },
      [self](flush_atom) {
        self->state.flush_scheduled = false;
        write_round(self);
        dispatch(self);
        answer_settles(self->state);
      },
      [self](tick_atom) {
        on_tick(self);
        answer_settles(self->state);
      },
      [self](log_synced_atom, std::uint64_t id, const std::string& error) {
        self->state.idle.push_back(self->current_sender());
        on_log_synced(self, id, error);
        dispatch(self);
        answer_settles(self->state);
      },
      [self](checkpointed_atom, const std::string& error) {
        auto& st = self->state;
        st.checkpoint_running = false;
        auto done = std::exchange(st.running_checkpoint, {});
        if (!error.empty()) {
          spdlog::warn("commit log: {}; retried with the next checkpoint", error);
          st.book.checkpoint_failed(std::move(done));
        }
        dispatch(self);
        answer_settles(self->state);
      },
      [self](spawned_atom, store_routes& routes) {
        auto& st = self->state;
        for (auto& [agent, route] : routes.by_agent)
          st.stores[agent] = store_route{relative_path(st, route.path), std::move(route.store)};
      },
      [self](settle_atom) -> caf::result<bool> {
        if (settled(self->state)) return true;
        self->state.settle_waiters.push_back(self->make_response_promise());
        return self->state.settle_waiters.back();
      },
  };
}

}  // namespace sessionrt::actors
