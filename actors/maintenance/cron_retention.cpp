#include "actors/maintenance/cron_retention.hpp"

#include <fcntl.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "actors/router/session_key.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::actors {

std::optional<std::string> trim_run_log(std::string_view text, const cron_settings& settings) {
  if (static_cast<std::int64_t>(text.size()) <= settings.run_log_max_bytes) return std::nullopt;
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos) lines.push_back(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  const std::size_t keep = static_cast<std::size_t>(std::max<std::int64_t>(0, settings.run_log_keep_lines));
  std::size_t first = lines.size() > keep ? lines.size() - keep : 0;
  std::string out;
  for (std::size_t i = first; i < lines.size(); ++i) {
    out.append(lines[i]);
    out.push_back('\n');
  }
  return out;
}

maintenance_plan plan_cron_reaper(const std::vector<maintenance_row>& rows, const std::vector<dir_file>& files,
                                  const cron_settings& settings, std::int64_t now_ms,
                                  const std::vector<std::string>& preserve_keys, maintenance_mode mode) {
  return plan_cron_reaper(rows, dir_index::of(files), settings, now_ms, preserve_keys, mode);
}

maintenance_plan plan_cron_reaper(const std::vector<maintenance_row>& rows, const dir_index& files,
                                  const cron_settings& settings, std::int64_t now_ms,
                                  const std::vector<std::string>& preserve_keys, maintenance_mode mode) {
  maintenance_plan plan;
  plan.mode = mode;
  plan.before_count = plan.after_count = rows.size();
  if (!settings.session_retention_ms) return plan;
  const std::int64_t cutoff = now_ms - *settings.session_retention_ms;
  std::unordered_set<std::string_view> preserve(preserve_keys.begin(), preserve_keys.end());
  std::vector<const maintenance_row*> reaped;
  for (const auto& r : rows) {
    if (!r.updated_at || *r.updated_at >= cutoff) continue;
    if (!is_cron_run_key(r.key()) || preserve.count(r.key()) || r.is_protected) continue;
    reaped.push_back(&r);
  }
  std::unordered_map<std::string_view, int> refs;
  if (!reaped.empty())
    for (const auto& r : rows)
      if (!r.session_id().empty()) ++refs[r.session_id()];
  std::vector<std::string> orphaned;
  for (const auto* row : reaped) {
    const auto& r = *row;
    plan_action a;
    a.step = maintenance_step::cron_reaper;
    a.kind = action_kind::remove_row;
    a.key = std::string(r.key());
    a.updated_at = r.updated_at;
    a.session_id = std::string(r.session_id());
    a.bytes = r.text_bytes;
    plan.actions.push_back(std::move(a));
    --plan.after_count;
    ++plan.pruned;
    if (!r.session_id().empty() && --refs[r.session_id()] == 0) orphaned.emplace_back(r.session_id());
  }
  // The files to act on, in name order: those of the orphaned sessions and the `.deleted.`
  // archives older than the retention.
  std::set<std::string_view> candidates;
  for (const auto& id : orphaned)
    for (const auto& f : files.session_files(id)) candidates.insert(f.name);
  for (const auto& f : files.deleted_archives()) {
    if (*f.timestamp_ms() >= cutoff) break;
    candidates.insert(f.name);
  }
  std::unordered_set<std::string> made;  // archive names given by this plan
  std::unordered_set<std::string> gone(orphaned.begin(), orphaned.end());
  for (auto candidate : candidates) {
    const indexed_file& f = *files.find(candidate);
    const std::string session_id(f.session_id());
    plan_action a;
    a.step = maintenance_step::cron_reaper;
    a.file = f.name;
    a.bytes = f.size;
    a.mtime_ms = f.mtime_ms;
    if (!session_id.empty() && gone.count(session_id)) {
      a.session_id = session_id;
      if (storage::holds_transcript(f.kind)) {  // a compressed one is archived as it is
        std::int64_t ts = now_ms;
        std::string target = storage::archive_name(f.name, storage::archive_reason::deleted, ts);
        while (files.find(target) || made.count(target))
          target = storage::archive_name(f.name, storage::archive_reason::deleted, ++ts);
        made.insert(target);
        a.kind = action_kind::archive_file;
        a.target = std::move(target);
        ++plan.archived_files;
      } else if (f.kind == storage::artifact_kind::trajectory || f.kind == storage::artifact_kind::trajectory_pointer) {
        a.kind = action_kind::delete_file;
        ++plan.deleted_files;
      } else {
        continue;
      }
      plan.actions.push_back(std::move(a));
    } else if (f.kind == storage::artifact_kind::deleted_archive && f.timestamp_ms() && *f.timestamp_ms() < cutoff) {
      a.kind = action_kind::delete_file;
      ++plan.deleted_files;
      plan.actions.push_back(std::move(a));
    }
  }
  return plan;
}

result<bool> trim_run_log_file(storage::fs& files, const std::string& path, const cron_settings& settings) {
  auto info = files.stat(path);
  if (!info.ok()) {
    if (info.error().code() == errc::not_found) return false;
    return info.error();
  }
  if (static_cast<std::int64_t>(info->size) <= settings.run_log_max_bytes) return false;
  auto text = storage::read_file(files, path, max_run_log_read_bytes);
  if (!text.ok()) return text.error().with_context("trimming the cron run log");
  auto trimmed = trim_run_log(*text, settings);
  if (!trimmed) return false;
  SRT_RETURN_IF_ERROR(storage::replace_file_atomic(files, path, *trimmed));
  return true;
}

result<bool> append_run_log(storage::fs& files, const std::string& path, std::string_view line,
                            const cron_settings& settings) {
  SRT_RETURN_IF_ERROR(storage::ensure_dir(files, storage::path_dirname(path)));
  auto fd = files.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (!fd.ok()) return fd.error().with_context("opening the cron run log");
  std::string text(line);
  text.push_back('\n');
  status written;
  for (std::size_t at = 0; at < text.size() && written.ok();) {
    auto n = files.write(*fd, text.data() + at, text.size() - at);
    if (!n.ok())
      written = n.error().with_context("appending to the cron run log " + path);
    else
      at += *n;
  }
  (void)files.close(*fd);
  SRT_RETURN_IF_ERROR(written);
  return trim_run_log_file(files, path, settings);
}

result<std::string> run_log_path(std::string_view cron_store_dir, std::string_view job_id) {
  if (job_id.empty() || job_id == "." || job_id.find_first_of(std::string_view("/\\\0", 3)) != std::string_view::npos ||
      job_id.find("..") != std::string_view::npos)
    return status(errc::unsafe_path, "cron job id \"" + std::string(job_id) + "\" cannot name a run log file");
  return storage::path_join(storage::path_join(cron_store_dir, "runs"), std::string(job_id) + ".jsonl");
}

}  // namespace sessionrt::actors
