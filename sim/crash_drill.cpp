#include "sim/crash_drill.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "storage/durable_file.hpp"
#include "storage/transcript_check.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::sim {

void crash_drill::on_step(const step& s, std::int64_t now) {
  if (s.crash.on_event.empty()) {
    cut(s, "at " + s.id);
    return;
  }
  std::lock_guard<std::mutex> g(mu_);
  armed_ = armed_cut{&s, now + s.crash.within_ms};
}

void crash_drill::on_event(const lifecycle_event& e) {
  std::lock_guard<std::mutex> g(mu_);
  if (armed_ && !fired_.load() && type_matches(armed_->s->crash.on_event, e.type)) {
    // The power goes now, from the bus thread, while the session is still inside what the
    // event announced (a compaction waits on the model's answer in virtual time).
    power_.kill();
    fired_by_ = e.type + (e.session_key.empty() ? "" : " of " + e.session_key);
    fired_.store(true);
  }
}

crash_drill::poll_result crash_drill::poll(std::int64_t now) {
  std::optional<armed_cut> armed;
  {
    std::lock_guard<std::mutex> g(mu_);
    armed = armed_;
  }
  if (!armed) return poll_result::quiet;
  if (fired_.load()) {
    cut(*armed->s, "at " + fired_by_);
    return rt_ ? poll_result::restarted : poll_result::gone;
  }
  if (now >= armed->deadline) {
    checks_.expect(*armed->s, false, "crash on " + armed->s->crash.on_event,
                   fmt::format("no {} event within {} ms of simulated time", armed->s->crash.on_event, armed->s->crash.within_ms));
    std::lock_guard<std::mutex> g(mu_);
    armed_.reset();
  }
  return poll_result::quiet;
}

void crash_drill::finish() {
  std::lock_guard<std::mutex> g(mu_);
  if (!armed_) return;
  checks_.expect(*armed_->s, false, "crash on " + armed_->s->crash.on_event,
                 "no " + armed_->s->crash.on_event + " event before the end");
  armed_.reset();
}

void crash_drill::recovery_checks(const step& s) {
  const std::map<std::string, acked_session> acked = ledger_.acked();
  // Every file loads: the store without quarantine, every transcript with at most a torn
  // last line (repaired on open).
  bool store_ok = true;
  std::string store_detail;
  for (const auto& st : rt_->startup().stores)
    if (st.quarantine) {
      store_ok = false;
      store_detail = st.path + " was quarantined";
    }
  checks_.expect(s, store_ok, "after the restart: sessions.json loads", store_detail);
  std::size_t bad_files = 0, files = 0;
  std::string bad_detail;
  for (const auto& rel : checks_.files_matching("agents/*/sessions/*.jsonl")) {
    ++files;
    auto rep = storage::check_transcript(base_, state_dir_ + "/" + rel);
    if (!rep) {
      ++bad_files;
      bad_detail = rel + ": " + rep.error().message();
      continue;
    }
    for (const auto& p : rep->problems)
      if (p.line != 0 && p.line <= rep->lines) {  // header = line 1: only line lines + 1, the last, may be torn
        ++bad_files;
        bad_detail = fmt::format("{} line {}: {}", rel, p.line, p.what);
        break;
      }
  }
  checks_.expect(s, bad_files == 0, fmt::format("after the restart: all {} transcripts load", files), bad_detail);
  // Acknowledged messages and session ids.
  std::size_t missing = 0, moved = 0, checked = 0;
  std::string miss_detail, moved_detail;
  for (const auto& [key, a] : acked) {
    auto row = rt_->session(key);
    if (!row || !row->has_value()) {
      // Maintenance may have ended the session before the power went (its transcript was
      // archived or deleted then); a live transcript is adopted by the start-up reconcile.
      if (row && !transcripts_before_.count(transcript_rel(agent_of(key), a.session_id))) continue;
      ++moved;
      moved_detail = key + " has no row";
      continue;
    }
    const std::string id(row->value().session_id().value_or(""));
    if (id != a.session_id) {
      ++moved;
      moved_detail = fmt::format("{}: session {} became {}", key, a.session_id, id);
      continue;
    }
    auto path = checks_.transcript_of(key);
    const auto msgs = path ? transcript_messages(base_, *path) : std::vector<std::pair<std::string, std::string>>{};
    for (const auto& text : a.texts) {
      ++checked;
      const bool found = std::any_of(msgs.begin(), msgs.end(), [&](const auto& m) { return m.first == "user" && m.second == text; });
      if (!found) {
        ++missing;
        miss_detail = fmt::format("{} ({}): \"{}\" is not in its transcript", key, a.session_id, text.substr(0, 60));
      }
    }
  }
  checks_.expect(s, missing == 0, fmt::format("after the restart: every acknowledged message is in its transcript ({} checked)", checked), miss_detail);
  checks_.expect(s, moved == 0, fmt::format("after the restart: sessions continue with the same ids ({} sessions)", acked.size()), moved_detail);
  // The store and the transcripts agree.
  std::size_t rows = 0, dangling = 0;
  std::string dangling_detail;
  if (auto all = rt_->sessions()) {
    for (const auto& r : *all) {
      ++rows;
      const std::string id(r.entry.session_id().value_or(""));
      const std::string rel = transcript_rel(r.agent_id, id);
      const std::string path = state_dir_ + "/" + rel;
      if (!id.empty() && !checks_.exists(path) && r.entry.session_file()) {
        const std::string file(*r.entry.session_file());
        if (checks_.exists(file.starts_with("/") ? file : state_dir_ + "/agents/" + r.agent_id + "/sessions/" + file)) continue;
      }
      if (id.empty() || !checks_.exists(path)) {
        if (!transcripts_before_.count(rel)) continue;
        ++dangling;
        dangling_detail = r.key + " points at a missing transcript " + id;
      }
    }
  } else {
    ++dangling;
    dangling_detail = all.error().message();
  }
  checks_.expect(s, dangling == 0, fmt::format("after the restart: sessions.json and the transcripts agree ({} rows)", rows), dangling_detail);
}

