#include "storage/write_lock.hpp"

#include <fcntl.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "messages/ascii_text.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"

// Stale reasons: all of [R§9] except "non-openclaw-owner" (a live pid whose argv is not an
// openclaw/gateway process). That heuristic would need argv reads through the probe and, worse,
// judges a live sessionrt holder as foreign to OpenClaw and vice versa; a live owner's lock is
// therefore never taken here for what its argv says. Deviations from OpenClaw, on purpose:
// - kill(pid, 0) failing with EPERM counts as alive (Node counts it dead): a process of another
//   user still exists, and removing its lock would let two writers interleave.
// - clean_stale_locks never removes a lock this process holds (OpenClaw's cleanup assumes it
//   holds none and would judge its own live locks "orphan-self-pid").
// - acquire is reentrant per process unless options.reentrant is false (OpenClaw's
//   allowReentrant is opt-in).
// remove-if-unchanged is check-then-unlink: between the check and the unlink another process
// could replace the file; the window is two syscalls, as in OpenClaw.

namespace sessionrt::storage {
namespace {

constexpr std::size_t kMaxLockBytes = 64 * 1024;
constexpr std::int64_t kOrphanPayloadGraceMs = 30000;
constexpr std::int64_t kShortTimeoutOrphanPayloadGraceMs = 5000;
// Immediate re-attempts within one try (a removed stale lock, a lock gone between the failed
// create and the read): bounded, so a try never spins; past the bound it reports busy.
constexpr int kMaxImmediateAttempts = 8;
constexpr std::int64_t kMaxSafeInteger = (std::int64_t{1} << 53) - 1;

struct held_entry {
  fs* files = nullptr;
  int fd = -1;
  std::string payload;
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  int holds = 0;
  std::uint64_t token = 0;
  std::int64_t acquired_at_ms = 0;
  std::int64_t max_hold_ms = 0;
};

struct held_table {
  std::mutex mutex;
  std::map<std::string, held_entry> locks;  // by lock path
  std::uint64_t next_token = 1;
};

// Never destroyed, so release_all_held_locks() works from atexit handlers too.
held_table& table() {
  static held_table* instance = new held_table;
  return *instance;
}

struct lock_snapshot {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::int64_t mtime_ns = 0;
  std::string bytes;  // at most kMaxLockBytes
};

result<lock_snapshot> read_snapshot(fs& files, const std::string& path) {
  auto fd = files.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (!fd.ok()) return fd.error();
  auto info = files.fstat(*fd);
  if (!info.ok()) {
    (void)files.close(*fd);
    return info.error().with_context(path);
  }
  if (!info->is_regular()) {
    (void)files.close(*fd);
    return status(errc::unsafe_path, fmt::format("write lock {} is not a regular file", path));
  }
  auto bytes = pread_all(files, *fd, static_cast<std::size_t>(std::min<std::uint64_t>(info->size, kMaxLockBytes)), 0);
  (void)files.close(*fd);
  if (!bytes.ok()) return bytes.error().with_context(path);
  return lock_snapshot{info->dev, info->ino, info->mtime_ns, std::move(*bytes)};
}

enum class removal { removed, changed, gone };

// Unlinks `path` only if it is still the file (dev/ino) with the bytes `expected` describes.
result<removal> remove_if_unchanged(fs& files, const std::string& path, const lock_snapshot& expected) {
  auto now = read_snapshot(files, path);
  if (!now.ok()) {
    if (now.error().code() == errc::not_found) return removal::gone;
    return now.error();
  }
  if (now->dev != expected.dev || now->ino != expected.ino || now->bytes != expected.bytes) return removal::changed;
  status st = files.unlink(path);
  if (!st.ok()) {
    if (st.code() == errc::not_found) return removal::gone;
    return st;
  }
  return removal::removed;
}

struct lock_payload {
  std::optional<std::int64_t> pid;
  std::optional<std::string> created_at;
  std::optional<std::int64_t> starttime;
  std::optional<std::int64_t> max_hold_ms;
};

// OpenClaw's parseLockPayload: numbers must be non-negative integers; pid and maxHoldMs > 0.
// Unparsable text is an empty payload (missing-pid, invalid-createdAt).
lock_payload parse_payload(std::string_view bytes) {
  lock_payload p;
  auto parsed = json::parse_object(bytes, json::parse_limits{kMaxLockBytes, 16});
  if (!parsed.ok()) return p;
  const boost::json::object& o = *parsed;
  if (auto v = json::get_int(o, "pid"); v && *v > 0) p.pid = v;
  if (auto v = json::get_string(o, "createdAt")) p.created_at = std::string(*v);
  if (auto v = json::get_int(o, "starttime"); v && *v >= 0) p.starttime = v;
  if (auto v = json::get_int(o, "maxHoldMs"); v && *v > 0) p.max_hold_ms = v;
  return p;
}

struct judge_mode {
  bool held_by_this_process = false;
  bool respect_max_hold = true;            // hold-exceeded counts
  bool reclaim_without_starttime = true;   // a self-pid lock without starttime is an orphan
  std::int64_t payload_grace_ms = kOrphanPayloadGraceMs;
};

struct verdict {
  lock_inspection inspection;
  bool reportable = false;  // OpenClaw's shouldReportContendedLockStale
};

bool is_report_only(const std::string& reason) { return reason == "too-old" || reason == "hold-exceeded"; }
bool needs_mtime_fallback(const std::string& reason) { return reason == "missing-pid" || reason == "invalid-createdAt"; }

verdict judge(const std::string& lock_path, const lock_snapshot& snap, std::int64_t now_ms, std::int64_t stale_ms,
              const process_probe& probe, const judge_mode& mode) {
  verdict v;
  lock_inspection& ins = v.inspection;
  const lock_payload p = parse_payload(snap.bytes);
  ins.lock_path = lock_path;
  ins.pid = p.pid;
  ins.pid_alive = p.pid && probe.alive(*p.pid);
  ins.created_at = p.created_at;
  ins.max_hold_ms = p.max_hold_ms;
  ins.starttime = p.starttime;
  ins.held_by_this_process = mode.held_by_this_process;
  if (p.created_at) {
    if (auto created = parse_iso_ms(*p.created_at)) ins.age_ms = std::max<std::int64_t>(0, now_ms - *created);
  }
  const std::int64_t mtime_ms = snap.mtime_ns >= 0 ? snap.mtime_ns / 1000000 : -((-snap.mtime_ns + 999999) / 1000000);
  ins.mtime_age_ms = std::max<std::int64_t>(0, now_ms - mtime_ms);

  auto& reasons = ins.stale_reasons;
  if (!p.pid) {
    reasons.push_back("missing-pid");
  } else if (!ins.pid_alive) {
    reasons.push_back("dead-pid");
  } else if (p.starttime) {
    auto current = probe.start_time(*p.pid);
    if (current && *current != *p.starttime) reasons.push_back("recycled-pid");
  }
  if (!ins.age_ms) {
    reasons.push_back("invalid-createdAt");
  } else if (*ins.age_ms > stale_ms) {
    reasons.push_back("too-old");
  }
  if (mode.respect_max_hold && p.max_hold_ms && ins.age_ms && *ins.age_ms > *p.max_hold_ms)
    reasons.push_back("hold-exceeded");
  if (p.pid && *p.pid == probe.self_pid() && !mode.held_by_this_process) {
    bool orphan = mode.reclaim_without_starttime;
    if (p.starttime) {
      auto own = probe.start_time(probe.self_pid());
      orphan = own && *own == *p.starttime;
    }
    if (orphan) reasons.push_back("orphan-self-pid");
  }

  if (!ins.stale() || mode.held_by_this_process) return v;
  bool mtime_ok = true;
  if (std::all_of(reasons.begin(), reasons.end(), needs_mtime_fallback))
    mtime_ok = ins.mtime_age_ms > std::min(stale_ms, mode.payload_grace_ms);
  v.reportable = mtime_ok;
  ins.removable = mtime_ok && !std::all_of(reasons.begin(), reasons.end(), is_report_only);
  return v;
}

std::string build_payload(std::int64_t pid, std::int64_t now_ms, std::int64_t max_hold_ms,
                          std::optional<std::int64_t> starttime) {
  boost::json::object o;
  o["pid"] = pid;
  o["createdAt"] = format_iso_ms(now_ms);
  o["maxHoldMs"] = max_hold_ms;
  if (starttime) o["starttime"] = *starttime;
  return json::to_pretty(o) + "\n";
}

result<held_entry> create_lock_file(fs& files, clock& time, const process_probe& probe, const std::string& lock_path,
                                    const write_lock_options& options) {
  auto fd = files.open(lock_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  if (!fd.ok()) return fd.error();
  const std::int64_t now = time.now_ms();
  const std::int64_t pid = probe.self_pid();
  held_entry e;
  e.files = &files;
  e.fd = *fd;
  e.payload = build_payload(pid, now, options.max_hold_ms, probe.start_time(pid));
  e.holds = 1;
  e.acquired_at_ms = now;
  e.max_hold_ms = options.max_hold_ms;
  auto fail = [&](const status& st) {
    (void)files.close(*fd);
    (void)files.unlink(lock_path);
    return st.with_context("writing the write lock " + lock_path);
  };
  if (status st = write_all(files, *fd, e.payload.data(), e.payload.size()); !st.ok()) return fail(st);
  auto info = files.fstat(*fd);
  if (!info.ok()) return fail(info.error());
  e.dev = info->dev;
  e.ino = info->ino;
  // The lock is the file (its bytes and inode identify the holder), not the descriptor:
  // closing it keeps a process with thousands of live sessions within its fd limit.
  (void)files.close(*fd);
  e.fd = -1;
  return e;
}

// Closes the fd of a lock whose last hold is gone and removes the file if it is still ours.
status close_and_remove(held_entry& e, const std::string& lock_path) {
  status closed = e.fd >= 0 ? e.files->close(e.fd) : status();
  e.fd = -1;
  auto removed = remove_if_unchanged(*e.files, lock_path, lock_snapshot{e.dev, e.ino, 0, e.payload});
  if (!removed.ok()) return removed.error().with_context("releasing the write lock " + lock_path);
  if (*removed == removal::changed)
    return status(errc::locked,
                  fmt::format("write lock {} was replaced by another owner while held; left in place", lock_path));
  if (*removed == removal::gone)
    return status(errc::locked, fmt::format("write lock {} was removed by someone else while held", lock_path));
  if (!closed.ok()) return closed.with_context("releasing the write lock " + lock_path);
  return {};
}

}  // namespace

std::string lock_inspection::owner() const {
  std::string out;
  if (pid) {
    out = fmt::format("pid={} alive={}", *pid, pid_alive ? "true" : "false");
  } else {
    out = "owner=unknown";
  }
  if (age_ms) out += fmt::format(" ageMs={}", *age_ms);
  return out;
}

std::string lock_inspection::reasons_text() const {
  std::string out;
  for (const auto& r : stale_reasons) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out.empty() ? "unknown" : out;
}

status apply_write_lock_env(write_lock_options& options, const env_lookup& lookup) {
  struct setting {
    const char* suffix;
    std::int64_t write_lock_options::*field;
    bool allow_infinity;
  };
  static constexpr setting settings[] = {
      {"ACQUIRE_TIMEOUT_MS", &write_lock_options::acquire_timeout_ms, true},
      {"STALE_MS", &write_lock_options::stale_ms, false},
      {"MAX_HOLD_MS", &write_lock_options::max_hold_ms, false},
  };
  write_lock_options next = options;
  for (const setting& s : settings) {
    std::string name, value;
    for (const char* prefix : {"SESSIONRT_SESSION_WRITE_LOCK_", "OPENCLAW_SESSION_WRITE_LOCK_"}) {
      std::string candidate = std::string(prefix) + s.suffix;
      auto raw = lookup ? lookup(candidate) : std::nullopt;
      if (!raw) continue;
      std::string trimmed = std::string(ascii_trim(*raw));
      if (trimmed.empty()) continue;
      name = std::move(candidate);
      value = std::move(trimmed);
      break;
    }
    if (name.empty()) continue;
    if (value == "Infinity") {
      if (!s.allow_infinity)
        return status(errc::invalid_argument,
                      fmt::format("{}=Infinity: only the acquire timeout may be Infinity; give milliseconds", name));
      next.*s.field = write_lock_options::infinite;
      continue;
    }
    bool digits = std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
      return status(errc::invalid_argument,
                    fmt::format("{}='{}' is not a whole number of milliseconds (digits only{})", name, value,
                                s.allow_infinity ? ", or Infinity" : ""));
    std::int64_t ms = 0;
    for (char c : value) {
      ms = ms * 10 + (c - '0');
      if (ms > kMaxSafeInteger)
        return status(errc::invalid_argument, fmt::format("{}='{}' is over the limit of {} ms", name, value, kMaxSafeInteger));
    }
    if (ms == 0) return status(errc::invalid_argument, fmt::format("{}='{}' must be a positive number of milliseconds", name, value));
    next.*s.field = ms;
  }
  options = std::move(next);
  return {};
}

write_lock::~write_lock() {
  if (!held()) return;
  status st = release();
  if (!st.ok()) spdlog::warn("session write lock release failed: {}", st.message());
}

write_lock::write_lock(write_lock&& other) noexcept
    : lock_path_(std::move(other.lock_path_)), token_(std::exchange(other.token_, 0)) {}

write_lock& write_lock::operator=(write_lock&& other) noexcept {
  if (this != &other) {
    if (held()) {
      status st = release();
      if (!st.ok()) spdlog::warn("session write lock release failed: {}", st.message());
    }
    lock_path_ = std::move(other.lock_path_);
    token_ = std::exchange(other.token_, 0);
  }
  return *this;
}

status write_lock::release() {
  if (!held()) return {};
  const std::uint64_t token = std::exchange(token_, 0);
  held_table& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  auto it = t.locks.find(lock_path_);
  if (it == t.locks.end() || it->second.token != token) return {};  // released by release_all
  if (--it->second.holds > 0) return {};
  held_entry entry = std::move(it->second);
  t.locks.erase(it);
  return close_and_remove(entry, lock_path_);
}

result<std::string> write_lock_path(fs& files, const std::string& file) {
  const std::string dir = path_dirname(file);
  const std::string name = path_basename(file);
  if (name.empty() || name == "." || name == "..")
    return status(errc::invalid_argument, fmt::format("cannot lock '{}': it does not name a file", file));
  auto real = files.realpath(dir);
  if (!real.ok() && real.error().code() == errc::not_found) {
    SRT_RETURN_IF_ERROR(ensure_dir(files, dir, 0700));
    real = files.realpath(dir);
  }
  if (!real.ok()) return real.error();
  return path_join(*real, write_lock_name(name));
}

// Makes handles of held-table entries (write_lock's constructor is private to it).
class write_lock_table {
 public:
  static write_lock handle(std::string lock_path, std::uint64_t token) {
    return write_lock(std::move(lock_path), token);
  }
};

std::optional<std::int64_t> lock_retry_delay_ms(int attempt, std::int64_t waited_ms, std::int64_t acquire_timeout_ms) {
  const bool finite = acquire_timeout_ms != write_lock_options::infinite;
  waited_ms = std::max<std::int64_t>(waited_ms, 0);
  if (finite && waited_ms >= acquire_timeout_ms) return std::nullopt;
  const std::int64_t n = std::max(attempt, 1);
  std::int64_t delay = std::min(lock_backoff::first_ms + lock_backoff::step_ms * (n - 1), lock_backoff::cap_ms);
  if (finite) delay = std::min(delay, acquire_timeout_ms - waited_ms);
  return delay;
}

status lock_timeout_error(std::int64_t acquire_timeout_ms, const lock_inspection& holder) {
  const std::string timeout =
      acquire_timeout_ms == write_lock_options::infinite ? std::string("Infinity") : std::to_string(acquire_timeout_ms);
  return status(errc::locked,
                fmt::format("session file locked (timeout {}ms): {} {}", timeout, holder.owner(), holder.lock_path));
}

result<lock_attempt> try_acquire_write_lock(fs& files, clock& time, process_probe& probe, const std::string& file,
                                            const write_lock_options& options, int attempt, std::int64_t waited_ms) {
  auto path = write_lock_path(files, file);
  if (!path.ok()) return path.error().with_context("acquiring the write lock for " + file);
  const std::string& lock_path = *path;
  judge_mode mode;
  mode.payload_grace_ms =
      options.acquire_timeout_ms < kOrphanPayloadGraceMs ? kShortTimeoutOrphanPayloadGraceMs : kOrphanPayloadGraceMs;
  held_table& t = table();
  lock_busy busy;
  busy.holder.lock_path = lock_path;  // "owner=unknown" until a lock is judged

  for (int tries = 0; tries < kMaxImmediateAttempts; ++tries) {
    verdict seen;
    contention_outcome outcome = contention_outcome::waiting;
    bool again = false;
    {
      std::lock_guard<std::mutex> guard(t.mutex);
      if (auto it = t.locks.find(lock_path); it != t.locks.end()) {
        if (!options.reentrant)
          return status(errc::locked, fmt::format("{} is already held by this process (pid {})", lock_path,
                                                  probe.self_pid()));
        ++it->second.holds;
        return lock_attempt(write_lock_table::handle(lock_path, it->second.token));
      }
      auto created = create_lock_file(files, time, probe, lock_path, options);
      if (created.ok()) {
        held_entry& e = *created;
        e.token = t.next_token++;
        const std::uint64_t token = e.token;
        t.locks.emplace(lock_path, std::move(e));
        return lock_attempt(write_lock_table::handle(lock_path, token));
      }
      if (created.error().code() != errc::already_exists)
        return created.error().with_context("acquiring the write lock " + lock_path);

      auto snap = read_snapshot(files, lock_path);
      if (!snap.ok()) {
        if (snap.error().code() == errc::not_found) continue;  // released meanwhile: try again
        return snap.error().with_context("acquiring the write lock " + lock_path);
      }
      seen = judge(lock_path, *snap, time.now_ms(), options.stale_ms, probe, mode);
      if (seen.reportable) {
        if (seen.inspection.removable) {
          auto removed = remove_if_unchanged(files, lock_path, *snap);
          if (!removed.ok()) return removed.error().with_context("removing the stale write lock " + lock_path);
          if (*removed == removal::removed) outcome = contention_outcome::removed_stale;
          again = true;  // removed, or it changed / vanished under us: look again at once
        } else {
          outcome = contention_outcome::stale_error;
        }
      }
    }

    if (options.on_contended) options.on_contended(lock_contention{seen.inspection, attempt, waited_ms, outcome});
    if (outcome == contention_outcome::stale_error)
      return status(errc::locked, fmt::format("session file lock stale ({}): {} {}", seen.inspection.reasons_text(),
                                              seen.inspection.owner(), lock_path));
    busy.holder = std::move(seen.inspection);
    if (!again) break;
  }
  return lock_attempt(std::move(busy));
}

result<write_lock> acquire_write_lock(fs& files, clock& time, process_probe& probe, const std::string& file,
                                      const write_lock_options& options) {
  const std::int64_t started = time.now_ms();
  for (int attempt = 1;; ++attempt) {
    auto step = try_acquire_write_lock(files, time, probe, file, options, attempt, time.now_ms() - started);
    if (!step.ok()) return step.error();
    if (auto* lock = std::get_if<write_lock>(&*step)) return std::move(*lock);
    const auto delay = lock_retry_delay_ms(attempt, time.now_ms() - started, options.acquire_timeout_ms);
    if (!delay) return lock_timeout_error(options.acquire_timeout_ms, std::get<lock_busy>(*step).holder);
    time.sleep_ms(*delay);
  }
}

result<lock_inspection> inspect_lock(fs& files, clock& time, process_probe& probe, const std::string& lock_path,
                                     const write_lock_options& options) {
  judge_mode mode;
  {
    held_table& t = table();
    std::lock_guard<std::mutex> guard(t.mutex);
    mode.held_by_this_process = t.locks.count(lock_path) > 0;
  }
  mode.respect_max_hold = !mode.held_by_this_process;
  mode.payload_grace_ms =
      options.acquire_timeout_ms < kOrphanPayloadGraceMs ? kShortTimeoutOrphanPayloadGraceMs : kOrphanPayloadGraceMs;
  auto snap = read_snapshot(files, lock_path);
  if (!snap.ok()) {
    if (snap.error().code() == errc::not_found) return status(errc::not_found, "no write lock at " + lock_path);
    return snap.error().with_context("inspecting the write lock " + lock_path);
  }
  return judge(lock_path, *snap, time.now_ms(), options.stale_ms, probe, mode).inspection;
}

result<std::vector<removed_lock>> clean_stale_locks(fs& files, clock& time, process_probe& probe,
                                                    const std::string& sessions_dir, const write_lock_options& options) {
  std::vector<removed_lock> removed;
  auto real_dir = files.realpath(sessions_dir);  // lock paths of held locks are realpath-based
  if (!real_dir.ok()) {
    if (real_dir.error().code() == errc::not_found) return removed;
    return real_dir.error().with_context("cleaning stale write locks");
  }
  auto names = files.list_dir(*real_dir);
  if (!names.ok()) {
    if (names.error().code() == errc::not_found) return removed;
    return names.error().with_context("cleaning stale write locks");
  }
  std::vector<std::string> locks;
  for (auto& name : *names) {
    if (name.size() > 11 && name.compare(name.size() - 11, 11, ".jsonl.lock") == 0) locks.push_back(std::move(name));
  }
  std::sort(locks.begin(), locks.end());

  judge_mode mode;
  mode.respect_max_hold = false;
  mode.reclaim_without_starttime = false;
  mode.payload_grace_ms = kOrphanPayloadGraceMs;
  held_table& t = table();
  for (const auto& name : locks) {
    const std::string lock_path = path_join(*real_dir, name);
    std::lock_guard<std::mutex> guard(t.mutex);
    if (t.locks.count(lock_path) > 0) continue;
    auto snap = read_snapshot(files, lock_path);
    if (!snap.ok()) continue;  // vanished, not a regular file, unreadable: not ours to judge
    verdict v = judge(lock_path, *snap, time.now_ms(), options.stale_ms, probe, mode);
    if (!v.inspection.removable) continue;
    auto gone = remove_if_unchanged(files, lock_path, *snap);
    if (!gone.ok()) return gone.error().with_context("cleaning stale write locks");
    if (*gone == removal::removed) removed.push_back({lock_path, v.inspection.stale_reasons});
  }
  return removed;
}

std::size_t release_all_held_locks() {
  held_table& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  std::size_t released = 0;
  for (auto& [path, entry] : t.locks) {
    (void)close_and_remove(entry, path);
    ++released;
  }
  t.locks.clear();
  return released;
}

std::vector<held_lock_info> held_write_locks() {
  held_table& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  std::vector<held_lock_info> out;
  for (const auto& [path, entry] : t.locks) out.push_back({path, entry.holds, entry.acquired_at_ms, entry.max_hold_ms});
  return out;
}

}  // namespace sessionrt::storage
