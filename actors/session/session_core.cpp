#include "actors/session/session_core.hpp"

#include <date/tz.h>
#include <fmt/format.h>

#include "actors/session/chat_commands.hpp"
#include "actors/session/compaction_planner.hpp"
#include "actors/session/memory_flush_planner.hpp"
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
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/session_store.hpp"
#include "storage/transcript_open.hpp"

namespace sessionrt::actors {
namespace {

// Locks live as long as the session actor; they must not look abandoned to other processes
// while it idles (hold-exceeded makes other acquirers fail at once instead of waiting).
constexpr std::int64_t kSessionLockMaxHoldMs = 7LL * 24 * 3600 * 1000;

// The reply as delivered: its text blocks, one per line.
std::string reply_text(const boost::json::object& message) { return message_text(message.if_contains("content"), "\n"); }

// The user's message as the model sees it this turn: runtime context and queued notices go
// in front, the stored message stays what the user sent.
void prefix_for_model(boost::json::object& message, const std::string& prefix) {
  if (prefix.empty()) return;
  auto* content = message.if_contains("content");
  if (!content) return;
  if (content->is_string()) {
    *content = prefix + "\n\n" + std::string(content->get_string());
  } else if (content->is_array()) {
    content->get_array().insert(content->get_array().begin(), boost::json::value(text_block(prefix)));
  }
}

}  // namespace

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
  if (transcript_) transcript_->note_synced(seq, dir_synced);
}

lifecycle_event session_core::event(std::string_view type) const {
  lifecycle_event e;
  e.type = std::string(type);
  e.session_key = key_;
  e.agent_id = deps_->agent_id;
  e.session_id = row_ ? std::string(row_->session_id().value_or("")) : std::string();
  e.at_ms = deps_->time->now_ms();
  return e;
}

std::string session_core::transcript_path_for(const std::string& session_id) const {
  if (row_ && row_->session_id() == std::optional<std::string_view>(session_id))
    if (auto file = row_->session_file()) {
      auto confined = storage::confine_session_file(*deps_->files, deps_->sessions_dir, std::string(*file));
      if (confined.ok()) return *confined;
    }
  auto path = storage::transcript_path(deps_->sessions_dir, session_id);
  return path.ok() ? *path : std::string();
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
  auto opened = storage::open_or_create_transcript(*deps_->files, *deps_->time, path, h, transcript_opts());
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
    auto e = event(event_types::transcript_repaired);
    e.data["path"] = path;
    e.data["summary"] = opened->repair->summary();
    e.data["droppedLines"] = opened->repair->dropped.size();
    e.data["tornTailBytes"] = opened->repair->torn_tail_bytes;
    fx.events.push_back(std::move(e));
  }
  auto ctx = opened->file->context();
  if (!ctx.ok()) {
    drop_fresh_lock();
    return ctx.error();
  }
  context_ = std::move(ctx->messages);
  transcript_ = std::move(opened->file);
  return {};
}

