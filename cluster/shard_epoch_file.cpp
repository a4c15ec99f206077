#include "cluster/shard_epoch_file.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::cluster {

std::string shard_epoch_path(const std::string& shard_dir) { return storage::path_join(shard_dir, "epoch"); }

result<std::optional<std::int64_t>> read_shard_epoch(storage::fs& fs, const std::string& path) {
  auto text = storage::read_file(fs, path, 4096);
  if (!text && text.error().code() == errc::not_found) return std::optional<std::int64_t>();
  if (!text) return text.error();
  auto o = json::parse_object(*text, {4096, 4});
  auto epoch = o ? json::get_int(*o, "epoch") : std::nullopt;
  if (!epoch || *epoch <= 0)
    return status(errc::corrupt, fmt::format("shard epoch file {} does not hold {{\"epoch\":<positive integer>}}; it is "
                                             "left as it is: check which node owns the shard before removing it", path));
  return std::optional<std::int64_t>(*epoch);
}

status stamp_shard_epoch(storage::fs& fs, const std::string& path, std::int64_t epoch, const std::string& node) {
  auto current = read_shard_epoch(fs, path);
  if (!current) return current.error();
  if (*current && **current > epoch)
    return {errc::locked, fmt::format("{} records epoch {}: node {} at epoch {} may not stamp it (fenced)", path,
                                      **current, node, epoch)};
  if (*current && **current == epoch) return {};
  SRT_RETURN_IF_ERROR(storage::ensure_dir(fs, storage::path_dirname(path)));
  return storage::replace_file_atomic(fs, path,
                                      json::to_compact(boost::json::object{{"epoch", epoch}, {"node", node}}) + "\n");
}

result<std::int64_t> open_shard(storage::fs& fs, const std::string& shard_dir, const epoch_fence& fence) {
  const std::string path = shard_epoch_path(shard_dir);
  auto durable = read_shard_epoch(fs, path);
  if (!durable) return durable.error();
  switch (fence.on_open(*durable)) {
    case open_decision::fenced: return fence.fenced(**durable);
    case open_decision::write: return fence.epoch();
    case open_decision::stamp_then_write: break;
  }
  SRT_RETURN_IF_ERROR(stamp_shard_epoch(fs, path, fence.epoch(), fence.node()));
  return fence.epoch();
}

}  // namespace sessionrt::cluster
