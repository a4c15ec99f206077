#include "cluster/shard_write_guard.hpp"

#include <fmt/format.h>

#include "cluster/shard_epoch_file.hpp"

namespace sessionrt::cluster {

shard_write_guard::shard_write_guard(storage::fs& fs, std::string shard_dir, epoch_fence fence,
                                     const write_permit& permit, storage::file_info stamp)
    : fs_(fs),
      dir_(std::move(shard_dir)),
      path_(shard_epoch_path(dir_)),
      fence_(std::move(fence)),
      permit_(permit),
      stamp_(stamp) {}

namespace {

bool same_file(const storage::file_info& a, const storage::file_info& b) {
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime_ns == b.mtime_ns;
}

}  // namespace

status shard_write_guard::check() const {
  if (const auto by = fenced_by_.load(); by != 0) return fence_.fenced(by);
  if (auto st = permit_.check(); !st.ok()) return st.with_context(fmt::format("shard {}", to_string(fence_.shard())));
  return check_stamp();
}

status shard_write_guard::check_stamp() const {
  auto now = fs_.lstat(path_);
  if (!now.ok() && now.error().code() == errc::not_found)
    return {errc::locked, fmt::format("shard {}: its epoch stamp {} is gone; node {} (epoch {}) refuses to write until "
                                      "the shard is opened again", to_string(fence_.shard()), path_, fence_.node(),
                                      fence_.epoch())};
  if (!now.ok()) return now.error().with_context(fmt::format("checking the epoch of shard {}", to_string(fence_.shard())));
  if (same_file(*now, stamp_)) return {};
  auto durable = read_shard_epoch(fs_, path_);
  if (!durable.ok()) return durable.error();
  if (!*durable)
    return {errc::locked, fmt::format("shard {}: its epoch stamp {} is gone; node {} refuses to write",
                                      to_string(fence_.shard()), path_, fence_.node())};
  const std::int64_t seen = **durable;
  if (seen > fence_.epoch()) {
    fenced_by_.store(seen);
    return fence_.fenced(seen);
  }
  return fence_.check_write(seen, permit_);
}

}  // namespace sessionrt::cluster
