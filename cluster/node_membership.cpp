#include "cluster/node_membership.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <mutex>
#include <optional>

#include "cluster/cluster_keys.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::cluster {

const char* to_string(membership_phase p) {
  switch (p) {
    case membership_phase::idle: return "idle";
    case membership_phase::joining: return "joining";
    case membership_phase::joined: return "joined";
    case membership_phase::lost: return "lost";
    case membership_phase::left: return "left";
  }
  return "?";
}

std::string node_record_json(const std::string& address, const std::string& build) {
  return json::to_compact(boost::json::object{{"address", address}, {"build", build}});
}

struct node_membership::state : std::enable_shared_from_this<state> {
  state(const etcd_client& e, membership_options o, const clock& m, alarms& t)
      : etcd(e), opt(std::move(o)), mono(m), timer(t), permit(m, opt.node_id) {}

  etcd_client etcd;
  membership_options opt;
  const clock& mono;
  alarms& timer;
  write_permit permit;

  mutable std::mutex mu;
  membership_phase phase = membership_phase::idle;
  std::int64_t lease = 0;
  std::int64_t ttl_ms = 0;
  std::optional<alarms::id> alarm;
  bool stopped = false;  // the owner is gone: schedule nothing more
  std::uint64_t renewals = 0;

  std::int64_t interval_ms() const { return std::max<std::int64_t>(ttl_ms / 3, 1); }

  // Not under mu: a manual clock runs an alarm that is already due inside at().
  void schedule(std::int64_t delay_ms) {
    {
      std::lock_guard g(mu);
      if (stopped || phase != membership_phase::joined) return;
      if (alarm) timer.cancel(*alarm);
      alarm.reset();
    }
    std::weak_ptr<state> weak = weak_from_this();
    const alarms::id id = timer.at(mono.now_ms() + delay_ms, [weak] {
      if (auto self = weak.lock()) self->renew_from_timer();
    });
    std::lock_guard g(mu);
    if (stopped || phase != membership_phase::joined) {
      timer.cancel(id);
      return;
    }
    alarm = id;  // cancelling it once it fired does nothing
  }

  void renew_from_timer() {
    {
      std::lock_guard g(mu);
      alarm.reset();
    }
    renew([self = shared_from_this()](status st) {
      if (self->opt.on_renewal) self->opt.on_renewal(st);
    });
  }

  void renew(etcd_client::done_status done) {
    std::int64_t id = 0, timeout = 0;
    {
      std::lock_guard g(mu);
      if (phase != membership_phase::joined)
        return done(status(errc::invalid_argument, fmt::format("node {} is {}, not joined: nothing to renew",
                                                               opt.node_id, to_string(phase))));
      id = lease;
      timeout = interval_ms();
    }
    const std::int64_t sent = mono.now_ms();
    etcd.lease_keepalive(
        id,
        [self = shared_from_this(), id, sent, done = std::move(done)](result<etcd_lease> r) {
          std::function<void(const status&)> lost_cb;
          status st = r.to_status();
          std::int64_t next_ms = 0;  // 0 = no further keepalive from here
          {
            std::lock_guard g(self->mu);
            if (self->lease != id || self->phase != membership_phase::joined) {
              // An answer for a lease we no longer hold, or after leave(): change nothing.
            } else if (r.ok()) {
              self->permit.renewed(sent);
              ++self->renewals;
              next_ms = self->interval_ms();
            } else if (st.code() == errc::not_found) {
              self->permit.lost();
              self->phase = membership_phase::lost;
              lost_cb = self->opt.on_lease_lost;
            } else {
              // etcd unreachable or slow: try again sooner; the permit runs out on its own.
              next_ms = std::max<std::int64_t>(self->interval_ms() / 2, 1);
            }
          }
          if (!st.ok()) st = st.with_context(fmt::format("renewing node {} of cluster {}", self->opt.node_id, self->opt.cluster));
          if (next_ms > 0) self->schedule(next_ms);
          if (lost_cb) lost_cb(st);
          done(st);
        },
        timeout);
  }

  void join(etcd_client::done_status done) {
    status bad = check_name("cluster name", opt.cluster);
    if (bad.ok()) bad = check_name("node id", opt.node_id);
    if (bad.ok() && opt.ttl_s < 1) bad = status(errc::invalid_argument, fmt::format("lease TTL {} s must be at least 1 s", opt.ttl_s));
    if (!bad.ok()) return done(bad);
    {
      std::lock_guard g(mu);
      if (phase == membership_phase::joining || phase == membership_phase::joined)
        return done(status(errc::invalid_argument, fmt::format("node {} is already {}", opt.node_id, to_string(phase))));
      phase = membership_phase::joining;
    }
    const std::int64_t sent = mono.now_ms();
    etcd.lease_grant(opt.ttl_s, [self = shared_from_this(), sent, done = std::move(done)](result<etcd_lease> granted) {
      if (!granted) {
        self->fail_join();
        return done(granted.error().with_context(fmt::format("node {} joining cluster {}", self->opt.node_id,
                                                             self->opt.cluster)));
      }
      self->write_node_key(*granted, sent, std::move(done));
    });
  }

