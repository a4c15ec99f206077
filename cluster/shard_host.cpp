#include "cluster/shard_host.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace sessionrt::cluster {

std::function<int(std::string_view)> shard_index_fn(int shards_per_agent) {
  return [shards_per_agent](std::string_view key) { return shard_of(key, shards_per_agent).index; };
}

shard_host::shard_host(runtime::runtime& rt, storage::fs& fs, clock& wall, const write_permit& permit,
                       shard_host_options options)
    : rt_(rt), fs_(fs), wall_(wall), permit_(permit), opt_(std::move(options)) {}

void shard_host::opening(const shard_claim& c) {
  std::lock_guard g(mu_);
  if (!open_.count(c.shard)) rt_.opening_shard(c.shard.agent, c.shard.index);
}

status shard_host::acquired(const shard_claim& c) {
  {
    std::lock_guard g(mu_);
    if (open_.count(c.shard)) return status();  // already served (the same claim adopted again)
  }
  rt_.opening_shard(c.shard.agent, c.shard.index);  // what arrives meanwhile waits
  shard_open_options o;
  o.batch_log = opt_.batch_log;
  o.repair_tails = opt_.repair_tails;
  auto opened = open_shard_state(fs_, wall_, opt_.cluster_dir, epoch_fence(c.shard, c.node, c.epoch), permit_, o);
  if (!opened) {
    rt_.shard_open_failed(c.shard.agent, c.shard.index);
    return opened.error();
  }
  auto shard = std::make_shared<opened_shard>(std::move(*opened));
  for (const auto& w : shard->report.warnings) spdlog::warn("cluster: shard {}: {}", to_string(c.shard), w);
  runtime::shard_store s;
  s.agent = c.shard.agent;
  s.index = c.shard.index;
  s.dir = shard->dir;
  s.sessions_dir = shard->sessions_dir;
  s.store = shard->store;
  s.files = shard->files.get();
  s.state_id = shard->log.recovered.state_id;
  s.shards = opt_.shards_per_agent;
  s.log = std::exchange(shard->log.log, std::nullopt);
  if (status st = rt_.open_shard(std::move(s)); !st.ok()) {
    shard->files->seal("its open failed");
    rt_.shard_open_failed(c.shard.agent, c.shard.index);
    std::lock_guard g(mu_);
    closed_files_.push_back(shard->files);
    return st;
  }
  std::lock_guard g(mu_);
  open_[c.shard] = std::move(shard);
  return status();
}

status shard_host::close(const shard_id& id, const std::string& why, bool seal_first) {
  std::shared_ptr<opened_shard> shard;
  {
    std::lock_guard g(mu_);
    auto it = open_.find(id);
    if (it == open_.end()) return status();
    shard = it->second;
    open_.erase(it);
    closed_files_.push_back(shard->files);
  }
  if (seal_first) shard->files->seal(why);
  status st = rt_.close_shard(id.agent, id.index, std::chrono::milliseconds(opt_.close_deadline_ms));
  shard->files->seal(why);
  return st;
}

status shard_host::released(const shard_id& shard) { return close(shard, "released", false); }

void shard_host::fenced(const shard_id& shard, const std::string& why) {
  if (status st = close(shard, "fenced: " + why, true); !st.ok())
    spdlog::warn("cluster: closing fenced shard {}: {}", to_string(shard), st.message());
}

std::vector<shard_id> shard_host::serving() const {
  std::lock_guard g(mu_);
  std::vector<shard_id> out;
  for (const auto& [id, s] : open_) out.push_back(id);
  return out;
}

std::shared_ptr<const opened_shard> shard_host::opened(const shard_id& shard) const {
  std::lock_guard g(mu_);
  auto it = open_.find(shard);
  return it == open_.end() ? nullptr : it->second;
}

}  // namespace sessionrt::cluster
