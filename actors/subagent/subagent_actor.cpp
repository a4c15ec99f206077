#include "actors/session/session_model.hpp"
#include "actors/subagent/subagent_actor.hpp"

#include <fmt/format.h>

#include "actors/events/event_bus.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/compaction_planner.hpp"
#include "actors/session/fork_planner.hpp"
#include "actors/subagent/subagent_spawn.hpp"
#include "messages/ids.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::actors {
namespace {

using cfg_ptr = std::shared_ptr<const subagent_actor_config>;
using self_ptr = subagent_actor_type::pointer;

turn_outcome refused(const std::string& key, status why) {
  turn_outcome out;
  out.session_key = key;
  out.st = std::move(why);
  return out;
}

std::string agent_of(const subagent_actor_config& cfg, const std::string& key) {
  if (auto parsed = parse_agent_session_key(key)) return parsed->agent_id;
  return default_agent_of(cfg.settings->routing);
}

// The store, sessions dir and files of `key` (of `agent`): its shard's, or its agent's.
result<subagent_place> place_for(const subagent_actor_config& cfg, const std::string& key, const std::string& agent) {
  if (cfg.place_of) return cfg.place_of(key, agent);
  auto it = cfg.stores.find(agent);
  if (it == cfg.stores.end())
    return status(errc::invalid_argument, fmt::format("no agent {} is configured (agents.list)", agent));
  return subagent_place{it->second, cfg.sessions_dir.at(agent), cfg.files};
}

// The parent's transcript: its row's sessionFile (confined to its sessions dir), else <id>.jsonl.
std::string parent_transcript(const subagent_place& parent, const session_entry& row) {
  return storage::row_transcript_path(*parent.files, parent.sessions_dir, row.session_id().value_or(""),
                                      row.session_file());
}

// The child's transcript: forks take pi's fork name (<ISO>_<id>.jsonl), others <id>.jsonl.
result<std::string> child_transcript(const subagent_actor_config& cfg, const subagent_place& child,
                                     const subagent_plan& plan, bool fork) {
  const std::string& dir = child.sessions_dir;
  return fork ? storage::successor_transcript_path(dir, plan.session_id, cfg.time->now_ms())
              : storage::transcript_path(dir, plan.session_id);
}

// The parent's row is here: plan, fork, store, run the task.
// The <uuid> of the child's key: the seeded one; with shards, the first seeded draw whose key
// falls in the parent's shard (one in `shards` does; the first 64 Ki draws miss all with a
// chance below e^-64 at 4096 shards).
result<std::string> child_uuid(const subagent_actor_config& cfg, const std::string& parent_key,
                               const std::string& child_agent, std::int64_t now, const std::string& nth) {
  std::string uuid = cfg.ids.next(parent_key, now, nth, "subagent key");
  if (!cfg.shard_of) return uuid;
  const int want = cfg.shard_of(parent_key);
  for (int draw = 1; cfg.shard_of(build_subagent_key(child_agent, uuid)) != want; ++draw) {
    if (draw > (1 << 16))
      return status(errc::internal, fmt::format("no sub-agent key of {} falls in the shard of {}", child_agent, parent_key));
    uuid = cfg.ids.next(parent_key, now, nth + "/" + std::to_string(draw), "subagent key");
  }
  return uuid;
}

void spawn_from(self_ptr self, const cfg_ptr& cfg, const std::string& parent_key,
                const std::string& parent_agent, const subagent_place& parent_place, const subagent_spec& spec,
                const entry_reply& parent, caf::response_promise rp) {
  if (!parent.error.empty())
    return void(rp.deliver(refused(parent_key, status(errc::corrupt, "the parent's row cannot be read: " + parent.error))));
  const std::string child_agent = spec.agent_id.empty() ? parent_agent : normalize_agent_id(spec.agent_id);
  if (!cfg->place_of && !cfg->stores.count(child_agent))
    return void(rp.deliver(
        refused(parent_key, status(errc::invalid_argument, fmt::format("no agent {} is configured (agents.list)", child_agent)))));
  const auto& settings = *cfg->settings;
  subagent_limits limits{settings.subagents.max_spawn_depth, settings.session.max_message_bytes};
  const std::int64_t now = cfg->time->now_ms();
  // Seeded: the child's key uuid and session id follow from the parent's key and the time.
  const std::string nth = std::to_string(++cfg->spawns[parent_key]);
  auto uuid = child_uuid(*cfg, parent_key, child_agent, now, nth);
  if (!uuid.ok()) return void(rp.deliver(refused(parent_key, uuid.error())));
  subagent_ids ids{*uuid, cfg->ids.next(parent_key, now, nth, "subagent"), std::string()};
  auto plan = plan_subagent(parent_key, parent_agent, parent.found ? &parent.entry : nullptr, spec, limits, ids, now);
  if (!plan.ok()) return void(rp.deliver(refused(parent_key, plan.error())));
  auto child = place_for(*cfg, plan->child_key, plan->child_agent);
  if (!child.ok()) return void(rp.deliver(refused(parent_key, child.error())));
  auto path = child_transcript(*cfg, *child, *plan, spec.fork);
  if (!path.ok()) return void(rp.deliver(refused(plan->child_key, path.error())));
  plan->row.set_session_file(*path);
  std::string mode;
  if (spec.fork) {
    fork_request fr;
    fr.parent_path = parent_transcript(parent_place, parent.entry);
    fr.child_path = *path;
    fr.child_header.id = plan->session_id;
    fr.child_header.timestamp_ms = cfg->time->now_ms();
    fr.child_header.cwd = settings.workspace_dir.empty() ? child->sessions_dir : settings.workspace_dir;
    fr.child_header.session_key = plan->child_key;
    const std::int64_t window = resolve_session_model(settings, plan->child_agent, &plan->row).context_window;
    fr.max_tokens = fork_token_limit(window, effective_reserve(settings.compaction, window));
    auto forked = write_fork(*child->files, fr);
    if (!forked.ok()) return void(rp.deliver(refused(plan->child_key, forked.error())));
    mode = std::string(fork_mode_name(forked->mode));
    if (forked->mode == fork_mode::isolated) plan->row.clear_forked_from_parent();  // nothing was copied
  }
  auto store = child->store;
  self->send(store, put_atom::value, plan->child_key, plan->row);
  auto shared_plan = std::make_shared<subagent_plan>(std::move(*plan));
  // Answered after the put (same sender, same store): the row is there before the router
  // asks the store for it. No timeouts: a store answers every request from its mailbox, and
  // the router every turn (a refusal, a stop and a model timeout are outcomes).
  self->request(store, caf::infinite, get_atom::value, shared_plan->child_key)
      .then(
          [self, cfg, parent_key, parent_agent, shared_plan, mode, task = spec.task, rp](entry_reply&) mutable {
            publish(self, cfg->bus, *cfg->hub, subagent_created_event(parent_key, *shared_plan, mode, cfg->time->now_ms()));
            chat_event first;
            first.session_key = shared_plan->child_key;
            first.agent_id = shared_plan->child_agent;
            first.text = std::move(task);
            self->request(cfg->router, caf::infinite, chat_atom::value, std::move(first))
                .then(
                    [self, cfg, parent_key, parent_agent, shared_plan, mode, rp](turn_outcome& out) mutable {
                      publish(self, cfg->bus, *cfg->hub,
                              subagent_completed_event(parent_key, parent_agent, *shared_plan, out, mode,
                                                       cfg->time->now_ms()));
                      rp.deliver(std::move(out));
                    },
                    [self, shared_plan, rp](caf::error& err) mutable {
                      rp.deliver(refused(shared_plan->child_key,
                                         status(errc::io_error, "the router did not answer the sub-agent's task: " +
                                                                    self->system().render(err))));
                    });
          },
          [self, shared_plan, rp](caf::error& err) mutable {
            rp.deliver(refused(shared_plan->child_key,
                               status(errc::io_error, "storing the sub-agent's row: " + self->system().render(err))));
          });
}

caf::result<turn_outcome> on_spawn(self_ptr self, const cfg_ptr& cfg, const std::string& parent_key,
                                   subagent_spec spec) {
  if (!is_plausible_session_key(parent_key))
    return refused(parent_key, status(errc::invalid_argument,
                                      fmt::format("parent session key {:?} is not a valid key", parent_key.substr(0, 80))));
  const std::string key = normalize_session_key(parent_key);
  const std::string agent = agent_of(*cfg, key);
  auto place = place_for(*cfg, key, agent);
  if (!place.ok()) return refused(key, place.error());
  auto rp = self->make_response_promise();
  self->request(place->store, caf::infinite, get_atom::value, key)  // a store answers every request
      .then([self, cfg, key, agent, place = *place, spec, rp](entry_reply& row) {
              spawn_from(self, cfg, key, agent, place, spec, row, rp);
            },
            [self, key, rp](caf::error& err) mutable {
              rp.deliver(refused(key, status(errc::io_error, "reading the parent's row: " + self->system().render(err))));
            });
  return rp;
}

}  // namespace

subagent_actor_type::behavior_type subagent_actor(self_ptr self, subagent_actor_config cfg) {
  auto shared = std::make_shared<const subagent_actor_config>(std::move(cfg));
  return {
      [self, shared](spawn_atom, const std::string& parent_key, subagent_spec& spec) {
        return on_spawn(self, shared, parent_key, std::move(spec));
      },
  };
}

}  // namespace sessionrt::actors