status session_core::acquire_lock(const std::string& path, core_effects& fx) {
  storage::write_lock_options lo = deps_->settings->session.write_lock;
  lo.max_hold_ms = std::max(lo.max_hold_ms, kSessionLockMaxHoldMs);
  lo.on_contended = [&](const storage::lock_contention& c) {
    auto e = event(event_types::lock_contended);
    e.data["lockPath"] = c.inspection.lock_path;
    e.data["pid"] = c.inspection.pid ? boost::json::value(*c.inspection.pid) : boost::json::value(nullptr);
    e.data["alive"] = c.inspection.pid_alive;
    e.data["ageMs"] = c.inspection.age_ms ? boost::json::value(*c.inspection.age_ms) : boost::json::value(nullptr);
    e.data["reasons"] = c.inspection.reasons_text();
    fx.events.push_back(std::move(e));
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

status session_core::close_transcript() {
  status st;
  if (transcript_) {
    st = settle_transcript();
    transcript_.reset();
  }
  context_.clear();
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
  transcript_.reset();
  context_ = boost::json::array();  // clear() would keep the capacity
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

status session_core::start_new_session(const std::string& old_id, core_effects& fx) {
  // The previous session's file: the open transcript (after truncateAfterCompaction that is a
  // successor, <ISO>_<id>.jsonl), else <id>.jsonl.
  std::string old_path = transcript_ ? transcript_->path() : std::string();
  SRT_RETURN_IF_ERROR(close_transcript());
  if (old_path.empty() && !old_id.empty()) {
    if (auto path = storage::transcript_path(deps_->sessions_dir, old_id); path.ok()) old_path = *path;
  }
  if (!old_path.empty() && deps_->files->lstat(old_path).ok()) {
    auto archived = storage::archive_transcript(*deps_->files, *deps_->time, old_path, storage::archive_reason::reset);
    if (!archived.ok()) return archived.error().with_context("archiving the previous transcript");
  }
  return open_current(fx);
}

const boost::json::object& session_core::append_and_track(boost::json::object& message, core_effects& fx) {
  auto id = transcript_->append_message(message);
  if (!id.ok()) return message;  // reported by the commit that follows (or the caller)
  if (wants(event_types::message_appended)) {
    auto e = event(event_types::message_appended);
    e.data["entryId"] = *id;
    e.data["role"] = json::get_string(message, "role").value_or("");
    fx.events.push_back(std::move(e));
  }
  context_.emplace_back(std::move(message));
  return context_.back().get_object();
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

status session_core::durability_commit(core_effects& fx) {
  if (!transcript_) return {};
  status st = deps_->settings->storage.durability == storage::durability::batch ? transcript_->flush()
                                                                                : transcript_->commit();
  if (!st.ok()) {
    // The failed appends were rolled back in the file; rebuild the context to match it.
    if (auto ctx = transcript_->context(); ctx.ok()) context_ = std::move(ctx->messages);
    return st;
  }
  transcript_->release_buffer();  // the turn's lines are written; an idle session keeps no buffer
  if (deps_->settings->storage.durability == storage::durability::batch &&
      (transcript_->durable_seq() < transcript_->written_seq() || transcript_->dir_unsynced())) {
    fx.sync_seq = transcript_->written_seq();
    if (transcript_->dir_unsynced()) fx.sync_dir = storage::path_dirname(transcript_->path());
  }
  return {};
}

void session_core::note_new_session(const std::string& old_id, const rollover_result& roll, turn_outcome& out,
                                    core_effects& fx) {
  out.new_session = true;
  out.session_id = std::string(row_->session_id().value_or(""));
  if (old_id.empty()) {
    fx.events.push_back(event(event_types::session_created));
    return;
  }
  auto e = event(event_types::session_reset);
  out.reset_reason = roll.reason ? std::string(session_end_reason_name(*roll.reason)) : "new";
  e.data["reason"] = out.reset_reason;
  e.data["oldSessionId"] = old_id;
  e.data["newSessionId"] = out.session_id;
  fx.events.push_back(std::move(e));
}

turn_outcome session_core::chat(const chat_event& ev, const route_facts& route, core_effects& fx) {
  if (needs_row()) {
    turn_outcome out;
    out.session_key = key_;
    out.st = status(errc::internal, "the session's row was not restored after a trim");
    return out;
  }
  turn_outcome out = chat_turn(ev, route, fx);
  row_for_store(fx);
  return out;
}

void session_core::system(const system_event& ev, core_effects& fx) {
  if (needs_row()) return;  // the actor restores the row first
  system_turn(ev, fx);
  row_for_store(fx);
}

void session_core::row_for_store(core_effects& fx) {
  fx.store_text.clear();
  // The actor sends the row whenever store_put is set (as this text, or as the object).
  row_sent_ = fx.store_put && row_;
  if (!fx.store_put || !row_) return;
  std::string text;
  storage::session_store::append_row_text(text, key_, *row_);
  // Invalid UTF-8 would not parse back in the store: such a row goes as the object.
  if (is_valid_utf8(text)) fx.store_text = std::move(text);
}

turn_outcome session_core::chat_turn(const chat_event& ev, const route_facts& route, core_effects& fx) {
  turn_outcome out;
  out.session_key = key_;
  last_route_ = route;
  const auto& settings = *deps_->settings;
  const std::size_t size = ev.text.size() + (ev.content.empty() ? 0 : json::to_compact(ev.content).size());
  if (size > settings.session.max_message_bytes) {
    out.st = status(errc::limit_exceeded, fmt::format("message of {} bytes exceeds session.maxMessageBytes ({} bytes)",
                                                      size, settings.session.max_message_bytes));
    return out;
  }
  // The current transcript's lock first: if another process holds it, nothing changes here.
  if (row_ && row_->session_id())
    if (status st = open_current(fx); !st.ok()) {
      out.st = st;
      return out;
    }

  const std::int64_t now = deps_->time->now_ms();
  reset_trigger_options topt;
  topt.triggers = settings.session.reset.reset_triggers;
  topt.sender_authorized = ev.sender_authorized;
  topt.is_group = route.is_group;
  const reset_trigger_result trigger = parse_reset_trigger(ev.text, topt);
  const auto policy =
      resolve_reset_policy(settings.session.reset, resolve_reset_type(key_, route.is_group, route.is_thread), route.channel);
  rollover_input in;
  in.current = row_ ? &*row_ : nullptr;
  in.session_key = key_;
  in.kind = inbound_kind::message;
  if (row_ && deps_->zone) in.freshness = evaluate_freshness(lifecycle_timestamps_of(*row_), now, policy, *deps_->zone);
  in.trigger = trigger;
  in.now_ms = now;
  in.new_session_id = new_session_id();
  in.transcript_path = [this](std::string_view id) { return transcript_path_for(std::string(id)); };
  in.inbound_patch = inbound_patch(ev, route);
  const std::string old_id = row_ ? std::string(row_->session_id().value_or("")) : std::string();
  // The row is rolled in place (moved in, not copied); row_ takes it back at once.
  rollover_result roll = row_ ? roll_session(in, std::move(*row_)) : roll_session(in);
  row_ = std::move(roll.entry);
  if (roll.new_session) {
    if (roll.drop_queued_system_events) queued_.clear();
    pressure_ = {};  // a new session starts a new pressure cycle
    if (status st = start_new_session(old_id, fx); !st.ok()) {
      out.st = st;
      return out;
    }
    note_new_session(old_id, roll, out, fx);
    // The row is written with the store's next window; the ack does not wait for it: after a
    // crash the runtime adopts this transcript from its header (store_reconcile) at start-up.
  } else if (status st = open_current(fx); !st.ok()) {
    out.st = st;
    return out;
  }
  out.session_id = std::string(row_->session_id().value_or(""));

  std::string text = ev.text;
  if (trigger.command == reset_command::reset) {
    text = trigger.first_message;
    if (text.empty() && ev.content.empty()) {
      out.command = trigger.matched_trigger;
      out.command_output = fmt::format("New session started ({}).", out.session_id);
      finish_effects(fx, route);
      return out;
    }
  }
  std::string args;
  switch (parse_chat_command(text, args)) {
    case chat_command::status: {
      out.command = "/status";
      status_inputs si{key_, &*row_, settings.model.context_window, settings.model.provider, settings.model.model, now};
      out.command_output = format_status(si);
      finish_effects(fx, route);
      return out;
    }
    case chat_command::compact: {
      out.command = "/compact";
      auto done = compact("manual", args, fx);
      if (!done.ok()) {
        out.st = done.error();
      } else if (!done->compacted) {
        out.command_output = "Nothing to compact yet.";
      } else {
        out.command_output = fmt::format("Compacted: ~{} -> ~{} tokens ({}).", done->tokens_before, done->tokens_after,
                                         done->provider == "builtin" ? "built-in summarizer" : done->provider);
        if (done->successor_session_id) out.session_id = *done->successor_session_id;
      }
      if (status st = durability_commit(fx); !st.ok() && out.st.ok()) out.st = st;
      finish_effects(fx, route);
      return out;
    }
    case chat_command::context_list:
      out.command = "/context list";
      out.command_output = format_context_list(context_, settings.model.context_window);
      finish_effects(fx, route);
      return out;
    default: break;
  }
  return run_turn(ev, std::move(text), fx, std::move(out));
}

turn_outcome session_core::run_turn(const chat_event& ev, std::string text, core_effects& fx, turn_outcome out) {
  const auto& settings = *deps_->settings;
  const std::int64_t started = deps_->time->now_ms();
  const std::int64_t ts = ev.timestamp_ms ? ev.timestamp_ms : started;
  boost::json::object user = ev.content.empty() ? user_message(text, ts) : user_message(ev.content, ts);
  const std::int64_t prompt_estimate = estimate_tokens(user);
  // What the context costs now: the last call's prompt plus what was appended since, from the
  // cached context (an adopted or legacy transcript has no fresh totalTokens in its row).
  const std::int64_t context_tokens_now = estimate_context_tokens(context_).tokens;
  maybe_flush_memory(prompt_estimate, context_tokens_now, fx, out);
  maybe_compact_before_turn(prompt_estimate, context_tokens_now, fx);
  append_and_track(user, fx);

  // The request: the cached context, with this turn's runtime context in front of the last
  // (the user's) message — in the request only.
  std::string prefix;
  for (const auto& notice : queued_) prefix += notice + "\n";
  queued_.clear();
  prefix += ev.runtime_context;
  while (!prefix.empty() && prefix.back() == '\n') prefix.pop_back();
  result<boost::json::object> reply(errc::internal, "not run");
  int overflow_compactions = 0;
  for (;;) {
    model_request req;
    req.session_key = key_;
    req.session_id = std::string(row_->session_id().value_or(""));
    req.provider = std::string(row_->provider_override().value_or(settings.model.provider));
    req.model = std::string(row_->model_override().value_or(settings.model.model));
    req.context_window = settings.model.context_window;
    req.max_tokens = settings.model.max_tokens;
    req.messages = std::move(context_);
    boost::json::value stored_last;
    if (!prefix.empty() && !req.messages.empty()) {
      stored_last = req.messages.back();
      prefix_for_model(req.messages.back().as_object(), prefix);
    }
    std::optional<reply_stream> stream;
    if (publish_now_ && wants(event_types::reply_delta)) {
      stream.emplace(publish_now_, *deps_->time, event(event_types::reply_delta), overflow_compactions + 1);
      req.on_text = [&stream](std::string_view piece) { stream->on_text(piece); };
    }
    reply = deps_->runner ? deps_->runner->run(req)
                         : result<boost::json::object>(errc::unsupported, "no model runner is registered");
    context_ = std::move(req.messages);
    if (!stored_last.is_null()) context_.back() = std::move(stored_last);
    // A context overflow (an error, or a reply that used more than the window): drop it,
    // compact, retry — at most 3 times per turn [R§6.2].
    const bool overflow = reply.ok() ? is_context_overflow(*reply, settings.model.context_window)
                                     : is_context_overflow_error(reply.error().message());
    bool retry = overflow && overflow_compactions < 3 && settings.compaction.enabled;
    if (retry) {
      ++overflow_compactions;
      auto done = compact("overflow", "", fx);
      retry = done.ok() && done->compacted;
    }
    if (stream) stream->end(reply.ok() && !retry);  // the closing delta: shown text kept or dropped
    if (!retry) break;
  }
  if (reply.ok() && overflow_compactions > 0 && wants(event_types::overflow_recovered)) {
    auto e = event(event_types::overflow_recovered);
    e.data["compactions"] = overflow_compactions;
    fx.events.push_back(std::move(e));
  }

  if (!reply.ok()) {
    auto e = event(event_types::turn_failed);
    e.data["error"] = reply.error().message();
    fx.events.push_back(std::move(e));
    out.st = reply.error().with_context("model call failed");
    if (status st = durability_commit(fx); !st.ok()) out.st = st;
    finish_effects(fx, last_route_);
    return out;
  }
  if (!reply->contains("timestamp")) (*reply)["timestamp"] = deps_->time->now_ms();
  // The reply as kept in the context (no copy); read only until the compaction check below,
  // which may rebuild the context.
  const boost::json::object& msg = append_and_track(*reply, fx);
  std::int64_t context_tokens = 0;
  if (const auto* usage = json::get_object(msg, "usage")) {
    row_->set_input_tokens(json::get_int(*usage, "input").value_or(0));
    row_->set_output_tokens(json::get_int(*usage, "output").value_or(0));
    row_->set_cache_read(json::get_int(*usage, "cacheRead").value_or(0));
    row_->set_cache_write(json::get_int(*usage, "cacheWrite").value_or(0));
    row_->set_total_tokens(prompt_tokens_of_usage(*usage));
    row_->set_total_tokens_fresh(true);
    context_tokens = calculate_context_tokens(*usage);
  }
  row_->set_context_tokens(settings.model.context_window);
  if (auto p = json::get_string(msg, "provider")) row_->set_model_provider(*p);
  if (auto m = json::get_string(msg, "model")) row_->set_model(*m);

  // NO_REPLY: recorded in the transcript, never delivered [R§7.3].
  const silent_reply_verdict verdict = final_reply_verdict(reply_text(msg));
  if (verdict.silent) {
    out.suppressed = true;
    if (wants(event_types::reply_suppressed)) fx.events.push_back(event(event_types::reply_suppressed));
  } else {
    out.reply = verdict.text;
  }
  if (wants(event_types::turn_completed)) {
    auto e = event(event_types::turn_completed);
    e.data["totalTokens"] = row_->total_tokens().value_or(0);
    e.data["latencyMs"] = deps_->time->now_ms() - started;
    fx.events.push_back(std::move(e));
  }
  check_context_pressure(context_tokens, fx);
  if (settings.compaction.enabled &&
      should_compact_after_turn(context_tokens, settings.model.context_window,
                                effective_reserve(settings.compaction, settings.model.context_window)))
    (void)compact("threshold", "", fx);  // a failure is an event; the turn itself succeeded
  if (status st = durability_commit(fx); !st.ok()) {
    out.st = st;
    out.reply.reset();
  }
  out.session_id = std::string(row_->session_id().value_or(""));
  finish_effects(fx, last_route_);
  return out;
}

result<compaction_outcome> session_core::compact(const std::string& reason, const std::string& instructions,
                                                 core_effects& fx) {
  const std::string old_path = transcript_->path();
  if (wants(event_types::compaction_started)) {
    auto e = event(event_types::compaction_started);
    e.data["reason"] = reason;
    fx.events.push_back(std::move(e));
  }
  compaction_env env{deps_->files, deps_->time, deps_->settings, deps_->runner, deps_->providers, deps_->cancel};
  session_entry next = *row_;
  auto done = compact_session(env, compaction_request{reason, instructions, key_}, transcript_, next);
  if (!done.ok()) {
    auto e = event(event_types::compaction_failed);
    e.data["reason"] = reason;
    e.data["error"] = done.error().message();
    e.data["cancelled"] = done.error().code() == errc::cancelled;
    fx.events.push_back(std::move(e));
    return done;
  }
  if (!done->compacted) return done;
  if (done->successor_path) {
    // The session continues in the successor: its lock, its writer; the old file stays.
    storage::write_lock_options lo = deps_->settings->session.write_lock;
    lo.acquire_timeout_ms = 0;
    lo.max_hold_ms = std::max(lo.max_hold_ms, kSessionLockMaxHoldMs);
    auto lock = storage::acquire_write_lock(*deps_->files, *deps_->time, *deps_->probe, *done->successor_path, lo);
    if (!lock.ok()) return lock.error().with_context("locking the successor transcript");
    auto opened = storage::transcript_file::open(*deps_->files, *deps_->time, *done->successor_path, transcript_opts());
    if (!opened.ok()) return opened.error().with_context("opening the successor transcript");
    (void)(transcript_->sync());
    transcript_ = std::move(*opened);
    lock_ = std::move(*lock);
  }
  row_ = std::move(next);
  if (!done->successor_path) {
    context_ = std::move(done->context);
  } else if (auto ctx = transcript_->context(); ctx.ok()) {
    context_ = std::move(ctx->messages);
  }
  if (wants(event_types::compaction_completed)) {
    auto e = event(event_types::compaction_completed);
    e.data["reason"] = reason;
    e.data["provider"] = done->provider;
    e.data["tokensBefore"] = done->tokens_before;
    e.data["tokensAfter"] = done->tokens_after;
    e.data["firstKeptEntryId"] = done->first_kept_entry_id;
    e.data["compactionCount"] = row_->compaction_count().value_or(0);
    if (!done->fallback_warning.empty()) e.data["warning"] = done->fallback_warning;
    if (done->successor_session_id) {
      e.data["successorSessionId"] = *done->successor_session_id;
      e.data["checkpoint"] = old_path;
    }
    fx.events.push_back(std::move(e));
  }
  return done;
}

void session_core::maybe_flush_memory(std::int64_t prompt_estimate, std::int64_t context_tokens, core_effects& fx,
                                      turn_outcome& out) {
  const auto& settings = *deps_->settings;
  if (!settings.memory_flush.enabled || !transcript_) return;
  flush_inputs in;
  in.context_window = settings.model.context_window;
  in.reserve_tokens_floor = settings.compaction.reserve_tokens_floor;
  in.prompt_estimate = prompt_estimate;
  in.transcript_prompt_tokens = context_tokens;
  in.last_output_tokens = row_->output_tokens().value_or(0);
  in.transcript_bytes = static_cast<std::int64_t>(transcript_->reader().data_end() + transcript_->pending_bytes());
  in.workspace_writable = settings.workspace_writable;
  const flush_decision d = decide_flush(*row_, in, settings.memory_flush);
  if (!d.run) {
    // A flush that was due but cannot run is said; the everyday "not yet" is not.
    if (d.due && wants(event_types::memory_flush_skipped)) {
      auto e = event(event_types::memory_flush_skipped);
      e.data["reason"] = flush_reason_name(d.reason);
      e.data["tokenCount"] = d.token_count;
      e.data["threshold"] = d.threshold;
      fx.events.push_back(std::move(e));
    }
    return;
  }
  const std::int64_t now = deps_->time->now_ms();
  auto plan = build_flush_plan(settings.memory_flush, now, settings.session.reset.timezone);
  if (!plan.ok()) return;
  if (wants(event_types::memory_flush_started)) {
    auto e = event(event_types::memory_flush_started);
    e.data["reason"] = flush_reason_name(d.reason);
    e.data["tokenCount"] = d.token_count;
    e.data["threshold"] = d.threshold;
    fx.events.push_back(std::move(e));
  }
  const std::int64_t cycle = row_->compaction_count().value_or(0);
  model_request req;
  req.session_key = key_;
  req.session_id = std::string(row_->session_id().value_or(""));
  req.purpose = "memory_flush";
  req.system_prompt = plan->system_prompt;
  req.provider = settings.model.provider;
  req.model = plan->model.empty() ? settings.model.model : plan->model;
  req.context_window = settings.model.context_window;
  req.messages = std::move(context_);
  req.messages.emplace_back(user_message(plan->prompt, now));
  auto reply = deps_->runner ? deps_->runner->run(req)
                            : result<boost::json::object>(errc::unsupported, "no model runner is registered");
  req.messages.pop_back();
  context_ = std::move(req.messages);
  if (reply.ok()) {
    apply_flush_success(*row_, now, cycle);
    if (wants(event_types::memory_flush_completed)) {
      auto e = event(event_types::memory_flush_completed);
      e.data["silent"] = final_reply_verdict(reply_text(*reply)).silent;
      e.data["memoryFile"] = plan->relative_path;
      fx.events.push_back(std::move(e));
    }
  } else {
    auto notice = apply_flush_failure(*row_, now, reply.error().message());
    auto e = event(event_types::memory_flush_failed);
    e.data["error"] = reply.error().message();
    e.data["failures"] = row_->memory_flush_failure_count().value_or(0);
    fx.events.push_back(std::move(e));
    if (notice) out.notices.push_back(*notice);
  }
}

void session_core::maybe_compact_before_turn(std::int64_t prompt_estimate, std::int64_t context_tokens,
                                             core_effects& fx) {
  const auto& settings = *deps_->settings;
  if (!settings.compaction.enabled || !transcript_) return;
  preflight_state ps;
  ps.context_window = settings.model.context_window;
  ps.soft_threshold_tokens = settings.memory_flush.soft_threshold_tokens;
  if (auto total = row_->total_tokens()) {
    if (row_->total_tokens_fresh() == std::optional<bool>(true))
      ps.fresh_persisted_total_tokens = *total;
    else
      ps.stale_persisted_total_tokens = *total;
  }
  ps.last_output_tokens = row_->output_tokens().value_or(0);
  ps.prompt_estimate_tokens = prompt_estimate;
  ps.transcript_prompt_tokens = context_tokens;
  ps.transcript_bytes = transcript_->reader().data_end() + transcript_->pending_bytes();
  if (const auto trigger = should_compact_before_turn(settings.compaction, ps))
    (void)compact(preflight_reason(*trigger), "", fx);
}

void session_core::check_context_pressure(std::int64_t context_tokens, core_effects& fx) {
  const auto& settings = *deps_->settings;
  const std::int64_t threshold =
      settings.model.context_window - effective_reserve(settings.compaction, settings.model.context_window);
  auto check = actors::check_pressure(settings.pressure, pressure_, context_tokens, threshold,
                                      row_->compaction_count().value_or(0));
  pressure_ = std::move(check.next);
  for (double fraction : check.crossed) {
    if (!wants(event_types::context_pressure)) break;
    auto e = event(event_types::context_pressure);
    e.data["fraction"] = fraction;
    e.data["contextTokens"] = context_tokens;
    e.data["compactionThreshold"] = threshold;
    e.data["contextWindow"] = settings.model.context_window;
    fx.events.push_back(std::move(e));
  }
}

void session_core::system_turn(const system_event& ev, core_effects& fx) {
  if (ev.kind == system_event_kind::cron && !ev.job_id.empty()) {
    cron_run(ev, fx);
    return;
  }
  rollover_input in;
  in.current = row_ ? &*row_ : nullptr;
  in.session_key = key_;
  switch (ev.kind) {
    case system_event_kind::heartbeat: in.kind = inbound_kind::heartbeat; break;
    case system_event_kind::cron: in.kind = inbound_kind::cron_event; break;
    case system_event_kind::exec: in.kind = inbound_kind::exec_event; break;
  }
  in.now_ms = deps_->time->now_ms();
  in.new_session_id = new_session_id();
  in.transcript_path = [this](std::string_view id) { return transcript_path_for(std::string(id)); };
  const bool existed = row_.has_value();
  rollover_result roll = row_ ? roll_session(in, std::move(*row_)) : roll_session(in);  // in place, as in chat()
  row_ = std::move(roll.entry);
  if (!existed) fx.events.push_back(event(event_types::session_created));
  if (!ev.text.empty()) queued_.push_back(ev.text);
  finish_effects(fx, last_route_);
}

void session_core::cron_run(const system_event& ev, core_effects& fx) {
  turn_outcome out;
  out.session_key = key_;
  auto report = [&](const turn_outcome& o) {
    auto e = event(event_types::cron_completed);
    e.data["jobId"] = ev.job_id;
    e.data["sessionId"] = o.session_id;
    if (!o.st.ok()) e.data["error"] = o.st.to_string();
    else if (o.reply) e.data["reply"] = *o.reply;
    e.data["suppressed"] = o.suppressed;
    fx.events.push_back(std::move(e));
  };
  // The current transcript's lock first, as for a chat turn: held elsewhere, nothing changes.
  if (row_ && row_->session_id())
    if (status st = open_current(fx); !st.ok()) {
      out.st = st;
      report(out);
      return;
    }
  rollover_input in;
  in.session_key = key_;
  in.now_ms = deps_->time->now_ms();
  in.new_session_id = new_session_id();
  in.transcript_path = [this](std::string_view id) { return transcript_path_for(std::string(id)); };
  const std::string old_id = row_ ? std::string(row_->session_id().value_or("")) : std::string();
  rollover_result roll = roll_isolated_cron_run(row_ ? &*row_ : nullptr, cron_job_ref{ev.job_id, ev.job_name}, std::move(in));
  row_ = std::move(roll.entry);
  queued_.clear();
  pressure_ = {};
  if (status st = start_new_session(old_id, fx); !st.ok()) {
    out.st = st;
    report(out);
    finish_effects(fx, last_route_);
    return;
  }
  note_new_session(old_id, roll, out, fx);
  if (ev.text.empty()) {
    finish_effects(fx, last_route_);
    report(out);
    return;
  }
  chat_event prompt;
  prompt.text = ev.text;
  prompt.timestamp_ms = ev.timestamp_ms;
  out = run_turn(prompt, ev.text, fx, std::move(out));
  report(out);
}

}  // namespace sessionrt::actors
