#include "sim/scenario_run.hpp"

#include <fmt/format.h>
#include <fnmatch.h>
#include <stdlib.h>

#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "actors/router/event_routing.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/reset_policy.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/transcript_entry.hpp"
#include "runtime/runtime.hpp"
#include "sim/fault_window_fs.hpp"
#include "sim/report_json.hpp"
#include "sim/scenario_model.hpp"
#include "sim/workload.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/process_probe.hpp"
#include "storage/transcript_check.hpp"
#include "storage/write_lock.hpp"

namespace sessionrt::sim {

namespace {

namespace fsys = std::filesystem;
constexpr std::int64_t kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;
// The longest virtual step: timers (daily / idle expiry, maintenance) fire at most this late.
constexpr std::int64_t kMaxStepMs = kMinute;
// A scripted turn that has not finished after this much simulated time is a failed step.
constexpr std::int64_t kTurnDeadlineMs = kDay;
// Acknowledged texts kept per session for the crash checks (the recent ones are the ones a
// power loss can take).
constexpr std::size_t kAckedKept = 16;
// quiesce(): rounds of 50 ms without progress before a step is taken as waiting on time.
constexpr int kStallRounds = 20;

std::string fault_kind_name(fault_kind k) {
  return k == fault_kind::enospc ? "enospc" : k == fault_kind::eio ? "eio" : "short_write";
}
std::string fault_target_name(fault_target t) {
  return t == fault_target::any ? "any file" : t == fault_target::store ? "store writes" : "transcript writes";
}

bool type_matches(const std::string& pattern, const std::string& type) {
  if (!pattern.empty() && pattern.back() == '.') return type.starts_with(pattern);
  return type == pattern;
}

std::string text_of(const chat_event& ev) {
  if (!ev.text.empty() || ev.content.empty()) return ev.text;
  boost::json::value c = ev.content;
  return message_text(&c);
}

// The agent a session key names ("agent:<id>:..."), "main" when it names none.
std::string agent_of(const std::string& key) {
  auto parsed = actors::parse_agent_session_key(key);
  return parsed ? parsed->agent_id : "main";
}

// "agents/<agent>/sessions/<id>.jsonl": a transcript's path relative to the state dir.
std::string transcript_rel(const std::string& agent, const std::string& session_id) {
  return "agents/" + agent + "/sessions/" + session_id + ".jsonl";
}

// A directory's names, none when it cannot be listed (not there yet).
std::vector<std::string> names_in(storage::fs& files, const std::string& dir) {
  auto names = files.list_dir(dir);
  return names.ok() ? std::move(*names) : std::vector<std::string>{};
}

struct acked_session {
  std::string session_id;
  std::deque<std::string> texts;
  std::int64_t count = 0;
};

struct turn_wait {
  std::mutex mu;
  bool done = false;
  turn_outcome out;
};

class engine {
 public:
  engine(const scenario& sc, const run_options& opt)
      : sc_(sc),
        opt_(opt),
        seed_(opt.seed.value_or(sc.seed)),
        clk_(sc.start_ms),
        mem_(opt.state_dir.empty() && !opt.on_disk ? std::make_unique<storage::memory_fs>(clk_) : nullptr),
        power_(base(), seed_, /*forward_syncs=*/false),  // mem_ is set by now (declared before)
        faults_(power_, clk_, /*stamp_mtimes=*/mem_ == nullptr),  // memory_fs stamps virtual time itself
        model_(std::make_shared<scenario_model>(clk_, sc.model, seed_)),
        end_ms_(sc.end_ms),
        figs_(std::make_unique<report_figures>(sc.start_ms, sc.end_ms, sc.settings.model.context_window)) {}

  ~engine() {
    if (rt_) (void)rt_->stop();
    rt_.reset();
    if (!temp_dir_.empty()) {
      std::error_code ec;
      fsys::remove_all(temp_dir_, ec);
    }
  }

  result<run_outcome> run();

 private:
  status start_runtime();
  void on_event(const lifecycle_event& e);
  std::string predicted_key(const chat_event& ev) const;
  void send_chat(const chat_event& ev, std::function<void(const turn_outcome&)> after);
  void quiesce();
  bool blocked_on_time();
  // Moves virtual time towards `t`, sending the workload's events on the way; returns early
  // when `stop` holds. Returns false when the run must end (the runtime is gone).
  bool run_until(std::int64_t t, const std::function<bool()>& stop = {});
  void dispatch_workload();
  // The maintenance pass due at the clock's time, if any; false when the runtime failed.
  bool maintain_if_due();
  void sample(bool force = false);
  void flush_store();  // rt_->flush(), a failure counted against the fault spans open now
  void handle_crash(const step& s, const std::string& why);
  void recovery_checks(const step& s);
  void run_step(const step& s);
  void check_turn(const step& s, const turn_outcome& out);
  void check_common(const step& s, const std::string& step_key);
  void expect(const step& s, bool ok, std::string what, std::string detail = "");
  void expect_named(const std::string& step, bool ok, std::string what, std::string detail);
  result<std::string> transcript_of(const std::string& key);
  std::vector<std::string> files_matching(const std::string& glob) const;
  std::int64_t disk_bytes() const;
  // What the runtime's fs stands on (the memory fs or the disk): the engine's own reads and
  // checks go there, below the faults and the power-loss tracking.
  storage::fs& base() const { return mem_ ? static_cast<storage::fs&>(*mem_) : storage::posix_fs(); }
  bool exists(const std::string& path) const { return base().stat(path).ok(); }
  void finalize_faults();

