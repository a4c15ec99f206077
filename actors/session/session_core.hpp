// session_core: one session's state and its turn, without CAF (the actor beside it,
// session_actor, sends and receives; this class decides and does the file work). The file
// work of the session (transcript, lock, rollover, row) is in session_core.cpp; the turn, a
// coroutine that waits on the model through turn_io, is in turn_loop.cpp; the chat commands'
// work (chat_commands.hpp's table) in chat_command_work.cpp.
// It owns the sessions.json row of its key, the transcript writer of the current sessionId,
// the write lock of that transcript while it is open, and the in-memory context of the
// active leaf (so a turn does not re-read the file). A turn:
//   freshness + reset trigger -> reuse or roll over (archive the old transcript .reset.<ts>)
//   -> append the user's message as sent (written, and durable or on its way to the commit
//   log, before the call: durability_commit) -> model call on the context (+ per-turn runtime
//   context, never stored) -> append the reply -> update the row (tokens, timestamps).
// What must happen outside (store write, events, timers, group commit) is returned in
// core_effects; the caller acknowledges the turn after the commit log answers when
// `log_append` is set (durability batch: the turn's bytes go to actors/commit_log).
// Context management (SPEC §4): before the user's message is stored, a memory flush turn runs
// when the context nears the flush threshold (once per compaction cycle; the flush prompt and
// its reply are not stored), and a preflight compaction when the projected prompt crosses it;
// an overflow error compacts and retries (at most 3 times, the failed reply is dropped); after
// the turn, crossing window - reserve compacts; a silent reply (NO_REPLY) is recorded but not
// delivered; context.pressure events fire at configured fractions of the compaction threshold.
// Errors before anything was appended (lock held elsewhere, bad input) change nothing.
// While a turn waits (suspended in a co_await), the actor may only call the const members,
// answer_while_busy(), note_synced() and log_record_while_waiting(); everything else waits
// for the turn's end. A cancelled turn (turn_io::cancel_reason) keeps the user's message,
// stores nothing of the reply and ends.
#pragma once
#include <boost/json/array.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/commit_log/commit_log_append.hpp"
#include "actors/runtime_settings.hpp"
#include "actors/session/compaction_providers.hpp"
#include "actors/session/compaction_runner.hpp"
#include "actors/session/context_pressure.hpp"
#include "messages/ids.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "actors/session/reset_trigger.hpp"
#include "actors/session/route_facts.hpp"
#include "actors/session/row_text_memo.hpp"
#include "actors/session/run_ids_seen.hpp"
#include "actors/session/text_keyed_memo.hpp"
#include "actors/session/turn_io.hpp"
#include "actors/session/turn_task.hpp"
#include "messages/chat_event.hpp"
#include "messages/lifecycle_event.hpp"
#include "messages/model_runner.hpp"
#include "messages/session_entry.hpp"
#include "storage/context_counts.hpp"
#include "storage/process_probe.hpp"
#include "storage/transcript_file.hpp"
#include "storage/verified_transcripts.hpp"
#include "storage/write_lock.hpp"

namespace date {
class time_zone;
}

