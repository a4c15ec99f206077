#include "runtime/commit_log_setup.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "storage/durable_file.hpp"

namespace sessionrt::runtime {

result<commit_log_setup> open_commit_log(storage::fs& f, clock& c, const std::string& state_dir, bool batch) {
  namespace cl = storage::commit_log;
  commit_log_setup out;
  const std::string dir = cl::log_dir(state_dir);
  auto rec = cl::recover_logs(f, state_dir);
  if (!rec.ok()) return rec.error().with_context("replaying the commit log in " + dir);
  out.recovered = std::move(*rec);
  const auto& rep = out.recovered.report;
  for (const auto& w : rep.warnings) spdlog::warn("commit log replay: {}", w);
  if (rep.rewritten > 0)
    spdlog::warn("commit log replay: {} record(s) written again into {} transcript(s) ({} bytes) after a crash",
                 rep.rewritten, rep.rewritten_paths.size(), rep.bytes_rewritten);
  if (batch) {
    auto made = cl::create_log(f, c, dir, out.recovered.next_number, out.recovered.state_id);
    if (!made.ok()) return made.error();
    out.log = std::move(*made);
  }
  return out;
}

}  // namespace sessionrt::runtime
