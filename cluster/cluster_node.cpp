#include "cluster/cluster_node.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <future>

#include "cluster/blocking_etcd.hpp"
#include "cluster/claim_reconcile.hpp"
#include "cluster/cluster_keys.hpp"
#include "cluster/placement_round.hpp"
#include "cluster/shard_table_store.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::cluster {
namespace {

std::int64_t default_tick_ms(std::int64_t ttl_s) { return std::clamp<std::int64_t>(ttl_s * 1000 / 4, 100, 1000); }

// "n1,n2~,n3": the members and their draining flags, what a leader's round depends on.
std::string members_signature(const std::vector<node_record>& nodes) {
  std::string s;
  for (const auto& n : nodes) s += n.id + (n.draining ? "~," : ",");
  return s;
}

// Shards a table gives to a live node that does not hold their key yet (a handoff or a
// takeover under way).
std::int64_t in_flight(const std::vector<shard_table>& tables, const std::vector<node_record>& nodes,
                       const std::vector<shard_claim>& claims) {
  std::map<shard_id, std::string> holder;
  for (const auto& c : claims) holder[c.shard] = c.node;
  std::int64_t n = 0;
  for (const auto& t : tables)
    for (int i = 0; i < t.shards(); ++i) {
      const std::string& owner = t.owners[static_cast<std::size_t>(i)];
      const bool live = std::any_of(nodes.begin(), nodes.end(), [&](const node_record& r) { return r.id == owner; });
      auto h = holder.find(shard_id{t.agent, i});
      if (live && (h == holder.end() || h->second != owner)) ++n;
    }
  return n;
}

}  // namespace

cluster_node::cluster_node(const etcd_client& etcd, cluster_node_options options, cluster_node_hooks hooks,
                           const clock& monotonic, alarms& timer)
    : etcd_(etcd),
      opt_(std::move(options)),
      hooks_(std::move(hooks)),
      mono_(monotonic),
      claims_(etcd, opt_.cluster),
      tick_ms_(opt_.tick_ms > 0 ? opt_.tick_ms : default_tick_ms(opt_.ttl_s)) {
  membership_options m;
  m.cluster = opt_.cluster;
  m.node_id = opt_.node_id;
  m.address = opt_.address;
  m.build = opt_.build;
  m.ttl_s = opt_.ttl_s;
  // A lost lease is handled by the next tick (fence, rejoin): no callback, which could outlive
  // this object on the HTTP loop.
  membership_ = std::make_unique<node_membership>(etcd, std::move(m), monotonic, timer);
}