namespace sessionrt::actors {

struct rollover_result;
enum class chat_command;  // chat_commands.hpp
struct recognized_command;

// Locks live as long as the session actor; they must not look abandoned to other processes
// while it idles (hold-exceeded makes other acquirers fail at once instead of waiting).
inline constexpr std::int64_t kSessionLockMaxHoldMs = 7LL * 24 * 3600 * 1000;

struct session_core_deps {
  storage::fs* files = nullptr;
  clock* time = nullptr;
  storage::process_probe* probe = nullptr;
  const runtime_settings* settings = nullptr;
  const date::time_zone* zone = nullptr;  // for the daily boundary
  std::string sessions_dir;               // <state>/agents/<agentId>/sessions
  std::string agent_id;
  const compaction_providers* providers = nullptr;  // registered compaction providers
  session_ids ids;                                  // new session ids: random unless seeded
  // Transcripts the agent's sessions closed clean, so that a reopen of one left as it was
  // skips the damage scan (null: every open scans).
  std::shared_ptr<storage::verified_transcripts> verified;
  // Whether anyone subscribed to an event type; events nobody wants are not built.
  std::function<bool(std::string_view type)> wants_event;
};
// Publishes an event at once, ahead of the turn's other effects (reply.delta while the model
// streams); unset: streamed text is not published.
using publish_now_fn = std::function<void(lifecycle_event)>;

struct core_effects {
  std::vector<lifecycle_event> events;
  bool store_put = false;      // write entry() to the store
  std::string store_text;      // ... as this text (session_store::append_row_text) when set
  bool store_durable = false;  // ... and wait for that write before acknowledging
  // Other rows to put, as (key, row text), sent before entry() so a durable put covers them
  // (an isolated cron run's own …:cron:<job>:run:<sessionId> row).
  std::vector<std::pair<std::string, std::string>> extra_rows;
  std::optional<std::int64_t> stale_at;  // when the session expires (timer), if it does
  std::string stale_reason;              // "daily" | "idle": why it expires then
  // batch: the transcript's bytes not yet acknowledged, for the commit log; the turn is
  // durable once it answers for log_append->seq.
  std::optional<commit_log_append> log_append;
};

// When the session under `key` goes stale and why ("daily" | "idle"), or nullopt if never,
// by the reset rules [R§4.1-4.2]; shared by the session and the start-up timer schedule.
struct session_expiry {
  std::int64_t at_ms;
  std::string reason;
};
std::optional<session_expiry> expiry_of(const std::string& key, const session_entry& row, const route_facts& route,
                                        const session_reset_config& config, const date::time_zone& zone,
                                        std::int64_t now_ms);
// What a stored row says about its chat (for sessions reloaded from the store).
route_facts facts_from_row(const std::string& key, const session_entry& row);

class session_core {
 public:
  // The deps are shared by every session of an agent (they are the same for all of them).
  session_core(std::string key, std::optional<session_entry> row, std::shared_ptr<const session_core_deps> deps,
               publish_now_fn publish_now = {});
  session_core(std::string key, std::optional<session_entry> row, session_core_deps deps)
      : session_core(std::move(key), std::move(row), std::make_shared<const session_core_deps>(std::move(deps))) {}
  ~session_core();
  session_core(const session_core&) = delete;
  session_core& operator=(const session_core&) = delete;

  // The turn's waits go through `io` (the actor); set before the first turn.
  void set_io(turn_io* io) { io_ = io; }

  // A chat turn. The caller keeps `ev`, `route` and `fx` alive until the task ends and runs it to its end (or
  // destroys it, which abandons the turn).
  task<turn_outcome> chat(const chat_event& ev, const route_facts& route, core_effects& fx);
  // Heartbeat / cron / exec notices: never roll a session, never extend its idle life; queued
  // until the next turn's prompt (dropped if the session rolls over first).
  // A cron event with a job id is an isolated run [R§5.6]: a new session every run (the
  // previous row sanitized), its text run as the prompt, reported by a cron.completed event.
  task<turn_outcome> system(const system_event& ev, core_effects& fx);
  // The chat command `ev` is (chat_commands.hpp), with this session's reset triggers and the
  // sender's authorization; chat_command::none for an ordinary message.
  recognized_command recognize(const chat_event& ev, const route_facts& route) const;
  // While a turn waits: the answer to a command that needs neither the model nor a change
  // (/status, /context list), or nullopt when it must wait for the turn's end.
  std::optional<turn_outcome> answer_while_busy(chat_command command) const;
  // While a turn's model call runs in queue mode steer (and the runner supports steering):
  // the inbox the runner takes new messages from at its tool boundaries, else nullptr.
  std::shared_ptr<steer_inbox> steering_inbox() const { return steering_; }
  // Flushes and syncs the transcript and releases its lock (passivation, shutdown).
  status close();
  // An idle session's memory diet (session.trimIdleMs): closes the transcript (reader, index,
  // header) and drops the cached context, keeping the write lock and the queued notices; the
  // next turn reopens the file and rebuilds the context from it. Appends not yet durable are
  // synced first (a sync request in flight holds its own reference to the fd, see
  // storage/shared_fd.hpp). When the store was sent the row as it is now, the row goes too:
  // needs_row() is then true, and restore_row() must give back the store's row before the
  // next chat() or system(). Returns false when nothing was open.
  bool trim();
  bool trimmed() const { return !transcript_ && lock_.has_value(); }
  bool needs_row() const { return stored_row_id_.has_value(); }
  // The row as the store answered (nullopt: it has none, the next turn starts a session).
  void restore_row(std::optional<session_entry> row);
  // The current sessionId ("" if none), also while the row is left to the store.
  std::string session_id() const;
  // A thread session without a row: its first session starts from this parent's active branch
  // (fork_planner.hpp; parentSessionKey and forkedFromParent on the row). Once.
  void set_fork_parent(std::string parent_key, const std::optional<session_entry>& parent_row);

