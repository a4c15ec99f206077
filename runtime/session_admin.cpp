// session_admin: the facade's session administration (runtime.hpp: patch_session,
// fork_session, delete_session, history, derived_title; the gateway's sessions.* methods).
// A call that changes a row holds the key in the router first (take_for_admin): the key's
// actor passivates after its running turn and none starts until the call returns, so the
// next turn reads the changed row; then the store actor changes the row.
#include <caf/all.hpp>
#include <fmt/format.h>

#include "actors/maintenance/manual_archive.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/compaction_planner.hpp"
#include "actors/session/fork_planner.hpp"
#include "actors/session/history_count.hpp"
#include "actors/session/hygiene/display_projection.hpp"
#include "actors/session/queue_settings.hpp"
#include "actors/session/session_model.hpp"
#include "actors/session/session_rollover.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "runtime/runtime_impl.hpp"
#include "storage/archive_names.hpp"
#include "storage/context_page.hpp"
#include "storage/session_paths.hpp"
#include "storage/transcript_header.hpp"
#include "storage/transcript_reader.hpp"

namespace sessionrt::runtime {

using namespace sessionrt::actors;

namespace {

// The router's hold on a key while an admin method rewrites its row: released when it goes
// (on every path out of the method, a hold that was not answered in time included), so the
// key's next actor starts from the new row.
class key_hold {
 public:
  key_hold() = default;
  key_hold(actors::router_actor_type router, std::string key) : router_(std::move(router)), key_(std::move(key)) {}
  key_hold(key_hold&& o) noexcept : router_(std::exchange(o.router_, {})), key_(std::move(o.key_)) {}
  key_hold& operator=(key_hold&& o) noexcept {
    if (this != &o) {
      release();
      router_ = std::exchange(o.router_, {});
      key_ = std::move(o.key_);
    }
    return *this;
  }
  ~key_hold() { release(); }

