// session_list_merge: one sessions.list answer from the answers of every node of a cluster
// (issue #36: a node lists the sessions of every shard, not only of those it holds), with no
// I/O. Each node answered for its own shards, asked for rows [0, offset + limit) of the same
// filters, so the first offset + limit rows of the merge are those of the whole cluster.
// Contract:
//   - answers[0] is this node's: its ts, path, defaults and owners are kept;
//   - rows are ordered by updatedAt, newest first (sessions.list's order; the order the answers
//     gave on a tie, this node's first); a key that two answers hold (its shard moved between
//     them) is kept once, its newest row;
//   - totalCount is the sum of the answers' minus the keys kept once; count, limitApplied,
//     nextOffset and hasMore are those of the page [offset, offset + limit).
#pragma once
#include <cstdint>
#include <vector>

#include <boost/json/object.hpp>

namespace sessionrt::gateway {

boost::json::object merge_session_lists(std::vector<boost::json::object> answers, std::int64_t offset,
                                        std::int64_t limit);

}  // namespace sessionrt::gateway