void crash_drill::cut(const step& s, const std::string& why) {
  {
    std::lock_guard<std::mutex> g(mu_);
    armed_.reset();
  }
  // A scripted cut waits for a quiet runtime: quiesce() settles the commit log too, so every
  // record sent so far (the user's line of a model call still waiting among them) is answered
  // and no sync is in flight, and what survives is a function of virtual time, not of whether
  // a sync worker got there first. A cut fired by an event has already happened.
  if (!fired_.load()) host_.quiesce();
  power_.kill();
  const std::int64_t at = clk_.now_ms();
  const std::int64_t inflight = ledger_.inflight(), failed_before = ledger_.failed_turns();
  (void)rt_->stop(std::chrono::seconds(5));
  rt_.reset();
  ++crashes_;
  ledger_.forget_inflight();  // the dead runtime answered (or dropped) them all
  // The dead process's lock table goes with it (the files stay, judged stale by the new pid).
  storage::release_all_held_locks();
  {
    // Rows may name a transcript that was never written (a session that only had heartbeats):
    // only the transcripts that existed before the power loss must still be there.
    const auto before = checks_.files_matching("agents/*/sessions/*.jsonl");
    transcripts_before_ = std::set<std::string>(before.begin(), before.end());
  }
  auto lost = power_.power_loss();
  fired_.store(false);
  // A lock file the power loss left without a readable payload is judged by its mtime (a
  // writer may be filling it in); a reboot outlasts that grace, but the virtual clock cannot
  // age real mtimes, so the reboot's passing is applied here. Locks with a payload are left
  // to the runtime's own stale-lock rules (their pid is dead).
  std::int64_t locks_cleared = 0;
  for (const auto& rel : checks_.files_matching("agents/*/sessions/*.lock")) {
    auto text = storage::read_file(base_, state_dir_ + "/" + rel, 1 << 16);
    auto v = json::parse(text.ok() ? *text : std::string());
    if (v && v->is_object() && v->get_object().contains("pid")) continue;
    if (base_.unlink(state_dir_ + "/" + rel).ok()) ++locks_cleared;
  }
  fault_record rec;
  rec.step = s.id;
  rec.kind = "crash";
  rec.label = "power loss " + why;
  rec.from = rec.until = at;
  rec.cost["lostUnacked"] = inflight;
  rec.cost["failedTurns"] = ledger_.failed_turns() - failed_before;
  if (lost) {
    rec.cost["filesTorn"] = lost->files_torn;
    rec.cost["bytesDropped"] = lost->bytes_dropped;
    rec.cost["entriesVanished"] = lost->entries_vanished;
    rec.cost["emptyLocksCleared"] = locks_cleared;
  }
  figs_->add_mark(at, "crash", rec.label);
  figs_->add_fault(std::move(rec));
  if (!lost) {
    checks_.expect(s, false, "the power loss is applied", lost.error().message());
    return;
  }
  if (status st = host_.start_runtime(); !st.ok()) {
    checks_.expect(s, false, "the runtime restarts on the same state dir", st.message());
    return;
  }
  checks_.expect(s, true, "the runtime restarts on the same state dir");
  recovery_checks(s);
}

}  // namespace sessionrt::sim