 private:
  void release() {
    if (router_) caf::anon_send(std::exchange(router_, {}), actors::release_atom::value, key_);
  }
  actors::router_actor_type router_;
  std::string key_;
};

// What the administration calls share: the key's agent and store, its actor passivated (held),
// its row read back.
struct admin_target {
  std::string agent;
  actors::store_actor_type store;
  key_place place;  // the store's sessions dir and files (a shard's, with sessions per shard)
  std::optional<session_entry> row;
  key_hold hold;
};

result<admin_target> take_for_admin(runtime& rt, runtime_impl& impl, caf::scoped_actor& self, const std::string& key) {
  if (impl.stopped) return status(errc::invalid_argument, "the runtime is stopped");
  admin_target t;
  t.agent = agent_of_key(key, impl.settings);
  auto place = place_of_key(impl, key, t.agent);
  if (!place.ok()) return place.error();
  t.place = std::move(*place);
  t.store = t.place.store;
  // The key's actor passivates (after its running turn) and no new one starts until t goes:
  // a chat that arrives meanwhile waits in the router instead of starting from the old row.
  // The hold is released on every path from here, an unanswered one too (the router counts
  // holds, and the release comes after the hold in its mailbox).
  status failed;
  t.hold = key_hold(impl.actors.router, key);
  self->request(impl.actors.router, turn_wait(impl.settings), actors::hold_atom::value, key)
      .receive([](bool) {},
               [&](caf::error& e) { failed = status(errc::io_error, "holding " + key + ": " + self->system().render(e)); });
  if (!failed.ok()) return failed;
  auto row = rt.session(key, t.agent);
  if (!row.ok()) return row.error();
  t.row = std::move(*row);
  return t;
}

// The transcript a row of `key` names ("" when it names none usable), under its sessions dir
// (its agent's, or its shard's).
result<std::string> transcript_of_row(const runtime_impl& impl, const std::string& key, const std::string& agent,
                                      const session_entry& entry) {
  auto place = place_of_key(impl, key, agent);
  if (!place.ok()) return place.error();
  return storage::row_transcript_path(*impl.files, place->sessions_dir, std::string(entry.session_id().value_or("")),
                                      entry.session_file());
}

}  // namespace

result<session_row> runtime::patch_session(const std::string& key, const session_patch& patch) {
  std::optional<actors::queue_mode> mode;
  if (patch.queue_mode && *patch.queue_mode) {
    mode = actors::parse_queue_mode(**patch.queue_mode);
    if (!mode)
      return status(errc::invalid_argument, "queueMode " + **patch.queue_mode +
                                                " is not one of followup, collect, interrupt, steer");
  }
  host_self self{*impl_->sys};
  auto target = take_for_admin(*this, *impl_, self, key);
  if (!target.ok()) return target.error();
  const std::string& agent = target->agent;
  if (patch.archived) {
    const bool is_main = key == "global" || key == actors::build_main_key(agent, impl_->settings.routing.session.main_key);
    SRT_RETURN_IF_ERROR(actors::check_archive_patch(key, target->row ? &*target->row : nullptr,
                                                    patch.expected_session_id, *patch.archived, is_main));
  }
  session_entry entry;
  if (target->row) {
    entry = std::move(*target->row);
  } else {
    entry.set_session_id(impl_->ids.next(key, impl_->time->now_ms(), "", "patch"));
  }
  // OpenClaw applies archived before pinned: archiving unpins, and pinning an archived row fails.
  if (patch.archived) actors::apply_archive_patch(entry, *patch.archived, impl_->time->now_ms());
  if (patch.pinned) SRT_RETURN_IF_ERROR(actors::check_pin_patch(entry, *patch.pinned));
  auto apply = [](const std::optional<std::optional<std::string>>& change, auto set, auto clear) {
    if (!change) return;
    if (*change) set(**change); else clear();
  };
  apply(patch.label, [&](const std::string& v) { entry.set_label(v); }, [&] { entry.clear_label(); });
  apply(patch.display_name, [&](const std::string& v) { entry.set_display_name(v); }, [&] { entry.clear_display_name(); });
  apply(patch.thinking_level, [&](const std::string& v) { entry.set_thinking_level(v); },
        [&] { entry.clear_thinking_level(); });
  apply(patch.queue_mode, [&](const std::string&) { entry.set_queue_mode(actors::queue_mode_name(*mode)); },
        [&] { entry.clear_queue_mode(); });
  // A model set here is the user's choice, as /new <model> makes it (source "user", kept on
  // reset); "provider/model", or a model of the configured provider.
  apply(patch.model,
        [&](const std::string& v) {
          const std::string agent_default =
              actors::default_model(impl_->settings, actors::agent_of_key(key)).provider;
          auto ref = actors::resolve_model_ref(impl_->settings, v, agent_default);
          if (ref) actors::apply_model_selection(entry, {ref->provider, ref->model});
        },
        [&] { actors::apply_model_selection(entry, {"", "", true}); });
  if (patch.pinned) {
    if (!*patch.pinned) entry.erase("pinnedAt");
    else if (!entry.json().contains("pinnedAt")) entry.json()["pinnedAt"] = impl_->time->now_ms();
  }
  entry.set_updated_at(impl_->time->now_ms());
  SRT_RETURN_IF_ERROR(put_row_now(self, target->store, agent, key, entry));
  return session_row{agent, key, std::move(entry)};
}

result<runtime::deleted_session> runtime::delete_session(const std::string& key, bool archive) {
  host_self self{*impl_->sys};
  auto target = take_for_admin(*this, *impl_, self, key);
  if (!target.ok()) return target.error();
  deleted_session out;
  if (!target->row) return out;
  const session_entry& entry = *target->row;
  status failed;
  self->request(target->store, caf::infinite, erase_atom::value, std::vector<std::string>{key},
                std::vector<std::int64_t>{entry.updated_at().value_or(erase_no_updated_at)})
      .receive([&](std::size_t n) { out.deleted = n > 0; },
               [&](caf::error& e) { failed = status(errc::io_error, "removing the row of " + key + ": " + self->system().render(e)); });
  if (!failed.ok()) return failed;
  if (!out.deleted) return status(errc::already_exists, "the session " + key + " changed while it was being deleted; try again");
  if (archive && entry.session_id()) {
    storage::fs& files = *target->place.files;
    const std::string path =
        storage::row_transcript_path(files, target->place.sessions_dir, *entry.session_id(), entry.session_file());
    if (!path.empty()) {
      auto moved = storage::archive_transcript(files, *impl_->time, path, storage::archive_reason::deleted);
      if (moved.ok()) out.archived.push_back(*moved);
      else if (moved.error().code() != errc::not_found) return moved.error().with_context("the row of " + key + " was removed");
    }
  }
  return out;
}


result<session_row> runtime::fork_session(const std::string& parent_key, const std::string& key,
                                          const std::optional<std::string>& label) {
  const std::string parent_agent = agent_of_key(parent_key, impl_->settings);
  auto parent = session(parent_key, parent_agent);
  if (!parent.ok()) return parent.error();
  if (!parent->has_value()) return status(errc::not_found, "no session " + parent_key + " to fork");
  auto parent_path = transcript_of_row(*impl_, parent_key, parent_agent, **parent);
  if (!parent_path.ok()) return parent_path.error();
  host_self self{*impl_->sys};
  auto target = take_for_admin(*this, *impl_, self, key);
  if (!target.ok()) return target.error();
  if (target->row) return status(errc::already_exists, "the session " + key + " exists: a fork starts a new one");
  const std::string& agent = target->agent;
  const std::string* dir = &target->place.sessions_dir;
  const std::int64_t now = impl_->time->now_ms();
  session_entry entry;
  entry.set_session_id(impl_->ids.next(key, now, "", "fork"));
  const std::string session_id(*entry.session_id());
  auto child = storage::successor_transcript_path(*dir, session_id, now);  // as a sub-agent's fork is named
  if (!child.ok()) return child.error();
  actors::fork_request fr;
  fr.parent_path = *parent_path;
  fr.child_path = *child;
  fr.child_header.id = session_id;
  fr.child_header.timestamp_ms = now;
  fr.child_header.cwd = impl_->settings.workspace_dir.empty() ? *dir : impl_->settings.workspace_dir;
  fr.child_header.session_key = key;
  const std::int64_t window = actors::resolve_session_model(impl_->settings, agent, &entry).context_window;
  fr.max_tokens = actors::fork_token_limit(window, actors::effective_reserve(impl_->settings.compaction, window));
  auto forked = actors::write_fork(*target->place.files, fr);
  if (!forked.ok()) return forked.error();
  entry.set_session_file(*child);
  entry.set_parent_session_key(parent_key);
  if (forked->mode != actors::fork_mode::isolated) entry.set_forked_from_parent(true);
  if (label && !label->empty()) entry.set_label(*label);
  entry.set_session_started_at(now);
  entry.set_updated_at(now);
  SRT_RETURN_IF_ERROR(put_row_now(self, target->store, agent, key, entry));
  return session_row{agent, key, std::move(entry)};
}

result<std::optional<std::string>> runtime::derived_title(const std::string& key) {
  const std::string agent = agent_of_key(key, impl_->settings);
  auto row = session(key, agent);
  if (!row.ok()) return row.error();
  if (!row->has_value()) return std::optional<std::string>();
  const session_entry& entry = **row;
  for (std::string_view field : {"label", "displayName", "subject"})
    if (auto v = json::get_string(entry.json(), field); v && !js_trim(*v).empty()) return std::optional<std::string>(*v);
  auto path = transcript_of_row(*impl_, key, agent, entry);
  if (!path.ok()) return path.error();
  if (path->empty()) return std::optional<std::string>();
  auto first = storage::read_first_user_message(*impl_->files, *path);
  if (!first.ok()) return first.error();
  if (!*first) return std::optional<std::string>();
  return actors::hygiene::display_title(**first);
}

result<runtime::session_history> runtime::history(const std::string& key, std::size_t limit, std::size_t offset) {
  const std::string agent = agent_of_key(key, impl_->settings);
  auto row = session(key, agent);
  if (!row.ok()) return row.error();
  if (!row->has_value()) return status(errc::not_found, "no session " + key);
  const session_entry& entry = **row;
  session_history out;
  out.session_id = std::string(entry.session_id().value_or(""));
  if (out.session_id.empty() && !entry.session_file()) return out;
  auto path = transcript_of_row(*impl_, key, agent, entry);
  if (!path.ok()) return path.error();
  if (path->empty()) return status(errc::invalid_argument, "the row of " + key + " names no usable transcript");
  auto reader = storage::transcript_reader::open(*impl_->files, *path);
  if (!reader.ok()) {
    if (reader.error().code() == errc::not_found) return out;  // no turn yet
    return reader.error();
  }
  // What earlier pages of this file counted (storage/context_counts.hpp).
  std::shared_ptr<storage::context_counts::file> counts;
  // A cold transcript's reader reads an in-memory copy: its fd is not one of impl_->files.
  auto info = (*reader)->cold() ? impl_->files->lstat(*path + ".zst") : impl_->files->fstat((*reader)->fd());
  if (info.ok()) {
    counts = impl_->history_counts.of({*path, info->dev, info->ino}, (*reader)->data_end());
    // And the count the session keeps in its row: the first page after a start stops there too.
    actors::remember_history_count(*counts, entry);
  }
  auto page = storage::read_context_page(**reader, {limit, offset}, counts);
  if (!page.ok()) return page.error();
  const bool own_ids = (*reader)->source_version() >= 2;  // version 1 ids are made up at each read
  boost::json::array shown;
  for (auto& item : page->items) {
    shown.push_back(std::move(item.message));
    out.ids.push_back(own_ids ? item.entry_id : "@" + std::to_string(item.entry_offset));
    out.seqs.push_back(item.seq);
    out.offsets.push_back(item.entry_offset);
  }
  out.messages = actors::hygiene::display_messages(shown);
  out.total_messages = page->total;
  out.older = page->older;
  return out;
}

bool runtime::wait_until_held(const std::string& key) {
  if (impl_->stopped) return false;
  host_self self{*impl_->sys};
  bool held = false;
  // The hold comes from another thread's call, which may not have sent it yet: bounded as a
  // wait on a turn (turn_wait.hpp), so a test that expects a hold never made fails.
  self->request(impl_->actors.router, turn_wait(impl_->settings), hold_atom::value, key, settle_atom::value)
      .receive([&](bool b) { held = b; }, [](caf::error&) {});
  return held;
}

}  // namespace sessionrt::runtime
