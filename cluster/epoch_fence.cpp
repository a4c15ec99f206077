#include "cluster/epoch_fence.hpp"

#include <fmt/format.h>

namespace sessionrt::cluster {

const char* to_string(open_decision d) {
  switch (d) {
    case open_decision::write: return "write";
    case open_decision::stamp_then_write: return "stamp_then_write";
    case open_decision::fenced: return "fenced";
  }
  return "?";
}

open_decision epoch_fence::on_open(std::optional<std::int64_t> durable_epoch) const {
  if (!durable_epoch || *durable_epoch < epoch_) return open_decision::stamp_then_write;
  if (*durable_epoch == epoch_) return open_decision::write;
  return open_decision::fenced;
}

status epoch_fence::fenced(std::int64_t durable_epoch) const {
  return {errc::locked, fmt::format("shard {} is at epoch {}, node {} holds epoch {}: another node took the shard, this "
                                    "one refuses to write (fenced)", to_string(shard_), durable_epoch, node_, epoch_)};
}

status epoch_fence::check_write(std::int64_t durable_epoch, const write_permit& permit) const {
  if (durable_epoch > epoch_) return fenced(durable_epoch);
  if (durable_epoch < epoch_)
    return {errc::internal, fmt::format("shard {} records epoch {}, not node {}'s epoch {}: it must be stamped before "
                                        "the first write", to_string(shard_), durable_epoch, node_, epoch_)};
  if (auto st = permit.check(); !st.ok()) return st.with_context(fmt::format("shard {}", to_string(shard_)));
  return {};
}

}  // namespace sessionrt::cluster
