// maintenance_bench: store maintenance on a state dir bigger than the reference handles:
// 200,000 rows and 20 GB of transcripts and archives, simulated with sparse files (ftruncate:
// sizes and mtimes are real, the blocks are not). Reports the planner's time (load, scan,
// rows, plan) and peak memory, and the time for the offline enforce (the CLI's applier) to
// bring the dir under its budget.
//   maintenance_bench [--rows N] [--gb G] [--archives N] [--budget-gb G] [--dir DIR] [--keep]
//                     [--ack-rows N] [--ack-turns N] [--ack-only] [--no-ack] [--pass-only] [--pass-rows N]
// The measured run is a fresh process (this binary re-run with --measure DIR) so its peak RSS
// is the planner's and the applier's, not the fixture builder's.
// Then (or alone with --ack-only) the cost of a running enforcement to turns: a runtime on a
// state dir of --ack-rows stale rows (sparse transcripts) takes --ack-turns turns from 4
// senders, once with no maintenance and once while the maintenance actor enforces the whole
// plan (runtime::maintain on another thread); p50 / p99 ack latency of both, same run.
// --pass-only: the cost of storage.keepMaintenancePicture. A state dir of --pass-rows fresh
// rows (nothing to remove, sessions.json spilled) is opened twice, the picture kept and not;
// each time the first pass, the median of 5 steady passes (each after 200 turns), the ack
// p99 of turns sent while passes run, and the heap in use after a pass.
#include <fcntl.h>
#include <malloc.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"

using namespace sessionrt;

namespace {

constexpr std::int64_t day = 24LL * 3600 * 1000;

struct args {
  std::size_t rows = 200000;
  double gb = 20;
  std::size_t archives = 50000;
  double budget_gb = 10;
  std::string dir;
  std::string measure;  // set in the child
  bool keep = false;
  std::size_t ack_rows = 20000;
  std::size_t ack_turns = 2000;
  bool ack_only = false;
  bool no_ack = false;
  bool pass_only = false;
  std::size_t pass_rows = 100000;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// VmHWM of this process's address space (ru_maxrss would carry the spawning process's peak
// across exec).
long peak_rss_mb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  std::fclose(f);
  return kb / 1024;
}

void sparse(const std::string& path, std::uint64_t bytes, std::int64_t mtime_ms) {
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    fmt::print(stderr, "cannot create {}\n", path);
    std::exit(2);
  }
  timespec t[2];
  t[0].tv_sec = t[1].tv_sec = mtime_ms / 1000;
  t[0].tv_nsec = t[1].tv_nsec = (mtime_ms % 1000) * 1000000;
  ::futimens(fd, t);
  ::close(fd);
}

// Rows: 90% direct DMs, 5% group rows (protected), 5% cron runs, updatedAt spread over 60 days;
// one transcript per row and `archives` reset archives, sizes summing to `gb`.
void build(const args& a, const std::string& sessions, std::int64_t now) {
  std::filesystem::create_directories(sessions);
  const double t0 = now_s();
  const std::uint64_t total = static_cast<std::uint64_t>(a.gb * 1024 * 1024 * 1024);
  const std::size_t files = a.rows + a.archives;
  const std::uint64_t each = total / files;
  storage::session_store store;
  store.reserve(a.rows);
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::string id = fmt::format("s{:07d}-0000-4000-8000-000000000000", i);
    std::string key = i % 20 == 0   ? fmt::format("agent:main:slack:channel:c{}", i)
                      : i % 20 == 1 ? fmt::format("agent:main:cron:job{}:run:{}", i % 97, id)
                                    : fmt::format("agent:main:telegram:direct:{}", 100000 + i);
    const std::int64_t updated = now - static_cast<std::int64_t>((i * 7919) % (60 * 24)) * 3600 * 1000;
    boost::json::object o{{"sessionId", id},
                          {"updatedAt", updated},
                          {"sessionFile", sessions + "/" + id + ".jsonl"},
                          {"chatType", i % 20 == 0 ? "channel" : "direct"},
                          {"model", "gpt-5.5"},
                          {"totalTokens", 12345},
                          {"label", i % 3 ? "" : "ops"}};
    store.upsert(key, session_entry(std::move(o)));
    sparse(sessions + "/" + id + ".jsonl", each, updated);
  }
  for (std::size_t i = 0; i < a.archives; ++i) {
    const std::int64_t ts = now - static_cast<std::int64_t>((i * 104729) % (60 * 24 * 60)) * 60 * 1000;
    sparse(sessions + "/" + storage::archive_name(fmt::format("r{:07d}.jsonl", i), storage::archive_reason::reset, ts),
           each, ts);
  }
  auto text = storage::serialize_store(store, true);
  auto st = storage::replace_file_atomic(storage::posix_fs(), sessions + "/sessions.json", text, {false});
  if (!st.ok()) {
    fmt::print(stderr, "{}\n", st.message());
    std::exit(2);
  }
  fmt::print("built {} rows, {} archives, {:.1f} GB apparent ({} bytes each), sessions.json {:.1f} MB in {:.1f} s\n",
             a.rows, a.archives, total / 1073741824.0, each, text.size() / 1048576.0, now_s() - t0);
}