  void fail_join() {
    std::lock_guard g(mu);
    phase = membership_phase::idle;
  }

  void write_node_key(etcd_lease granted, std::int64_t sent, etcd_client::done_status done) {
    const std::string key = node_key(opt.cluster, opt.node_id);
    etcd_txn t;
    t.compare.push_back(etcd_compare::absent(key));
    t.success.push_back(etcd_op::put(key, node_record_json(opt.address, opt.build), granted.id));
    t.failure.push_back(etcd_op::get(key));
    etcd.txn(t, [self = shared_from_this(), granted, sent, key, done = std::move(done)](result<etcd_txn_result> r) {
      if (r.ok() && r->succeeded) {
        {
          std::lock_guard g(self->mu);
          self->lease = granted.id;
          self->ttl_ms = granted.ttl_s * 1000;
          self->phase = membership_phase::joined;
          self->permit.start(self->ttl_ms, sent);
        }
        self->schedule(self->interval_ms());
        return done(status());
      }
      status err;
      if (!r.ok()) {
        err = r.error().with_context(fmt::format("node {} joining cluster {}", self->opt.node_id, self->opt.cluster));
      } else {
        std::int64_t holder = 0;
        if (!r->ranges.empty() && !r->ranges[0].kvs.empty()) holder = r->ranges[0].kvs[0].lease;
        err = status(errc::already_exists,
                     fmt::format("node id {} is already a member of cluster {} ({} is held by lease {}): another "
                                 "process runs with this id, or a stopped one's lease has not expired yet (at most "
                                 "its TTL)", self->opt.node_id, self->opt.cluster, key, lease_hex(holder)));
      }
      self->fail_join();
      // The lease we were granted holds nothing: give it back now rather than after its TTL.
      self->etcd.lease_revoke(granted.id, [err, done](status) { done(err); });
    });
  }

  void leave(etcd_client::done_status done) {
    std::int64_t id = 0;
    {
      std::lock_guard g(mu);
      if (alarm) timer.cancel(*alarm);
      alarm.reset();
      // Stop writing before the lease is revoked: after the revoke another node may own our shards.
      permit.lost();
      if (phase != membership_phase::joined) return done(status());
      phase = membership_phase::left;
      id = lease;
    }
    etcd.lease_revoke(id, [self = shared_from_this(), done = std::move(done)](status st) {
      if (st.code() == errc::not_found) st = status();  // already gone: the same outcome
      done(st.ok() ? st : st.with_context(fmt::format("node {} leaving cluster {}", self->opt.node_id, self->opt.cluster)));
    });
  }
};

node_membership::node_membership(const etcd_client& etcd, membership_options options, const clock& monotonic,
                                 alarms& timer)
    : s_(std::make_shared<state>(etcd, std::move(options), monotonic, timer)) {}

node_membership::~node_membership() {
  std::lock_guard g(s_->mu);
  s_->stopped = true;
  if (s_->alarm) s_->timer.cancel(*s_->alarm);
  s_->alarm.reset();
}

void node_membership::join(etcd_client::done_status done) { s_->join(std::move(done)); }
void node_membership::renew(etcd_client::done_status done) { s_->renew(std::move(done)); }
void node_membership::leave(etcd_client::done_status done) { s_->leave(std::move(done)); }

const write_permit& node_membership::permit() const { return s_->permit; }
membership_phase node_membership::phase() const {
  std::lock_guard g(s_->mu);
  return s_->phase;
}
std::int64_t node_membership::lease() const {
  std::lock_guard g(s_->mu);
  return s_->lease;
}
std::int64_t node_membership::ttl_ms() const {
  std::lock_guard g(s_->mu);
  return s_->ttl_ms;
}
std::int64_t node_membership::keepalive_interval_ms() const {
  std::lock_guard g(s_->mu);
  return s_->interval_ms();
}
std::string node_membership::key() const { return node_key(s_->opt.cluster, s_->opt.node_id); }
std::uint64_t node_membership::renewals() const {
  std::lock_guard g(s_->mu);
  return s_->renewals;
}

}  // namespace sessionrt::cluster
