#include "cluster/etcd_client.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <charconv>
#include <memory>

#include "cluster/etcd_base64.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::cluster {
namespace bj = boost::json;

namespace {

// A range of a whole cluster (every shard table, every owner key) stays far below this; a
// bigger answer means the endpoint is not what we think.
constexpr std::size_t k_max_answer_bytes = 64u << 20;

std::string truncated(std::string_view s, std::size_t n = 160) {
  return s.size() <= n ? std::string(s) : std::string(s.substr(0, n)) + "...";
}

// etcd's int64 fields: strings in the gateway's JSON ("42"), numbers accepted too; absent = 0
// (proto3 omits zero values).
std::optional<std::int64_t> int64_field(const bj::object& o, std::string_view name) {
  const bj::value* v = o.if_contains(name);
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v->get_uint64());
  if (v->is_string()) {
    const auto& s = v->get_string();
    std::int64_t out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && end == s.data() + s.size()) return out;
  }
  return std::nullopt;
}

status corrupt(const std::string& what) {
  return {errc::corrupt, fmt::format("etcd's answer does not parse: {} (is the endpoint etcd 3.4's JSON gateway?)", what)};
}

result<std::int64_t> header_revision(const bj::object& o) {
  const bj::value* h = o.if_contains("header");
  if (h == nullptr || !h->is_object()) return corrupt("no header");
  auto rev = int64_field(h->get_object(), "revision");
  if (!rev) return corrupt("header.revision is not an integer");
  return *rev;
}

result<etcd_kv> parse_kv(const bj::value& v) {
  if (!v.is_object()) return corrupt("a kv is not an object");
  const bj::object& o = v.get_object();
  etcd_kv kv;
  auto text = [&](std::string_view name, std::string& out) -> status {
    const bj::value* f = o.if_contains(name);
    if (f == nullptr) return {};
    if (!f->is_string()) return corrupt(fmt::format("kv.{} is not a string", name));
    auto decoded = base64_decode(f->get_string());
    if (!decoded) return corrupt(fmt::format("kv.{} is not base64", name));
    out = std::move(*decoded);
    return {};
  };
  SRT_RETURN_IF_ERROR(text("key", kv.key));
  SRT_RETURN_IF_ERROR(text("value", kv.value));
  auto c = int64_field(o, "create_revision");
  auto m = int64_field(o, "mod_revision");
  auto ver = int64_field(o, "version");
  auto l = int64_field(o, "lease");
  if (!c || !m || !ver || !l) return corrupt("a kv's revision, version or lease is not an integer");
  kv.create_revision = *c;
  kv.mod_revision = *m;
  kv.version = *ver;
  kv.lease = *l;
  return kv;
}

result<etcd_range_result> parse_range(const bj::object& o) {
  etcd_range_result r;
  auto rev = header_revision(o);
  if (!rev) return rev.error();
  r.revision = *rev;
  if (const bj::value* kvs = o.if_contains("kvs")) {
    if (!kvs->is_array()) return corrupt("kvs is not an array");
    for (const auto& v : kvs->get_array()) {
      auto kv = parse_kv(v);
      if (!kv) return kv.error();
      r.kvs.push_back(std::move(*kv));
    }
  }
  return r;
}

errc code_of_grpc(std::int64_t code) {
  switch (code) {
    case 3: return errc::invalid_argument;   // INVALID_ARGUMENT
    case 4: return errc::timeout;            // DEADLINE_EXCEEDED
    case 5: return errc::not_found;          // NOT_FOUND (a lease)
    case 8: return errc::limit_exceeded;     // RESOURCE_EXHAUSTED (request too large, quota)
    case 11: return errc::limit_exceeded;    // OUT_OF_RANGE (a compacted revision)
    default: return errc::io_error;          // UNAVAILABLE (no leader), INTERNAL, ...
  }
}

bj::object kv_request(const std::string& key, bool prefix) {
  bj::object o{{"key", base64_encode(key)}};
  if (prefix) o["range_end"] = base64_encode(prefix_range_end(key));
  return o;
}

