// The isolated cron run of a session (session_core::cron_run) [R§5.6]. See session_core.hpp.
// Each run gets its own row `agent:<a>:cron:<job>:run:<sessionId>` (a copy of the base row as
// the run left it) beside the base row `agent:<a>:cron:<job>`, which points at the latest run;
// the previous run's transcript stays where it is (its run row references it; the cron
// reaper archives it with that row), and the run is logged to <stateDir>/cron/runs/<jobId>.jsonl,
// trimmed to cron.runLog.keepLines when over cron.runLog.maxBytes.
#include <spdlog/spdlog.h>

#include "actors/maintenance/cron_retention.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/session_core.hpp"
#include "actors/session/session_rollover.hpp"
#include "messages/ids.hpp"
#include "messages/json_writer.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store.hpp"

namespace sessionrt::actors {
namespace {

// The run's own row, put with the base row (fx.extra_rows).
void put_run_row(const session_core_deps& deps, const std::string& job_id, const session_entry& row,
                 core_effects& fx) {
  const auto id = row.session_id();
  if (!id || id->empty()) return;
  const std::string run_key = build_cron_run_key(deps.agent_id, job_id, *id);
  std::string text;
  storage::session_store::append_row_text(text, run_key, row);
  fx.extra_rows.emplace_back(run_key, std::move(text));
}

// One line of the run log, as OpenClaw's run-log entries (ts, jobId, action, status, ...).
std::string run_log_line(const system_event& ev, const turn_outcome& out, const std::string& run_key,
                         std::int64_t started_ms, std::int64_t now_ms) {
  boost::json::object e;
  e["ts"] = now_ms;
  e["jobId"] = ev.job_id;
  e["action"] = "finished";
  e["status"] = out.st.ok() ? "ok" : "error";
  if (!out.st.ok()) e["error"] = out.st.to_string();
  if (out.st.ok() && out.reply) e["summary"] = *out.reply;
  if (!out.session_id.empty()) e["sessionId"] = out.session_id;
  if (!run_key.empty()) e["sessionKey"] = run_key;
  e["runAtMs"] = started_ms;
  e["durationMs"] = now_ms - started_ms;
  return json::to_compact(e);
}

void log_run(const session_core_deps& deps, const system_event& ev, const turn_outcome& out,
             std::int64_t started_ms) {
  if (!deps.settings || deps.settings->state_dir.empty()) return;
  auto path = run_log_path(storage::path_join(deps.settings->state_dir, "cron"), ev.job_id);
  if (!path.ok()) return spdlog::warn("cron run log: {}", path.error().message());
  const std::string run_key =
      out.session_id.empty() ? std::string() : build_cron_run_key(deps.agent_id, ev.job_id, out.session_id);
  auto logged = append_run_log(*deps.files, *path, run_log_line(ev, out, run_key, started_ms, deps.time->now_ms()),
                               deps.settings->cron);
  if (!logged.ok()) spdlog::warn("cron run log of job {}: {}", ev.job_id, logged.error().message());
}

}  // namespace

task<turn_outcome> session_core::cron_run(const system_event& ev, core_effects& fx) {
  turn_outcome out;
  out.session_key = key_;
  auto report = [&](const turn_outcome& o) {
    payloads::cron_completed p{ev.job_id, o.session_id, std::nullopt, o.reply, o.suppressed};
    if (!o.st.ok()) p.error = o.st.to_string();
    fx.events.push_back(event(p));
  };
  // An archived cron:<job> row takes no run (OpenClaw 2026.9's resolveCronSession refuses it):
  // the run fails with the reason, reported and logged as any failed run; nothing is stored.
  if (auto refused = archived_row_refusal(key_, row_ ? &*row_ : nullptr, inbound_kind::cron_event)) {
    out.st = std::move(*refused);
    refused_effects(fx);
    report(out);
    log_run(*deps_, ev, out, deps_->time->now_ms());
    co_return out;
  }
  // The current transcript's lock first, as for a chat turn: held elsewhere, nothing changes.
  if (row_ && row_->session_id())
    if (status st = open_current(fx); !st.ok()) {
      out.st = st;
      report(out);
      co_return out;
    }
  rollover_input in;
  in.session_key = key_;
  in.now_ms = deps_->time->now_ms();
  const std::int64_t in_now = in.now_ms;
  in.new_session_id = next_session_id(in.now_ms, "cron");
  in.transcript_path = [this](std::string_view id) { return transcript_path_for(std::string(id)); };
  const std::string old_id = row_ ? std::string(row_->session_id().value_or("")) : std::string();
  rollover_result roll = roll_isolated_cron_run(row_ ? &*row_ : nullptr, cron_job_ref{ev.job_id, ev.job_name}, std::move(in));
  row_ = std::move(roll.entry);
  queued_.clear();
  pressure_ = {};
  pressure_loaded_ = true;
  if (row_) row_->erase(kPressureField);
  // The previous run's transcript stays for its run row: closed here, so that starting the
  // new session does not archive it.
  status closed = close_transcript();
  if (status st = closed.ok() ? start_new_session(std::string(), fx) : closed; !st.ok()) {
    out.st = st;
    report(out);
    finish_effects(fx, last_route_);
    co_return out;
  }
  note_new_session(old_id, roll, out, fx);
  if (ev.text.empty()) {
    finish_effects(fx, last_route_);
    if (row_) put_run_row(*deps_, ev.job_id, *row_, fx);
    report(out);
    log_run(*deps_, ev, out, in_now);
    co_return out;
  }
  chat_event prompt;
  prompt.text = ev.text;
  prompt.timestamp_ms = ev.timestamp_ms;
  out = co_await run_turn(prompt, ev.text, fx, std::move(out));
  if (row_ && fx.store_put) put_run_row(*deps_, ev.job_id, *row_, fx);
  report(out);
  log_run(*deps_, ev, out, in_now);
  co_return out;
}

}  // namespace sessionrt::actors
