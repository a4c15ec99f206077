#include "actors/store/store_actor.hpp"

#include <chrono>

#include "actors/events/event_bus.hpp"
#include "messages/lifecycle_payloads.hpp"

namespace sessionrt::actors {
namespace {

using self_ptr = store_actor_type::stateful_pointer<store_state>;

// The window stretches with the cost of a write: a store whose write takes 30 ms is written
// at most every 120 ms, so writing never takes more than a fifth of the time however large
// sessions.json grows (a 100,000-row store is ~60 MB).
std::int64_t window_ms(const store_state& st) { return std::max(st.cfg.flush_window_ms, 4 * st.last_write_ms); }

void schedule_window(self_ptr self) {
  auto& st = self->state;
  if (st.window_scheduled || !st.cfg.self_flushing) return;
  st.window_scheduled = true;
  self->delayed_send(self, std::chrono::milliseconds(window_ms(st)), flush_atom::value);
}

// Writes the file if dirty and answers the durable waiters. Returns the write's status.
status write_now(self_ptr self) {
  auto& st = self->state;
  status result;
  if (st.dirty) {
    const auto started = std::chrono::steady_clock::now();
    result = st.file->save();
    st.last_write_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (result.ok()) {
      st.dirty = false;
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

// A put that brings the rows to the high-water mark tells the maintenance actor (once, until
// its next erase): a size check, no scan.
void check_high_water(self_ptr self) {
  auto& st = self->state;
  if (st.high_water_told || !st.cfg.maintenance || st.cfg.high_water_rows == 0) return;
  if (st.file->store().size() < st.cfg.high_water_rows) return;
  st.high_water_told = true;
  caf::anon_send(st.cfg.maintenance, high_water_atom::value, st.cfg.agent_id);  // typed: no send() to it
}

void note_change(store_state& st, const std::string& key) { st.changes.note(key, st.file->store().size()); }

// A put changed the row of `key`: written with the window.
void changed(self_ptr self, const std::string& key) {
  note_change(self->state, key);
  self->state.dirty = true;
  schedule_window(self);
  check_high_water(self);
}

// A put that is answered once it is on disk: written at once (with every durable put queued).
caf::typed_response_promise<bool> changed_durably(self_ptr self, const std::string& key) {
  auto& st = self->state;
  note_change(st, key);
  st.dirty = true;
  check_high_water(self);
  st.durable_waiters.push_back(self->make_response_promise<bool>());
  if (!st.immediate_scheduled) {
    st.immediate_scheduled = true;
    self->send(self, write_now_atom::value);
  }
  return st.durable_waiters.back();
}

entry_reply get_row(store_state& st, const std::string& key) {
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
  self->state.file->store().upsert(key, std::move(entry));
  changed(self, key);
}

// Session actors send only texts they wrote with append_row_text; a refused one (a bug)
// leaves the row as it was.
void put_text(self_ptr self, const std::string& key, std::string row_text) {
  if (self->state.file->store().upsert_text(key, std::move(row_text)).ok()) changed(self, key);
}

caf::result<bool> put_text_durably(self_ptr self, const std::string& key, std::string row_text) {
  auto put = self->state.file->store().upsert_text(key, std::move(row_text));
  if (!put.ok()) return caf::make_error(caf::sec::runtime_error, put.error().message());
  return changed_durably(self, key);
}

entry_rows list_rows(store_state& st) {
  entry_rows rows;
  rows.reserve(st.file->store().size());
  for (const auto& r : st.file->store()) rows.emplace_back(std::string(r.key), r.entry);
  st.file->shed_rows();  // reading parsed every row; shed them again
  return rows;
}

row_changes list_changes(store_state& st) {
  auto out = collect_changes(st.file->store(), st.changes.take());
  st.file->shed_rows();  // reading parsed the rows read; shed them again
  return out;
}

// The maintenance actor's row removals: a row updated since its plan (or gone) stays as it is.
// Written at once, so the files of the removed rows may move as soon as this answers.
caf::result<std::size_t> erase_rows(self_ptr self, const std::vector<std::string>& keys,
                                    const std::vector<std::int64_t>& updated_at) {
  auto& store = self->state.file->store();
  std::size_t removed = 0;
  for (std::size_t i = 0; i < keys.size() && i < updated_at.size(); ++i) {
    const session_entry* row = store.find(keys[i]);
    if (!row || row->updated_at().value_or(erase_no_updated_at) != updated_at[i]) continue;
    if (!store.erase(keys[i])) continue;
    ++removed;
    note_change(self->state, keys[i]);
  }
  self->state.high_water_told = false;
  if (removed == 0) return removed;
  self->state.dirty = true;
  if (status s = write_now(self); !s.ok()) return caf::make_error(caf::sec::runtime_error, s.message());
  return removed;
}

caf::result<bool> write_for_stop(self_ptr self) {
  status s = write_now(self);
  if (!s.ok()) return caf::make_error(caf::sec::runtime_error, s.message());
  return true;
}

}  // namespace

store_actor_type::behavior_type store_actor(self_ptr self, std::shared_ptr<storage::session_store_file> file,
                                            store_actor_config cfg) {
  self->state.file = std::move(file);
  self->state.cfg = std::move(cfg);
  return {
      [self](get_atom, const std::string& key) { return get_row(self->state, key); },
      [self](put_atom, const std::string& key, session_entry& entry) { put_row(self, key, std::move(entry)); },
      [self](put_atom, const std::string& key, std::string& row_text) { put_text(self, key, std::move(row_text)); },
      [self](put_atom, const std::string& key, session_entry& entry, flush_atom) -> caf::result<bool> {
        self->state.file->store().upsert(key, std::move(entry));
        return changed_durably(self, key);
      },
      [self](put_atom, const std::string& key, std::string& row_text, flush_atom) {
        return put_text_durably(self, key, std::move(row_text));
      },
      [self](list_atom) { return list_rows(self->state); },
      [self](list_atom, changes_atom) { return list_changes(self->state); },
      [self](flush_atom) {
        self->state.window_scheduled = false;
        (void)write_now(self);
      },
      [self](write_now_atom) {
        self->state.immediate_scheduled = false;
        (void)write_now(self);
      },
      [self](flush_atom, stop_atom) { return write_for_stop(self); },
      [self](erase_atom, const std::vector<std::string>& keys, const std::vector<std::int64_t>& updated_at) {
        return erase_rows(self, keys, updated_at);
      },
  };
}

}  // namespace sessionrt::actors
