#include "storage/commit_log/log_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "messages/ids.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage::commit_log {

std::string log_dir(const std::string& state_dir) { return path_join(state_dir, "commit-log"); }
std::string state_id_path(const std::string& state_dir) { return path_join(state_dir, "state-id"); }
std::string log_path(const std::string& dir, std::uint64_t number) { return path_join(dir, fmt::format("{:020}.log", number)); }

result<std::string> state_identity(fs& f, const std::string& state_dir) {
  const std::string path = state_id_path(state_dir);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto text = read_file(f, path, 4096);
    if (text.ok()) {
      std::string id = *text;
      while (!id.empty() && std::isspace(static_cast<unsigned char>(id.back()))) id.pop_back();
      if (id.empty() || id.size() > 255)
        return status(errc::corrupt, fmt::format("{} holds no state dir identity; remove it only if {} holds no commit log",
                                                 path, log_dir(state_dir)));
      return id;
    }
    if (text.error().code() != errc::not_found) return text.error();
    status made = create_file_exclusive(f, path, new_uuid_v4() + "\n");
    if (!made.ok() && made.code() != errc::already_exists) return made.with_context("making the state dir's identity");
  }
  return status(errc::internal, fmt::format("{} vanished while it was read", path));
}

result<std::vector<std::uint64_t>> list_logs(fs& f, const std::string& dir) {
  std::vector<std::uint64_t> out;
  auto names = f.list_dir(dir);
  if (!names.ok()) {
    if (names.error().code() == errc::not_found) return out;
    return names.error();
  }
  for (const auto& n : *names) {
    if (n.size() != 24 || n.compare(20, 4, ".log") != 0) continue;
    if (!std::all_of(n.begin(), n.begin() + 20, [](char c) { return c >= '0' && c <= '9'; })) continue;
    out.push_back(std::stoull(n.substr(0, 20)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

result<new_log> create_log(fs& f, clock& c, const std::string& dir, std::uint64_t number, const std::string& state_id) {
  new_log out;
  out.path = log_path(dir, number);
  out.number = number;
  auto fd = f.open(out.path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (!fd.ok()) return fd.error().with_context("starting a commit log");
  out.fd = *fd;
  log_header h;
  h.log_number = number;
  h.created_ms = c.now_ms();
  h.state_id = state_id;
  std::string payload;
  encode(payload, h);
  log_writer w(f, out.fd, out.path, 0);
  w.add_record(payload);
  status st = w.write();
  if (st.ok()) st = f.fdatasync(out.fd).with_context("syncing " + out.path);
  if (st.ok()) st = fsync_dir(f, dir);
  if (!st.ok()) {
    (void)f.close(out.fd);
    (void)f.unlink(out.path);
    return st.with_context("starting a commit log");
  }
  out.length = w.written();
  return out;
}

status remove_logs(fs& f, const std::string& dir, const std::vector<std::uint64_t>& numbers) {
  if (numbers.empty()) return {};
  for (auto n : numbers) {
    status st = f.unlink(log_path(dir, n));
    if (!st.ok() && st.code() != errc::not_found) return st.with_context("removing a checkpointed commit log");
  }
  return fsync_dir(f, dir);
}

}  // namespace sessionrt::storage::commit_log
