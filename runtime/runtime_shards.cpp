// The runtime's sessions per shard (runtime_options::shard_of; docs/cluster.md): a shard opened
// by its owner (cluster/shard_state.hpp) gets a store actor and, with durability batch, a commit
// log actor of its own, over the shard's files; the router then serves its keys from them. A
// close holds the shard's keys in the router until every session of it passivated, writes the
// store, checkpoints the log and stops both. The router keeps the order of what waits. The
// maintenance actor maintains an open shard's store as an agent's (the agent's bounds checked
// over all its shards, actors/maintenance/shard_bounds.hpp; through the shard's files), and
// leaves it alone from the moment its close begins.
#include <caf/all.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "runtime/runtime_impl.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::runtime {

using namespace sessionrt::actors;

namespace {

void exit_shard(caf::scoped_actor& self, const runtime_impl::open_shard_actors& a) {
  self->send_exit(a.store, caf::exit_reason::user_shutdown);
  if (a.commit_log) self->send_exit(a.commit_log, caf::exit_reason::user_shutdown);
}

// The shard's store written, its log checkpointed (everything it holds in the transcripts for
// good, the log closed); the first failure, named.
status make_durable(caf::scoped_actor& self, const std::string& unit, const runtime_impl::open_shard_actors& a,
                    caf::duration timeout) {
  status out = write_stores(self, {{unit, a.store}}, timeout);
  if (!a.commit_log) return out;
  self->request(a.commit_log, timeout, checkpoint_atom::value)
      .receive(
          [&](const std::string& err) {
            if (!err.empty() && out.ok()) out = status(errc::io_error, fmt::format("checkpointing shard {}: {}", unit, err));
          },
          [&](caf::error& e) {
            if (out.ok()) out = status(errc::timeout, fmt::format("checkpointing shard {}: {}", unit, self->system().render(e)));
          });
  return out;
}

}  // namespace

status stop_shards(caf::scoped_actor& self, runtime_impl& st, caf::duration timeout) {
  std::map<std::string, runtime_impl::open_shard_actors> shards;
  {
    std::lock_guard g(st.shards_mu);
    shards.swap(st.shards);
  }
  status first;
  for (const auto& [unit, a] : shards) {
    if (status s = make_durable(self, unit, a, timeout); first.ok()) first = s;
    exit_shard(self, a);
  }
  return first;
}

result<key_place> place_of_key(const runtime_impl& st, const std::string& key, const std::string& agent) {
  if (!st.opt.shard_of) {
    auto it = st.actors.stores.find(agent);
    if (it == st.actors.stores.end()) return status(errc::not_found, fmt::format("no agent {} is configured", agent));
    auto dir = storage::agent_sessions_dir(st.state_dir, agent);
    if (!dir.ok()) return dir.error();
    return key_place{it->second, *dir, st.files};
  }
  const std::string unit = shard_unit_name(agent, st.opt.shard_of(key));
  std::lock_guard g(st.shards_mu);
  auto it = st.shards.find(unit);
  if (it == st.shards.end())
    return status(errc::not_owner, fmt::format("shard {} (session {}) is not served by this node: another node owns it, "
                                               "or it is moving", unit, key));
  return key_place{it->second.store, it->second.sessions_dir, it->second.files};
}

void place_subagents_by_shard(runtime_impl& st, subagent_actor_config& sc) {
  if (!st.opt.shard_of) return;
  sc.shard_of = st.opt.shard_of;
  sc.place_of = [&st](const std::string& key, const std::string& agent) -> result<subagent_place> {
    auto p = place_of_key(st, key, agent);
    if (!p.ok()) return p.error();
    return subagent_place{p->store, p->sessions_dir, p->files};
  };
}

std::map<std::string, store_actor_type> shard_store_actors(const runtime_impl& st) {
  std::lock_guard g(st.shards_mu);
  std::map<std::string, store_actor_type> out;
  for (const auto& [unit, a] : st.shards) out[unit] = a.store;
  return out;
}

void runtime::opening_shard(const std::string& agent, int index) {
  if (impl_->stopped || !impl_->opt.shard_of) return;
  {
    std::lock_guard g(impl_->shards_mu);
    impl_->opening_units.insert(shard_unit_name(agent, index));
  }
  caf::anon_send(impl_->actors.router, shard_open_atom::value, agent, index);
}

void runtime::shard_open_failed(const std::string& agent, int index) {
  if (impl_->stopped || !impl_->opt.shard_of) return;
  {
    std::lock_guard g(impl_->shards_mu);
    impl_->opening_units.erase(shard_unit_name(agent, index));
  }
  caf::anon_send(impl_->actors.router, shard_fail_atom::value, agent, index);
}