  const scenario& sc_;
  run_options opt_;
  std::uint64_t seed_;
  manual_clock clk_;
  std::unique_ptr<storage::memory_fs> mem_;  // the files, unless they are on disk (opt.on_disk, a state dir)
  storage::power_loss_fs power_;
  fault_window_fs faults_;
  std::shared_ptr<scenario_model> model_;
  std::int64_t end_ms_;
  std::unique_ptr<report_figures> figs_;
  std::string state_dir_, temp_dir_;
  std::unique_ptr<storage::fake_process_probe> probe_;
  int incarnation_ = 0;
  std::unique_ptr<runtime::runtime> rt_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<std::uint64_t> progress_{0};
  // Answers and session events (which change rows), and their count at the last step-end write.
  std::atomic<std::uint64_t> rows_touched_{0};
  std::uint64_t flushed_at_ = ~std::uint64_t{0};
  std::int64_t inflight_ = 0;
  std::map<std::string, int> inflight_keys_;
  std::map<std::string, acked_session> acked_;
  bool recording_ = false;
  std::vector<lifecycle_event> step_events_;
  std::int64_t failed_turns_ = 0;

  struct armed_crash {
    const step* s = nullptr;
    std::int64_t deadline = 0;
  };
  std::optional<armed_crash> armed_;
  std::atomic<bool> crash_fired_{false};
  std::string crash_event_;

  struct open_fault {
    const step* s;
    std::size_t window;
    std::int64_t from, until;
    std::int64_t failed_turns = 0, turns = 0, failed_store_writes = 0;
  };
  std::vector<open_fault> open_faults_;
  std::vector<fault_record> crash_records_;

  std::map<std::string, std::string> session_of_step_;
  std::optional<workload_generator> workload_;
  std::optional<generated_event> next_event_;
  std::int64_t next_sample_ = 0, next_progress_ = 0;
  std::chrono::steady_clock::time_point wall_start_ = std::chrono::steady_clock::now();
  bool runtime_lost_ = false;
  int crashes_ = 0;
  // Engine diagnostics for the progress line (where the wall time goes): virtual steps taken,
  // waits for a turn between actors, and waits that ended without progress.
  std::int64_t steps_ = 0, waits_ = 0, stalls_ = 0;
  std::set<std::string> transcripts_before_crash_;
};

std::string engine::predicted_key(const chat_event& ev) const {
  if (!ev.session_key.empty()) return ev.session_key;
  return actors::resolve_route(actors::route_input_of(ev), sc_.settings.routing).session_key;
}

void engine::on_event(const lifecycle_event& e) {
  figs_->observe(e);
  {
    std::lock_guard<std::mutex> g(mu_);
    if (recording_) step_events_.push_back(e);
    if (armed_ && !crash_fired_.load() && type_matches(armed_->s->crash.on_event, e.type)) {
      // The power goes now, from the bus thread, while the session is still inside what the
      // event announced (a compaction waits on the model's answer in virtual time).
      power_.kill();
      crash_event_ = e.type + (e.session_key.empty() ? "" : " of " + e.session_key);
      crash_fired_.store(true);
    }
  }
  // A write of the store or a maintenance report changes no row that a step-end write owes.
  if (e.type != event_types::store_flushed && e.type != event_types::maintenance_report) rows_touched_.fetch_add(1);
  progress_.fetch_add(1);
  cv_.notify_all();
}

status engine::start_runtime() {
  ++incarnation_;
  // A new pid per incarnation: the dead one's locks are judged stale (dead-pid), as after a reboot.
  probe_ = std::make_unique<storage::fake_process_probe>(90000 + incarnation_);
  runtime::runtime_options o;
  o.settings = sc_.settings;
  o.settings.state_dir = state_dir_;
  o.async_runner = model_;
  o.time = &clk_;
  o.timers_clock = &clk_;
  o.virtual_time = true;
  o.threads = 2;
  o.files = &faults_;
  o.files_block = mem_ == nullptr;  // files in memory: no actor needs a thread of its own
  o.id_seed = seed_;
  o.probe = probe_.get();
  o.subscriptions.push_back({{}, [this](const lifecycle_event& e) { on_event(e); }});
  auto started = runtime::runtime::start(o);
  if (!started) return started.error();
  rt_ = std::move(*started);
  return {};
}

void engine::send_chat(const chat_event& ev, std::function<void(const turn_outcome&)> after) {
  const std::string key = predicted_key(ev);
  const std::string text = text_of(ev);
  {
    std::lock_guard<std::mutex> g(mu_);
    ++inflight_;
    ++inflight_keys_[key];
  }
  rt_->send(ev, [this, key, text, after = std::move(after)](turn_outcome out) {
    {
      std::lock_guard<std::mutex> g(mu_);
      --inflight_;
      if (auto it = inflight_keys_.find(key); it != inflight_keys_.end() && --it->second <= 0) inflight_keys_.erase(it);
      const std::int64_t now = clk_.now_ms();
      for (auto& f : open_faults_)
        if (now >= f.from && now < f.until) {
          ++f.turns;
          if (!out.st.ok()) ++f.failed_turns;
        }
      if (!out.st.ok()) ++failed_turns_;
      if (out.st.ok() && !out.session_id.empty()) {
        auto& a = acked_[out.session_key];
        if (a.session_id != out.session_id) a = acked_session{out.session_id, {}, 0};
        if (out.command.empty()) {  // a command's text is not stored as a message
          a.texts.push_back(text);
          if (a.texts.size() > kAckedKept) a.texts.pop_front();
          ++a.count;
        }
      }
    }
    if (after) after(out);
    rows_touched_.fetch_add(1);
    progress_.fetch_add(1);
    cv_.notify_all();
  });
}

bool engine::blocked_on_time() {
  std::size_t unexplained = 0;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& [k, n] : inflight_keys_)
      if (n > 0 && !model_->waiting_on(k)) ++unexplained;
  }
  return unexplained == 0 || unexplained <= rt_->model_calls().waiting;
}

