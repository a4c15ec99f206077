// shard_table_store: the shard tables of one cluster in etcd. A table is only ever replaced by
// a transaction that requires its key to be at the revision the writer read (or absent, for a
// table read at revision 0): of two planners that read the same table, one wins and the other
// gets errc::already_exists and must read again and re-plan. Nothing else writes a table.
//
// Contract: callbacks run on the HTTP loop's thread (etcd_client); errors are etcd_client's,
// plus corrupt for a table that does not decode and invalid_argument for a bad agent id.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/etcd_client.hpp"
#include "cluster/shard_table.hpp"

namespace sessionrt::cluster {

class shard_table_store {
 public:
  shard_table_store(const etcd_client& etcd, std::string cluster) : etcd_(etcd), cluster_(std::move(cluster)) {}

  // The agent's table; when etcd has none, an empty one of `shards_if_absent` at revision 0.
  void read(const std::string& agent, int shards_if_absent, etcd_client::done<shard_table> done) const;
  // Replaces the table if its key is still at next.revision; the revision of the write.
  void write(const shard_table& next, etcd_client::done<std::int64_t> done) const;
  // Every agent's table, by agent id.
  void list(etcd_client::done<std::vector<shard_table>> done) const;

 private:
  etcd_client etcd_;
  std::string cluster_;
};

}  // namespace sessionrt::cluster
