// epoch_fence: the rule that keeps each shard to one writer while ownership moves. A node that
// took shard s at epoch E (its claim, shard_claims.hpp) compares E with the epoch the shard's
// durable state records, D (stamped by whichever owner opened it last):
//   D > E        another node took the shard after this one: refuse to write, for good.
//   D < E / none this node is the new owner: stamp E durably BEFORE the first write, then write.
//   D == E       this node's: write.
// On top of the epoch, every write needs the node's write_permit (a lease renewed less than
// TTL/2 ago): an owner that was paused or cut off stops before another can take over.
// Pure: no etcd, no files (shard_epoch_file.hpp reads and stamps D).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "cluster/shard_id.hpp"
#include "cluster/write_permit.hpp"
#include "messages/status.hpp"

namespace sessionrt::cluster {

enum class open_decision { write, stamp_then_write, fenced };
const char* to_string(open_decision d);

class epoch_fence {
 public:
  epoch_fence(shard_id shard, std::string node, std::int64_t epoch)
      : shard_(std::move(shard)), node_(std::move(node)), epoch_(epoch) {}

  open_decision on_open(std::optional<std::int64_t> durable_epoch) const;
  // Before each write, with the durable epoch as the node last read or stamped it: ok; locked
  // when fenced (a higher epoch) or when the permit ran out; internal when the shard was never
  // stamped with this epoch (a bug: open first).
  status check_write(std::int64_t durable_epoch, const write_permit& permit) const;
  // The error of a write refused by a higher epoch.
  status fenced(std::int64_t durable_epoch) const;

  const shard_id& shard() const { return shard_; }
  const std::string& node() const { return node_; }
  std::int64_t epoch() const { return epoch_; }

 private:
  shard_id shard_;
  std::string node_;
  std::int64_t epoch_;
};

}  // namespace sessionrt::cluster