cluster_node::~cluster_node() {
  {
    std::lock_guard g(run_mu_);
    stop_ = true;
  }
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void cluster_node::emit(std::string_view type, const shard_claim& c, const std::string& reason) {
  if (!hooks_.publish) return;
  const clock& wall = hooks_.wall ? *hooks_.wall : storage::real_clock();
  payloads::shard_ownership p{c.shard.agent, c.shard.index, c.epoch, c.node, reason};
  payloads::event_subject who{"", c.shard.agent, ""};
  if (type == event_types::shard_acquired) hooks_.publish(payloads::make_event(who, wall.now_ms(), payloads::shard_acquired{p}));
  else if (type == event_types::shard_released) hooks_.publish(payloads::make_event(who, wall.now_ms(), payloads::shard_released{p}));
  else hooks_.publish(payloads::make_event(who, wall.now_ms(), payloads::shard_fenced{p}));
}

bool cluster_node::serve(const shard_claim& c) {
  if (!hooks_.acquired) return true;
  status st = hooks_.acquired(c);
  if (st.ok()) return true;
  spdlog::warn("cluster: node {} could not open shard {} (epoch {}): {}; releasing its key", opt_.node_id,
               to_string(c.shard), c.epoch, st.message());
  status released = await_call<status>([&](etcd_client::done_status cb) { claims_.release(c, std::move(cb)); });
  if (!released.ok()) spdlog::warn("cluster: releasing shard {}: {}", to_string(c.shard), released.message());
  std::lock_guard g(mu_);
  ++counts_.open_failures;
  return false;
}

void cluster_node::fence(const shard_claim& c, const std::string& why) {
  if (hooks_.fenced) hooks_.fenced(c, why);
  emit(event_types::shard_fenced, c, why);
}

status cluster_node::join() {
  status st = await_call<status>([&](etcd_client::done_status cb) { membership_->join(std::move(cb)); });
  if (!st.ok()) return st;
  std::lock_guard g(mu_);
  ++counts_.joins;
  spdlog::info("cluster: node {} joined cluster {} with lease {} (TTL {} ms, keepalive every {} ms)", opt_.node_id,
               opt_.cluster, lease_hex(membership_->lease()), membership_->ttl_ms(), membership_->keepalive_interval_ms());
  return st;
}

status cluster_node::rejoin_if_lost() {
  const membership_phase ph = membership_->phase();
  if (ph == membership_phase::joined) return status();
  if (ph == membership_phase::lost) {
    std::map<shard_id, shard_claim> gone;
    {
      std::lock_guard g(mu_);
      gone.swap(held_);
      leader_ = false;
      ++counts_.lease_losses;
      counts_.fenced += gone.size();
    }
    spdlog::warn("cluster: node {} lost its lease: {} shards fenced, it writes none of them and joins again",
                 opt_.node_id, gone.size());
    for (const auto& [shard, c] : gone) fence(c, "lease lost");
  }
  return join();
}

status cluster_node::elect(std::int64_t lease) {
  const std::string key = leader_key(opt_.cluster);
  etcd_txn t;
  t.compare.push_back(etcd_compare::absent(key));
  t.success.push_back(etcd_op::put(key, json::to_compact(boost::json::object{{"node", opt_.node_id}}), lease));
  t.failure.push_back(etcd_op::get(key));
  auto r = await_call<result<etcd_txn_result>>([&](etcd_client::done<etcd_txn_result> cb) { etcd_.txn(t, std::move(cb)); });
  if (!r) return r.error().with_context("electing the placement leader");
  bool leads = r->succeeded;
  if (!leads && !r->ranges.empty() && !r->ranges[0].kvs.empty()) leads = r->ranges[0].kvs[0].lease == lease;
  std::lock_guard g(mu_);
  if (leads != leader_)
    spdlog::info("cluster: node {} {} the placement leader", opt_.node_id, leads ? "is now" : "is no longer");
  leader_ = leads;
  return status();
}

status cluster_node::lead(const std::vector<node_record>& nodes, const std::vector<shard_claim>& claims) {
  auto tables = await_call<result<std::vector<shard_table>>>(
      [&](etcd_client::done<std::vector<shard_table>> cb) { shard_table_store(etcd_, opt_.cluster).list(std::move(cb)); });
  if (!tables) return tables.error().with_context("reading the shard tables to place them");
  const std::string members = members_signature(nodes);
  const std::int64_t now = mono_.now_ms();
  bool due = false;
  {
    std::lock_guard g(mu_);
    due = members != last_members_ || now - last_round_ms_ >= opt_.placement_every_ms ||
          (!last_round_complete_ && in_flight(*tables, nodes, claims) == 0);
  }
  if (!due) return status();
  const placement_planner planner;
  bool complete = true;
  status first;
  for (const auto& agent : opt_.agents) {
    auto out = await_call<result<round_outcome>>([&](etcd_client::done<round_outcome> cb) {
      run_placement_round(etcd_, opt_.cluster, agent, opt_.shards_per_agent, planner, std::move(cb));
    });
    if (!out) {
      if (first.ok()) first = out.error().with_context(fmt::format("placing agent {}'s shards", agent));
      complete = false;  // try again at the next tick
      continue;
    }
    complete = complete && (out->plan.complete || !out->plan.changed());
    if (out->written_revision == 0) continue;
    const std::size_t changed = out->plan.assignments.size() + out->plan.moves.size();
    spdlog::info("cluster: placement of agent {} at revision {}: {} shards assigned, {} moved{}", agent,
                 out->written_revision, out->plan.assignments.size(), out->plan.moves.size(),
                 out->plan.complete ? " (balanced)" : " (more rounds to come)");
    std::lock_guard g(mu_);
    ++counts_.rounds;
    counts_.shards_placed += changed;
  }
  std::lock_guard g(mu_);
  if (first.ok()) last_members_ = members;  // a failed round runs again at the next tick
  last_round_ms_ = now;
  last_round_complete_ = complete;
  return first;
}

bool cluster_node::drain(const shard_id& shard, std::int64_t deadline_ms) {
  if (!hooks_.drain) return true;
  auto p = std::make_shared<std::promise<void>>();
  auto f = p->get_future();
  hooks_.drain(shard, [p] { p->set_value(); });
  const std::int64_t left = std::max<std::int64_t>(deadline_ms - mono_.now_ms(), 0);
  return f.wait_for(std::chrono::milliseconds(left)) == std::future_status::ready;
}

status cluster_node::reconcile(const std::vector<shard_claim>& claims) {
  auto tables = await_call<result<std::vector<shard_table>>>(
      [&](etcd_client::done<std::vector<shard_table>> cb) { shard_table_store(etcd_, opt_.cluster).list(std::move(cb)); });
  if (!tables) return tables.error().with_context("reading the shard tables");
  claim_inputs in;
  in.node = opt_.node_id;
  in.lease = membership_->phase() == membership_phase::joined ? membership_->lease() : 0;
  in.tables = std::move(*tables);
  in.in_etcd = claims;
  {
    std::lock_guard g(mu_);
    in.draining = draining_;
    in.held = held_;
  }
  in.may_claim = in.lease != 0 && membership_->permit().may_write();
  const claim_actions act = reconcile_claims(in);

  for (const auto& c : act.fenced) {
    {
      std::lock_guard g(mu_);
      held_.erase(c.shard);
      ++counts_.fenced;
    }
    spdlog::warn("cluster: node {} no longer holds shard {} (epoch {}): fenced", opt_.node_id, to_string(c.shard), c.epoch);
    fence(c, "taken");
  }
  for (const auto& c : act.adopt) {
    if (!serve(c)) continue;
    {
      std::lock_guard g(mu_);
      held_[c.shard] = c;
      ++counts_.acquired;
    }
    emit(event_types::shard_acquired, c, "");
  }
  status first;
  const std::int64_t deadline = mono_.now_ms() + std::max<std::int64_t>(membership_->ttl_ms() / 2, 1000);
  for (const auto& c : act.release) {
    // The shard's turns stop and what it holds becomes durable before anyone else may take it.
    if (!drain(c.shard, deadline)) {
      spdlog::warn("cluster: shard {} did not drain in time; kept until the next tick", to_string(c.shard));
      continue;
    }
    status st = await_call<status>([&](etcd_client::done_status cb) { claims_.release(c, std::move(cb)); });
    std::lock_guard g(mu_);
    held_.erase(c.shard);
    if (st.ok()) {
      ++counts_.released;
    } else {
      ++counts_.fenced;  // another holder, or gone: either way not ours any more
      if (first.ok() && st.code() != errc::not_found && st.code() != errc::locked) first = st;
    }
    emit(st.ok() ? event_types::shard_released : event_types::shard_fenced, c, st.ok() ? "rebalance" : "taken");
  }
  if (!act.release.empty())
    spdlog::info("cluster: node {} handed off {} shards", opt_.node_id, act.release.size());

  if (!act.acquire.empty()) {
    // All at once: a takeover after a crash should not wait for one round trip per shard.
    const std::int64_t lease = in.lease;
    auto results = std::make_shared<std::vector<result<shard_claim>>>();
    auto mu = std::make_shared<std::mutex>();
    auto all = std::make_shared<std::promise<void>>();
    auto left = std::make_shared<std::atomic<std::size_t>>(act.acquire.size());
    // The permit again, right before the claims go out: the reads above took time.
    if (!membership_->permit().may_write()) return first;
    for (const auto& s : act.acquire)
      claims_.acquire(s, opt_.node_id, lease, [results, mu, all, left](result<shard_claim> r) {
        {
          std::lock_guard g(*mu);
          results->push_back(std::move(r));
        }
        if (left->fetch_sub(1) == 1) all->set_value();
      });
    all->get_future().wait();
    if (hooks_.opening)
      for (auto& r : *results)
        if (r) hooks_.opening(*r);
    std::size_t taken = 0;
    for (auto& r : *results) {
      if (!r) {
        // locked: someone else still holds it (the table moved it here; that node releases it
        // soon); not_found: our lease ended meanwhile (the next tick rejoins).
        if (first.ok() && r.error().code() != errc::locked) first = r.error();
        continue;
      }
      {
        std::lock_guard g(mu_);
        if (held_.count(r->shard)) continue;
      }
      if (!serve(*r)) continue;
      {
        std::lock_guard g(mu_);
        held_[r->shard] = *r;
        ++counts_.acquired;
      }
      ++taken;
      emit(event_types::shard_acquired, *r, "");
    }
    if (taken > 0) spdlog::info("cluster: node {} acquired {} shards", opt_.node_id, taken);
  }
  return first;
}

status cluster_node::tick() {
  SRT_RETURN_IF_ERROR(rejoin_if_lost());
  const std::int64_t lease = membership_->lease();
  status first = elect(lease);
  auto nodes = await_call<result<std::vector<node_record>>>(
      [&](etcd_client::done<std::vector<node_record>> cb) { list_nodes(etcd_, opt_.cluster, std::move(cb)); });
  auto claims = await_call<result<std::vector<shard_claim>>>(
      [&](etcd_client::done<std::vector<shard_claim>> cb) { claims_.list(std::move(cb)); });
  if (!nodes || !claims) {
    std::lock_guard g(mu_);
    ++counts_.tick_errors;
    return !nodes ? nodes.error() : claims.error();
  }
  bool leads = false;
  {
    std::lock_guard g(mu_);
    counts_.nodes = static_cast<std::int64_t>(nodes->size());
    leads = leader_;
  }
  if (leads) {
    status st = lead(*nodes, *claims);
    if (first.ok()) first = st;
    // A round may have changed the tables; read the claims it did not change below anyway.
  }
  status st = reconcile(*claims);
  if (first.ok()) first = st;
  if (!first.ok()) {
    std::lock_guard g(mu_);
    ++counts_.tick_errors;
  }
  return first;
}

void cluster_node::run() {
  thread_ = std::thread([this] {
    std::uint64_t errors = 0;
    for (;;) {
      status st = tick();
      if (!st.ok() && (errors++ < 3 || errors % 100 == 0))
        spdlog::warn("cluster: node {}: {} ({} failed ticks so far)", opt_.node_id, st.message(), errors);
      std::unique_lock lk(run_mu_);
      if (run_cv_.wait_for(lk, std::chrono::milliseconds(tick_ms_), [this] { return stop_; })) return;
    }
  });
}

status cluster_node::mark_draining() {
  const std::string value = json::to_compact(
      boost::json::object{{"address", opt_.address}, {"build", opt_.build}, {"draining", true}});
  auto r = await_call<result<std::int64_t>>([&](etcd_client::done<std::int64_t> cb) {
    etcd_.put(membership_->key(), value, membership_->lease(), std::move(cb));
  });
  return r ? status() : r.error().with_context("marking the node draining");
}

void cluster_node::release_all(const std::string& reason, std::int64_t deadline_ms) {
  std::map<shard_id, shard_claim> mine;
  {
    std::lock_guard g(mu_);
    mine = held_;
  }
  for (const auto& [shard, c] : mine) {
    if (!drain(shard, deadline_ms)) break;  // out of time: the lease's revoke releases the rest
    status st = await_call<status>([&](etcd_client::done_status cb) { claims_.release(c, std::move(cb)); });
    {
      std::lock_guard g(mu_);
      held_.erase(shard);
      if (st.ok()) ++counts_.released;
      else ++counts_.fenced;
    }
    emit(st.ok() ? event_types::shard_released : event_types::shard_fenced, c, st.ok() ? reason : "taken");
  }
}

status cluster_node::shutdown(std::int64_t deadline_ms) {
  {
    std::lock_guard g(run_mu_);
    stop_ = true;
  }
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (membership_->phase() != membership_phase::joined) return status();
  const std::int64_t deadline = mono_.now_ms() + deadline_ms;
  {
    std::lock_guard g(mu_);
    draining_ = true;
  }
  status st = mark_draining();
  std::size_t n = 0;
  {
    std::lock_guard g(mu_);
    n = held_.size();
  }
  release_all("shutdown", deadline);
  {
    // Out of time: what did not drain writes nothing more before the revoke frees its keys.
    std::map<shard_id, shard_claim> left;
    {
      std::lock_guard g(mu_);
      left = held_;
    }
    if (hooks_.fenced)
      for (const auto& [shard, c] : left) hooks_.fenced(c, "not drained by the shutdown deadline");
  }
  status left = await_call<status>([&](etcd_client::done_status cb) { membership_->leave(std::move(cb)); });
  {
    std::lock_guard g(mu_);
    leader_ = false;
    // What the revoke took with it (a drain that ran out of time) is released too.
    counts_.released += held_.size();
    for (const auto& [shard, c] : held_) emit(event_types::shard_released, c, "shutdown");
    held_.clear();
  }
  spdlog::info("cluster: node {} left cluster {}, handing off {} shards", opt_.node_id, opt_.cluster, n);
  return st.ok() ? left : st;
}

status cluster_node::check_write(const shard_id& shard) const {
  SRT_RETURN_IF_ERROR(membership_->permit().check());
  std::lock_guard g(mu_);
  if (!held_.count(shard))
    return status(errc::locked, fmt::format("shard {} is not held by node {} of cluster {}: another node owns it, or it "
                                            "is moving", to_string(shard), opt_.node_id, opt_.cluster));
  return status();
}

std::vector<shard_claim> cluster_node::held() const {
  std::lock_guard g(mu_);
  std::vector<shard_claim> out;
  for (const auto& [s, c] : held_) out.push_back(c);
  return out;
}

bool cluster_node::is_leader() const {
  std::lock_guard g(mu_);
  return leader_;
}

cluster_node_figures cluster_node::figures() const {
  cluster_node_figures f;
  {
    std::lock_guard g(mu_);
    f = counts_;
    f.leader = leader_;
    f.shards_held = static_cast<std::int64_t>(held_.size());
    for (const auto& [s, c] : held_) {
      f.epoch_min = f.epoch_min == 0 ? c.epoch : std::min(f.epoch_min, c.epoch);
      f.epoch_max = std::max(f.epoch_max, c.epoch);
    }
  }
  const membership_phase ph = membership_->phase();
  f.phase = to_string(ph);
  f.lease = membership_->lease();
  const write_permit& p = membership_->permit();
  f.permit_valid = p.may_write();
  f.permit_age_ms = ph == membership_phase::joined ? mono_.now_ms() - p.last_renewal_ms() : -1;
  return f;
}

std::string cluster_node::metrics_text() const {
  const cluster_node_figures f = figures();
  std::string out;
  auto line = [&](const char* name, const char* type, const char* help, auto v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, v);
  };
  line("sessionrt_cluster_nodes", "gauge", "Members of the cluster at this node's last tick.", f.nodes);
  line("sessionrt_cluster_leader", "gauge", "1 while this node is the placement leader.", f.leader ? 1 : 0);
  line("sessionrt_cluster_shards_held", "gauge", "Owner keys this node holds.", f.shards_held);
  line("sessionrt_cluster_epoch_min", "gauge", "The lowest epoch of the shards held (0: none).", f.epoch_min);
  line("sessionrt_cluster_epoch_max", "gauge", "The highest epoch of the shards held (0: none).", f.epoch_max);
  line("sessionrt_cluster_permit_valid", "gauge", "1 while the write permit allows writes (lease renewed within TTL/2).",
       f.permit_valid ? 1 : 0);
  line("sessionrt_cluster_permit_age_seconds", "gauge", "Since the last successful lease renewal was sent (-1: no lease).",
       f.permit_age_ms < 0 ? -1.0 : static_cast<double>(f.permit_age_ms) / 1000.0);
  line("sessionrt_cluster_joins_total", "counter", "Leases taken (the first join and each rejoin).", f.joins);
  line("sessionrt_cluster_lease_losses_total", "counter", "Times etcd said this node's lease was gone.", f.lease_losses);
  line("sessionrt_cluster_shards_acquired_total", "counter", "Owner keys taken.", f.acquired);
  line("sessionrt_cluster_handoffs_total", "counter", "Shards released after draining (rebalance or shutdown).", f.released);
  line("sessionrt_cluster_shards_fenced_total", "counter", "Shards lost without a release (lease ended, or taken).", f.fenced);
  line("sessionrt_cluster_placement_rounds_total", "counter", "Shard tables this node wrote as placement leader.", f.rounds);
  line("sessionrt_cluster_shards_placed_total", "counter", "Shards those rounds assigned or moved.", f.shards_placed);
  line("sessionrt_cluster_tick_errors_total", "counter", "Ticks that met an error (etcd unreachable, a lost race).",
       f.tick_errors);
  line("sessionrt_cluster_shard_open_failures_total", "counter",
       "Shards taken whose state could not be opened (their key was released again).", f.open_failures);
  return out;
}

}  // namespace sessionrt::cluster
