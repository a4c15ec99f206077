// etcd_client: etcd v3 (3.4) over its JSON gateway (POST /v3/kv/range|put|deleterange|txn,
// /v3/lease/grant|keepalive|revoke|timetolive; keys and values base64) on the providers'
// http_loop: libcurl multi-socket on one libuv thread, no thread per call, nothing blocks.
//
// Contract:
//   - Every call completes exactly once, on the http_loop's thread, with a value or a status.
//     A callback must not block (blocking_etcd.hpp waits for one from another thread).
//   - Errors say what to do:
//       io_error        "etcd at <endpoint> is unreachable (<curl's reason>): is etcd running ...?"
//       timeout         "etcd at <endpoint> did not answer <path> within N ms"
//       not_found       a lease that expired or was revoked ("lease 0x.. expired or was revoked")
//       corrupt         an answer that is not etcd's JSON
//       invalid_argument, limit_exceeded, io_error: etcd refused the request (its message and
//                       gRPC code are quoted)
//     A txn whose compares do not hold is not an error: txn_result.succeeded is false and the
//     caller says what the lost race means (shard_table_store, shard_claims).
//   - The client holds only its endpoint and options; a call in flight does not refer to it,
//     so it may be destroyed first. The http_loop must outlive the calls (its destructor
//     completes them with `cancelled`).
//   - Revisions and lease ids are etcd's int64s (the gateway writes them as strings).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "messages/status.hpp"
#include "runtime/providers/http_loop.hpp"

namespace sessionrt::cluster {

struct etcd_kv {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  std::int64_t lease = 0;  // 0 = none
};

struct etcd_range_result {
  std::int64_t revision = 0;  // the store's revision when read
  std::vector<etcd_kv> kvs;   // key order
};

struct etcd_compare {
  enum class target { create_revision, mod_revision, version, value };
  enum class relation { equal, not_equal, greater, less };
  std::string key;
  target what = target::mod_revision;
  relation is = relation::equal;
  std::int64_t number = 0;  // for the revisions and version
  std::string value;        // for target::value

  // The key does not exist (its create revision is 0).
  static etcd_compare absent(std::string key);
  // The key was last written at `revision` (0: it does not exist).
  static etcd_compare modified_at(std::string key, std::int64_t revision);
};

struct etcd_op {
  enum class kind { put, range, delete_range };
  kind what = kind::range;
  std::string key;
  std::string value;          // put
  std::int64_t lease = 0;     // put: attach to this lease (0 = none)
  bool prefix = false;        // range / delete_range: every key beginning with `key`

  static etcd_op put(std::string key, std::string value, std::int64_t lease = 0);
  static etcd_op get(std::string key);
  static etcd_op get_prefix(std::string prefix);
  static etcd_op erase(std::string key);
};

struct etcd_txn {
  std::vector<etcd_compare> compare;
  std::vector<etcd_op> success;
  std::vector<etcd_op> failure;
};

struct etcd_txn_result {
  bool succeeded = false;
  std::int64_t revision = 0;              // the store's revision after the txn
  std::vector<etcd_range_result> ranges;  // one per op of the branch taken (empty unless a range)
};

struct etcd_lease {
  std::int64_t id = 0;
  std::int64_t ttl_s = 0;  // granted TTL (grant) / TTL restored (keepalive)
};

// "0x" + hex, as etcdctl prints lease ids.
std::string lease_hex(std::int64_t id);

struct etcd_options {
  std::string endpoint;            // "http://127.0.0.1:2379" (http or https; a trailing '/' is dropped)
  std::int64_t timeout_ms = 5000;  // connect, and first byte of the answer
};

class etcd_client {
 public:
  template <class T>
  using done = std::function<void(result<T>)>;
  using done_status = std::function<void(status)>;

  // invalid_argument when the endpoint is not an http(s) URL.
  static result<etcd_client> make(providers::http_loop& loop, etcd_options options);

  const std::string& endpoint() const { return opt_.endpoint; }
  std::int64_t timeout_ms() const { return opt_.timeout_ms; }

  void range(std::string key, done<etcd_range_result> cb) const;
  void range_prefix(std::string prefix, done<etcd_range_result> cb) const;
  // The revision of the write.
  void put(std::string key, std::string value, std::int64_t lease, done<std::int64_t> cb) const;
  // How many keys were deleted.
  void erase(std::string key, bool prefix, done<std::int64_t> cb) const;
  void txn(const etcd_txn& t, done<etcd_txn_result> cb) const;

  void lease_grant(std::int64_t ttl_s, done<etcd_lease> cb) const;
  // One renewal (the gateway's keepalive stream with one request); not_found when the lease
  // is gone. `timeout_ms` 0 = the client's.
  void lease_keepalive(std::int64_t id, done<etcd_lease> cb, std::int64_t timeout_ms = 0) const;
  void lease_revoke(std::int64_t id, done_status cb) const;
  // Seconds left; -1 when the lease expired or never existed (etcd's own answer).
  void lease_time_to_live(std::int64_t id, done<std::int64_t> cb) const;

  // Any /v3 call: `path` ("/v3/kv/range") with a JSON body; the answer's object, or the error
  // as above. `timeout_ms` 0 = the client's.
  void call(std::string path, const boost::json::object& body, done<boost::json::object> cb,
            std::int64_t timeout_ms = 0) const;

 private:
  etcd_client(providers::http_loop& loop, etcd_options options) : loop_(&loop), opt_(std::move(options)) {}
  providers::http_loop* loop_;
  etcd_options opt_;
};

// The end of the key range that holds every key beginning with `prefix` (etcd's range_end).
std::string prefix_range_end(std::string_view prefix);

}  // namespace sessionrt::cluster