void engine::quiesce() {
  int stalls = 0;
  for (int round = 0; round < 10000 && rt_; ++round) {
    const std::uint64_t before = progress_.load() + static_cast<std::uint64_t>(model_->started());
    // The sessions, then the commit log (no record unanswered, no sync running: records sent
    // while a model call waits ack no turn, so no progress would wait for them), then the bus.
    rt_->settle();
    if (crash_fired_.load()) return;
    const std::uint64_t after = progress_.load() + static_cast<std::uint64_t>(model_->started());
    if (after != before) continue;
    if (blocked_on_time()) return;
    // A turn is between actors (a group commit's sync, the blocking pool): wait for it to
    // report back. A session that waits on a timer of its own never will, hence the bound
    // (1 s without progress: rare in a run, see the progress line's stalls, and long enough
    // for a loaded or sanitized build); a sync still running does not count towards it,
    // however slow the disk.
    std::unique_lock<std::mutex> lk(mu_);
    ++waits_;
    if (!cv_.wait_for(lk, std::chrono::milliseconds(50), [&] {
          return progress_.load() + static_cast<std::uint64_t>(model_->started()) != before;
        }) &&
        faults_.syncs_in_flight() == 0) {
      ++stalls_;
      if (++stalls >= kStallRounds) return;
    }
  }
}

void engine::sample(bool force) {
  const std::int64_t now = clk_.now_ms();
  for (const auto& c : model_->take_calls()) figs_->model_call(c.at_ms);
  if (force || now >= next_sample_) {
    if (rt_) {
      flush_store();  // as at the end of a step: store writes at virtual times, not wall ones
      if (auto rows = rt_->sessions()) figs_->sample_rows(now, static_cast<std::int64_t>(rows->size()));
    }
    figs_->sample_disk(now, disk_bytes());
    const std::int64_t b = bucket_size_for(end_ms_ - sc_.start_ms);
    next_sample_ = sc_.start_ms + ((now - sc_.start_ms) / b + 1) * b;
  }
  if (opt_.progress && (force || now >= next_progress_)) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
    const std::int64_t turns = figs_->turns();
    const std::int64_t day = (now - sc_.start_ms) / kDay + 1;
    opt_.progress(fmt::format("simulated day {} ({}), {} turns done, {:.0f} turns/s ({} steps, {} waits, {} stalls)", day,
                              format_iso_ms(now), turns, wall > 0 ? static_cast<double>(turns) / wall : 0.0, steps_,
                              waits_, stalls_));
    next_progress_ = now + kHour;
  }
}

void engine::flush_store() {
  if (rt_->flush().ok()) return;
  const std::int64_t now = clk_.now_ms();
  std::lock_guard<std::mutex> g(mu_);
  for (auto& f : open_faults_)
    if (now >= f.from && now < f.until) ++f.failed_store_writes;
}

void engine::dispatch_workload() {
  if (!workload_) return;
  const std::int64_t now = clk_.now_ms();
  bool sent = false;
  while (next_event_ && next_event_->at_ms <= now) {
    auto& ev = *next_event_;
    if (ev.what == generated_event::kind::chat) {
      ev.chat.timestamp_ms = 0;  // the runtime's clock is the time
      send_chat(ev.chat, {});
    } else {
      ev.sys.timestamp_ms = 0;
      rt_->send(ev.sys);
    }
    sent = true;
    next_event_ = workload_->next();
  }
  if (sent) quiesce();
}

