#include "cluster/shard_split.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

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

std::string split_staging_dir(const std::string& out_dir) { return out_dir + ".splitting"; }

namespace {

bool is_uuid_at(std::string_view s, std::size_t at) {
  if (at + 36 > s.size()) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    const char c = s[at + i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

// The session ids a file name may hold: each uuid in it, its stem (up to the first '.') and the
// stem's part after its last '_' (a successor's "<ISO>_<id>").
std::vector<std::string> id_candidates(std::string_view name) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 36 <= name.size(); ++i)
    if (is_uuid_at(name, i)) out.emplace_back(name.substr(i, 36));
  const std::string_view stem = name.substr(0, name.find('.'));
  out.emplace_back(stem);
  if (auto u = stem.rfind('_'); u != std::string_view::npos) out.emplace_back(stem.substr(u + 1));
  return out;
}

struct shard_part {
  storage::session_store store;
  std::vector<std::string> files;  // names in the agent's sessions dir
};

class splitter {
 public:
  splitter(storage::fs& fs, clock& wall, std::string state_dir, std::string out, const split_options& o)
      : fs_(fs), wall_(wall), state_(std::move(state_dir)), out_(std::move(out)), opt_(o) {
    staging_ = split_staging_dir(out_);
    report_.out_dir = out_;
  }

