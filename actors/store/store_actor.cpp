#include "actors/store/store_actor.hpp"

#include <chrono>

#include "actors/events/event_bus.hpp"

namespace sessionrt::actors {
namespace {

struct store_state {
  std::shared_ptr<storage::session_store_file> file;
  store_actor_config cfg;
  bool dirty = false;
  bool window_scheduled = false;
  bool immediate_scheduled = false;
  std::vector<caf::response_promise> durable_waiters;
  std::int64_t last_write_ms = 0;  // how long the last write took (real time)
};

// The window stretches with the cost of a write: a store whose write takes 30 ms is written
// at most every 120 ms, so writing never takes more than a fifth of the time however large
// sessions.json grows (a 100,000-row store is ~60 MB).
std::int64_t window_ms(const store_state& st) { return std::max(st.cfg.flush_window_ms, 4 * st.last_write_ms); }

void schedule_window(caf::event_based_actor* self, store_state& st) {
  if (st.window_scheduled) return;
  st.window_scheduled = true;
  self->delayed_send(self, std::chrono::milliseconds(window_ms(st)), flush_atom::value);
}

// Writes the file if dirty and answers the durable waiters. Returns the write's status.
status write_now(caf::event_based_actor* self, store_state& st) {
  status result;
  if (st.dirty) {
    const auto started = std::chrono::steady_clock::now();
    result = st.file->save();
    st.last_write_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (result.ok()) {
      st.dirty = false;
      // Rows are kept as their saved text until next used (less than half the memory).
      st.file->shed_rows();
      lifecycle_event e;
      e.type = std::string(event_types::store_flushed);
      e.agent_id = st.cfg.agent_id;
      e.at_ms = st.cfg.time ? st.cfg.time->now_ms() : 0;
      e.data["path"] = st.file->path();
      e.data["rows"] = st.file->store().size();
      publish(self, st.cfg.bus, *st.cfg.hub, std::move(e));
    } else {
      schedule_window(self, st);  // retry at the next window
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

// A put changed the store: written with the window.
void changed(caf::event_based_actor* self, store_state& st) {
  st.dirty = true;
  schedule_window(self, st);
}

// A put that is answered once it is on disk: written at once (with every durable put queued).
caf::response_promise changed_durably(caf::event_based_actor* self, store_state& st) {
  st.dirty = true;
  st.durable_waiters.push_back(self->make_response_promise());
  if (!st.immediate_scheduled) {
    st.immediate_scheduled = true;
    self->send(self, flush_atom::value, spawned_atom::value);
  }
  return st.durable_waiters.back();
}

}  // namespace

caf::behavior store_actor(caf::event_based_actor* self, std::shared_ptr<storage::session_store_file> file,
                          store_actor_config cfg) {
  auto st = std::make_shared<store_state>();
  st->file = std::move(file);
  st->cfg = std::move(cfg);
  return {
      [st](get_atom, const std::string& key) {
        entry_reply r;
        auto row = st->file->store().lookup(key);
        if (!row.ok()) {
          r.error = row.error().message();  // a row that could not be read back: never handed out
        } else if (*row) {
          r.found = true;
          r.entry = **row;
        }
        return r;
      },
      [self, st](put_atom, const std::string& key, session_entry& entry) {
        st->file->store().upsert(key, std::move(entry));
        changed(self, *st);
      },
      [self, st](put_atom, const std::string& key, std::string& row_text) {
        // Session actors send only texts they wrote with append_row_text; a refused one (a
        // bug) leaves the row as it was.
        if (st->file->store().upsert_text(key, std::move(row_text)).ok()) changed(self, *st);
      },
      [self, st](put_atom, const std::string& key, session_entry& entry, flush_atom) -> caf::result<bool> {
        st->file->store().upsert(key, std::move(entry));
        return changed_durably(self, *st);
      },
      [self, st](put_atom, const std::string& key, std::string& row_text, flush_atom) -> caf::result<bool> {
        auto put = st->file->store().upsert_text(key, std::move(row_text));
        if (!put.ok()) return caf::make_error(caf::sec::runtime_error, put.error().message());
        return changed_durably(self, *st);
      },
      [st](list_atom) {
        entry_rows rows;
        rows.reserve(st->file->store().size());
        for (const auto& r : st->file->store()) rows.emplace_back(std::string(r.key), r.entry);
        st->file->shed_rows();  // reading parsed every row; shed them again
        return rows;
      },
      [self, st](flush_atom) {  // the coalescing window closed
        st->window_scheduled = false;
        (void)write_now(self, *st);
      },
      [self, st](flush_atom, spawned_atom) {  // durable acks are waiting
        st->immediate_scheduled = false;
        (void)write_now(self, *st);
      },
      [self, st](flush_atom, stop_atom) -> caf::result<bool> {
        status s = write_now(self, *st);
        if (!s.ok()) return caf::make_error(caf::sec::runtime_error, s.message());
        return true;
      },
  };
}

}  // namespace sessionrt::actors
