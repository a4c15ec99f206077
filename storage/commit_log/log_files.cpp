#include "storage/commit_log/log_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <spdlog/spdlog.h>

#include "messages/ids.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage::commit_log {

std::string log_dir(const std::string& state_dir) { return path_join(state_dir, "commit-log"); }
std::string state_id_path(const std::string& state_dir) { return path_join(state_dir, "state-id"); }
std::string log_path(const std::string& dir, std::uint64_t number) { return path_join(dir, fmt::format("{:020}.log", number)); }
std::string free_log_path(const std::string& dir, std::uint64_t number) {
  return path_join(dir, fmt::format("{:020}.free", number));
}

namespace {
// The number of a name "<20 digits><suffix>".
std::optional<std::uint64_t> numbered(std::string_view name, std::string_view suffix) {
  if (name.size() != 20 + suffix.size() || name.substr(20) != suffix) return std::nullopt;
  if (!std::all_of(name.begin(), name.begin() + 20, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return std::stoull(std::string(name.substr(0, 20)));
}

}  // namespace

std::vector<std::uint64_t> free_logs(fs& f, const std::string& dir) {
  std::vector<std::uint64_t> out;
  auto names = f.list_dir(dir);
  if (!names.ok()) return out;
  for (const auto& n : *names)
    if (auto number = numbered(n, ".free")) out.push_back(*number);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::uint64_t> log_number_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return numbered(std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1), ".log");
}

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
  for (const auto& n : *names)
    if (auto number = numbered(n, ".log")) out.push_back(*number);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Writes log `number`'s header at byte 0 of `fd` and syncs it; its length.
result<std::uint64_t> write_header(fs& f, clock& c, int fd, const std::string& path, std::uint64_t number,
                                   const std::string& state_id) {
  log_header h;
  h.log_number = number;
  h.created_ms = c.now_ms();
  h.state_id = state_id;
  std::string payload;
  encode(payload, h);
  log_writer w(f, fd, path, 0, number);
  w.add_record(payload);
  SRT_RETURN_IF_ERROR(w.write());
  SRT_RETURN_IF_ERROR(f.fdatasync(fd).with_context("syncing " + path));
  return w.written();
}

// Log `number` in the oldest .free file, or nothing (none, or it failed: a new file is made).
std::optional<new_log> recycle(fs& f, clock& c, const std::string& dir, std::uint64_t number, const std::string& state_id) {
  for (auto old : free_logs(f, dir)) {
    const std::string from = free_log_path(dir, old);
    auto fd = f.open(from, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (!fd.ok()) continue;
    new_log out;
    out.fd = *fd;
    out.path = log_path(dir, number);
    out.number = number;
    out.recycled = true;
    auto info = f.fstat(out.fd);
    auto length = info.ok() ? write_header(f, c, out.fd, from, number, state_id) : result<std::uint64_t>(info.error());
    status st = length.ok() ? f.link(from, out.path) : length.error();
    if (st.ok()) st = f.unlink(from);
    if (st.ok()) st = fsync_dir(f, dir);
    if (!st.ok()) {
      // The file is a .free one still (or the new name already holds its own header): dropped.
      spdlog::warn("commit log: recycling {} as log {}: {}; a new file is made", from, number, st.message());
      (void)f.close(out.fd);
      (void)f.unlink(from);
      if (st.code() == errc::already_exists) return std::nullopt;
      continue;
    }
    out.length = *length;
    out.allocated = std::max(info->size, out.length);
    return out;
  }
  return std::nullopt;
}

}  // namespace

result<new_log> create_log(fs& f, clock& c, const std::string& dir, std::uint64_t number, const std::string& state_id) {
  if (auto reused = recycle(f, c, dir, number, state_id)) return std::move(*reused);
  new_log out;
  out.path = log_path(dir, number);
  out.number = number;
  auto fd = f.open(out.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (!fd.ok()) return fd.error().with_context("starting a commit log");
  out.fd = *fd;
  auto length = write_header(f, c, out.fd, out.path, number, state_id);
  status st = length.ok() ? fsync_dir(f, dir) : length.error();
  if (!st.ok()) {
    (void)f.close(out.fd);
    (void)f.unlink(out.path);
    return st.with_context("starting a commit log");
  }
  out.length = out.allocated = *length;
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

namespace sessionrt::storage::commit_log {

status recycle_logs(fs& f, const std::string& dir, const std::vector<std::uint64_t>& numbers, std::size_t keep) {
  if (numbers.empty()) return {};
  std::size_t kept = free_logs(f, dir).size();
  for (auto n : numbers) {
    status st = kept < keep ? f.rename(log_path(dir, n), free_log_path(dir, n)) : f.unlink(log_path(dir, n));
    if (st.ok() && kept < keep) ++kept;
    if (!st.ok() && st.code() != errc::not_found) return st.with_context("dropping a checkpointed commit log");
  }
  return fsync_dir(f, dir);
}

}  // namespace sessionrt::storage::commit_log
