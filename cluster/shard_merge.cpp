#include "cluster/shard_merge.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <map>
#include <set>

#include "cluster/shard_layout.hpp"
#include "cluster/state_copy.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::cluster {

using state_copy::left_out;
using state_copy::log_with_records;
using state_copy::max_store_bytes;
using state_copy::without_trailing_slash;

std::string merge_staging_dir(const std::string& out_dir) { return out_dir + ".merging"; }

namespace {

// A shard's sessions.json, read without touching it (a missing file is an empty store).
result<storage::session_store> read_shard_store(storage::fs& fs, const std::string& path) {
  auto text = storage::read_file(fs, path, max_store_bytes);
  if (!text.ok() && text.error().code() == errc::not_found) return storage::session_store();
  if (!text.ok()) return text.error();
  auto parsed = storage::load_from_text(*text);
  if (!parsed.ok())
    return parsed.error().with_context(fmt::format("{} cannot be merged as it is (a node opening the shard sets it "
                                                   "aside and rebuilds it from the transcripts)", path));
  return std::move(parsed->store);
}

struct agent_merge {
  storage::session_store store;
  std::map<std::string, std::pair<shard_id, std::optional<std::int64_t>>, std::less<>> from;  // key -> shard, updatedAt
  std::map<std::string, shard_id> names;  // file name -> the shard that wrote it
  std::set<std::string> dirs;             // sessions dirs written (staging)
};

class merger {
 public:
  merger(storage::fs& fs, clock& wall, std::string cluster_dir, std::string out, const merge_options& options)
      : fs_(fs), wall_(wall), cluster_(std::move(cluster_dir)), out_(std::move(out)), options_(options) {
    staging_ = merge_staging_dir(out_);
    marker_ = staging_ + "-source";
    report_.out_dir = out_;
  }

  result<merge_report> run() {
    SRT_RETURN_IF_ERROR(check_out());
    auto listing = list_shards(fs_, cluster_);
    if (!listing.ok()) return listing.error();
    for (const auto& s : listing->skipped) report_.warnings.push_back(s + ": not a shard directory, left out");
    // Refused before anything is written.
    for (const auto& s : listing->shards) {
      auto pending = log_with_records(fs_, s.dir);
      if (!pending.ok()) return pending.error().with_context("reading the commit log of shard " + to_string(s.shard));
      if (*pending)
        return status(errc::locked,
                      fmt::format("shard {} has commit log records not replayed yet ({}): its owner is running, or "
                                  "stopped before a checkpoint, and its sessions.json may lack rows; stop the nodes "
                                  "(or let a node open the shard) and merge again", to_string(s.shard), **pending));
    }
    SRT_RETURN_IF_ERROR(start_staging());
    merge_progress progress;
    progress.shards_total = listing->shards.size();
    for (const auto& s : listing->shards) {
      SRT_RETURN_IF_ERROR(merge_shard(s).with_context("merging shard " + to_string(s.shard) + " (" + s.dir + ")"));
      ++report_.shards;
      progress.shards_done = report_.shards;
      progress.rows = rows_seen_;
      progress.files = report_.files;
      progress.bytes = report_.bytes;
      if (options_.progress) options_.progress(progress);
    }
    SRT_RETURN_IF_ERROR(write_stores());
    SRT_RETURN_IF_ERROR(publish());
    return std::move(report_);
  }

 private:
  status check_out() {
    auto info = fs_.lstat(out_);
    if (!info.ok() && info.error().code() == errc::not_found) return {};
    if (!info.ok()) return info.error();
    if (!info->is_dir()) return {errc::invalid_argument, fmt::format("{} exists and is not a directory", out_)};
    auto names = fs_.list_dir(out_);
    if (!names.ok()) return names.error();
    out_full_ = !names->empty();
    if (out_full_ && !options_.force)
      return {errc::already_exists, fmt::format("{} is not empty: merge into a new directory, or pass --force (the "
                                                "old one is then moved aside to {}.replaced-<ms>)", out_, out_)};
    return {};
  }

