#include "actors/maintenance/plan_applier.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "actors/maintenance/dashboard_archive.hpp"
#include "storage/archive_names.hpp"
#include "storage/cold_transcript.hpp"
#include "storage/durable_file.hpp"
#include "storage/group_sync.hpp"

namespace sessionrt::actors {

namespace {

std::int64_t mtime_ms_of(const storage::file_info& info) { return info.mtime_ns / 1000000; }

}  // namespace

result<std::vector<dir_file>> scan_sessions_dir(storage::fs& files, const std::string& dir,
                                                const progress_fn& progress) {
  auto names = files.list_dir(dir);
  if (!names.ok()) return names.error().with_context("listing the sessions dir");
  std::sort(names->begin(), names->end());
  std::vector<dir_file> out;
  out.reserve(names->size());
  std::size_t n = 0;
  for (const auto& name : *names) {
    if (progress && ++n % 20000 == 0) progress(n, names->size());
    auto info = files.lstat(storage::path_join(dir, name));
    if (!info.ok()) {
      if (info.error().code() == errc::not_found) continue;
      return info.error().with_context("reading the sessions dir");
    }
    if (!info->is_regular()) continue;
    out.push_back({name, info->size, mtime_ms_of(*info)});
  }
  if (progress) progress(names->size(), names->size());
  return out;
}

result<std::unordered_set<std::string>> find_empty_transcripts(storage::fs& files, const std::string& dir,
                                                               const std::vector<maintenance_row>& rows,
                                                               const std::vector<dir_file>& listing) {
  std::unordered_map<std::string_view, const dir_file*> by_name;
  for (const auto& f : listing) by_name.emplace(f.name, &f);
  std::unordered_set<std::string> empty;
  for (const auto& r : rows) {
    const std::string name = r.transcript_name();
    auto it = by_name.find(name);
    if (name.empty() || it == by_name.end() || it->second->size > empty_transcript_max_bytes) continue;
    auto text = storage::read_file(files, storage::path_join(dir, name), empty_transcript_max_bytes + 1);
    if (!text.ok()) return text.error().with_context("checking whether the transcript has messages");
    bool has_message = text->find("\"type\":\"message\"") != std::string::npos ||
                       text->find("\"type\": \"message\"") != std::string::npos;
    if (!has_message) empty.insert(name);
  }
  return empty;
}

result<bool> apply_file_action(storage::fs& files, const std::string& sessions_dir, const plan_action& a,
                               std::string& skipped) {
  const std::string path = storage::path_join(sessions_dir, a.file);
  auto info = files.lstat(path);
  if (!info.ok()) {
    if (info.error().code() != errc::not_found) return info.error();
    skipped = fmt::format("{} is gone already", a.file);
    return false;
  }
  if (!info->is_regular() || info->size != a.bytes || mtime_ms_of(*info) != a.mtime_ms) {
    skipped = fmt::format("{} changed after the plan was made; left alone", a.file);
    return false;
  }
  if (a.kind == action_kind::archive_file) {
    const std::string target = storage::path_join(sessions_dir, a.target);
    if (files.lstat(target).ok()) {
      skipped = fmt::format("{}: the archive name {} is taken; left alone", a.file, a.target);
      return false;
    }
    SRT_RETURN_IF_ERROR(storage::sync_file(files, path));  // durable first: the commit log names it by path
    SRT_RETURN_IF_ERROR(files.rename(path, target));
    return true;
  }
  if (a.kind == action_kind::compress_file) {
    storage::compress_options co;
    co.expect_size = a.bytes;
    co.expect_mtime_ms = a.mtime_ms;
    auto moved = storage::compress_transcript(files, path, co);
    if (!moved.ok()) return moved.error();
    if (!moved->done) skipped = moved->skipped;
    return moved->done;
  }
  if (a.kind != action_kind::delete_file) return status(errc::invalid_argument, fmt::format("{} is not a file action", action_kind_name(a.kind)));
  status done = files.unlink(path);
  if (!done.ok() && done.code() == errc::not_found) {
    skipped = fmt::format("{} is gone already", a.file);
    return false;
  }
  SRT_RETURN_IF_ERROR(done);
  return true;
}

apply_report apply_plan_range(storage::fs& files, storage::session_store_file& store, const std::string& sessions_dir,
                              const maintenance_plan& plan, std::size_t begin, std::size_t end) {
  apply_report rep;
  end = std::min(end, plan.actions.size());
  rep.next = begin;
  if (plan.mode != maintenance_mode::enforce) {
    rep.error = status(errc::invalid_argument,
                       "the maintenance plan was made in warn mode, which changes nothing; plan again in enforce mode "
                       "(session.maintenance.mode \"enforce\", or `sessionrt sessions cleanup --enforce`)");
    return rep;
  }
  // Rows first, one save.
  bool rows_changed = false;
  for (std::size_t i = begin; i < end; ++i) {
    const auto& a = plan.actions[i];
    if (a.kind == action_kind::archive_row) {
      const session_entry* row = store.store().find(a.key);
      if (!row || row->updated_at() != a.updated_at || row->json().contains("archivedAt")) {
        rep.skipped.push_back(fmt::format("row {} is gone, archived or updated since the plan; not archived", a.key));
        continue;
      }
      session_entry archived = *row;
      archive_row_in_place(archived, a.at_ms, row_archive_reason(a.step));
      store.store().upsert(a.key, std::move(archived));
      rows_changed = true;
      rep.applied.push_back(a);
      continue;
    }
    if (a.kind != action_kind::remove_row) continue;
    const session_entry* row = store.store().find(a.key);
    if (!row) {
      rep.skipped.push_back(fmt::format("row {} is gone already", a.key));
      continue;
    }
    if (row->updated_at() != a.updated_at) {
      rep.skipped.push_back(fmt::format("row {} was updated after the plan was made; kept", a.key));
      continue;
    }
    store.store().erase(a.key);
    rows_changed = true;
    rep.applied.push_back(a);
  }
  if (rows_changed) {
    if (status saved = store.save(); !saved.ok()) {
      rep.error = saved.with_context("saving the store after removing rows");
      rep.applied.clear();
      return rep;
    }
  }
  // The session ids the store still references (a file of one of them is never moved).
  std::unordered_set<std::string> referenced;
  bool any_file = false;
  auto is_row_action = [](action_kind k) { return k == action_kind::remove_row || k == action_kind::archive_row; };
  for (std::size_t i = begin; i < end && !any_file; ++i) any_file = !is_row_action(plan.actions[i].kind);
  if (any_file) {
    for (auto r : store.store()) {
      if (auto id = r.entry.session_id()) referenced.emplace(*id);
      if (auto f = r.entry.session_file()) {
        auto name = storage::classify(storage::path_basename(*f));
        if (!name.session_id.empty()) referenced.insert(std::move(name.session_id));
      }
    }
  }
  for (std::size_t i = begin; i < end; ++i) {
    const auto& a = plan.actions[i];
    rep.next = i + 1;
    if (is_row_action(a.kind)) continue;
    // A compression is of a referenced transcript by definition (its row keeps it).
    if (a.kind != action_kind::compress_file && !a.session_id.empty() && referenced.count(a.session_id)) {
      rep.skipped.push_back(fmt::format("{}: session {} is referenced by a row again; left alone", a.file, a.session_id));
      continue;
    }
    std::string skipped;
    auto done = apply_file_action(files, sessions_dir, a, skipped);
    if (!done.ok()) {
      rep.error = done.error();
      rep.next = i;
      return rep;
    }
    if (!*done) {
      rep.skipped.push_back(std::move(skipped));
      continue;
    }
    rep.applied.push_back(a);
  }
  rep.next = end;
  return rep;
}

apply_report apply_plan(storage::fs& files, storage::session_store_file& store, const std::string& sessions_dir,
                        const maintenance_plan& plan, std::size_t batch_actions, const progress_fn& progress) {
  apply_report all;
  const std::size_t total = plan.actions.size();
  batch_actions = std::max<std::size_t>(1, batch_actions);
  std::size_t at = 0;
  do {
    auto rep = apply_plan_range(files, store, sessions_dir, plan, at, std::min(total, at + batch_actions));
    all.applied.insert(all.applied.end(), rep.applied.begin(), rep.applied.end());
    all.skipped.insert(all.skipped.end(), rep.skipped.begin(), rep.skipped.end());
    all.next = rep.next;
    if (!rep.error.ok()) {
      all.error = rep.error;
      return all;
    }
    at = rep.next;
    if (progress) progress(at, total);
  } while (at < total);
  return all;
}

}  // namespace sessionrt::actors
