// subagent_actor: spawns sub-agent sessions (subagent_spawn.hpp) for the runtime and for any
// actor that asks:
//   (spawn, parent_key, subagent_spec) -> turn_outcome
// It reads the parent's row from its agent's store, plans the child (depth limit, spawn
// fields), writes the forked transcript when spec.fork (fork_planner.hpp: the parent's
// active branch, or an isolated start when it is too large), stores the child's row, publishes
// session.created for it, runs the task as the child's first turn through the router, then
// publishes subagent.completed under the parent's key and answers with the child's outcome
// (session_key = the child's key). A refusal is an outcome with the error, and nothing is
// stored. Spawn it detached: a fork reads and fsyncs files.
// Sessions per shard (a cluster node, docs/cluster.md): `place_of` finds a key's store, sessions
// dir and files (its shard's, when the shard is open here), and the child's key is drawn so that
// it falls in the parent's shard (`shard_of`): the child lives where its parent does, on the
// node running the parent's turn, and every node routes it there. A child of another agent
// falls in that agent's shard of the same index, served only if this node holds it (else the
// spawn is refused with errc::not_owner).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "actors/caf_types.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/router/router_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/runtime_settings.hpp"
#include "messages/ids.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

// Where a key's row and files are (sessions per shard); not_owner when its shard is not here.
struct subagent_place {
  store_actor_type store;
  std::string sessions_dir;
  storage::fs* files = nullptr;
};

struct subagent_actor_config {
  const runtime_settings* settings = nullptr;
  storage::fs* files = nullptr;
  clock* time = nullptr;
  std::map<std::string, store_actor_type> stores;  // agentId -> its store actor
  std::map<std::string, std::string> sessions_dir;  // agentId -> its sessions dir
  router_actor_type router;                         // takes (chat, chat_event) -> turn_outcome
  event_bus_actor bus;
  std::shared_ptr<event_hub> hub;
  session_ids ids;  // the child's key and session id
  // Set for sessions per shard (then stores, sessions_dir and files are not used).
  std::function<result<subagent_place>(const std::string& key, const std::string& agent)> place_of;
  std::function<int(std::string_view key)> shard_of;
  // Spawns per parent so far (the actor's own, read and written in its handlers only): two
  // children of one parent in one millisecond get different seeded ids.
  mutable std::map<std::string, std::uint64_t> spawns;
};

// The signature of the header comment.
using subagent_actor_type = caf::typed_actor<caf::replies_to<spawn_atom, std::string, subagent_spec>::with<turn_outcome>>;

subagent_actor_type::behavior_type subagent_actor(subagent_actor_type::pointer self, subagent_actor_config cfg);

}  // namespace sessionrt::actors