  status start_staging() {
    SRT_RETURN_IF_ERROR(storage::ensure_dir(fs_, storage::path_dirname(out_)));
    auto parent = fs_.realpath(storage::path_dirname(out_));
    if (!parent.ok()) return parent.error();
    final_out_ = storage::path_join(*parent, storage::path_basename(out_));
    auto source = fs_.realpath(cluster_);
    if (!source.ok()) return source.error();
    const std::string mark = *source + "\n";
    auto staged = fs_.lstat(staging_);
    if (staged.ok()) {
      auto text = storage::read_file(fs_, marker_, 1 << 16);
      if (!text.ok() || *text != mark)
        return {errc::already_exists,
                fmt::format("{} exists but is not an interrupted merge of {} ({} {}): remove it and merge again",
                            staging_, *source, marker_, text.ok() ? "names another cluster dir" : "is missing")};
      report_.resumed = true;
      return {};
    }
    if (staged.error().code() != errc::not_found) return staged.error();
    // The marker first: a staging dir without one is never taken for ours.
    SRT_RETURN_IF_ERROR(storage::replace_file_atomic(fs_, marker_, mark));
    return storage::ensure_dir(fs_, staging_);
  }

  status merge_shard(const listed_shard& s) {
    auto sessions = storage::agent_sessions_dir(s.dir, s.shard.agent);
    if (!sessions.ok()) return sessions.error();
    auto path = storage::store_path(s.dir, s.shard.agent);
    if (!path.ok()) return path.error();
    auto store = read_shard_store(fs_, *path);
    if (!store.ok()) return store.error();
    auto& agent = agents_[s.shard.agent];
    auto staged = storage::agent_sessions_dir(staging_, s.shard.agent);
    auto final_dir = storage::agent_sessions_dir(final_out_, s.shard.agent);
    if (!staged.ok()) return staged.error();
    if (!final_dir.ok()) return final_dir.error();
    SRT_RETURN_IF_ERROR(storage::ensure_dir(fs_, *staged));
    agent.dirs.insert(*staged);
    std::map<std::string, std::string> renamed;
    SRT_RETURN_IF_ERROR(copy_files(s, *sessions, *staged, agent, renamed));
    // A sessionFile in the shard's sessions dir names <out>'s after the merge.
    const std::string suffix = fmt::format("/shards/{}/{}/agents/{}/sessions", s.shard.agent,
                                           shard_dir_name(s.shard.index), s.shard.agent);
    for (const auto& row : *store) {
      ++rows_seen_;
      session_entry entry = row.entry;
      if (auto sf = entry.session_file(); sf && !sf->empty() && sf->front() == '/') {
        const std::string dir = storage::path_dirname(*sf);
        if (dir == *sessions || std::string_view(dir).ends_with(suffix)) {
          const std::string name = storage::path_basename(*sf);
          auto it = renamed.find(name);
          entry.set_session_file(storage::path_join(*final_dir, it == renamed.end() ? name : it->second));
        }
      }
      add_row(agent, s.shard, std::string(row.key), std::move(entry));
    }
    return {};
  }

  status copy_files(const listed_shard& s, const std::string& from_dir, const std::string& to_dir, agent_merge& agent,
                    std::map<std::string, std::string>& renamed) {
    auto names = fs_.list_dir(from_dir);
    if (!names.ok() && names.error().code() == errc::not_found) return {};
    if (!names.ok()) return names.error();
    std::sort(names->begin(), names->end());
    std::size_t skipped = 0;
    for (const auto& name : *names) {
      const std::string from = storage::path_join(from_dir, name);
      auto info = fs_.lstat(from);
      if (!info.ok()) return info.error();
      if (name == storage::store_file_name) continue;  // merged row by row
      if (left_out(name) || !info->is_regular()) {
        ++skipped;
        continue;
      }
      std::string target = name;
      if (auto it = agent.names.find(name); it != agent.names.end() && !(it->second == s.shard)) {
        target = fmt::format("{}.conflict-{}-{}", name, s.shard.agent, shard_dir_name(s.shard.index));
        renamed[name] = target;
        report_.conflicts.push_back(fmt::format("{}: {} of shard {} is also in shard {}; written as {}", s.shard.agent,
                                                name, to_string(s.shard), to_string(it->second), target));
      }
      agent.names.emplace(target, s.shard);
      SRT_RETURN_IF_ERROR(place_file(from, storage::path_join(to_dir, target)));
      ++report_.files;
      report_.bytes += info->size;
    }
    if (skipped)
      report_.warnings.push_back(fmt::format("shard {}: {} file(s) left out of {} (sessions.json copies, locks, temp "
                                             "files, directories)", to_string(s.shard), skipped, from_dir));
    return {};
  }