bj::object op_json(const etcd_op& op) {
  switch (op.what) {
    case etcd_op::kind::put: {
      bj::object p{{"key", base64_encode(op.key)}, {"value", base64_encode(op.value)}};
      if (op.lease != 0) p["lease"] = std::to_string(op.lease);
      return {{"request_put", std::move(p)}};
    }
    case etcd_op::kind::range:
      return {{"request_range", kv_request(op.key, op.prefix)}};
    case etcd_op::kind::delete_range:
      return {{"request_delete_range", kv_request(op.key, op.prefix)}};
  }
  return {};
}

bj::object compare_json(const etcd_compare& c) {
  static constexpr const char* targets[] = {"CREATE", "MOD", "VERSION", "VALUE"};
  static constexpr const char* relations[] = {"EQUAL", "NOT_EQUAL", "GREATER", "LESS"};
  bj::object o{{"key", base64_encode(c.key)},
               {"target", targets[static_cast<int>(c.what)]},
               {"result", relations[static_cast<int>(c.is)]}};
  switch (c.what) {
    case etcd_compare::target::create_revision: o["create_revision"] = std::to_string(c.number); break;
    case etcd_compare::target::mod_revision: o["mod_revision"] = std::to_string(c.number); break;
    case etcd_compare::target::version: o["version"] = std::to_string(c.number); break;
    case etcd_compare::target::value: o["value"] = base64_encode(c.value); break;
  }
  return o;
}

// Collects one answer; turns transport failures and etcd's refusals into statuses.
class etcd_call final : public providers::http_handler {
 public:
  etcd_call(std::string endpoint, std::string path, std::int64_t timeout_ms, etcd_client::done<bj::object> cb)
      : endpoint_(std::move(endpoint)), path_(std::move(path)), timeout_ms_(timeout_ms), cb_(std::move(cb)) {}

  void on_head(const providers::http_response_head& head) override { http_status_ = head.status; }
  void on_body(std::string_view bytes) override {
    if (body_.size() + bytes.size() > k_max_answer_bytes) {
      too_big_ = true;
      return;
    }
    body_ += bytes;
  }
  void on_done(status st) override { cb_(finish(std::move(st))); }

 private:
  result<bj::object> finish(status st) {
    if (st.code() == errc::timeout)
      return status(errc::timeout, fmt::format("etcd at {} did not answer {} within {} ms ({})", endpoint_, path_,
                                               timeout_ms_, st.message()));
    if (st.code() == errc::cancelled)
      return status(errc::cancelled, fmt::format("the call {} to etcd at {} was cancelled", path_, endpoint_));
    if (!st.ok())
      return status(errc::io_error, fmt::format("etcd at {} is unreachable ({}): is etcd running there, and is the "
                                                "endpoint right?", endpoint_, st.message()));
    if (too_big_)
      return status(errc::limit_exceeded, fmt::format("etcd at {} answered {} with more than {} bytes", endpoint_, path_,
                                                      k_max_answer_bytes));
    auto parsed = json::parse_object(body_);
    if (!parsed)
      return status(errc::corrupt, fmt::format("{} answered {} with HTTP {} and a body that is not JSON ({}): is it "
                                               "etcd 3.4's JSON gateway?", endpoint_, path_, http_status_,
                                               truncated(body_)));
    bj::object o = std::move(*parsed);
    // A streaming call (lease keepalive) wraps each message: {"result": {...}} or {"error": {...}}.
    if (bj::value* r = o.if_contains("result"); r != nullptr && r->is_object()) {
      bj::object inner = std::move(r->get_object());
      o = std::move(inner);
    } else if (bj::value* e = o.if_contains("error"); e != nullptr && e->is_object()) {
      bj::object inner = std::move(e->get_object());
      if (auto c = int64_field(inner, "grpc_code")) inner["code"] = *c;
      o = std::move(inner);
      if (!o.contains("error")) o["error"] = o.contains("message") ? o["message"] : bj::value("error");
    }
    if (http_status_ != 200 || o.contains("error")) {
      const auto code = int64_field(o, "code").value_or(0);
      std::string message;
      if (const bj::value* m = o.if_contains("message"); m != nullptr && m->is_string()) message = m->get_string();
      else if (const bj::value* e = o.if_contains("error"); e != nullptr && e->is_string()) message = e->get_string();
      else message = truncated(body_);
      return status(code_of_grpc(code), fmt::format("etcd at {} refused {}: {} (gRPC code {}, HTTP {})", endpoint_, path_,
                                                    message, code, http_status_));
    }
    return o;
  }

