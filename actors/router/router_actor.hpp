// router_actor: the front door (SPEC §2). It turns each inbound chat event into a sessionKey
// with the routing rules [R§1.2], keeps at most one live session actor per key, spawns it on
// first use (with the key's row from the agent's store actor) and passivates it when it idles
// (session.passivateIdleMs), when it expires (timer) or when too many are live
// (session.maxLiveSessions, least recently used first). Events for one key are delivered in
// arrival order: while a key's actor is being spawned or is passivating, its events wait in
// the router, and go to the next actor in order.
//   (chat, chat_event) -> turn_outcome      delegated to the key's session actor (as a
//   (chat, chat_event_ptr) -> turn_outcome  chat_event_ptr: the event is not moved again)
//   (system, system_event) -> turn_outcome  checked (system_event_check.hpp: a refusal names
//                                           the key or the limit), then delegated to the key's
//                                           session actor
//   (passivate, key, why)   (passivated, key)
//   (tick)  idle / LRU sweep by the clock   (stop) -> bool  once every live actor passivated
//   (tick, settle) -> bool  virtual time: a sweep, answered once nothing passivates
//   (settle) -> settle_report  once every live session handled what was sent to it before:
//                       what they wait on, summed (session_wait.hpp)
//   (stats) -> router_stats  slot counts, turns delegated, memoized routes (router_stats.hpp)
//   (passivate, key, why, settle) -> bool  true once the key has no live actor (it passivated,
//                                   or none was live); false while its actor is starting
//   (hold, key) -> bool    session administration: true once the key has no actor, and it gets
//                          none until (release, key); what arrives meanwhile waits, in order
//   (hold, key, settle) -> bool  true once a hold on the key is in place (at once if one is): a
//                          test's signal that an administration call's hold arrived
// Sessions served per shard (a cluster node, docs/cluster.md; router_config::shard_of set): no
// agent store serves keys; a key goes to the opened shard shard_of(key) names, and its session
// reads and writes that shard's store, dir, commit log and files. A key of a shard this node
// has not opened is refused with errc::not_owner (the message names "<agent>/<index>"), which a
// gateway forwards to the shard's owner; a key of a shard announced as opening waits, in
// arrival order, until it opened (or is refused when the open failed).
//   (shopen, agent, index)  the shard is being opened here: its keys wait
//   (shopen, shard_unit) -> bool  the shard serves from now on; what waited is delivered
//   (shfail, agent, index)  its open failed: what waited is refused (not_owner)
//   (shclose, agent, index) -> bool  true once none of its keys has an actor (each is held:
//                          a running turn ends first); then the shard is gone and what arrived
//                          meanwhile is refused (not_owner). The caller bounds the wait.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string_view>

#include "actors/caf_types.hpp"
#include "actors/events/event_hub.hpp"
#include "actors/router/router_stats.hpp"
#include "actors/session/session_actor.hpp"

namespace sessionrt::actors {

// Serializable like the other plain values that cross actors (caf_types.hpp); registered in
// runtime_start.cpp.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, router_stats& x) {
  return f(caf::meta::type_name("router_stats"), x.slots.slots, x.slots.open, x.slots.live, x.slots.passivating,
           x.slots.queued, x.slots.waiting, x.slots.trimmed, x.turns, x.routes);
}

struct agent_stores {
  std::map<std::string, store_actor_type> store;   // agentId -> its store actor
  std::map<std::string, std::string> sessions_dir;  // agentId -> <state>/agents/<id>/sessions
};

// One opened shard: what an agent's store is to an unsharded router.
struct shard_unit {
  std::string agent;
  int index = 0;
  store_actor_type store;
  std::string sessions_dir;     // <shard dir>/agents/<agent>/sessions
  commit_log_actor commit_log;  // the shard's own (durability batch), else empty
  storage::fs* files = nullptr; // the shard's files (a guard before each write); outlives the unit
};

using shard_open_atom = caf::atom_constant<caf::atom("shopen")>;
using shard_fail_atom = caf::atom_constant<caf::atom("shfail")>;
using shard_close_atom = caf::atom_constant<caf::atom("shclose")>;

// The name sessions of a shard are filed under in the router ("main/017"-like, never an agent id).
std::string shard_unit_name(const std::string& agent, int index);

struct router_config {
  session_core_deps core;  // sessions_dir / agent_id are filled per agent
  agent_stores agents;
  commit_log_actor commit_log;  // durability batch only
  event_bus_actor bus;
  timer_actor_type timers;
  std::shared_ptr<event_hub> hub;
  bool self_scheduling = true;  // false under virtual time: the runtime sends ticks
  // The model plumbing the sessions share (session_actor_deps).
  async_model_runner* runner = nullptr;
  model_gate* gate = nullptr;
  blocking_work* pool = nullptr;
  alarms* timers_clock = nullptr;
  // Set: sessions are served per shard (above); the index of a store key's shard
  // (cluster::shard_of, injected: this layer cannot see cluster/).
  std::function<int(std::string_view key)> shard_of;
};

// The signatures of the header comment, one per line.
using router_actor_type = caf::typed_actor<
    caf::replies_to<chat_atom, chat_event>::with<turn_outcome>,
    caf::replies_to<chat_atom, chat_event_ptr>::with<turn_outcome>,
    caf::replies_to<system_atom, system_event>::with<turn_outcome>,
    caf::reacts_to<passivate_atom, std::string, std::string>,  // key, why
    caf::reacts_to<passivated_atom, std::string>,               // key
    caf::replies_to<passivate_atom, std::string, std::string, settle_atom>::with<bool>,
    caf::replies_to<hold_atom, std::string>::with<bool>,
    caf::replies_to<hold_atom, std::string, settle_atom>::with<bool>,
    caf::reacts_to<release_atom, std::string>,
    caf::reacts_to<tick_atom>,
    caf::replies_to<tick_atom, settle_atom>::with<bool>,
    caf::replies_to<stop_atom>::with<bool>,
    caf::replies_to<settle_atom>::with<settle_report>,
    caf::replies_to<stats_atom>::with<router_stats>,
    caf::reacts_to<shard_open_atom, std::string, int>,
    caf::replies_to<shard_open_atom, shard_unit>::with<bool>,
    caf::reacts_to<shard_fail_atom, std::string, int>,
    caf::replies_to<shard_close_atom, std::string, int>::with<bool>>;

// Spawns the router; its state is private to router_actor.cpp.
router_actor_type spawn_router(caf::actor_system& sys, router_config cfg);

}  // namespace sessionrt::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::shard_unit)  // a pointer to this process's files
