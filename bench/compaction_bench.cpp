// A session of N entries (default 50,000) compacted repeatedly: for each round, the time to
// plan the compaction (path from the last kept boundary + plan_compaction), to write it
// (summary by the simulated model, entry appended), and to open the file afresh and build the
// next context. The files are kept in --dir so bench/pi_open_build.mjs can time pi's build
// of the same files. One JSON line per round on stdout.
// Usage: compaction_bench [--entries N] [--rounds R] [--dir DIR]
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "actors/session/compaction_planner.hpp"
#include "actors/session/compaction_runner.hpp"
#include "actors/session/inline_turn_io.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/context_builder.hpp"
#include "storage/system_clock.hpp"
#include "storage/transcript_file.hpp"

using namespace sessionrt;
using steady = std::chrono::steady_clock;

namespace {
double ms_since(steady::time_point t0) { return std::chrono::duration<double, std::milli>(steady::now() - t0).count(); }

boost::json::object reply(const std::string& text) {
  assistant_fields a;
  a.content.push_back(text_block(text));
  a.model = "sim-1";
  a.usage = {1200, 180, 0, 0, 0, 0, 0, 0};
  return assistant_message(std::move(a));
}
}  // namespace

int main(int argc, char** argv) {
  int entries = 50000, rounds = 5;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--entries" && i + 1 < argc) entries = std::stoi(argv[++i]);
    else if (k == "--rounds" && i + 1 < argc) rounds = std::stoi(argv[++i]);
    else if (k == "--dir" && i + 1 < argc) dir = argv[++i];
    else {
      std::cerr << "usage: compaction_bench [--entries N] [--rounds R] [--dir DIR]\n";
      return 2;
    }
  }
  if (dir.empty()) {
    char tmpl[] = "/tmp/sessionrt-cbench-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  auto& clk = storage::real_clock();
  const std::string text(400, 't');
  const std::string path = dir + "/compaction-" + std::to_string(entries) + ".jsonl";
  (void)storage::posix_fs().unlink(path);
  header_fields h;
  h.id = "cbench";
  h.timestamp_ms = clk.now_ms();
  h.cwd = "/bench";
  storage::transcript_options to;
  to.mode = storage::durability::none;
  auto created = storage::transcript_file::create(storage::posix_fs(), clk, path, h, to);
  if (!created.ok()) {
    std::cerr << created.error().message() << "\n";
    return 1;
  }
  std::unique_ptr<storage::transcript_file> tf = std::move(*created);
  for (int i = 0; i < entries / 2; ++i) {
    (void)tf->append_message(user_message(text, i));
    (void)tf->append_message(reply(text));
  }
  (void)tf->flush();

  actors::runtime_settings settings;
  settings.compaction.keep_recent_tokens = 20000;
  settings.storage.durability = storage::durability::none;
  runtime::simulated_model model(clk);
  actors::compaction_providers providers;
  actors::inline_turn_io io(&model);
  actors::compaction_env env{&storage::posix_fs(), &clk, &settings, &io, &providers};
  session_entry row;
  row.set_session_id("cbench");
  for (int r = 0; r < rounds; ++r) {
    // planning alone (the same work compact_session starts with)
    const auto t0 = steady::now();
    auto leaf = tf->reader().locate(*tf->leaf_id());
    auto path_entries = storage::path_entries(tf->reader(), *leaf);
    std::vector<const boost::json::object*> p;
    for (auto& e : *path_entries) p.push_back(e.get());
    auto plan = actors::plan_compaction(p, settings.compaction);
    const double plan_ms = ms_since(t0);
    const auto t1 = steady::now();
    auto done = *actors::run_inline(
        actors::compact_session(env, actors::compaction_request{"threshold", "", "agent:main:bench"}, tf, row));
    const double compact_ms = ms_since(t1);
    if (!done.ok() || !plan) {
      std::cerr << (done.ok() ? "nothing to compact" : done.error().message()) << "\n";
      return 1;
    }
    (void)tf->flush();
    const auto t2 = steady::now();
    auto rd = storage::transcript_reader::open(storage::posix_fs(), path);
    auto ctx = storage::build_context(**rd);
    const double build_ms = ms_since(t2);
    std::cout << fmt::format(
                     R"({{"bench":"compaction_round","round":{},"entries":{},"file":"{}","plan_ms":{:.3f},"path_entries":{},"compact_ms":{:.3f},"open_build_ms":{:.3f},"ctx_messages":{},"bytes_read":{}}})",
                     r + 1, tf->reader().index().size(), path, plan_ms, p.size(), compact_ms, build_ms,
                     ctx->messages.size(), (*rd)->stats().bytes_read)
              << std::endl;
    if (r + 1 == rounds) break;  // the file as the last round left it, for pi_open_build.mjs
    // more conversation before the next compaction
    for (int i = 0; i < 200; ++i) {
      (void)tf->append_message(user_message(text, i));
      (void)tf->append_message(reply(text));
    }
    (void)tf->flush();
  }
  return 0;
}
