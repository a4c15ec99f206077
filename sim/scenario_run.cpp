#include "sim/scenario_run.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <boost/json.hpp>
#include <filesystem>
#include <memory>
#include <mutex>

#include "actors/router/event_routing.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/session/reset_policy.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"
#include "runtime/runtime.hpp"
#include "sim/clock_driver.hpp"
#include "sim/crash_drill.hpp"
#include "sim/fault_spans.hpp"
#include "sim/fault_window_fs.hpp"
#include "sim/report_json.hpp"
#include "sim/scenario_model.hpp"
#include "sim/step_checks.hpp"
#include "sim/turn_ledger.hpp"
#include "sim/workload.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "storage/process_probe.hpp"

// The engine puts the parts together: the fs stack and the runtime on the manual clock, the
// turns it sends (turn_ledger), and runs the steps; virtual time moves in clock_driver, the
// expectations are step_checks, the power cuts crash_drill, the fault windows fault_spans.

namespace sessionrt::sim {

namespace {

namespace fsys = std::filesystem;
constexpr std::int64_t kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;
// A scripted turn that has not finished after this much simulated time is a failed step.
constexpr std::int64_t kTurnDeadlineMs = kDay;

std::string text_of(const chat_event& ev) {
  if (!ev.text.empty() || ev.content.empty()) return ev.text;
  boost::json::value c = ev.content;
  return message_text(&c);
}

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
        figs_(std::make_unique<report_figures>(sc.start_ms, sc.end_ms, sc.settings.model.context_window)),
        spans_(faults_),
        checks_(figs_, rt_, base(), state_dir_),
        drill_(clk_, power_, rt_, figs_, ledger_, checks_, base(), state_dir_,
               crash_drill::host{[this] { driver_.quiesce(); }, [this] { return start_runtime(); }}),
        driver_(clock_driver::parts{sc_, opt_, clk_, rt_, figs_, *model_, faults_, spans_, ledger_, drill_, checks_, base(), mem_.get(),
                                    state_dir_, end_ms_, [this](const chat_event& ev) { send_chat(ev, {}); }}) {}

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
  void run_step(const step& s);
  // What the runtime's fs stands on (the memory fs or the disk): the engine's own reads and
  // checks go there, below the faults and the power-loss tracking.
  storage::fs& base() const { return mem_ ? static_cast<storage::fs&>(*mem_) : storage::posix_fs(); }

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
  turn_ledger ledger_;
  fault_spans spans_;
  step_checks checks_;
  crash_drill drill_;
  clock_driver driver_;
};

std::string engine::predicted_key(const chat_event& ev) const {
  if (!ev.session_key.empty()) return ev.session_key;
  return actors::resolve_route(actors::route_input_of(ev), sc_.settings.routing).session_key;
}

void engine::on_event(const lifecycle_event& e) {
  figs_->observe(e);
  checks_.record(e);
  drill_.on_event(e);
  // A write of the store or a maintenance report changes no row that a step-end write owes.
  ledger_.event(e.type != event_types::store_flushed && e.type != event_types::maintenance_report);
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
  ledger_.sent(key);
  rt_->send(ev, [this, key, text, after = std::move(after)](turn_outcome out) {
    spans_.turn_answered(clk_.now_ms(), out.st.ok());
    ledger_.answered(key, text, out);
    if (after) after(out);
    ledger_.answer_done();
  });
}

void engine::run_step(const step& s) {
  checks_.begin_step();
  switch (s.kind) {
    case step_kind::send: {
      auto wait = std::make_shared<turn_wait>();
      send_chat(s.chat, [wait](const turn_outcome& out) {
        std::lock_guard<std::mutex> g(wait->mu);
        wait->out = out;
        wait->done = true;
      });
      driver_.quiesce();
      const int crashes_before = drill_.crashes();
      auto finished = [this, wait, crashes_before] {
        std::lock_guard<std::mutex> g(wait->mu);
        return wait->done || drill_.crashes() != crashes_before;
      };
      driver_.run_until(clk_.now_ms() + kTurnDeadlineMs, finished);
      driver_.quiesce();
      bool done = false;
      {
        std::lock_guard<std::mutex> g(wait->mu);
        done = wait->done;
      }
      if (!done && drill_.crashes() != crashes_before) break;  // lost in the crash: counted in its cost
      if (!done) {
        checks_.expect(s, false, "the turn finishes", rt_ ? "no answer within a simulated day" : "the runtime is gone");
        break;
      }
      turn_outcome out;
      {
        std::lock_guard<std::mutex> g(wait->mu);
        out = wait->out;
      }
      checks_.check_turn(s, out);
      break;
    }
    case step_kind::system: {
      rt_->send(s.sys);
      driver_.quiesce();
      // Let its model call (a heartbeat or cron turn) finish.
      for (int i = 0; i < 20 && rt_; ++i) {
        auto due = model_->next_due_ms();
        if (!due) break;
        driver_.run_until(*due);
      }
      driver_.quiesce();
      checks_.check_common(s, s.sys.session_key);
      break;
    }
    case step_kind::advance:
      driver_.run_until(clk_.now_ms() + s.advance_ms);
      driver_.quiesce();
      checks_.check_common(s, "");
      break;
    case step_kind::maintain: {
      auto rep = rt_->maintain();
      if (!rep) checks_.expect(s, false, "a maintenance pass runs", rep.error().message());
      driver_.quiesce();
      checks_.check_common(s, "");
      break;
    }
    case step_kind::fault: {
      spans_.open(s, clk_.now_ms(), *figs_);
      checks_.check_common(s, "");
      break;
    }
    case step_kind::crash:
      drill_.on_step(s, clk_.now_ms());
      break;
  }
  // Under virtual time the store has no window of its own: the driver keeps it in virtual
  // time (a step's changes start it, a step end after it writes). A power cut writes nothing.
  if (rt_ && s.kind != step_kind::crash) driver_.step_ended();
  checks_.end_step();
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
    driver_.set_workload(workload_generator(*spec, seed_, sc_.start_ms, *zone, spec->days));
  }
  if (sc_.settings.maintenance.max_disk_bytes) figs_->set_disk_budget(*sc_.settings.maintenance.max_disk_bytes);
  if (status st = start_runtime(); !st.ok()) return st.with_context("starting the runtime");
  driver_.sample(true);
  for (const auto& s : sc_.steps) {
    if (!rt_) break;
    driver_.run_until(s.at_ms);
    if (!rt_) break;
    run_step(s);
  }
  if (rt_) driver_.run_until(end_ms_);
  // Let what is still in flight finish (bounded: an hour of simulated time past the end).
  for (int i = 0; rt_ && i < 10000; ++i) {
    const std::int64_t n = ledger_.inflight();
    auto due = model_->next_due_ms();
    if (n == 0 || !due || *due > end_ms_ + kHour) break;
    driver_.run_until(*due);
  }
  drill_.finish();
  if (rt_) {
    (void)rt_->flush();
    driver_.quiesce();
  }
  driver_.sample(true);
  spans_.finalize(*figs_);
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
    checks_.expect_named("summary", got && n.holds(*got), fmt::format("summary.{} is {}", p, n.describe()),
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
  out.quiesce = driver_.tally();
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
