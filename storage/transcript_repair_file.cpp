// The file half of transcript repair (transcript_repair.hpp): read, back up, keep the removed
// lines, replace atomically. The rules themselves are repair_transcript_text's.
#include "storage/transcript_repair.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <utility>

#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/js_text.hpp"
#include "messages/json_writer.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage {
namespace {

// Writes the backup with the original's mode. The caller unlinks it on every later failure.
status write_backup(fs& f, const std::string& backup, std::string_view data, mode_t mode) {
  auto fd = f.open(backup, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  if (!fd.ok()) return fd.error();
  status st = write_all(f, *fd, data.data(), data.size());
  status closed = f.close(*fd);
  if (st.ok()) st = closed;
  if (st.ok()) st = f.chmod(backup, mode);  // open() applied the umask
  if (!st.ok()) {
    (void)f.unlink(backup);
    return st.with_context("writing backup " + backup);
  }
  return {};
}

// <path>.dropped-<dashed ISO>.jsonl, created exclusively (a taken name moves the time on by
// 1 ms) and durably; returns its path.
result<std::string> keep_removed_lines(fs& f, const std::string& path, std::int64_t now_ms, std::string_view lines,
                                       mode_t mode) {
  replace_options ro;
  ro.mode = mode;
  ro.temp_prefix = path_basename(path) + ".dropped";
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string name = dropped_lines_name(path, now_ms + attempt);
    status st = create_file_exclusive(f, name, lines, ro);
    if (st.ok()) {
      (void)f.chmod(name, mode);  // open() applied the umask
      return name;
    }
    if (st.code() != errc::already_exists) {
      (void)f.unlink(name);  // linked but not confirmed durable; the name was free before
      return st.with_context("keeping the dropped lines in " + name);
    }
  }
  return status(errc::already_exists, "keeping the dropped lines of " + path + ": 1000 names taken");
}

bool same_file_state(const file_info& a, const file_info& b) {
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime_ns == b.mtime_ns;
}

}  // namespace

result<repair_report> repair_transcript_file(fs& f, clock& clk, const std::string& path,
                                             const repair_options& options) {
  auto before = f.stat(path);
  if (!before.ok()) return before.error().with_context("repairing transcript");
  if (!before->is_regular())
    return status(errc::invalid_argument, fmt::format("repairing transcript {}: not a regular file", path));
  auto content = read_file(f, path, options.max_file_bytes);
  if (!content.ok()) return content.error().with_context("repairing transcript");

  const std::int64_t now = clk.now_ms();
  repair_options opt = options;
  opt.file_label = path_basename(path);
  auto repaired = repair_transcript_text(*content, now, opt);
  repair_report& rep = repaired.report;
  if (rep.abandoned())
    return status(errc::corrupt,
                  fmt::format("not repairing transcript {}: {}; the file was left as it is", path, rep.abandoned_reason));
  if (!rep.changed()) return std::move(rep);

  const mode_t mode = before->mode & 07777;
  const std::string backup = repair_backup_name(path, ::getpid(), now);
  auto untouched = [&](const status& st) {
    return status(st.code(),
                  fmt::format("repairing transcript {} failed, the file was left as it is: {}", path, st.message()));
  };
  if (status st = write_backup(f, backup, *content, mode); !st.ok()) return untouched(st);

  // The caller holds the write lock; this catches a writer that does not honour it.
  auto again = f.stat(path);
  if (!again.ok() || !same_file_state(*before, *again)) {
    (void)f.unlink(backup);
    return status(errc::cancelled, fmt::format("repairing transcript {}: the file changed while it was being "
                                               "repaired (another writer?); it was left as it is",
                                               path));
  }

  // What the rewrite removes is kept beside the file, durably, before the file changes.
  if (!repaired.removed_lines.empty()) {
    auto kept = keep_removed_lines(f, path, now, repaired.removed_lines, mode);
    if (!kept.ok()) {
      (void)f.unlink(backup);
      return untouched(kept.error());
    }
    rep.dropped_path = *kept;
  }
  replace_options ro;
  ro.mode = mode;
  ro.temp_prefix = path_basename(path) + ".repair";
  if (status st = replace_file_atomic(f, path, repaired.cleaned_text, ro); !st.ok()) {
    auto now_info = f.stat(path);
    const bool replaced = now_info.ok() && now_info->ino != before->ino;
    if (!replaced) {
      (void)f.unlink(backup);
      if (rep.dropped_path) (void)f.unlink(*rep.dropped_path);
      return untouched(st);
    }
    // Renamed, but the directory sync failed: the old bytes stay in the backup.
    return status(st.code(), fmt::format("repairing transcript {}: the file was replaced but not confirmed durable "
                                         "({}); the original is kept at {}",
                                         path, st.message(), backup));
  }
  if (auto info = f.stat(path); info.ok() && (info->mode & 07777) != mode) (void)f.chmod(path, mode);  // umask
  if (!f.unlink(backup).ok()) rep.backup_path = backup;
  return std::move(rep);
}

result<repair_report> recover_corrupt_transcript(fs& f, clock& clk, const std::string& path,
                                                 const boost::json::object& header, const repair_options& options) {
  auto before = f.stat(path);
  if (!before.ok()) return before.error().with_context("recovering transcript");
  auto content = read_file(f, path, options.max_file_bytes);
  if (!content.ok()) return content.error().with_context("recovering transcript");
  const std::int64_t now = clk.now_ms();
  const mode_t mode = before->mode & 07777;

  // The parseable object lines; the first session header found is kept as the header.
  std::string kept_header;
  std::string body;
  std::size_t dropped = 0;
  std::string_view text(*content);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (is_js_blank(line)) continue;
    auto v = json::parse(line, options.line_limits);
    if (!v.ok() || !v->is_object()) {
      ++dropped;
      continue;
    }
    const auto& o = v->get_object();
    if (auto type = json::get_string(o, "type"); type && *type == "session") {
      auto id = json::get_string(o, "id");
      if (kept_header.empty() && id && !id->empty()) kept_header = std::string(line);
      continue;  // stray headers are not entries
    }
    body.append(line);
    body += '\n';
  }
  const bool synthesized = kept_header.empty();
  std::string rebuilt = (synthesized ? json::to_compact(header) : kept_header) + "\n" + body;
  repair_options opt = options;
  opt.file_label = path_basename(path);
  auto repaired = repair_transcript_text(rebuilt, now, opt);
  repair_report rep = std::move(repaired.report);
  rep.dropped_malformed_lines += dropped;
  rep.synthesized_header = synthesized;

  std::string hex = new_uuid_v4();
  hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
  const std::string corrupt = corrupt_backup_name(path, now, hex.substr(0, 8));
  if (status st = write_backup(f, corrupt, *content, mode); !st.ok())
    return status(st.code(), fmt::format("recovering transcript {} failed, the file was left as it is: {}", path,
                                         st.message()));
  replace_options ro;
  ro.mode = mode;
  ro.temp_prefix = path_basename(path) + ".repair";
  if (status st = replace_file_atomic(f, path, repaired.cleaned_text, ro); !st.ok()) {
    auto now_info = f.stat(path);
    if (!now_info.ok() || now_info->ino == before->ino) (void)f.unlink(corrupt);
    return status(st.code(), fmt::format("recovering transcript {} failed: {}", path, st.message()));
  }
  rep.corrupt_backup_path = corrupt;
  return rep;
}
}  // namespace sessionrt::storage