  const std::string& key() const { return key_; }
  // The session's model now (session_model.hpp): the row's overrides over the agent's config.
  session_model model() const;
  // The agent's system prompt (session_model.hpp system_prompt_of).
  std::string system_prompt() const;
  // The row (nullopt while trim() left it to the store).
  const std::optional<session_entry>& entry() const { return row_; }
  // The open transcript's fd, shared (for the syncer), and its process-unique id (0: none open).
  storage::shared_fd_ptr transcript_handle() const;
  std::uint64_t transcript_file_id() const;
  bool transcript_open() const { return transcript_ != nullptr; }
  // The commit log made appends up to `seq` durable (and the file's name, for a new file).
  void note_synced(std::uint64_t seq, bool dir_synced);
  // While a turn's model call waits (durability batch): the commit log record of what the
  // transcript holds past the log's acknowledged end — the user's line, written before the
  // call — for the actor to send at once, so a crash during the call keeps it; nullopt when
  // everything is acknowledged (or the bytes cannot be read: the turn's own record carries
  // them). The turn's ack still waits for its final record. Like note_synced(), callable
  // while the turn waits.
  std::optional<commit_log_append> log_record_while_waiting();
  std::size_t queued_system_events() const { return queued_.size(); }
  // Set when the last chat()/system() failed (errc::locked) because the current transcript's
  // write lock is held elsewhere: nothing was changed, the turn may be retried later (the
  // holder is for the timeout error). Unset when the error is final or there was none.
  const storage::lock_busy* lock_busy() const { return lock_busy_.get(); }

  // An event about this session now, its data from the payload (messages/lifecycle_payloads.hpp).
  template <class Payload>
  lifecycle_event event(const Payload& p) const {
    return payloads::make_event(subject(), deps_->time->now_ms(), p);
  }
  payloads::event_subject subject() const;