int measure(const args& a) {
  const std::string sessions = a.measure;
  auto& files = storage::posix_fs();
  manual_clock clock(std::atoll(std::getenv("MB_NOW")));
  const long rss0 = peak_rss_mb();
  double t = now_s();
  storage::session_store_file file(files, clock, sessions + "/sessions.json", {std::size_t(1) << 31, 64, false});
  auto loaded = file.load();
  if (!loaded.ok()) return fmt::print(stderr, "{}\n", loaded.error().message()), 2;
  const double load_s = now_s() - t;
  t = now_s();
  auto listing = actors::scan_sessions_dir(files, sessions);
  if (!listing.ok()) return fmt::print(stderr, "{}\n", listing.error().message()), 2;
  const double scan_s = now_s() - t;
  t = now_s();
  auto rows = actors::maintenance_rows(file.store(), sessions);
  const double rows_s = now_s() - t;
  const long rss_loaded = peak_rss_mb();
  actors::planner_input in;
  in.rows = &rows;
  in.files = &*listing;
  in.settings.mode = actors::maintenance_mode::enforce;
  in.settings.max_entries = 1000000;  // the budget, not the cap, is what this measures
  in.settings.max_disk_bytes = static_cast<std::int64_t>(a.budget_gb * 1073741824.0);
  in.now_ms = clock.now_ms();
  in.active_key = "agent:main:telegram:direct:100002";
  in.forced = true;
  t = now_s();
  auto plan = actors::plan_maintenance(in);
  const double plan_s = now_s() - t;
  const long rss_planned = peak_rss_mb();
  std::size_t rows_removed = 0, files_acted = 0;
  for (const auto& act : plan.actions) (act.kind == actors::action_kind::remove_row ? rows_removed : files_acted)++;
  fmt::print("plan: {} actions ({} rows, {} files): stale {}, evicted {}, archived {}, deleted {}; "
             "total {:.2f} GB -> {:.2f} GB, high water {:.2f} GB, met {}\n",
             plan.actions.size(), rows_removed, files_acted, plan.pruned, plan.evicted, plan.archived_files,
             plan.deleted_files, plan.total_bytes_before / 1073741824.0, plan.total_bytes_after / 1073741824.0,
             plan.disk_budget ? plan.disk_budget->high_water_bytes / 1073741824.0 : 0.0,
             plan.disk_budget && plan.disk_budget->met);
  fmt::print("planner: load {:.2f} s, scan {} files {:.2f} s, rows {:.2f} s, plan {:.3f} s; peak RSS {} MB at start, "
             "{} MB loaded, {} MB planned\n",
             load_s, listing->size(), scan_s, rows_s, plan_s, rss0, rss_loaded, rss_planned);
  if (std::getenv("MB_PLAN_ONLY")) return 0;
  t = now_s();
  auto rep = actors::apply_plan(files, file, sessions, plan, 50000);
  const double apply_s = now_s() - t;
  if (!rep.error.ok()) return fmt::print(stderr, "{}\n", rep.error.message()), 2;
  // Check: the dir as listed again is under the high water.
  auto after = actors::scan_sessions_dir(files, sessions);
  std::uint64_t bytes = 0;
  for (const auto& f : *after) bytes += f.size;
  fmt::print("enforce: {} actions applied, {} skipped in {:.2f} s ({:.0f} actions/s); dir now {:.2f} GB in {} files, "
             "{} rows; peak RSS {} MB\n",
             rep.applied.size(), rep.skipped.size(), apply_s, rep.applied.size() / apply_s, bytes / 1073741824.0,
             after->size(), file.store().size(), peak_rss_mb());
  fmt::print(
      R"({{"bench":"maintenance","rows":{},"files":{},"apparent_gb":{:.2f},"load_s":{:.3f},"scan_s":{:.3f},"rows_s":{:.3f},"plan_s":{:.3f},"peak_rss_mb_planned":{},"actions":{},"enforce_s":{:.3f},"after_gb":{:.3f},"budget_met":{}}})"
      "\n",
      rows.size(), listing->size(), plan.total_bytes_before / 1073741824.0, load_s, scan_s, rows_s, plan_s, rss_planned,
      plan.actions.size(), apply_s, bytes / 1073741824.0, plan.disk_budget && plan.disk_budget->met);
  return 0;
}