bool engine::run_until(std::int64_t t, const std::function<bool()>& stop) {
  for (;;) {
    if (!rt_) return false;
    dispatch_workload();
    if (crash_fired_.load() && armed_) {
      const step* s = armed_->s;
      handle_crash(*s, "at " + crash_event_);
      if (!rt_) return false;
      continue;
    }
    if (armed_ && clk_.now_ms() >= armed_->deadline) {
      expect(*armed_->s, false, "crash on " + armed_->s->crash.on_event,
             fmt::format("no {} event within {} ms of simulated time", armed_->s->crash.on_event, armed_->s->crash.within_ms));
      armed_.reset();
    }
    if (stop && stop()) return true;
    const std::int64_t now = clk_.now_ms();
    if (now >= t) return true;
    std::int64_t target = std::min(t, now + kMaxStepMs);
    if (next_event_) target = std::min(target, std::max(next_event_->at_ms, now));
    if (auto due = model_->next_due_ms()) target = std::min(target, std::max(*due, now));
    if (next_sample_ > now) target = std::min(target, next_sample_);
    if (const std::int64_t q = sc_.resolution_ms; q > 0)
      target = std::min(t, std::max(target, sc_.start_ms + ((now - sc_.start_ms) / q + 1) * q));
    ++steps_;
    if (status st = rt_->advance_clock(target - now); !st.ok()) {
      expect_named("run", false, "virtual time advances", st.message());
      return false;
    }
    // The turns the clock woke finish (or wait on the model again) before a maintenance pass
    // plans: what the pass sees is then a function of virtual time only.
    quiesce();
    if (!maintain_if_due()) return false;
    // Under virtual time the store has no window of its own: the step is the window, so what
    // a crash finds on disk does not depend on the machine's timing. Rows change with a
    // session's events and answers, so a step without either has nothing to write.
    if (const std::uint64_t n = rows_touched_.load(); n != flushed_at_) {
      flushed_at_ = n;
      flush_store();
    }
    sample();
  }
}

bool engine::maintain_if_due() {
  // The store writes sessions.json on the real clock; the pass counts the rows' projected
  // size instead of the file's, and not the temp file of a write in flight, so when the store
  // wrote does not change the plan.
  auto ran = rt_->run_due_maintenance();
  if (!ran.ok()) {
    expect_named("run", false, "a maintenance pass runs", ran.error().message());
    return false;
  }
  if (*ran) quiesce();
  return true;
}

std::int64_t engine::disk_bytes() const {
  std::int64_t total = 0;
  const std::string agents = state_dir_ + "/agents";
  for (const auto& agent : names_in(base(), agents)) {
    const std::string dir = agents + "/" + agent + "/sessions";
    for (const auto& name : names_in(base(), dir))
      if (auto info = base().lstat(dir + "/" + name); info.ok() && info->is_regular())
        total += static_cast<std::int64_t>(info->size);
  }
  return total;
}

