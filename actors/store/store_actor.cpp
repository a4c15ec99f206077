#include "actors/store/store_actor.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "actors/events/event_bus.hpp"
#include "messages/lifecycle_payloads.hpp"

namespace sessionrt::actors {

namespace {
boost::json::array first_keys(const std::vector<std::string>& keys) {
  boost::json::array out;
  for (std::size_t i = 0; i < keys.size() && i < 50; ++i) out.emplace_back(keys[i]);
  return out;
}
}  // namespace

boost::json::object store_reloaded::data() const {
  return {{"path", path},
          {"added", first_keys(added)},
          {"changed", first_keys(changed)},
          {"removed", first_keys(removed)},
          {"addedCount", std::int64_t(added.size())},
          {"changedCount", std::int64_t(changed.size())},
          {"removedCount", std::int64_t(removed.size())},
          {"keptRuntime", kept_runtime}};
}

boost::json::object store_edit_refused::data() const { return {{"path", path}, {"cause", cause}}; }

namespace {

using self_ptr = store_actor_type::stateful_pointer<store_state>;

// The window stretches with the cost of a write and the size of the file (write_pace.hpp).
std::int64_t window_ms(const store_state& st) { return st.cfg.pace.wait_ms(st.file->bytes_on_disk(), st.last_write_ms); }

void schedule_window(self_ptr self) {
  auto& st = self->state;
  if (st.window_scheduled || !st.cfg.self_flushing) return;
  st.window_scheduled = true;
  self->delayed_send(self, std::chrono::milliseconds(window_ms(st)), flush_atom::value);
}

std::int64_t now_ms(const store_state& st) { return st.cfg.time ? st.cfg.time->now_ms() : 0; }

void note_change(store_state& st, const std::string& key) {
  st.changes.note(key, st.file->store().size());
  st.file->note_changed(key);
}

void check_high_water(self_ptr self);

// Another program changed the file since the store last read or wrote it: merge its rows (see
// the header). Called before every read and write of the store.
void take_hand_edits(self_ptr self) {
  auto& st = self->state;
  if (!st.cfg.watch_edits) return;
  auto found = st.file->reload_if_changed();
  if (!found.ok()) {
    spdlog::warn("checking {} for changes by another program: {}", st.file->path(), found.error().message());
    return;
  }
  if (!*found) return;
  auto& rep = **found;
  if (!rep.refused.ok()) {
    spdlog::error("{}", rep.refused.message());
    publish(self, st.cfg.bus, *st.cfg.hub,
            payloads::make_event({"", st.cfg.agent_id, ""}, now_ms(st), store_edit_refused{rep.path, rep.refused.message()}));
    return;
  }
  // The merged store is a new one, built from the file: its rows' order numbers start over, so
  // the maintenance picture (keyed by them) is read again whole, not only the edited keys.
  st.changes.replaced();
  std::vector<std::string> edited;
  for (const auto* keys : {&rep.added, &rep.changed, &rep.removed}) edited.insert(edited.end(), keys->begin(), keys->end());
  if (!rep.edited() && rep.kept_ours.empty()) return;
  spdlog::info("{} was changed by another program: took {} added, {} changed, {} removed row(s); kept the runtime's "
               "{} unsaved row(s)",
               rep.path, rep.added.size(), rep.changed.size(), rep.removed.size(), rep.kept_ours.size());
  publish(self, st.cfg.bus, *st.cfg.hub,
          payloads::make_event({"", st.cfg.agent_id, ""}, now_ms(st),
                               store_reloaded{rep.path, rep.added, rep.changed, rep.removed,
                                              std::int64_t(rep.kept_ours.size())}));
  // A live session holds its row: it starts again from the edited one at its next turn.
  if (st.router)
    for (const auto& k : edited) self->send(st.router, passivate_atom::value, k, std::string("sessions.json edited"));
  if (!rep.removed.empty()) st.high_water_told = false;
  st.archived.forget();  // the merged store is counted again when the high-water check needs it
  check_high_water(self);
}

void schedule_edit_check(self_ptr self) {
  auto& st = self->state;
  if (!st.cfg.watch_edits || !st.cfg.self_flushing || st.cfg.edit_check_ms <= 0) return;
  self->delayed_send(self, std::chrono::milliseconds(st.cfg.edit_check_ms), tick_atom::value);
}

// ---- durability batch: the store's side of the commit log (store_actor.hpp) ----

bool logged(const store_state& st) { return static_cast<bool>(st.cfg.commit_log); }

void send_to_log(self_ptr self, commit_log_append a, std::function<void(const std::string&)> done) {
  auto& st = self->state;
  a.agent = st.cfg.agent_id;
  a.from_store = true;
  a.store_order = st.applied_through;
  a.seq = ++st.log_sent;
  if (done) st.log_waiters.emplace_back(a.seq, std::move(done));
  self->send(st.cfg.commit_log, log_append_atom::value, std::move(a));
}

// sessions.json holds every change made or taken so far: a checkpoint may drop the logs that
// hold them, and a replay starts after this.
void log_written(self_ptr self) {
  commit_log_append a;
  a.store_written = true;
  send_to_log(self, std::move(a), {});
}

// The store's own changes, after the last session row it took; `done` once they are durable.
void log_changes(self_ptr self, std::vector<logged_row> rows, std::function<void(const std::string&)> done) {
  commit_log_append a;
  a.rows = std::move(rows);
  send_to_log(self, std::move(a), std::move(done));
}

// Answered (true, or the log's error) once `rows` are durable in the log.
caf::result<bool> logged_durably(self_ptr self, std::vector<logged_row> rows) {
  auto rp = self->make_response_promise<bool>();
  log_changes(self, std::move(rows), [rp](const std::string& error) mutable {
    if (error.empty())
      rp.deliver(true);
    else
      rp.deliver(caf::make_error(caf::sec::runtime_error, "recording the row change in the commit log: " + error));
  });
  return rp;
}

// The log answered the store's appends up to `seq` (in order).
void on_log_answer(self_ptr self, std::uint64_t seq, const std::string& error) {
  auto& waiting = self->state.log_waiters;
  while (!waiting.empty() && waiting.front().first <= seq) {
    auto done = std::move(waiting.front().second);
    waiting.pop_front();
    done(error);
  }
}

// The log waits to drop a log holding this store's rows: the next write records it; with
// nothing to write, sessions.json holds them already.
void on_log_checkpoint(self_ptr self) {
  auto& st = self->state;
  if (!st.dirty) return log_written(self);
  // The window alone, not the rewrite rate's longer wait: the log's file stays on disk until
  // this write. (Under virtual time the host writes.)
  if (st.write_now_scheduled || !st.cfg.self_flushing) return;
  st.write_now_scheduled = true;
  self->delayed_send(self, std::chrono::milliseconds(st.cfg.pace.window_wait_ms(st.last_write_ms)), write_now_atom::value);
}

// Writes the file if dirty and answers the durable waiters. Returns the write's status.
status write_now(self_ptr self) {
  auto& st = self->state;
  status result;
  take_hand_edits(self);
  if (st.dirty) {
    const auto started = std::chrono::steady_clock::now();
    result = st.file->save();
    st.last_write_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (result.ok()) {
      st.dirty = false;
      if (logged(st)) log_written(self);
      // Rows are kept as their saved text until next used (less than half the memory).
      st.file->shed_rows();
      publish(self, st.cfg.bus, *st.cfg.hub,
              payloads::make_event({"", st.cfg.agent_id, ""}, st.cfg.time ? st.cfg.time->now_ms() : 0,
                                   payloads::store_flushed{st.file->path(), std::int64_t(st.file->store().size())}));
    } else {
      schedule_window(self);  // retry at the next window
    }
  }
  auto waiters = std::move(st.durable_waiters);
  st.durable_waiters.clear();
  for (auto& rp : waiters) {
    if (result.ok())
      rp.deliver(true);
    else
      rp.deliver(caf::make_error(caf::sec::runtime_error, result.message()));
  }
  return result;
}

// A put that brings the unarchived rows to the high-water mark tells the maintenance actor
// (once, until they fall below it again or an erase): archived rows do not count, as they do
// not count for the cap. A size check first; the archived rows are counted once (archived_rows),
// the first time the store holds that many rows, and followed put by put after that.
void check_high_water(self_ptr self) {
  auto& st = self->state;
  if (!st.cfg.maintenance || st.cfg.high_water_rows == 0) return;
  const std::size_t rows = st.file->store().size();
  if (rows >= st.cfg.high_water_rows && !st.archived.known()) {
    st.archived.reset(st.file->store());
    st.file->shed_rows();  // counting parsed the rows; shed them again
  }
  if (rows < st.cfg.high_water_rows || st.archived.unarchived(rows) < st.cfg.high_water_rows) {
    st.high_water_told = false;  // below the mark: the next time it is reached is told again
    return;
  }
  if (st.high_water_told) return;
  st.high_water_told = true;
  self->send(st.cfg.maintenance, high_water_atom::value, st.cfg.agent_id);
}

// A put changed the row of `key` (archived: it has archivedAt now): written with the window.
void changed(self_ptr self, const std::string& key, bool archived) {
  self->state.archived.put(key, archived);
  note_change(self->state, key);
  self->state.dirty = true;
  schedule_window(self);
  check_high_water(self);
}

// A put that is answered once it is on disk: written at once (with every durable put queued).
caf::typed_response_promise<bool> changed_durably(self_ptr self, const std::string& key, bool archived) {
  auto& st = self->state;
  st.archived.put(key, archived);
  note_change(st, key);
  st.dirty = true;
  check_high_water(self);
  st.durable_waiters.push_back(self->make_response_promise<bool>());
  if (!st.write_now_scheduled) {
    st.write_now_scheduled = true;
    self->send(self, write_now_atom::value);
  }
  return st.durable_waiters.back();
}

entry_reply get_row(self_ptr self, const std::string& key) {
  take_hand_edits(self);
  auto& st = self->state;
  entry_reply r;
  auto row = st.file->store().lookup(key);
  if (!row.ok()) {
    r.error = row.error().message();  // a row that could not be read back: never handed out
  } else if (*row) {
    r.found = true;
    r.entry = **row;
  }
  return r;
}

void put_row(self_ptr self, const std::string& key, session_entry entry) {
  const bool archived = entry.json().contains("archivedAt");
  self->state.file->store().upsert(key, std::move(entry));
  changed(self, key, archived);
}

// Session actors send only texts they wrote with append_row_text; a refused one (a bug)
// leaves the row as it was.
void put_text(self_ptr self, const std::string& key, std::string row_text) {
  const bool archived = row_text_archived(row_text);
  if (self->state.file->store().upsert_text(key, std::move(row_text)).ok()) changed(self, key, archived);
}

caf::result<bool> put_text_durably(self_ptr self, const std::string& key, std::string row_text) {
  const bool archived = row_text_archived(row_text);
  auto put = self->state.file->store().upsert_text(key, std::move(row_text));
  if (!put.ok()) return caf::make_error(caf::sec::runtime_error, put.error().message());
  return changed_durably(self, key, archived);
}

entry_rows list_rows(self_ptr self) {
  take_hand_edits(self);
  auto& st = self->state;
  entry_rows rows;
  rows.reserve(st.file->store().size());
  for (const auto& r : st.file->store()) rows.emplace_back(std::string(r.key), r.entry);
  st.file->shed_rows();  // reading parsed every row; shed them again
  return rows;
}

row_changes list_changes(self_ptr self) {
  take_hand_edits(self);
  auto& st = self->state;
  auto out = collect_changes(st.file->store(), st.changes.take());
  st.file->shed_rows();  // reading parsed the rows read; shed them again
  return out;
}

// The maintenance actor's row removals: a row updated since its plan (or gone) stays as it is.
// Written at once, so the files of the removed rows may move as soon as this answers.
sessionrt::result<std::vector<std::string>> erase_rows(self_ptr self, const std::vector<std::string>& keys,
                                                       const std::vector<std::int64_t>& updated_at) {
  take_hand_edits(self);
  auto& store = self->state.file->store();
  std::vector<std::string> removed;
  for (std::size_t i = 0; i < keys.size() && i < updated_at.size(); ++i) {
    const session_entry* row = store.find(keys[i]);
    if (!row || row->updated_at().value_or(erase_no_updated_at) != updated_at[i]) continue;
    if (!store.erase(keys[i])) continue;
    removed.push_back(keys[i]);
    self->state.archived.erase(keys[i]);
    note_change(self->state, keys[i]);
  }
  self->state.high_water_told = false;
  if (removed.empty()) return removed;
  self->state.dirty = true;
  if (logged(self->state)) {  // the caller waits for the log (erased_durably); the file follows
    schedule_window(self);
    return removed;
  }
  SRT_RETURN_IF_ERROR(write_now(self));
  return removed;
}

// Batch: an erase is answered once its removals are durable in the commit log.
template <class Reply>
caf::result<Reply> erased_durably(self_ptr self, std::vector<std::string> removed, Reply reply) {
  std::vector<logged_row> rows;
  for (auto& k : removed) rows.push_back({std::move(k), std::string(), 0});
  auto rp = self->make_response_promise<Reply>();
  log_changes(self, std::move(rows), [rp, reply = std::move(reply)](const std::string& error) mutable {
    if (error.empty())
      rp.deliver(std::move(reply));
    else
      rp.deliver(caf::make_error(caf::sec::runtime_error, "recording the removal in the commit log: " + error));
  });
  return rp;
}

// Batch: a put from another actor than a session (a session's rows come from the log) is taken,
// then recorded; a durable one is answered when its record is.
caf::result<bool> put_logged(self_ptr self, const std::string& key, std::string row_text, bool durable) {
  std::vector<logged_row> rows{{key, row_text, 0}};
  put_text(self, key, std::move(row_text));
  if (durable) return logged_durably(self, std::move(rows));
  log_changes(self, std::move(rows), {});
  return true;
}
caf::result<bool> put_logged(self_ptr self, const std::string& key, session_entry entry, bool durable) {
  std::string text;
  storage::session_store::append_row_text(text, key, entry);
  std::vector<logged_row> rows{{key, std::move(text), 0}};
  put_row(self, key, std::move(entry));
  if (durable) return logged_durably(self, std::move(rows));
  log_changes(self, std::move(rows), {});
  return true;
}

// Batch: the sessions' rows, recorded by the log already, in their sequence.
void take_logged_rows(self_ptr self, row_batch& batch) {
  for (auto& row : batch.rows) {
    self->state.applied_through = std::max(self->state.applied_through, row.seq);
    if (!row.text.empty()) put_text(self, row.key, std::move(row.text));  // a session never removes its row
  }
}

caf::result<bool> write_for_stop(self_ptr self) {
  const bool nothing_to_write = !self->state.dirty;
  status s = write_now(self);
  if (s.ok() && nothing_to_write && logged(self->state)) log_written(self);
  if (!s.ok()) return caf::make_error(caf::sec::runtime_error, s.message());
  return true;
}

}  // namespace

store_actor_type::behavior_type store_actor(self_ptr self, std::shared_ptr<storage::session_store_file> file,
                                            store_actor_config cfg) {
  self->state.file = std::move(file);
  self->state.cfg = std::move(cfg);
  schedule_edit_check(self);
  return {
      [self](get_atom, const std::string& key) { return get_row(self, key); },
      [self](put_atom, const std::string& key, session_entry& entry) {
        if (logged(self->state)) return (void)put_logged(self, key, std::move(entry), false);
        put_row(self, key, std::move(entry));
      },
      [self](put_atom, const std::string& key, std::string& row_text) {
        if (logged(self->state)) return (void)put_logged(self, key, std::move(row_text), false);
        put_text(self, key, std::move(row_text));
      },
      [self](put_atom, const std::string& key, session_entry& entry, flush_atom) -> caf::result<bool> {
        if (logged(self->state)) return put_logged(self, key, std::move(entry), true);
        const bool archived = entry.json().contains("archivedAt");
        self->state.file->store().upsert(key, std::move(entry));
        return changed_durably(self, key, archived);
      },
      [self](put_atom, const std::string& key, std::string& row_text, flush_atom) -> caf::result<bool> {
        if (logged(self->state)) return put_logged(self, key, std::move(row_text), true);
        return put_text_durably(self, key, std::move(row_text));
      },
      [self](list_atom) { return list_rows(self); },
      [self](list_atom, changes_atom) { return list_changes(self); },
      [self](list_atom, count_atom) {
        take_hand_edits(self);
        return self->state.file->store().size();
      },
      [self](flush_atom) {
        self->state.window_scheduled = false;
        (void)write_now(self);
      },
      [self](write_now_atom) {
        self->state.write_now_scheduled = false;
        (void)write_now(self);
      },
      [self](flush_atom, stop_atom) { return write_for_stop(self); },
      [self](erase_atom, const std::vector<std::string>& keys,
             const std::vector<std::int64_t>& updated_at) -> caf::result<std::size_t> {
        auto removed = erase_rows(self, keys, updated_at);
        if (!removed.ok()) return caf::make_error(caf::sec::runtime_error, removed.error().message());
        if (logged(self->state) && !removed->empty()) {
          const std::size_t n = removed->size();
          return erased_durably(self, std::move(*removed), n);
        }
        return removed->size();
      },
      [self](erase_atom, const std::vector<std::string>& keys, const std::vector<std::int64_t>& updated_at,
             list_atom) -> caf::result<std::vector<std::string>> {
        auto removed = erase_rows(self, keys, updated_at);
        if (!removed.ok()) return caf::make_error(caf::sec::runtime_error, removed.error().message());
        if (logged(self->state) && !removed->empty()) {
          auto reply = *removed;
          return erased_durably(self, std::move(*removed), std::move(reply));
        }
        return std::move(*removed);
      },
      [self](spawned_atom, passivate_port& router) { self->state.router = std::move(router); },
      [self](tick_atom) {
        take_hand_edits(self);
        schedule_edit_check(self);
      },
      [self](log_rows_atom, row_batch& batch) { take_logged_rows(self, batch); },
      [self](checkpoint_atom) { on_log_checkpoint(self); },
      [self](synced_atom, std::uint64_t, std::uint64_t seq, const std::string& error) { on_log_answer(self, seq, error); },
  };
}

}  // namespace sessionrt::actors
