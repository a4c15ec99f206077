#include "actors/session/session_core.hpp"

#include <array>

#include <spdlog/spdlog.h>

#include <date/tz.h>
#include <utility>
#include <fmt/format.h>

#include "actors/session/chat_commands.hpp"
#include "actors/session/compaction_planner.hpp"
#include "actors/session/fork_planner.hpp"
#include "actors/session/group_display_name.hpp"
#include "actors/session/memory_flush_planner.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/overflow_detector.hpp"
#include "actors/session/reply_stream.hpp"
#include "actors/session/silent_reply.hpp"
#include "actors/session/reset_policy.hpp"
#include "actors/session/reset_trigger.hpp"
#include "actors/session/session_rollover.hpp"
#include "actors/session/token_estimate.hpp"
#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "messages/utf8.hpp"
#include "storage/archive_names.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "messages/iso_time.hpp"
#include "storage/session_store.hpp"
#include "storage/transcript_open.hpp"

namespace sessionrt::actors {

std::optional<session_expiry> expiry_of(const std::string& key, const session_entry& row, const route_facts& route,
                                        const session_reset_config& config, const date::time_zone& zone,
                                        std::int64_t now_ms) {
  const auto policy = resolve_reset_policy(config, resolve_reset_type(key, route.is_group, route.is_thread), route.channel);
  const auto ts = lifecycle_timestamps_of(row);
  auto at = stale_at(ts, policy, zone, now_ms);
  if (!at) return std::nullopt;
  auto fresh = evaluate_freshness(ts, *at, policy, zone);
  return session_expiry{*at, fresh.stale_reason ? std::string(session_end_reason_name(*fresh.stale_reason)) : ""};
}

route_facts facts_from_row(const std::string& key, const session_entry& row) {
  route_facts f;
  f.channel = std::string(row.channel().value_or(row.last_channel().value_or("")));
  f.chat_type = std::string(row.chat_type().value_or("direct"));
  f.is_group = f.chat_type == "group" || f.chat_type == "channel";
  f.is_thread = key.find(":thread:") != std::string::npos;
  return f;
}

session_core::session_core(std::string key, std::optional<session_entry> row,
                           std::shared_ptr<const session_core_deps> deps, publish_now_fn publish_now)
    : key_(std::move(key)), row_(std::move(row)), deps_(std::move(deps)), publish_now_(std::move(publish_now)) {}

session_core::~session_core() { (void)close(); }

storage::shared_fd_ptr session_core::transcript_handle() const {
  return transcript_ ? transcript_->shared_fd() : nullptr;
}

std::uint64_t session_core::transcript_file_id() const {
  return transcript_ && transcript_->shared_fd() ? transcript_->shared_fd()->id() : 0;
}

void session_core::note_synced(std::uint64_t seq, bool dir_synced) {
  if (!transcript_) return;
  transcript_->note_synced(seq, dir_synced);
  if (!log_) return;
  auto& sent = log_->sent;
  std::size_t n = 0;
  for (; n < sent.size() && sent[n].first <= seq; ++n) log_->acked_end = std::max(log_->acked_end, sent[n].second);
  if (n == 0) return;
  sent.erase(sent.begin(), sent.begin() + static_cast<std::ptrdiff_t>(n));
  log_->new_file = log_->opened = false;
}

payloads::event_subject session_core::subject() const {
  return {key_, deps_->agent_id, session_id()};  // also while trim() left the row to the store
}

std::string session_core::next_session_id(std::int64_t now_ms, std::string_view purpose) const {
  return deps_->ids.next(key_, now_ms, row_ ? row_->session_id().value_or("") : std::string_view(), purpose);
}

std::string session_core::transcript_path_for(const std::string& session_id) const {
  const bool is_row = row_ && row_->session_id() == std::optional<std::string_view>(session_id);
  if (is_row && row_->session_file())
    return storage::row_transcript_path(*deps_->files, deps_->sessions_dir, session_id, row_->session_file());
  // A Telegram topic's session lives in <sessionId>-topic-<topicId>.jsonl, as OpenClaw names it.
  if (auto topic = actors::telegram_topic_id(key_))
    if (auto path = storage::topic_transcript_path(deps_->sessions_dir, session_id, *topic); path.ok()) return *path;
  return storage::row_transcript_path(*deps_->files, deps_->sessions_dir, session_id, std::nullopt);
}

status session_core::open_current(core_effects& fx) {
  lock_busy_.reset();
  if (transcript_) return {};
  if (!row_ || !row_->session_id()) return status(errc::internal, "no session id to open");
  const std::string id(*row_->session_id());
  const std::string path = transcript_path_for(id);
  if (path.empty())
    return status(errc::unsafe_path, fmt::format("session id {} of {} cannot name a transcript file", id, key_));
  if (lock_) {
    // Trimmed: the lock is still held — for this file, as the row changes only here; if the
    // row moved to another file anyway, that file is locked afresh.
    auto lock_path = storage::write_lock_path(*deps_->files, path);
    if (!lock_path.ok() || *lock_path != lock_->lock_path()) {
      (void)lock_->release();
      lock_.reset();
    }
  }
  const bool fresh_lock = !lock_;
  if (fresh_lock) SRT_RETURN_IF_ERROR(acquire_lock(path, fx));
  // Created when missing, repaired when its tail is torn (also after a trim: another program
  // may have removed or damaged the file meanwhile).
  header_fields h;
  h.id = id;
  h.timestamp_ms = deps_->time->now_ms();
  h.cwd = deps_->settings->workspace_dir.empty() ? deps_->sessions_dir : deps_->settings->workspace_dir;
  h.session_key = key_;
  storage::open_check check;
  check.verified = deps_->verified.get();
  auto opened = storage::open_or_create_transcript(*deps_->files, *deps_->time, path, h, transcript_opts(), check);
  auto drop_fresh_lock = [&] {  // a lock taken for a file that did not open is not kept
    if (!fresh_lock) return;
    (void)lock_->release();
    lock_.reset();
  };
  if (!opened.ok()) {
    drop_fresh_lock();
    return opened.error();
  }
  if (opened->repair) {
    const storage::repair_report& rep = *opened->repair;
    spdlog::warn("{}: {}", key_, rep.summary());
    fx.events.push_back(event(payloads::transcript_repaired{path, rep.summary(), std::int64_t(rep.dropped.size()),
                                                            std::int64_t(rep.torn_tail_bytes),
                                                            rep.dropped_path.value_or("")}));
  }
  auto ctx = opened->file->context();
  if (!ctx.ok()) {
    drop_fresh_lock();
    return ctx.error();
  }
  context_ = std::move(ctx->messages);
  clean_upto_ = 0;  // a new context: its cleanliness is unknown
  runs_seen_.add_from_context(context_);  // a retried run's line, written by a previous owner
  transcript_ = std::move(opened->file);
  if (!ctx->cycle_detected) note_opened_context(ctx->total_messages);
  // The time the session began by its transcript's header, for a row that does not say
  // (sessionStartedAt missing: a legacy row) [R§4.2]; a file made just now says nothing.
  header_started_ms_.reset();
  if (!opened->created)
    if (auto ts = json::get_string(transcript_->header(), "timestamp")) header_started_ms_ = parse_iso_ms(*ts);
  return {};
}

status session_core::acquire_lock(const std::string& path, core_effects& fx) {
  storage::write_lock_options lo = deps_->settings->session.write_lock;
  lo.max_hold_ms = std::max(lo.max_hold_ms, kSessionLockMaxHoldMs);
  lo.on_contended = [&](const storage::lock_contention& c) {
    payloads::lock_contended p;
    p.lock_path = c.inspection.lock_path;
    if (c.inspection.pid) p.pid = *c.inspection.pid;
    p.alive = c.inspection.pid_alive;
    if (c.inspection.age_ms) p.age_ms = *c.inspection.age_ms;
    p.reasons = c.inspection.reasons_text();
    fx.events.push_back(event(p));
  };
  // One attempt, never waiting here: the actor schedules the retries (lock_busy()).
  auto attempt = storage::try_acquire_write_lock(*deps_->files, *deps_->time, *deps_->probe, path, lo);
  if (!attempt.ok()) return attempt.error();  // final (a stale lock that cannot be removed, I/O)
  if (auto* busy = std::get_if<storage::lock_busy>(&*attempt)) {
    lock_busy_ = std::make_unique<storage::lock_busy>(std::move(*busy));
    // As a caller that does not retry sees it (a system event): one attempt, no wait.
    return storage::lock_timeout_error(0, lock_busy_->holder);
  }
  lock_ = std::move(std::get<storage::write_lock>(*attempt));
  return {};
}

storage::transcript_options session_core::transcript_opts() const {
  storage::transcript_options to;
  to.mode = deps_->settings->storage.durability;
  to.max_line_bytes = deps_->settings->storage.max_line_bytes;
  return to;
}

status session_core::settle_transcript() {
  // sync() makes no syscall when everything written is durable already.
  return deps_->settings->storage.durability == storage::durability::none ? transcript_->flush() : transcript_->sync();
}

void session_core::note_closed_clean() {
  if (!deps_->verified) return;
  if (auto stamp = transcript_->clean_stamp()) deps_->verified->note(transcript_->path(), *stamp);
}

status session_core::close_transcript() {
  status st;
  if (transcript_) {
    st = settle_transcript();
    if (st.ok()) note_closed_clean();
    transcript_.reset();
  }
  log_.reset();
  context_.clear();
  clean_upto_ = 0;  // a new context: its cleanliness is unknown
  if (lock_) {
    (void)lock_->release();
    lock_.reset();
  }
  return st;
}

status session_core::close() { return close_transcript(); }

bool session_core::trim() {
  if (!transcript_) return false;
  if (!settle_transcript().ok()) return false;  // kept open: the next turn's commit reports the error
  note_closed_clean();
  transcript_.reset();
  log_.reset();
  context_ = boost::json::array();  // clear() would keep the capacity
  clean_upto_ = 0;  // a new context: its cleanliness is unknown
  patch_memo_.reset();
  row_text_.reset();
  if (row_ && row_sent_) {  // the store holds this very row: keep only its sessionId
    stored_row_id_ = std::string(row_->session_id().value_or(""));
    row_.reset();
  }
  return true;
}

void session_core::restore_row(std::optional<session_entry> row) {
  row_ = std::move(row);
  row_sent_ = false;
  stored_row_id_.reset();
}

std::string session_core::session_id() const {
  if (stored_row_id_) return *stored_row_id_;
  return row_ ? std::string(row_->session_id().value_or("")) : std::string();
}

void session_core::set_fork_parent(std::string parent_key, const std::optional<session_entry>& parent_row) {
  if (!parent_row || !parent_row->session_id()) return;  // nothing to fork: the thread starts empty
  const std::string id(*parent_row->session_id());
  std::string path = storage::row_transcript_path(*deps_->files, deps_->sessions_dir, id, parent_row->session_file());
  fork_parent_key_ = std::move(parent_key);
  fork_parent_path_ = std::move(path);
}

status session_core::start_new_session(const std::string& old_id, core_effects& fx) {
  if (old_id.empty() && !fork_parent_path_.empty() && row_ && row_->session_id()) {
    // A thread's first session: the parent's active branch first (or an isolated start).
    const std::string id(*row_->session_id());
    fork_request fr;
    fr.parent_path = std::exchange(fork_parent_path_, std::string());
    fr.child_path = transcript_path_for(id);
    fr.child_header.id = id;
    fr.child_header.timestamp_ms = deps_->time->now_ms();
    fr.before_ms = fr.child_header.timestamp_ms;  // the parent's work of this very instant is concurrent
    fr.child_header.cwd = deps_->settings->workspace_dir.empty() ? deps_->sessions_dir : deps_->settings->workspace_dir;
    fr.child_header.session_key = key_;
    const std::int64_t window = model().context_window;
    fr.max_tokens = fork_token_limit(window, effective_reserve(deps_->settings->compaction, window));
    if (!fr.child_path.empty() && !deps_->files->lstat(fr.child_path).ok()) {
      auto forked = write_fork(*deps_->files, fr);
      if (!forked.ok()) return forked.error().with_context("forking the thread from " + fork_parent_key_);
      row_->set_parent_session_key(fork_parent_key_);
      if (forked->mode != fork_mode::isolated) row_->set_forked_from_parent(true);
    }
  }
  // The previous session's file: the open transcript (after truncateAfterCompaction that is a
  // successor, <ISO>_<id>.jsonl), else <id>.jsonl.
  std::string old_path = transcript_ ? transcript_->path() : std::string();
  SRT_RETURN_IF_ERROR(close_transcript());
  if (old_path.empty() && !old_id.empty()) {
    if (auto path = storage::transcript_path(deps_->sessions_dir, old_id); path.ok()) old_path = *path;
  }
  // Either form: a transcript kept compressed is archived as it is (cold_transcript.hpp).
  if (!old_path.empty() && storage::transcript_exists(*deps_->files, old_path)) {
    auto archived = storage::archive_transcript(*deps_->files, *deps_->time, old_path, storage::archive_reason::reset);
    if (!archived.ok()) return archived.error().with_context("archiving the previous transcript");
  }
  return open_current(fx);
}

session_model session_core::model() const {
  return resolve_session_model(*deps_->settings, agent_of_key(key_), row_ ? &*row_ : nullptr);
}

std::string session_core::system_prompt() const { return system_prompt_of(*deps_->settings, agent_of_key(key_)); }

result<std::string> session_core::append_with_event(const boost::json::object& message, core_effects& fx) {
  auto id = transcript_->append_message(message);
  if (!id.ok()) return id;
  // Written before it is announced: whoever the event wakes (the gateway's session.message
  // push reads the file) finds the line. A failed write took the line back, with any other
  // line still buffered; the cached context follows the file again (unless a model call holds
  // it: it comes back as it went, which the file still matches).
  if (status written = transcript_->flush(); !written.ok()) {
    if (!in_flight_) reload_context();
    return written;
  }
  if (wants(event_types::message_appended))
    fx.events.push_back(
        event(payloads::message_appended{*id, std::string(json::get_string(message, "role").value_or(""))}));
  return id;
}

void session_core::reload_context() {
  if (auto ctx = transcript_->context(); ctx.ok()) {
    context_ = std::move(ctx->messages);
    clean_upto_ = 0;  // a new context: its cleanliness is unknown
  }
}

result<const boost::json::object*> session_core::append_and_track(boost::json::object& message, core_effects& fx) {
  if (auto id = append_with_event(message, fx); !id.ok()) return id.error();
  context_.emplace_back(std::move(message));
  return &context_.back().get_object();
}

const boost::json::object& session_core::inbound_patch_for(const chat_event& ev, const route_facts& route) {
  // Everything inbound_patch() reads; the row's subject only where it reads it.
  const std::string_view row_subject =
      route.is_group && ev.subject.empty() && row_ ? row_->subject().value_or("") : std::string_view();
  const std::array<std::string_view, 12> inputs{
      route.chat_type, route.channel, route.peer_id,   route.account_id, route.thread_id, ev.to,
      ev.sender_id,    ev.peer_id,    ev.subject,      ev.display_name,  row_subject,
      route.is_group ? std::string_view("group") : std::string_view()};
  if (!patch_memo_) patch_memo_ = std::make_unique<text_keyed_memo<boost::json::object, 12>>();
  return patch_memo_->get(inputs, [&] { return inbound_patch(ev, route); });
}

boost::json::object session_core::inbound_patch(const chat_event& ev, const route_facts& route) const {
  boost::json::object p;
  p["chatType"] = route.chat_type;
  if (!route.channel.empty()) {
    const std::string to = ev.to.empty() ? route.channel + ":" + route.peer_id : ev.to;
    boost::json::object delivery{{"channel", route.channel}, {"to", to}};
    if (!route.account_id.empty()) delivery["accountId"] = route.account_id;
    if (!route.thread_id.empty()) delivery["threadId"] = route.thread_id;
    p["deliveryContext"] = std::move(delivery);
    p["lastChannel"] = route.channel;
    p["lastTo"] = to;
    if (!route.account_id.empty()) p["lastAccountId"] = route.account_id;
    boost::json::object origin{{"provider", route.channel}, {"surface", route.channel}, {"chatType", route.chat_type}};
    const std::string& sender = ev.sender_id.empty() ? ev.peer_id : ev.sender_id;
    if (!sender.empty()) origin["from"] = route.channel + ":" + sender;
    origin["to"] = to;
    if (!route.account_id.empty()) origin["accountId"] = route.account_id;
    p["origin"] = std::move(origin);
  }
  if (route.is_group) {
    if (!route.channel.empty()) p["channel"] = route.channel;
    p["groupId"] = route.peer_id;
    if (!ev.subject.empty()) p["subject"] = ev.subject;
    // OpenClaw's group label, from this event's subject or the one the row kept.
    const std::string subject =
        !ev.subject.empty() ? ev.subject : row_ ? std::string(row_->subject().value_or("")) : std::string();
    p["displayName"] = group_display_name(route.channel, subject, route.peer_id);
  } else if (!ev.display_name.empty() && p.contains("origin")) {
    p["origin"].as_object()["label"] = ev.display_name;  // the sender, as the channel names them
  }
  return p;
}

void session_core::finish_effects(core_effects& fx, const route_facts& route) {
  fx.store_put = true;
  fx.store_durable = deps_->settings->storage.store_durable_ack;
  fx.stale_at.reset();
  fx.stale_reason.clear();
  if (!row_ || !deps_->zone) return;
  if (auto ex = expiry_of(key_, *row_, route, deps_->settings->session.reset, *deps_->zone, deps_->time->now_ms())) {
    fx.stale_at = ex->at_ms;
    fx.stale_reason = ex->reason;
  }
}

void session_core::refused_effects(core_effects& fx) {
  finish_effects(fx, last_route_);
  fx.store_put = fx.store_durable = false;
}

status session_core::durability_commit(core_effects& fx, bool turn_end) {
  if (!transcript_) return {};
  status st = deps_->settings->storage.durability == storage::durability::batch ? transcript_->flush()
                                                                                : transcript_->commit();
  if (!st.ok()) {
    reload_context();  // the failed appends were rolled back in the file
    return st;
  }
  // Before the model call a batch record is built only if the call waits (the actor asks
  // log_record_while_waiting()): a call answered at once leaves it to the turn's record.
  if (!turn_end) return {};
  transcript_->release_buffer();  // the turn's lines are written; an idle session keeps no buffer
  return log_unacked() ? log_record(fx) : status();
}

bool session_core::log_unacked() const {
  return deps_->settings->storage.durability == storage::durability::batch && transcript_ &&
         (transcript_->durable_seq() < transcript_->written_seq() || transcript_->dir_unsynced());
}

std::optional<commit_log_append> session_core::log_record_while_waiting() {
  if (!log_unacked()) return std::nullopt;
  core_effects fx;
  if (!log_record(fx).ok()) return std::nullopt;  // the turn's own record tries again
  return std::move(fx.log_append);
}

status session_core::log_record(core_effects& fx) {
  const storage::shared_fd_ptr& handle = transcript_->shared_fd();
  if (!log_ || log_->file_id != handle->id()) {
    auto info = deps_->files->fstat(handle->fd());
    if (!info.ok()) return info.error().with_context("making " + transcript_->path() + " durable");
    log_ = std::make_unique<log_position>();
    log_->file_id = handle->id();
    log_->inode = info->ino;
    // A file this writer created, never synced: its records start at 0 (its header too) and
    // the log makes its name durable. Otherwise the file is synced with its first record: what
    // it held when it was opened may end in an earlier process's unlogged tail.
    log_->new_file = transcript_->dir_unsynced();
    log_->opened = !log_->new_file;
    log_->acked_end = log_->new_file ? 0 : transcript_->reader().data_end() - transcript_->stats().bytes_written;
  }
  // Everything past the acknowledged end: a record that failed is carried by the next one.
  const std::uint64_t end = transcript_->reader().data_end();
  commit_log_append rec;
  rec.file = handle;
  rec.path = transcript_->path();
  rec.inode = log_->inode;
  rec.offset = log_->acked_end;
  rec.seq = transcript_->written_seq();
  rec.new_file = log_->new_file;
  rec.sync_file = log_->opened;
  if (auto kept = transcript_->take_written(log_->acked_end)) {
    rec.bytes = std::move(*kept);
  } else if (end > log_->acked_end) {
    auto bytes = storage::pread_all(*deps_->files, handle->fd(), end - log_->acked_end, log_->acked_end);
    if (!bytes.ok()) return bytes.error().with_context("making " + transcript_->path() + " durable");
    rec.bytes = std::move(*bytes);
  }
  log_->sent.emplace_back(rec.seq, end);
  fx.log_append = std::move(rec);
  return {};
}

void session_core::note_new_session(const std::string& old_id, const rollover_result& roll, turn_outcome& out,
                                    core_effects& fx) {
  out.new_session = true;
  out.session_id = std::string(row_->session_id().value_or(""));
  if (old_id.empty()) {
    fx.events.push_back(event(payloads::session_created{}));
    return;
  }
  out.reset_reason = roll.reason ? std::string(session_end_reason_name(*roll.reason)) : "new";
  fx.events.push_back(event(payloads::session_reset{out.reset_reason, old_id, out.session_id}));
}

void session_core::row_for_store(core_effects& fx) {
  fx.store_text.clear();
  // The actor sends the row whenever store_put is set (as this text, or as the object).
  row_sent_ = fx.store_put && row_;
  if (!fx.store_put || !row_) return;
  note_history_count();
  // The text session_store::append_row_text makes, from the members that changed.
  if (!row_text_) row_text_ = std::make_unique<row_text_memo>();
  std::string text;
  // Invalid UTF-8 would not parse back in the store: such a row goes as the object.
  if (row_text_->append(text, key_, row_->json())) fx.store_text = std::move(text);
}

void session_core::system_turn(const system_event& ev, turn_outcome& out, core_effects& fx) {
  rollover_input in;
  in.current = row_ ? &*row_ : nullptr;
  in.session_key = key_;
  switch (ev.kind) {
    case system_event_kind::heartbeat: in.kind = inbound_kind::heartbeat; break;
    case system_event_kind::cron: in.kind = inbound_kind::cron_event; break;
    case system_event_kind::exec: in.kind = inbound_kind::exec_event; break;
  }
  // An archived row takes no system work (OpenClaw fails the run: turn.failed here), and its
  // notice is not queued: nothing is kept for a session that is not restored.
  if (auto refused = archived_row_refusal(key_, in.current, in.kind)) {
    fx.events.push_back(event(payloads::turn_failed{refused->message()}));
    out.st = std::move(*refused);
    refused_effects(fx);
    return;
  }
  in.now_ms = deps_->time->now_ms();
  in.new_session_id = next_session_id(in.now_ms, "system");
  in.transcript_path = [this](std::string_view id) { return transcript_path_for(std::string(id)); };
  const bool existed = row_.has_value();
  rollover_result roll = row_ ? roll_session(in, std::move(*row_)) : roll_session(in);  // in place, as in chat()
  row_ = std::move(roll.entry);
  if (!existed) fx.events.push_back(event(payloads::session_created{}));
  if (!ev.text.empty()) queued_.push_back(ev.text);
  finish_effects(fx, last_route_);
}

}  // namespace sessionrt::actors