  // Written again on a resumed merge: the staging copy of an interrupted run may be partial.
  status place_file(const std::string& from, const std::string& to) {
    if (auto st = fs_.unlink(to); !st.ok() && st.code() != errc::not_found) return st;
    if (options_.link && fs_.link(from, to).ok()) {
      ++report_.linked;
      return {};
    }
    return storage::copy_file(fs_, from, to, 0600, true);
  }

  void add_row(agent_merge& agent, const shard_id& shard, std::string key, session_entry entry) {
    const auto updated = entry.updated_at();
    auto it = agent.from.find(key);
    if (it == agent.from.end()) {
      agent.from.emplace(key, std::make_pair(shard, updated));
      agent.store.upsert(key, std::move(entry));
      return;
    }
    duplicate_row d;
    d.key = key;
    auto& [kept_shard, kept_at] = it->second;
    const bool newer = updated && (!kept_at || *updated > *kept_at);
    if (newer) {
      d.kept = shard, d.kept_updated_at = updated, d.dropped = kept_shard, d.dropped_updated_at = kept_at;
      agent.store.upsert(key, std::move(entry));  // keeps the first shard's place
      it->second = {shard, updated};
    } else {
      d.kept = kept_shard, d.kept_updated_at = kept_at, d.dropped = shard, d.dropped_updated_at = updated;
    }
    report_.duplicates.push_back(std::move(d));
  }

  status write_stores() {
    for (auto& [agent, m] : agents_) {
      auto path = storage::store_path(staging_, agent);
      if (!path.ok()) return path.error();
      storage::session_store_file file(fs_, wall_, *path);
      report_.rows += m.store.size();
      file.store() = std::move(m.store);
      SRT_RETURN_IF_ERROR(file.save().with_context("writing the merged " + *path));
      report_.agents.push_back(agent);
      for (const auto& dir : m.dirs) SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, dir));
      SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, storage::path_join(storage::path_join(staging_, "agents"), agent)));
    }
    if (!agents_.empty()) SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, storage::path_join(staging_, "agents")));
    return storage::fsync_dir(fs_, staging_);
  }

  // The one step that makes <out> appear, whole.
  status publish() {
    const std::string parent = storage::path_dirname(out_);
    if (out_full_) {
      const std::string aside = fmt::format("{}.replaced-{}", out_, wall_.now_ms());
      SRT_RETURN_IF_ERROR(fs_.rename(out_, aside));
      report_.replaced = aside;
    }
    SRT_RETURN_IF_ERROR(fs_.rename(staging_, out_));
    SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, parent));
    if (auto st = fs_.unlink(marker_); !st.ok() && st.code() != errc::not_found) return st;
    return storage::fsync_dir(fs_, parent);
  }

  storage::fs& fs_;
  clock& wall_;
  std::string cluster_, out_, staging_, marker_, final_out_;
  const merge_options& options_;
  merge_report report_;
  bool out_full_ = false;
  std::size_t rows_seen_ = 0;
  std::map<std::string, agent_merge> agents_;
};

}  // namespace

result<merge_report> merge_shards(storage::fs& fs, clock& wall, const std::string& cluster_dir,
                                  const std::string& out_dir, const merge_options& options) {
  if (out_dir.empty()) return status(errc::invalid_argument, "the output directory is empty");
  merger m(fs, wall, without_trailing_slash(cluster_dir), without_trailing_slash(out_dir), options);
  return m.run();
}

}  // namespace sessionrt::cluster