  result<split_report> run() {
    if (opt_.shards_per_agent < 1 || opt_.shards_per_agent > max_shards_per_agent)
      return status(errc::invalid_argument,
                    fmt::format("{} shards per agent is outside 1..{}", opt_.shards_per_agent, max_shards_per_agent));
    SRT_RETURN_IF_ERROR(check_paths());
    auto pending = log_with_records(fs_, state_);
    if (!pending.ok()) return pending.error().with_context("reading the commit log of " + state_);
    if (*pending)
      return status(errc::locked, fmt::format("{} has commit log records not replayed yet ({}): a runtime serves it, or "
                                              "stopped before a checkpoint, and its sessions.json may lack rows; stop it "
                                              "(or start and stop it once) and split again",
                                              state_, **pending));
    auto agents = list_agents();
    if (!agents.ok()) return agents.error();
    // Everything read and placed before anything is written.
    std::map<std::string, std::map<int, shard_part>> parts;
    for (const auto& agent : *agents) SRT_RETURN_IF_ERROR(place_agent(agent, parts[agent]));
    SRT_RETURN_IF_ERROR(storage::ensure_dir(fs_, storage::path_dirname(out_)));
    auto parent = fs_.realpath(storage::path_dirname(out_));
    if (!parent.ok()) return parent.error();
    final_out_ = storage::path_join(*parent, storage::path_basename(out_));
    SRT_RETURN_IF_ERROR(storage::ensure_dir(fs_, staging_));
    for (auto& [agent, shards] : parts) {
      for (auto& [index, part] : shards) SRT_RETURN_IF_ERROR(write_shard(agent, index, part));
      report_.agents.push_back(agent);
      SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, storage::path_join(shards_root(staging_), agent)));
    }
    if (!parts.empty()) SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, shards_root(staging_)));
    SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, staging_));
    SRT_RETURN_IF_ERROR(fs_.rename(staging_, out_));
    SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, *parent));
    return std::move(report_);
  }

 private:
  status check_paths() {
    if (auto info = fs_.lstat(out_); info.ok())
      return {errc::already_exists, fmt::format("{} exists: split into a new directory", out_)};
    else if (info.error().code() != errc::not_found)
      return info.error();
    if (auto info = fs_.lstat(staging_); info.ok())
      return {errc::already_exists,
              fmt::format("{} exists (a split that was stopped before its end): remove it and split again", staging_)};
    auto info = fs_.lstat(state_);
    if (!info.ok()) return info.error().with_context("the state dir");
    if (!info->is_dir()) return {errc::invalid_argument, fmt::format("{} is not a directory", state_)};
    if (fs_.lstat(shards_root(state_)).ok())
      return {errc::invalid_argument, fmt::format("{} holds shards/ already: it is a cluster's state dir", state_)};
    return {};
  }

  result<std::vector<std::string>> list_agents() {
    const std::string agents_dir = storage::path_join(state_, "agents");
    std::vector<std::string> out;
    if (!fs_.lstat(agents_dir).ok()) return out;
    auto names = fs_.list_dir(agents_dir);
    if (!names.ok()) return names.error();
    for (const auto& name : *names) {
      auto dir = storage::agent_sessions_dir(state_, name);
      if (!dir.ok()) {
        report_.warnings.push_back(fmt::format("agents/{}: not an agent id, left out", name));
        continue;
      }
      if (auto info = fs_.lstat(*dir); info.ok() && info->is_dir()) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The agent's rows and files, each given its shard.
  status place_agent(const std::string& agent, std::map<int, shard_part>& shards) {
    auto sessions = storage::agent_sessions_dir(state_, agent);
    auto path = storage::store_path(state_, agent);
    if (!sessions.ok()) return sessions.error();
    if (!path.ok()) return path.error();
    storage::session_store store;
    if (auto text = storage::read_file(fs_, *path, max_store_bytes); text.ok()) {
      auto parsed = storage::load_from_text(*text);
      if (!parsed.ok())
        return parsed.error().with_context(fmt::format("{} cannot be split as it is (a runtime's start sets it aside "
                                                       "and rebuilds it from the transcripts)", *path));
      store = std::move(parsed->store);
    } else if (text.error().code() != errc::not_found) {
      return text.error();
    }
    std::unordered_map<std::string, int> by_id, by_file;
    for (const auto& row : store) {
      const int index = shard_of(row.key, opt_.shards_per_agent).index;
      if (auto id = row.entry.session_id(); id && !id->empty()) by_id.emplace(std::string(*id), index);
      if (auto sf = row.entry.session_file(); sf && !sf->empty())
        by_file.emplace(storage::path_basename(std::string(*sf)), index);
      shards[index].store.upsert(row.key, row.entry);
      ++report_.rows;
    }
    auto names = fs_.list_dir(*sessions);
    if (!names.ok()) return names.error().with_context(*sessions);
    std::sort(names->begin(), names->end());
    for (const auto& name : *names) {
      if (left_out(name)) {
        if (!name.starts_with(storage::store_file_name)) report_.warnings.push_back(fmt::format("{}/{}: left out", *sessions, name));
        continue;
      }
      auto info = fs_.lstat(storage::path_join(*sessions, name));
      if (!info.ok() || !info->is_regular()) {
        report_.warnings.push_back(fmt::format("{}/{}: not a regular file, left out", *sessions, name));
        continue;
      }
      int index = -1;
      if (auto it = by_file.find(name); it != by_file.end()) index = it->second;
      for (const auto& id : id_candidates(name)) {
        if (index >= 0) break;
        if (auto it = by_id.find(id); it != by_id.end()) index = it->second;
      }
      if (index < 0) {
        index = 0;
        ++report_.unplaced;
      }
      shards[index].files.push_back(name);
    }
    sessions_dirs_[agent] = *sessions;
    return {};
  }

  status write_shard(const std::string& agent, int index, shard_part& part) {
    const shard_id id{agent, index};
    auto staged = shard_sessions_dir(staging_, id);
    auto final_dir = shard_sessions_dir(final_out_, id);
    auto store_path = shard_store_path(staging_, id);
    if (!staged.ok()) return staged.error();
    if (!final_dir.ok()) return final_dir.error();
    if (!store_path.ok()) return store_path.error();
    SRT_RETURN_IF_ERROR(storage::ensure_dir(fs_, *staged));
    const std::string& from_dir = sessions_dirs_.at(agent);
    for (const auto& name : part.files) {
      const std::string from = storage::path_join(from_dir, name);
      SRT_RETURN_IF_ERROR(storage::copy_file(fs_, from, storage::path_join(*staged, name), 0600, true));
      if (auto info = fs_.lstat(from); info.ok()) report_.bytes += info->size;
      ++report_.files;
    }
    // A sessionFile in the agent's sessions dir names the shard's.
    storage::session_store out;
    for (const auto& row : part.store) {
      session_entry entry = row.entry;
      if (auto sf = entry.session_file(); sf && !sf->empty() && storage::path_dirname(std::string(*sf)) == from_dir)
        entry.set_session_file(storage::path_join(*final_dir, storage::path_basename(std::string(*sf))));
      out.upsert(row.key, std::move(entry));
    }
    storage::session_store_file file(fs_, wall_, *store_path);
    file.store() = std::move(out);
    SRT_RETURN_IF_ERROR(file.save().with_context("writing " + *store_path));
    // Each level made durable, from the files up to the shard's dir.
    auto shard_root = shard_dir(staging_, id);
    if (!shard_root.ok()) return shard_root.error();
    SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, *staged));
    const std::string agents = storage::path_join(*shard_root, "agents");
    SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, storage::path_join(agents, agent)));
    SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, agents));
    SRT_RETURN_IF_ERROR(storage::fsync_dir(fs_, *shard_root));
    ++report_.shards;
    return {};
  }

  storage::fs& fs_;
  clock& wall_;
  std::string state_, out_, staging_, final_out_;
  const split_options& opt_;
  split_report report_;
  std::map<std::string, std::string> sessions_dirs_;
};

}  // namespace

result<split_report> split_state_dir(storage::fs& fs, clock& wall, const std::string& state_dir,
                                     const std::string& out_dir, const split_options& options) {
  if (out_dir.empty()) return status(errc::invalid_argument, "the output directory is empty");
  splitter s(fs, wall, without_trailing_slash(state_dir), without_trailing_slash(out_dir), options);
  return s.run();
}

}  // namespace sessionrt::cluster