 private:
  bool wants(std::string_view type) const { return !deps_->wants_event || deps_->wants_event(type); }
  status open_current(core_effects& fx);
  status acquire_lock(const std::string& path, core_effects& fx);  // one attempt; sets lock_ or lock_busy_
  storage::transcript_options transcript_opts() const;
  status start_new_session(const std::string& new_id, core_effects& fx);
  status close_transcript();
  void note_closed_clean();    // the open transcript, settled, to deps_->verified
  status settle_transcript();  // the open transcript durable (written only, with durability none)
  void note_new_session(const std::string& old_id, const rollover_result& roll, turn_outcome& out,
                        core_effects& fx);
  std::string transcript_path_for(const std::string& session_id) const;
  // The id a session started now would get, for `purpose` (deps_->ids: random unless seeded).
  std::string next_session_id(std::int64_t now_ms, std::string_view purpose) const;
  // Appends `message` and moves it into the context; returns where it now is, or the append's
  // error (a line over storage.maxLineBytes, a failed write): then nothing was kept and the
  // caller fails the turn — a refused line is never reported as stored.
  result<const boost::json::object*> append_and_track(boost::json::object& message, core_effects& fx);
  // Ends a turn that failed: turn.failed (turn.cancelled for a cancellation) with the cause,
  // out.st = the cause under `context`, what was written made durable, the effects finished.
  turn_outcome end_failed_turn(const status& cause, std::string_view context, core_effects& fx, turn_outcome out);
  // Appends `message` to the transcript, writes it (through the page cache) and only then says
  // so with message.appended; the id, or the append's or the write's error (then the line is
  // not in the file and no event is queued). append_and_track() and a tool loop's rounds both
  // go through it.
  result<std::string> append_with_event(const boost::json::object& message, core_effects& fx);
  // The cached context rebuilt from the file (after a failed write rolled lines back).
  void reload_context();
  task<turn_outcome> run_turn(const chat_event& ev, std::string text, core_effects& fx, turn_outcome out);
  // A chat event whose run id (a chat.send retried, maybe on a new owner) already has its user
  // line here does not run again: true, with `out` the stored answer (st ok, reply = the
  // reply's text when the transcript has one; nothing stored, no event) (run_ids_seen.hpp).
  bool answer_seen_run(const chat_event& ev, turn_outcome& out) const;
  // One model call of the turn: the context moves into the request and back.
  task<model_answer> call_model(std::shared_ptr<model_request> req);
  const boost::json::array& context_view() const;
  // The commands' work (chat_command_work.cpp). after_reset: `/new <model> rest` picks the
  // model and returns the first message; with none, out.command says the reset is the answer.
  std::string after_reset(const reset_trigger_result& trigger, const chat_event& ev, turn_outcome& out);
  // A command that is a turn of its own (/status, /context list, /compact, /queue, /dock-*).
  task<turn_outcome> command_turn(const recognized_command& cmd, const chat_event& ev, const route_facts& route,
                                  core_effects& fx, turn_outcome out);
  bool messages_for_model(const std::shared_ptr<model_request>& req, const std::string& prefix, core_effects& fx,
                          boost::json::value& saved_last);
  void restore_context(std::shared_ptr<model_request>& req, boost::json::value& saved_last);
  void finish_effects(core_effects& fx, const route_facts& route);
  // Work refused before it began (a system event to an archived row, session_rollover.hpp
  // archived_row_refusal): nothing ran and nothing is stored; the row's expiry stays scheduled.
  void refused_effects(core_effects& fx);
  boost::json::object inbound_patch(const chat_event& ev, const route_facts& route) const;
  // inbound_patch(ev, route), made again only when something it reads changed (patch_memo_).
  const boost::json::object& inbound_patch_for(const chat_event& ev, const route_facts& route);
  // What the transcript holds made durable per storage.durability: none written, sync
  // fdatasync'd, batch written with its commit log record in fx.log_append (the caller waits
  // for the log's answer). Before the model call (!turn_end: the user's line) the write
  // buffer is kept and a batch record is left to log_record_while_waiting().
  status durability_commit(core_effects& fx, bool turn_end = true);
  // batch: the commit log record of what the open transcript holds past its acknowledged end.
  status log_record(core_effects& fx);
  bool log_unacked() const;  // batch, and the open transcript has bytes or a name not acknowledged
  // One compaction with its events; swaps to the successor transcript when one was written.
  task<result<compaction_outcome>> compact(std::string reason, std::string instructions, core_effects& fx);
  // The turn's model `m` is resolved once per turn (run_turn): nothing a turn does changes
  // the row's model overrides, and resolving it costs a key parse and a catalog walk.
  task<bool> maybe_flush_memory(const session_model& m, std::int64_t prompt_estimate, std::int64_t context_tokens,
                                core_effects& fx, turn_outcome& out);
  task<bool> maybe_compact_before_turn(const session_model& m, std::int64_t prompt_estimate,
                                       std::int64_t context_tokens, core_effects& fx);
  bool cancelled() const { return io_ && !io_->cancel_reason().empty(); }
  status cancelled_status() const;
  void check_context_pressure(const session_model& m, std::int64_t context_tokens, core_effects& fx);