// Ack latencies (ms) of `turns` turns from 4 senders, each waiting for its ack.
std::vector<double> ack_latencies(runtime::runtime& rt, std::size_t turns, const std::string& tag) {
  std::vector<double> lat(turns);
  std::atomic<std::size_t> next{0};
  auto sender = [&](int s) {
    for (std::size_t i; (i = next.fetch_add(1)) < turns;) {
      chat_event ev;
      ev.channel = "telegram";
      ev.peer_kind = "direct";
      ev.peer_id = fmt::format("{}-{}-{}", tag, s, i % 50);
      ev.text = "turn " + std::to_string(i);
      const double t0 = now_s();
      auto out = rt.send(std::move(ev)).get();
      lat[i] = (now_s() - t0) * 1000;
      if (!out.st.ok()) fmt::print(stderr, "turn failed: {}\n", out.st.to_string());
    }
  };
  std::vector<std::thread> th;
  for (int s = 0; s < 4; ++s) th.emplace_back(sender, s);
  for (auto& t : th) t.join();
  std::sort(lat.begin(), lat.end());
  return lat;
}

double pct(const std::vector<double>& v, double p) {
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

// A fresh state dir <tmp>/<name> of `rows` rows, the i-th "agent:main:direct:<stem><i>"
// updated `age_ms + i` seconds ago with `extra` fields, each with a sparse transcript of
// `transcript_bytes` as old as its row. Returns the state dir ("" after printing an error).
std::string make_state_dir(const std::string& name, std::size_t rows, const std::string& stem, std::int64_t age_ms,
                           std::uint64_t transcript_bytes, const boost::json::object& extra = {}) {
  const std::string root = (std::filesystem::temp_directory_path() / name).string();
  std::filesystem::remove_all(root);
  const std::string sessions = root + "/agents/main/sessions";
  std::filesystem::create_directories(sessions);
  const std::int64_t now = storage::real_clock().now_ms();
  storage::session_store store;
  for (std::size_t i = 0; i < rows; ++i) {
    std::string id = fmt::format("{}{:07d}-0000-4000-8000-000000000000", stem[0], i);
    const std::int64_t updated = now - age_ms - static_cast<std::int64_t>(i) * 1000;
    boost::json::object o = extra;
    o["sessionId"] = id;
    o["updatedAt"] = updated;
    store.upsert(fmt::format("agent:main:direct:{}{}", stem, i), session_entry(std::move(o)));
    sparse(sessions + "/" + id + ".jsonl", transcript_bytes, updated);
  }
  if (auto st = storage::replace_file_atomic(storage::posix_fs(), sessions + "/sessions.json",
                                             storage::serialize_store(store, true), {false});
      !st.ok()) {
    fmt::print(stderr, "{}\n", st.message());
    return {};
  }
  return root;
}

// A runtime on `root` in mode enforce whose passes come only when asked for (no high water).
result<std::unique_ptr<runtime::runtime>> start_enforcing(const std::string& root, std::optional<bool> keep_picture = {}) {
  runtime::runtime_options o;
  o.settings.state_dir = root;
  o.settings.session.reset.timezone = "UTC";
  o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  o.settings.maintenance.mode = actors::maintenance_mode::enforce;
  o.settings.maintenance.max_entries = 1000000;
  o.settings.storage.keep_maintenance_picture = keep_picture;
  o.runner = std::make_shared<runtime::simulated_model>(storage::real_clock());
  return runtime::runtime::start(std::move(o));
}

int ack_bench(const args& a) {
  const std::string root = make_state_dir("sessionrt-maintenance-ack", a.ack_rows, "stale", 40 * day, 100000);
  if (root.empty()) return 2;
  auto rt = start_enforcing(root);
  if (!rt.ok()) return fmt::print(stderr, "{}\n", rt.error().message()), 2;
  (void)ack_latencies(**rt, 200, "warm");
  const auto quiet = ack_latencies(**rt, a.ack_turns, "quiet");
  const double t0 = now_s();
  auto pass = std::async(std::launch::async, [&] { return (*rt)->maintain(); });
  std::vector<double> busy;
  std::size_t rounds = 0;
  // Turns keep coming until the pass ends (at least one round).
  do {
    auto l = ack_latencies(**rt, a.ack_turns, "busy" + std::to_string(rounds++));
    busy.insert(busy.end(), l.begin(), l.end());
  } while (pass.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
  auto report = pass.get();
  const double pass_s = now_s() - t0;
  std::sort(busy.begin(), busy.end());
  if (!report.ok()) return fmt::print(stderr, "{}\n", report.error().message()), 2;
  const auto removed = report->data.at("rowsRemoved").to_number<std::int64_t>();
  const auto archived = report->data.at("filesArchived").to_number<std::int64_t>();
  (void)(*rt)->stop();
  std::filesystem::remove_all(root);
  fmt::print("ack latency: without enforcement p50 {:.3f} ms p99 {:.3f} ms ({} turns); during enforcement p50 {:.3f} "
             "ms p99 {:.3f} ms ({} turns); the pass removed {} rows, archived {} files in {:.2f} s\n",
             pct(quiet, 0.5), pct(quiet, 0.99), quiet.size(), pct(busy, 0.5), pct(busy, 0.99), busy.size(), removed,
             archived, pass_s);
  fmt::print(
      R"({{"bench":"maintenance_ack","rows":{},"quiet_p50_ms":{:.3f},"quiet_p99_ms":{:.3f},"busy_p50_ms":{:.3f},"busy_p99_ms":{:.3f},"turns_quiet":{},"turns_busy":{},"rows_removed":{},"files_archived":{},"pass_s":{:.3f}}})"
      "\n",
      a.ack_rows, pct(quiet, 0.5), pct(quiet, 0.99), pct(busy, 0.5), pct(busy, 0.99), quiet.size(), busy.size(), removed,
      archived, pass_s);
  return 0;
}

// One runtime on `root` with the picture kept or not: see --pass-only above.
int pass_bench_once(const std::string& root, std::size_t rows, bool keep) {
  auto rt = start_enforcing(root, keep);
  if (!rt.ok()) return fmt::print(stderr, "{}\n", rt.error().message()), 2;
  auto timed_pass = [&] {
    const double t0 = now_s();
    auto report = (*rt)->maintain();
    if (!report.ok()) fmt::print(stderr, "pass failed: {}\n", report.error().message());
    return (now_s() - t0) * 1000;
  };
  const double first_ms = timed_pass();
  std::vector<double> steady;
  for (int i = 0; i < 5; ++i) {
    (void)ack_latencies(**rt, 200, fmt::format("steady{}-{}", keep, i));
    steady.push_back(timed_pass());
  }
  std::sort(steady.begin(), steady.end());
  malloc_trim(0);
  const auto heap = mallinfo2().uordblks;
  // Turns while passes run back to back.
  std::atomic<bool> passing{true};
  std::thread passes([&] {
    while (passing.load()) (void)(*rt)->maintain();
  });
  auto busy = ack_latencies(**rt, 2000, fmt::format("busy{}", keep));
  passing = false;
  passes.join();
  (void)(*rt)->stop();
  fmt::print("picture {}: first pass {:.1f} ms, steady pass median {:.1f} ms (min {:.1f}, max {:.1f}); ack during passes "
             "p50 {:.3f} ms p99 {:.3f} ms; heap in use after a pass {:.1f} MB ({:.0f} B per row)\n",
             keep ? "kept" : "per-pass", first_ms, steady[2], steady.front(), steady.back(), pct(busy, 0.5),
             pct(busy, 0.99), heap / 1048576.0, static_cast<double>(heap) / static_cast<double>(rows));
  fmt::print(
      R"({{"bench":"maintenance_picture","keep_picture":{},"rows":{},"first_pass_ms":{:.1f},"steady_pass_ms":{:.1f},"busy_ack_p50_ms":{:.3f},"busy_ack_p99_ms":{:.3f},"heap_mb":{:.1f}}})"
      "\n",
      keep, rows, first_ms, steady[2], pct(busy, 0.5), pct(busy, 0.99), heap / 1048576.0);
  return 0;
}

int pass_bench(const args& a) {
  const std::string root =
      make_state_dir("sessionrt-maintenance-pass", a.pass_rows, "user", 0, 20000, boost::json::object{{"label", "bench"}});
  if (root.empty()) return 2;
  fmt::print(stderr, "[maintenance_bench] {} rows written; measuring passes\n", a.pass_rows);
  int rc = pass_bench_once(root, a.pass_rows, true);
  if (rc == 0) rc = pass_bench_once(root, a.pass_rows, false);
  std::filesystem::remove_all(root);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (k == "--rows") a.rows = std::stoul(next());
    else if (k == "--gb") a.gb = std::stod(next());
    else if (k == "--archives") a.archives = std::stoul(next());
    else if (k == "--budget-gb") a.budget_gb = std::stod(next());
    else if (k == "--dir") a.dir = next();
    else if (k == "--measure") a.measure = next();
    else if (k == "--keep") a.keep = true;
    else if (k == "--ack-rows") a.ack_rows = std::stoul(next());
    else if (k == "--ack-turns") a.ack_turns = std::stoul(next());
    else if (k == "--ack-only") a.ack_only = true;
    else if (k == "--no-ack") a.no_ack = true;
    else if (k == "--pass-only") a.pass_only = true;
    else if (k == "--pass-rows") a.pass_rows = std::stoul(next());
    else return fmt::print(stderr, "unknown option {}\n", k), 2;
  }
  if (!a.measure.empty()) return measure(a);
  if (a.ack_only) return ack_bench(a);
  if (a.pass_only) return pass_bench(a);
  const std::int64_t now = storage::real_clock().now_ms();
  std::string root = a.dir.empty() ? (std::filesystem::temp_directory_path() / "sessionrt-maintenance-bench").string() : a.dir;
  std::filesystem::remove_all(root);
  const std::string sessions = root + "/agents/main/sessions";
  build(a, sessions, now);
  std::fflush(stdout);
  ::sync();
  std::string now_text = std::to_string(now);
  ::setenv("MB_NOW", now_text.c_str(), 1);
  // posix_spawn (vfork-like): the child does not start with a copy of this process's pages.
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string budget = std::to_string(a.budget_gb);
  std::vector<char*> child_argv{self.data(), const_cast<char*>("--measure"), const_cast<char*>(sessions.c_str()),
                                const_cast<char*>("--budget-gb"), budget.data(), nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, self.c_str(), nullptr, nullptr, child_argv.data(), environ) != 0) return 2;
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!a.keep) std::filesystem::remove_all(root);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
  if (rc != 0 || a.no_ack) return rc;
  return ack_bench(a);
}