  std::string endpoint_;
  std::string path_;
  std::int64_t timeout_ms_;
  etcd_client::done<bj::object> cb_;
  long http_status_ = 0;
  std::string body_;
  bool too_big_ = false;
};

bool lease_not_found(const status& st) { return st.code() == errc::not_found; }

status lease_gone(std::int64_t id, const std::string& doing) {
  return {errc::not_found, fmt::format("lease {} expired or was revoked{}", lease_hex(id), doing)};
}

}  // namespace

etcd_compare etcd_compare::absent(std::string key) {
  return {std::move(key), target::create_revision, relation::equal, 0, {}};
}
etcd_compare etcd_compare::modified_at(std::string key, std::int64_t revision) {
  return {std::move(key), target::mod_revision, relation::equal, revision, {}};
}

etcd_op etcd_op::put(std::string key, std::string value, std::int64_t lease) {
  return {kind::put, std::move(key), std::move(value), lease, false};
}
etcd_op etcd_op::get(std::string key) { return {kind::range, std::move(key), {}, 0, false}; }
etcd_op etcd_op::get_prefix(std::string prefix) { return {kind::range, std::move(prefix), {}, 0, true}; }
etcd_op etcd_op::erase(std::string key) { return {kind::delete_range, std::move(key), {}, 0, false}; }

std::string lease_hex(std::int64_t id) { return fmt::format("{:#x}", static_cast<std::uint64_t>(id)); }

std::string prefix_range_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // etcd: "\0" as range_end = every key from `key` on
}

result<etcd_client> etcd_client::make(providers::http_loop& loop, etcd_options options) {
  std::string& e = options.endpoint;
  while (!e.empty() && e.back() == '/') e.pop_back();
  const bool http = e.rfind("http://", 0) == 0 && e.size() > 7;
  const bool https = e.rfind("https://", 0) == 0 && e.size() > 8;
  if (!http && !https)
    return status(errc::invalid_argument,
                  fmt::format("etcd endpoint '{}' is not an http:// or https:// URL (e.g. http://127.0.0.1:2379)", e));
  if (options.timeout_ms <= 0)
    return status(errc::invalid_argument, fmt::format("etcd timeout {} ms must be positive", options.timeout_ms));
  return etcd_client(loop, std::move(options));
}

void etcd_client::call(std::string path, const bj::object& body, done<bj::object> cb, std::int64_t timeout_ms) const {
  const std::int64_t t = timeout_ms > 0 ? timeout_ms : opt_.timeout_ms;
  providers::http_request req;
  req.method = "POST";
  req.url = opt_.endpoint + path;
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json::to_compact(body);
  req.connect_timeout_ms = t;
  req.first_byte_timeout_ms = t;
  req.idle_timeout_ms = t;
  loop_->start_call(std::move(req), std::make_shared<etcd_call>(opt_.endpoint, std::move(path), t, std::move(cb)));
}

void etcd_client::range(std::string key, done<etcd_range_result> cb) const {
  call("/v3/kv/range", kv_request(key, false), [cb = std::move(cb)](result<bj::object> r) {
    if (!r) return cb(r.error());
    cb(parse_range(*r));
  });
}

void etcd_client::range_prefix(std::string prefix, done<etcd_range_result> cb) const {
  call("/v3/kv/range", kv_request(prefix, true), [cb = std::move(cb)](result<bj::object> r) {
    if (!r) return cb(r.error());
    cb(parse_range(*r));
  });
}

void etcd_client::put(std::string key, std::string value, std::int64_t lease, done<std::int64_t> cb) const {
  bj::object body{{"key", base64_encode(key)}, {"value", base64_encode(value)}};
  if (lease != 0) body["lease"] = std::to_string(lease);
  call("/v3/kv/put", body, [cb = std::move(cb), key, lease](result<bj::object> r) {
    if (!r && lease != 0 && lease_not_found(r.error())) return cb(lease_gone(lease, fmt::format(": cannot write {} under it", key)));
    if (!r) return cb(r.error());
    cb(header_revision(*r));
  });
}