  // After a turn: the row as the store writes it (session_store::append_row_text) in
  // fx.store_text, so the store never serializes rows it is sent.
  void row_for_store(core_effects& fx);
  // Before a row write: the context's length in the row (history_count.hpp), counted from the
  // last count this session made.
  void note_history_count();
  // After open_current built the context: its length is the open leaf's count (history_count.hpp).
  void note_opened_context(std::size_t total);
  task<turn_outcome> chat_turn(const chat_event& ev, const route_facts& route, core_effects& fx);
  task<turn_outcome> cron_run(const system_event& ev, core_effects& fx);
  // A heartbeat in its own `<base>:heartbeat` session (heartbeat_run.cpp): its text runs as a turn.
  task<turn_outcome> heartbeat_run(const system_event& ev, core_effects& fx);
  void system_turn(const system_event& ev, turn_outcome& out, core_effects& fx);

  std::string key_;
  std::optional<session_entry> row_;  // unset: no row yet, or left to the store by trim()
  bool row_sent_ = false;                     // row_ is what the store was last sent
  std::optional<std::string> stored_row_id_;  // set: trim() left the row to the store, keeping its sessionId
  std::shared_ptr<const session_core_deps> deps_;
  publish_now_fn publish_now_;
  turn_io* io_ = nullptr;
  std::shared_ptr<const model_request> in_flight_;  // holds context_ while a call runs (moved)
  std::shared_ptr<steer_inbox> steering_;  // the running call's, in queue mode steer
  std::size_t clean_upto_ = 0;  // context_[0, clean_upto_) is plainly clean (hygiene/clean_check.hpp)
  std::unique_ptr<storage::transcript_file> transcript_;
  // The open transcript as the commit log knows it (batch; allocated on its first record, gone
  // with the transcript): which file, its inode, where its acknowledged bytes end (a record
  // carries everything after that), and the records sent but not answered, as (seq, end).
  struct log_position {
    std::uint64_t file_id = 0, inode = 0, acked_end = 0;
    bool new_file = false, opened = false;  // created by this writer / opened by it (commit_log_append)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sent;
  };
  std::unique_ptr<log_position> log_;
  std::optional<std::int64_t> header_started_ms_;  // the open transcript's header time (not for a new file)
  std::optional<storage::write_lock> lock_;
  std::unique_ptr<storage::lock_busy> lock_busy_;  // see lock_busy(); a pointer: rarely set
  boost::json::array context_;  // the active leaf's model context (valid when transcript_ is open)
  run_ids_seen runs_seen_;      // run ids with a user line here: from the opened context and the turns run
  std::vector<std::string> queued_;  // system notices for the next prompt
  pressure_state pressure_;
  bool pressure_loaded_ = false;  // pressure_ read from the row's kPressureField yet
  // The row field that keeps pressure_ (ours; OpenClaw keeps fields it does not know).
  static constexpr std::string_view kPressureField = "sessionrtContextPressure";
  route_facts last_route_;
  std::shared_ptr<storage::context_counts::file> history_counts_;  // note_history_count's, for
  std::string history_counts_path_;                                // the transcript at this path
  // inbound_patch_for's last patch; made at a turn, dropped by trim() (an idle session keeps none).
  std::unique_ptr<text_keyed_memo<boost::json::object, 12>> patch_memo_;
  // row_for_store's member texts; made at a turn, dropped by trim() like patch_memo_.
  std::unique_ptr<row_text_memo> row_text_;
  std::string fork_parent_key_, fork_parent_path_;  // set_fork_parent(), until the first session starts
};

}  // namespace sessionrt::actors