status runtime::open_shard(shard_store s) {
  const std::string unit = shard_unit_name(s.agent, s.index);
  if (impl_->stopped) return status(errc::cancelled, "the runtime is stopped");
  if (!impl_->opt.shard_of)
    return status(errc::invalid_argument, "opening shard " + unit + ": this runtime does not serve sessions per shard");
  if (!s.store || !s.files) return status(errc::invalid_argument, "opening shard " + unit + ": no store or no files");
  {
    std::lock_guard g(impl_->shards_mu);
    if (impl_->shards.count(unit)) return status(errc::already_exists, "shard " + unit + " is open already");
  }
  runtime_impl::open_shard_actors a;
  a.sessions_dir = s.sessions_dir;
  a.files = s.files;
  if (s.log) a.commit_log = spawn_commit_log_actor(*impl_, s.files, s.dir, s.state_id, std::move(*s.log));
  a.store = spawn_store_actor(*impl_, s.store, s.agent, a.commit_log, impl_->actors.maintenance, std::max(1, s.shards));
  host_self self{*impl_->sys};
  if (a.commit_log) {  // the log hands the sessions' rows to the store (before any row arrives)
    store_routes routes;
    routes.by_agent[s.agent] = {s.store->path(), a.store};
    self->send(a.commit_log, spawned_atom::value, std::move(routes));
  }
  schedule_expiries(*impl_, self, *s.store);
  shard_unit u{s.agent, s.index, a.store, s.sessions_dir, a.commit_log, s.files};
  status out;
  // The router answers from its mailbox at once.
  self->request(impl_->actors.router, caf::infinite, shard_open_atom::value, std::move(u))
      .receive(
          [&](bool opened) {
            if (!opened) out = status(errc::locked, "shard " + unit + " is still being closed; open it once the close returned");
          },
          [&](caf::error& e) { out = status(errc::cancelled, "opening shard " + unit + ": " + self->system().render(e)); });
  std::lock_guard g(impl_->shards_mu);
  impl_->opening_units.erase(unit);
  if (!out.ok()) {
    exit_shard(self, a);
    return out;
  }
  impl_->shards[unit] = a;
  // Maintained from the next pass on (sent after the router serves it: a pass's holds reach it).
  self->send(impl_->actors.maintenance, shard_open_atom::value,
             maintenance_unit{unit, s.agent, s.sessions_dir, a.store, s.files, std::max(1, s.shards)});
  return out;
}

status runtime::close_shard(const std::string& agent, int index, std::chrono::milliseconds deadline) {
  const std::string unit = shard_unit_name(agent, index);
  if (impl_->stopped || !impl_->opt.shard_of) return {};
  {
    std::lock_guard g(impl_->shards_mu);
    impl_->closing_units.insert(unit);
  }
  struct closed {
    runtime_impl& st;
    const std::string& unit;
    ~closed() {
      std::lock_guard g(st.shards_mu);
      st.closing_units.erase(unit);
    }
  } closed_at_return{*impl_, unit};
  host_self self{*impl_->sys};
  const auto t = caf::duration(deadline);
  status out;
  // Maintenance first: from its answer on, no pass holds the shard's keys or touches its files
  // (a job of it stops at its next step). Not answered in time: the seal after the close
  // refuses what it would still write.
  self->request(impl_->actors.maintenance, t, shard_close_atom::value, unit)
      .receive([](bool) {}, [&](caf::error& e) {
        spdlog::warn("cluster: closing shard {}: the maintenance actor did not answer: {}", unit, self->system().render(e));
      });
  self->request(impl_->actors.router, t, shard_close_atom::value, agent, index)
      .receive([](bool) {},
               [&](caf::error& e) {
                 out = status(errc::timeout, fmt::format("closing shard {}: its sessions did not stop within {} ms ({}); "
                                                         "its files must be fenced",
                                                         unit, deadline.count(), self->system().render(e)));
               });
  runtime_impl::open_shard_actors a;
  {
    std::lock_guard g(impl_->shards_mu);
    auto it = impl_->shards.find(unit);
    if (it == impl_->shards.end()) return out;
    a = it->second;
    impl_->shards.erase(it);
  }
  if (status s = make_durable(self, unit, a, t); out.ok()) out = s;
  exit_shard(self, a);
  if (!out.ok()) spdlog::warn("cluster: {}", out.message());
  return out;
}

status runtime::serves(const std::string& key, const std::string& agent) const {
  if (!impl_->opt.shard_of) return {};
  const std::string unit = shard_unit_name(agent, impl_->opt.shard_of(key));
  std::lock_guard g(impl_->shards_mu);
  if (impl_->closing_units.count(unit))
    return status(errc::not_owner, fmt::format("shard {} (session {}) is leaving this node; retry, its next owner "
                                               "will serve it", unit, key));
  if (impl_->shards.count(unit) || impl_->opening_units.count(unit)) return {};
  return status(errc::not_owner, fmt::format("shard {} (session {}) is not served by this node: another node owns it, "
                                             "or it is moving", unit, key));
}

std::vector<std::string> runtime::open_shards() const {
  std::lock_guard g(impl_->shards_mu);
  std::vector<std::string> out;
  for (const auto& [unit, a] : impl_->shards) out.push_back(unit);
  return out;
}

}  // namespace sessionrt::runtime