void etcd_client::erase(std::string key, bool prefix, done<std::int64_t> cb) const {
  call("/v3/kv/deleterange", kv_request(key, prefix), [cb = std::move(cb)](result<bj::object> r) {
    if (!r) return cb(r.error());
    auto n = int64_field(*r, "deleted");
    if (!n) return cb(corrupt("deleted is not an integer"));
    cb(*n);
  });
}

void etcd_client::txn(const etcd_txn& t, done<etcd_txn_result> cb) const {
  bj::array compare, success, failure;
  for (const auto& c : t.compare) compare.push_back(compare_json(c));
  for (const auto& op : t.success) success.push_back(op_json(op));
  for (const auto& op : t.failure) failure.push_back(op_json(op));
  bj::object body{{"compare", std::move(compare)}, {"success", std::move(success)}, {"failure", std::move(failure)}};
  call("/v3/kv/txn", body, [cb = std::move(cb)](result<bj::object> r) {
    if (!r && lease_not_found(r.error()))
      return cb(status(errc::not_found, "a lease this transaction writes under expired or was revoked (" +
                                            r.error().message() + ")"));
    if (!r) return cb(r.error());
    etcd_txn_result out;
    auto rev = header_revision(*r);
    if (!rev) return cb(rev.error());
    out.revision = *rev;
    const bj::value* s = r->if_contains("succeeded");
    out.succeeded = s != nullptr && s->is_bool() && s->get_bool();
    if (const bj::value* rs = r->if_contains("responses"); rs != nullptr && rs->is_array()) {
      for (const auto& item : rs->get_array()) {
        etcd_range_result range;
        if (item.is_object()) {
          if (const bj::value* rr = item.get_object().if_contains("response_range"); rr != nullptr && rr->is_object()) {
            auto parsed = parse_range(rr->get_object());
            if (!parsed) return cb(parsed.error());
            range = std::move(*parsed);
          }
        }
        out.ranges.push_back(std::move(range));
      }
    }
    cb(std::move(out));
  });
}

void etcd_client::lease_grant(std::int64_t ttl_s, done<etcd_lease> cb) const {
  call("/v3/lease/grant", bj::object{{"TTL", std::to_string(ttl_s)}}, [cb = std::move(cb)](result<bj::object> r) {
    if (!r) return cb(r.error());
    auto id = int64_field(*r, "ID");
    auto ttl = int64_field(*r, "TTL");
    if (!id || !ttl || *id == 0 || *ttl <= 0) return cb(corrupt("a granted lease without ID or TTL"));
    cb(etcd_lease{*id, *ttl});
  });
}

void etcd_client::lease_keepalive(std::int64_t id, done<etcd_lease> cb, std::int64_t timeout_ms) const {
  call("/v3/lease/keepalive", bj::object{{"ID", std::to_string(id)}},
       [cb = std::move(cb), id](result<bj::object> r) {
         if (!r && lease_not_found(r.error())) return cb(lease_gone(id, ""));
         if (!r) return cb(r.error());
         auto ttl = int64_field(*r, "TTL");
         if (!ttl) return cb(corrupt("a keepalive's TTL is not an integer"));
         // etcd answers a renewal of a lease it no longer has with TTL 0 (omitted).
         if (*ttl <= 0) return cb(lease_gone(id, ""));
         cb(etcd_lease{id, *ttl});
       },
       timeout_ms);
}

void etcd_client::lease_revoke(std::int64_t id, done_status cb) const {
  call("/v3/lease/revoke", bj::object{{"ID", std::to_string(id)}}, [cb = std::move(cb), id](result<bj::object> r) {
    if (!r && lease_not_found(r.error())) return cb(lease_gone(id, " before it was revoked"));
    cb(r.to_status());
  });
}

void etcd_client::lease_time_to_live(std::int64_t id, done<std::int64_t> cb) const {
  call("/v3/lease/timetolive", bj::object{{"ID", std::to_string(id)}}, [cb = std::move(cb)](result<bj::object> r) {
    if (!r) return cb(r.error());
    auto ttl = int64_field(*r, "TTL");
    if (!ttl) return cb(corrupt("a lease's TTL is not an integer"));
    cb(*ttl);
  });
}

}  // namespace sessionrt::cluster
