#include "sim/clock_driver.hpp"

#include "storage/memory_fs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "actors/runtime_settings.hpp"
#include "messages/iso_time.hpp"

namespace sessionrt::sim {

namespace {

constexpr std::int64_t kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;
// The longest virtual step: timers (daily / idle expiry, maintenance) fire at most this late.
constexpr std::int64_t kMaxStepMs = kMinute;
// quiesce(): how long a wait for work off the sessions' threads looks before it settles again
// (short: what it waits for, a store's answer or a summary, usually takes far less, and its
// end need not show as progress), and the fallback's rounds without progress before a turn no
// session accounts for is taken as waiting on time.
constexpr std::chrono::milliseconds kWorkPollMs{1}, kPollMs{50};
constexpr int kStallRounds = 20;

// A directory's names, none when it cannot be listed (not there yet).
std::vector<std::string> names_in(storage::fs& files, const std::string& dir) {
  auto names = files.list_dir(dir);
  return names.ok() ? std::move(*names) : std::vector<std::string>{};
}

}  // namespace

clock_driver::clock_driver(parts p)
    : p_(std::move(p)),
      pace_(actors::store_write_pace(p_.sc.settings.storage)),
      store_window_ms_(pace_.wait_ms(store_bytes().largest)) {}

void clock_driver::note_row_changes() {
  const std::uint64_t n = p_.ledger.rows_touched();
  if (n == touches_seen_) return;
  touches_seen_ = n;
  if (!unwritten_since_) unwritten_since_ = p_.clk.now_ms();
}

void clock_driver::write_store_if_due() {
  note_row_changes();
  const std::int64_t now = p_.clk.now_ms();
  if (!p_.rt || !unwritten_since_ || now - *unwritten_since_ < store_window_ms_) return;
  unwritten_since_.reset();
  const status written = p_.rt->flush();
  const store_sizes sizes = store_bytes();
  store_window_ms_ = pace_.wait_ms(sizes.largest);
  if (written.ok()) {
    ++store_writes_;
    store_bytes_written_ += sizes.total;
    return;
  }
  // The store keeps the rows and retries at its next window.
  p_.spans.store_write_failed(now);
  unwritten_since_ = now;
}

void clock_driver::set_workload(workload_generator gen) {
  workload_.emplace(std::move(gen));
  next_event_ = workload_->next();
}

std::size_t clock_driver::unexplained_turns() const {
  return p_.ledger.keys_in_flight([&](const std::string& k) { return !p_.model.waiting_on(k); });
}

void clock_driver::quiesce() {
  // Answers, events and model calls started: what the runtime did since a look.
  auto progress = [&] { return p_.ledger.progress() + static_cast<std::uint64_t>(p_.model.started()); };
  int stalls = 0;
  for (int round = 0; round < 10000 && p_.rt; ++round) {
    const std::uint64_t before = progress();
    // The sessions, then the commit log (no record unanswered, no sync running: records sent
    // while a model call waits ack no turn, so no progress would wait for them), then the bus.
    // The sessions say what they wait on (quiesce_rule.hpp decides from it).
    const actors::settle_report waits = p_.rt->settle();
    if (p_.drill.fired()) return;
    tally_.seen(waits);
    if (progress() != before) continue;
    const quiesce_verdict verdict = judge_quiesce(waits, unexplained_turns());
    tally_.decided(verdict);
    switch (verdict) {
      case quiesce_verdict::time:
        return;
      case quiesce_verdict::settle_again:
        continue;
      case quiesce_verdict::wait_for_work:
        // Off the sessions' threads (the pool, the store, a lock's backoff): it reports back
        // by itself, however long it takes; look again at its progress or after a while.
        (void)p_.ledger.wait_for(kWorkPollMs, [&] { return progress() != before; });
        continue;
      case quiesce_verdict::unexplained:
        // A turn no session accounts for: the wall-clock fallback (1 s without progress; a
        // sync still running does not count towards it). Counted in the progress line.
        if (!p_.ledger.wait_for(kPollMs, [&] { return progress() != before; }) && p_.faults.syncs_in_flight() == 0) {
          ++tally_.fallback_stalls;
          if (++stalls >= kStallRounds) {
            ++tally_.fallback_gave_up;
            return;
          }
        }
        continue;
    }
  }
  if (p_.rt) ++tally_.rounds_exhausted;  // 10,000 settles without a verdict of time
}

void clock_driver::sample(bool force) {
  const std::int64_t now = p_.clk.now_ms();
  for (const auto& c : p_.model.take_calls()) p_.figs->model_call(c.at_ms);
  if (force || now >= next_sample_) {
    if (p_.rt) {
      if (auto rows = p_.rt->session_count()) p_.figs->sample_rows(now, static_cast<std::int64_t>(*rows));
    }
    p_.figs->sample_disk(now, disk_bytes());
    const std::int64_t b = bucket_size_for(p_.end_ms - p_.sc.start_ms);
    next_sample_ = p_.sc.start_ms + ((now - p_.sc.start_ms) / b + 1) * b;
  }
  if (p_.opt.progress && (force || now >= next_progress_)) {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
    const std::int64_t turns = p_.figs->turns();
    const std::int64_t day = (now - p_.sc.start_ms) / kDay + 1;
    p_.opt.progress(fmt::format("simulated day {} ({}), {} turns done, {:.0f} turns/s ({} steps, {} waits for work, {} "
                                "stalls){}",
                                day, format_iso_ms(now), turns, wall > 0 ? static_cast<double>(turns) / wall : 0.0,
                                steps_, tally_.waited_for_work, tally_.fallback_stalls,
                                force ? fmt::format("; quiesce: {}; sessions.json written {} times, {:.2f} GB",
                                                    tally_.line(), store_writes_, store_bytes_written_ / 1e9)
                                      : std::string()));
    next_progress_ = now + kHour;
  }
}

void clock_driver::dispatch_workload() {
  if (!workload_) return;
  const std::int64_t now = p_.clk.now_ms();
  bool sent = false;
  while (next_event_ && next_event_->at_ms <= now) {
    auto& ev = *next_event_;
    if (ev.what == generated_event::kind::chat) {
      ev.chat.timestamp_ms = 0;  // the runtime's clock is the time
      p_.send_chat(ev.chat);
    } else {
      ev.sys.timestamp_ms = 0;
      p_.rt->send(ev.sys);
    }
    sent = true;
    next_event_ = workload_->next();
  }
  if (sent) quiesce();
}

bool clock_driver::run_until(std::int64_t t, const std::function<bool()>& stop) {
  for (;;) {
    if (!p_.rt) return false;
    dispatch_workload();
    const auto polled = p_.drill.poll(p_.clk.now_ms());
    if (polled == crash_drill::poll_result::gone) return false;
    if (polled == crash_drill::poll_result::restarted) continue;
    if (stop && stop()) return true;
    const std::int64_t now = p_.clk.now_ms();
    if (now >= t) return true;
    std::int64_t target = std::min(t, now + kMaxStepMs);
    if (next_event_) target = std::min(target, std::max(next_event_->at_ms, now));
    if (auto due = p_.model.next_due_ms()) target = std::min(target, std::max(*due, now));
    if (next_sample_ > now) target = std::min(target, next_sample_);
    note_row_changes();  // the workload's events just sent
    if (unwritten_since_ && *unwritten_since_ + store_window_ms_ > now)
      target = std::min(target, *unwritten_since_ + store_window_ms_);
    if (const std::int64_t q = p_.sc.resolution_ms; q > 0)
      target = std::min(t, std::max(target, p_.sc.start_ms + ((now - p_.sc.start_ms) / q + 1) * q));
    ++steps_;
    if (status st = p_.rt->advance_clock(target - now); !st.ok()) {
      p_.checks.expect_named("run", false, "virtual time advances", st.message());
      return false;
    }
    // The turns the clock woke finish (or wait on the model again) before a maintenance pass
    // plans: what the pass sees is then a function of virtual time only.
    quiesce();
    if (!maintain_if_due()) return false;
    // sessions.json follows its window in virtual time (see the header), so what a crash
    // finds on disk does not depend on the machine's timing. Rows change with a session's
    // events and answers, so a step without either starts no window.
    write_store_if_due();
    sample();
  }
}

bool clock_driver::maintain_if_due() {
  // The store writes sessions.json on the real clock; the pass counts the rows' projected
  // size instead of the file's, and not the temp file of a write in flight, so when the store
  // wrote does not change the plan.
  auto ran = p_.rt->run_due_maintenance();
  if (!ran.ok()) {
    p_.checks.expect_named("run", false, "a maintenance pass runs", ran.error().message());
    return false;
  }
  if (*ran) quiesce();
  return true;
}

std::vector<std::string> clock_driver::sessions_dirs() const {
  std::vector<std::string> dirs;
  const std::string agents = p_.state_dir + "/agents";
  for (const auto& agent : names_in(p_.base, agents)) dirs.push_back(agents + "/" + agent + "/sessions");
  return dirs;
}

std::int64_t clock_driver::disk_bytes() const {
  std::int64_t total = 0;
  for (const auto& dir : sessions_dirs()) {
    if (p_.mem) {  // the same sum without a path lookup per file (a sample sees 100,000s)
      total += static_cast<std::int64_t>(p_.mem->bytes_in_dir(dir));
      continue;
    }
    for (const auto& name : names_in(p_.base, dir))
      if (auto info = p_.base.lstat(dir + "/" + name); info.ok() && info->is_regular())
        total += static_cast<std::int64_t>(info->size);
  }
  return total;
}

clock_driver::store_sizes clock_driver::store_bytes() const {
  store_sizes out;
  for (const auto& dir : sessions_dirs())
    if (auto info = p_.base.lstat(dir + "/sessions.json"); info.ok() && info->is_regular()) {
      out.largest = std::max<std::uint64_t>(out.largest, info->size);
      out.total += info->size;
    }
  return out;
}

}  // namespace sessionrt::sim