std::vector<std::string> engine::files_matching(const std::string& glob) const {
  std::vector<std::string> out;
  std::vector<std::string> dirs{""};  // relative to the state dir
  while (!dirs.empty()) {
    const std::string rel = std::move(dirs.back());
    dirs.pop_back();
    for (const auto& name : names_in(base(), rel.empty() ? state_dir_ : state_dir_ + "/" + rel)) {
      const std::string path = rel.empty() ? name : rel + "/" + name;
      if (::fnmatch(glob.c_str(), path.c_str(), FNM_PATHNAME) == 0) out.push_back(path);
      if (auto info = base().lstat(state_dir_ + "/" + path); info.ok() && info->is_dir()) dirs.push_back(path);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void engine::expect_named(const std::string& step, bool ok, std::string what, std::string detail) {
  figs_->add_expectation({step, ok, std::move(what), ok ? std::string() : std::move(detail)});
}

void engine::expect(const step& s, bool ok, std::string what, std::string detail) {
  expect_named(s.id, ok, std::move(what), std::move(detail));
}

result<std::string> engine::transcript_of(const std::string& key) {
  auto row = rt_->session(key);
  if (!row) return row.error();
  if (!row->has_value()) return status(errc::not_found, "no row for " + key);
  const std::string id(row->value().session_id().value_or(""));
  return state_dir_ + "/" + transcript_rel(agent_of(key), id);
}

// Message texts of a transcript, oldest first; unreadable lines (a torn tail) are skipped.
std::vector<std::pair<std::string, std::string>> transcript_messages(storage::fs& files, const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  auto text = storage::read_file(files, path, std::size_t(1) << 30);
  if (!text.ok()) return out;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    auto v = json::parse(line);
    if (!v || !v->is_object()) continue;
    const auto& o = v->get_object();
    if (json::get_string(o, "type") != std::optional<std::string_view>("message")) continue;
    const auto* m = json::get_object(o, "message");
    if (!m) continue;
    out.emplace_back(std::string(json::get_string(*m, "role").value_or("")), message_text(m->if_contains("content")));
  }
  return out;
}

void engine::check_common(const step& s, const std::string& step_key) {
  const auto& e = s.expect;
  std::vector<lifecycle_event> events;
  {
    std::lock_guard<std::mutex> g(mu_);
    events = step_events_;
  }
  auto seen = [&](const std::string& pattern) {
    return std::count_if(events.begin(), events.end(), [&](const lifecycle_event& ev) { return type_matches(pattern, ev.type); });
  };
  auto seen_list = [&] {
    std::string all;
    for (const auto& ev : events) all += (all.empty() ? "" : ", ") + ev.type;
    return all.empty() ? std::string("none") : all;
  };
  for (const auto& p : e.events_include)
    expect(s, seen(p) > 0, "event " + p, "not published during the step (seen: " + seen_list() + ")");
  for (const auto& p : e.events_exclude)
    expect(s, seen(p) == 0, "no event " + p, fmt::format("published {} time(s) during the step", seen(p)));
  for (const auto& [p, n] : e.events_count)
    expect(s, n.holds(seen(p)), fmt::format("{} {} event(s)", n.describe(), p), fmt::format("saw {}", seen(p)));
  for (const auto& t : e.transcripts) {
    const std::string key = t.key.empty() ? step_key : t.key;
    auto path = transcript_of(key);
    if (!path) {
      expect(s, false, "transcript of " + key, path.error().message());
      continue;
    }
    const auto msgs = transcript_messages(base(), *path);
    auto has = [&](const std::string& text) {
      return std::any_of(msgs.begin(), msgs.end(), [&](const auto& m) { return m.second.find(text) != std::string::npos; });
    };
    for (const auto& c : t.contains) expect(s, has(c), "transcript of " + key + " contains \"" + c + "\"", "not in any of its " + std::to_string(msgs.size()) + " messages");
    for (const auto& c : t.excludes) expect(s, !has(c), "transcript of " + key + " lacks \"" + c + "\"", "found in a message");
    if (t.messages)
      expect(s, t.messages->holds(static_cast<std::int64_t>(msgs.size())),
             fmt::format("transcript of {} has {} messages", key, t.messages->describe()), fmt::format("it has {}", msgs.size()));
  }
  for (const auto& r : e.rows) {
    const std::string key = r.key.empty() ? step_key : r.key;
    auto row = rt_->session(key);
    if (!row) {
      expect(s, false, "row " + key, row.error().message());
      continue;
    }
    if (r.absent) {
      expect(s, !row->has_value(), "no row " + key, "the row exists");
      continue;
    }
    if (!row->has_value()) {
      expect(s, false, "row " + key, "no row in the store");
      continue;
    }
    const auto& obj = row->value().json();
    for (const auto& kv : r.fields) {
      const std::string field(kv.key());
      const boost::json::value* got = obj.if_contains(kv.key());
      const std::string shown = got ? boost::json::serialize(*got) : std::string("absent");
      if (kv.value().is_object()) {
        const auto& ops = kv.value().get_object();
        if (const auto* ex = ops.if_contains("exists"))
          expect(s, (got != nullptr) == ex->get_bool(), fmt::format("row {} field {} {}", key, field, ex->get_bool() ? "exists" : "absent"), "it is " + shown);
        const std::int64_t n = got ? json::as_int(*got).value_or(INT64_MIN) : INT64_MIN;
        const bool has_n = got && json::as_int(*got).has_value();
        if (const auto* lo = ops.if_contains("atLeast"))
          expect(s, has_n && n >= json::as_int(*lo).value_or(0), fmt::format("row {} field {} >= {}", key, field, json::as_int(*lo).value_or(0)), "it is " + shown);
        if (const auto* hi = ops.if_contains("atMost"))
          expect(s, has_n && n <= json::as_int(*hi).value_or(0), fmt::format("row {} field {} <= {}", key, field, json::as_int(*hi).value_or(0)), "it is " + shown);
      } else {
        expect(s, got && *got == kv.value(), fmt::format("row {} field {} = {}", key, field, boost::json::serialize(kv.value())), "it is " + shown);
      }
    }
  }
  if (e.files) {
    for (const auto& g : e.files->exist)
      expect(s, !files_matching(g).empty(), "a file matches " + g, "none does");
    for (const auto& g : e.files->absent) {
      auto m = files_matching(g);
      expect(s, m.empty(), "no file matches " + g, m.empty() ? "" : "found " + m.front());
    }
    for (const auto& [g, n] : e.files->count) {
      auto m = files_matching(g);
      expect(s, n.holds(static_cast<std::int64_t>(m.size())), fmt::format("{} file(s) match {}", n.describe(), g), fmt::format("{} do", m.size()));
    }
  }
}

void engine::check_turn(const step& s, const turn_outcome& out) {
  const auto& e = s.expect;
  if (e.ok) expect(s, out.st.ok() == *e.ok, *e.ok ? "turn acknowledged" : "turn fails", out.st.ok() ? "it succeeded" : "it failed: " + out.st.message());
  if (e.error_contains) expect(s, !out.st.ok() && out.st.message().find(*e.error_contains) != std::string::npos, "error contains \"" + *e.error_contains + "\"", out.st.ok() ? "the turn succeeded" : "error: " + out.st.message());
  if (e.key) expect(s, out.session_key == *e.key, "key " + *e.key, "key is " + out.session_key);
  if (e.same_session_as) {
    const std::string& other = session_of_step_[*e.same_session_as];
    expect(s, out.session_id == other, "same session as " + *e.same_session_as, fmt::format("session {} vs {}", out.session_id, other));
  }
  if (e.changed_session_from) {
    const std::string& other = session_of_step_[*e.changed_session_from];
    expect(s, !out.session_id.empty() && out.session_id != other, "new session since " + *e.changed_session_from, "still session " + out.session_id);
  }
  if (e.reset_reason) {
    const std::string got = out.new_session && !out.reset_reason.empty() ? out.reset_reason : "none";
    expect(s, got == *e.reset_reason, "reset reason " + *e.reset_reason, "reset reason is " + got);
  }
  if (e.suppressed) expect(s, out.suppressed == *e.suppressed, *e.suppressed ? "reply suppressed" : "reply delivered", out.suppressed ? "it was suppressed" : "it was delivered");
  if (e.reply_contains)
    expect(s, out.reply && out.reply->find(*e.reply_contains) != std::string::npos, "reply contains \"" + *e.reply_contains + "\"",
           out.reply ? "reply: " + out.reply->substr(0, 120) : "no reply");
  if (e.output_contains)
    expect(s, out.command_output.find(*e.output_contains) != std::string::npos, "output contains \"" + *e.output_contains + "\"",
           "output: " + out.command_output.substr(0, 160));
  session_of_step_[s.id] = out.session_id;
  check_common(s, out.session_key);
}

void engine::recovery_checks(const step& s) {
  std::map<std::string, acked_session> acked;
  {
    std::lock_guard<std::mutex> g(mu_);
    acked = acked_;
  }
  // Every file loads: the store without quarantine, every transcript with at most a torn
  // last line (repaired on open).
  bool store_ok = true;
  std::string store_detail;
  for (const auto& st : rt_->startup().stores)
    if (st.quarantine) {
      store_ok = false;
      store_detail = st.path + " was quarantined";
    }
  expect(s, store_ok, "after the restart: sessions.json loads", store_detail);
  std::size_t bad_files = 0, files = 0;
  std::string bad_detail;
  for (const auto& rel : files_matching("agents/*/sessions/*.jsonl")) {
    ++files;
    auto rep = storage::check_transcript(base(), state_dir_ + "/" + rel);
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
  expect(s, bad_files == 0, fmt::format("after the restart: all {} transcripts load", files), bad_detail);
  // Acknowledged messages and session ids.
  std::size_t missing = 0, moved = 0, checked = 0;
  std::string miss_detail, moved_detail;
  for (const auto& [key, a] : acked) {
    auto row = rt_->session(key);
    if (!row || !row->has_value()) {
      // Maintenance may have ended the session before the power went (its transcript was
      // archived or deleted then); a live transcript is adopted by the start-up reconcile.
      if (row && !transcripts_before_crash_.count(transcript_rel(agent_of(key), a.session_id))) continue;
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
    auto path = transcript_of(key);
    const auto msgs = path ? transcript_messages(base(), *path) : std::vector<std::pair<std::string, std::string>>{};
    for (const auto& text : a.texts) {
      ++checked;
      const bool found = std::any_of(msgs.begin(), msgs.end(), [&](const auto& m) { return m.first == "user" && m.second == text; });
      if (!found) {
        ++missing;
        miss_detail = fmt::format("{} ({}): \"{}\" is not in its transcript", key, a.session_id, text.substr(0, 60));
      }
    }
  }
  expect(s, missing == 0, fmt::format("after the restart: every acknowledged message is in its transcript ({} checked)", checked), miss_detail);
  expect(s, moved == 0, fmt::format("after the restart: sessions continue with the same ids ({} sessions)", acked.size()), moved_detail);
  // The store and the transcripts agree.
  std::size_t rows = 0, dangling = 0;
  std::string dangling_detail;
  if (auto all = rt_->sessions()) {
    for (const auto& r : *all) {
      ++rows;
      const std::string id(r.entry.session_id().value_or(""));
      const std::string rel = transcript_rel(r.agent_id, id);
      const std::string path = state_dir_ + "/" + rel;
      if (!id.empty() && !exists(path) && r.entry.session_file()) {
        const std::string file(*r.entry.session_file());
        if (exists(file.starts_with("/") ? file : state_dir_ + "/agents/" + r.agent_id + "/sessions/" + file)) continue;
      }
      if (id.empty() || !exists(path)) {
        if (!transcripts_before_crash_.count(rel)) continue;
        ++dangling;
        dangling_detail = r.key + " points at a missing transcript " + id;
      }
    }
  } else {
    ++dangling;
    dangling_detail = all.error().message();
  }
  expect(s, dangling == 0, fmt::format("after the restart: sessions.json and the transcripts agree ({} rows)", rows), dangling_detail);
}

void engine::handle_crash(const step& s, const std::string& why) {
  armed_.reset();
  // A scripted cut waits for a quiet runtime: quiesce() settles the commit log too, so every
  // record sent so far (the user's line of a model call still waiting among them) is answered
  // and no sync is in flight, and what survives is a function of virtual time, not of whether
  // a sync worker got there first. A cut fired by an event has already happened.
  if (!crash_fired_.load()) quiesce();
  power_.kill();
  const std::int64_t at = clk_.now_ms();
  std::int64_t inflight = 0, failed_before = 0;
  {
    std::lock_guard<std::mutex> g(mu_);
    inflight = inflight_;
    failed_before = failed_turns_;
  }
  (void)rt_->stop(std::chrono::seconds(5));
  rt_.reset();
  ++crashes_;
  {
    std::lock_guard<std::mutex> g(mu_);
    inflight_ = 0;  // the dead runtime answered (or dropped) them all
    inflight_keys_.clear();
  }
  // The dead process's lock table goes with it (the files stay, judged stale by the new pid).
  storage::release_all_held_locks();
  {
    // Rows may name a transcript that was never written (a session that only had heartbeats):
    // only the transcripts that existed before the power loss must still be there.
    const auto before = files_matching("agents/*/sessions/*.jsonl");
    transcripts_before_crash_ = std::set<std::string>(before.begin(), before.end());
  }
  auto lost = power_.power_loss();
  crash_fired_.store(false);
  // A lock file the power loss left without a readable payload is judged by its mtime (a
  // writer may be filling it in); a reboot outlasts that grace, but the virtual clock cannot
  // age real mtimes, so the reboot's passing is applied here. Locks with a payload are left
  // to the runtime's own stale-lock rules (their pid is dead).
  std::int64_t locks_cleared = 0;
  for (const auto& rel : files_matching("agents/*/sessions/*.lock")) {
    auto text = storage::read_file(base(), state_dir_ + "/" + rel, 1 << 16);
    auto v = json::parse(text.ok() ? *text : std::string());
    if (v && v->is_object() && v->get_object().contains("pid")) continue;
    if (base().unlink(state_dir_ + "/" + rel).ok()) ++locks_cleared;
  }
  fault_record rec;
  rec.step = s.id;
  rec.kind = "crash";
  rec.label = "power loss " + why;
  rec.from = rec.until = at;
  {
    std::lock_guard<std::mutex> g(mu_);
    rec.cost["lostUnacked"] = inflight;
    rec.cost["failedTurns"] = failed_turns_ - failed_before;
  }
  if (lost) {
    rec.cost["filesTorn"] = lost->files_torn;
    rec.cost["bytesDropped"] = lost->bytes_dropped;
    rec.cost["entriesVanished"] = lost->entries_vanished;
    rec.cost["emptyLocksCleared"] = locks_cleared;
  }
  figs_->add_mark(at, "crash", rec.label);
  crash_records_.push_back(rec);
  figs_->add_fault(std::move(rec));
  if (!lost) {
    expect(s, false, "the power loss is applied", lost.error().message());
    runtime_lost_ = true;
    return;
  }
  if (status st = start_runtime(); !st.ok()) {
    expect(s, false, "the runtime restarts on the same state dir", st.message());
    runtime_lost_ = true;
    return;
  }
  expect(s, true, "the runtime restarts on the same state dir");
  recovery_checks(s);
}

void engine::run_step(const step& s) {
  {
    std::lock_guard<std::mutex> g(mu_);
    recording_ = true;
    step_events_.clear();
  }
  switch (s.kind) {
    case step_kind::send: {
      auto wait = std::make_shared<turn_wait>();
      send_chat(s.chat, [wait](const turn_outcome& out) {
        std::lock_guard<std::mutex> g(wait->mu);
        wait->out = out;
        wait->done = true;
      });
      quiesce();
      const int crashes_before = crashes_;
      auto finished = [this, wait, crashes_before] {
        std::lock_guard<std::mutex> g(wait->mu);
        return wait->done || crashes_ != crashes_before;
      };
      run_until(clk_.now_ms() + kTurnDeadlineMs, finished);
      quiesce();
      bool done = false;
      {
        std::lock_guard<std::mutex> g(wait->mu);
        done = wait->done;
      }
      if (!done && crashes_ != crashes_before) break;  // lost in the crash: counted in its cost
      if (!done) {
        expect(s, false, "the turn finishes", rt_ ? "no answer within a simulated day" : "the runtime is gone");
        break;
      }
      turn_outcome out;
      {
        std::lock_guard<std::mutex> g(wait->mu);
        out = wait->out;
      }
      check_turn(s, out);
      break;
    }
    case step_kind::system: {
      rt_->send(s.sys);
      quiesce();
      // Let its model call (a heartbeat or cron turn) finish.
      for (int i = 0; i < 20 && rt_; ++i) {
        auto due = model_->next_due_ms();
        if (!due) break;
        run_until(*due);
      }
      quiesce();
      check_common(s, s.sys.session_key);
      break;
    }
    case step_kind::advance:
      run_until(clk_.now_ms() + s.advance_ms);
      quiesce();
      check_common(s, "");
      break;
    case step_kind::maintain: {
      auto rep = rt_->maintain();
      if (!rep) expect(s, false, "a maintenance pass runs", rep.error().message());
      quiesce();
      check_common(s, "");
      break;
    }
    case step_kind::fault: {
      const std::size_t w = faults_.add_window(s.fault, clk_.now_ms());
      {
        std::lock_guard<std::mutex> g(mu_);
        open_faults_.push_back({&s, w, clk_.now_ms(), clk_.now_ms() + s.fault.duration_ms});
      }
      figs_->add_mark(clk_.now_ms(), "fault", fmt::format("{} on {}", fault_kind_name(s.fault.kind), fault_target_name(s.fault.target)),
                     clk_.now_ms() + s.fault.duration_ms);
      check_common(s, "");
      break;
    }
    case step_kind::crash:
      if (s.crash.on_event.empty()) {
        handle_crash(s, "at " + s.id);
      } else {
        std::lock_guard<std::mutex> g(mu_);
        armed_ = armed_crash{&s, clk_.now_ms() + s.crash.within_ms};
      }
      break;
  }
  // The store's coalescing window runs on the real clock (a CAF delayed_send), so without
  // this its writes would land at virtual times that depend on the machine's speed. A step
  // ends seconds of simulated time after its changes; the window (50 ms) would have passed.
  if (rt_ && s.kind != step_kind::crash) flush_store();
  std::lock_guard<std::mutex> g(mu_);
  recording_ = false;
  step_events_.clear();
}

void engine::finalize_faults() {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& f : open_faults_) {
    fault_record rec;
    rec.step = f.s->id;
    rec.kind = fault_kind_name(f.s->fault.kind);
    rec.label = fmt::format("{} on {}", rec.kind, fault_target_name(f.s->fault.target));
    rec.from = f.from;
    rec.until = f.until;
    // Not faults_.injected(f.window): the store's own writes follow its real-clock window, so
    // how many of them hit the span is not a function of the seed. The engine's writes are.
    rec.cost["failedStoreWrites"] = f.failed_store_writes;
    rec.cost["turnsDuring"] = f.turns;
    rec.cost["failedTurns"] = f.failed_turns;
    figs_->add_fault(std::move(rec));
  }
}

result<run_outcome> engine::run() {
  if (mem_) {
    // As long as a temp dir's name, so that file sizes that hold paths (sessionFile) and so the
    // report are the same as a run on disk in a temp dir.
    state_dir_ = (fsys::temp_directory_path() / "sessionrt-sim-memory").string();
    if (status st = storage::ensure_dir(*mem_, state_dir_); !st.ok()) return st.with_context("the in-memory state dir");
  } else if (opt_.state_dir.empty()) {
    std::string tmpl = (fsys::temp_directory_path() / "sessionrt-sim-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) return status(errc::io_error, "cannot create a temp dir for the simulation's state");
    temp_dir_ = state_dir_ = tmpl;
  } else {
    state_dir_ = opt_.state_dir;
  }
  if (sc_.workload) {
    auto spec = parse_workload(*sc_.workload, "workload");
    if (!spec) return spec.error();
    auto zone = actors::resolve_reset_zone(sc_.time_zone);
    if (!zone) return zone.error();
    end_ms_ = std::max(end_ms_, sc_.start_ms + spec->days * kDay);
    figs_ = std::make_unique<report_figures>(sc_.start_ms, end_ms_, sc_.settings.model.context_window);
    workload_.emplace(*spec, seed_, sc_.start_ms, *zone, spec->days);
    next_event_ = workload_->next();
  }
  if (sc_.settings.maintenance.max_disk_bytes) figs_->set_disk_budget(*sc_.settings.maintenance.max_disk_bytes);
  if (status st = start_runtime(); !st.ok()) return st.with_context("starting the runtime");
  sample(true);
  for (const auto& s : sc_.steps) {
    if (!rt_) break;
    run_until(s.at_ms);
    if (!rt_) break;
    run_step(s);
  }
  if (rt_) run_until(end_ms_);
  // Let what is still in flight finish (bounded: an hour of simulated time past the end).
  for (int i = 0; rt_ && i < 10000; ++i) {
    std::int64_t n = 0;
    {
      std::lock_guard<std::mutex> g(mu_);
      n = inflight_;
    }
    auto due = model_->next_due_ms();
    if (n == 0 || !due || *due > end_ms_ + kHour) break;
    run_until(*due);
  }
  if (armed_) {
    expect(*armed_->s, false, "crash on " + armed_->s->crash.on_event, "no " + armed_->s->crash.on_event + " event before the end");
    armed_.reset();
  }
  if (rt_) {
    (void)rt_->flush();
    quiesce();
  }
  sample(true);
  finalize_faults();
  const std::int64_t end = std::max(end_ms_, clk_.now_ms());
  auto report = figs_->to_json(sc_.name, seed_, sc_.time_zone, end);
  // Summary expectations.
  for (const auto& [p, n] : sc_.expect_summary) {
    const boost::json::value* v = &report["summary"];
    std::string rest = p;
    while (v && v->is_object() && !rest.empty()) {
      const auto dot = rest.find('.');
      v = v->get_object().if_contains(rest.substr(0, dot));
      rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
    }
    auto got = v ? json::as_int(*v) : std::nullopt;
    expect_named("summary", got && n.holds(*got), fmt::format("summary.{} is {}", p, n.describe()),
                 got ? fmt::format("it is {}", *got) : "no such figure");
  }
  if (!sc_.expect_summary.empty()) report = figs_->to_json(sc_.name, seed_, sc_.time_zone, end);
  if (rt_) {
    (void)rt_->stop();
    rt_.reset();
  }
  run_outcome out;
  out.report = std::move(report);
  out.turns = figs_->turns();
  out.bytes_written = power_.bytes_written();
  for (const auto& e : figs_->expectations())
    if (!e.ok) {
      ++out.failed;
      out.failures.push_back(e.step + ": " + e.what + (e.detail.empty() ? "" : " — " + e.detail));
    }
  return out;
}

}  // namespace

result<run_outcome> run_scenario(const scenario& sc, const run_options& options) {
  engine e(sc, options);
  return e.run();
}

}  // namespace sessionrt::sim
