// shard_forward's hold (shard_forward.hpp): calls for a shard nobody serves now wait in
// hold_queue and are served or forwarded in arrival order once the owner is known.
#include "gateway/shard_forward.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gateway/node_link.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/session_messages.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

// A refusal that means "nobody serves the shard now, and nothing was done": the call is held
// (owner_unknown, not_owner) or sent nowhere (node_unreachable: the connect failed).
bool holdable_refusal(const method_outcome& out) {
  const auto* e = std::get_if<frame_error>(&out);
  if (!e || !e->retryable || !e->details.is_object()) return false;
  const auto reason = json::get_string(e->details.as_object(), "reason").value_or("");
  return reason == "not_owner" || reason == "owner_unknown" || reason == "node_unreachable";
}

}  // namespace

bool shard_forward::holds_method(std::string_view method) const {
  if (hold_for_.count() <= 0 || !core_.sink || method == "sessions.messages.subscribe") return false;
  const method_entry* m = find_method(method);
  // A held call served here runs without its connection's state (the connection may be gone):
  // chat.send, the one forwarded method that runs on the loop, does not use it.
  return m && (!m->on_loop || method == "chat.send");
}

// A forwarded call's answer: a refusal that sent nothing makes it held, anything else goes to
// the caller.
shard_forward::reply_fn shard_forward::held_on_refusal(std::shared_ptr<held_call> c) {
  return [this, c = std::move(c)](method_outcome out) mutable {
    if (holdable_refusal(out)) {
      hold(std::move(c), std::move(std::get<frame_error>(out)));
      return;
    }
    c->reply(std::move(out));
  };
}

void shard_forward::hold(std::shared_ptr<held_call> c, frame_error why) {
  bool arm = false;
  {
    std::lock_guard lock(hold_mu_);
    if (!stopped_) {
      const std::uint64_t id = ++next_hold_id_;
      if (holds_.hold(c->key, id, c->seq, c->conn, c->arrived) == hold_queue::admit::held) {
        spdlog::info("gateway: forwarding: holding {} for {} until its shard is served: {}", c->method, c->key, why.message);
        c->last = std::move(why);
        held_calls_.emplace(id, std::move(c));
        held_total_.fetch_add(1);
        arm = !hold_armed_;
        hold_armed_ = true;
      } else {
        held_full_.fetch_add(1);
        why = forward_unavailable(fmt::format("{} calls are held on this node for shards nobody serves now (the bound); "
                                              "retry: {}", opt_.max_held, why.message),
                                  "hold_full");
      }
    }
  }
  if (c) {
    refused_.fetch_add(1);
    c->reply(std::move(why));
    return;
  }
  if (arm) arm_hold(opt_.hold_tick, true);
}

// `rearm`: the periodic tick (one armed at a time); otherwise a look at once, after a held call
// was answered.
void shard_forward::arm_hold(std::chrono::milliseconds delay, bool rearm) {
  core_.sink->after(delay, [this, rearm] { hold_tick(rearm); });
}

// On the loop thread: held calls past their deadline are answered; each idle key's head is sent
// on when its owner is known (and, when it is this node, the runtime serves the shard).
void shard_forward::hold_tick(bool rearm) {
  std::vector<std::shared_ptr<held_call>> timed_out;
  std::vector<std::pair<hold_queue::entry, std::shared_ptr<held_call>>> go;
  {
    std::lock_guard lock(hold_mu_);
    if (rearm) hold_armed_ = false;
    if (stopped_) return;
    for (auto& e : holds_.expired(std::chrono::steady_clock::now())) {
      auto it = held_calls_.find(e.id);
      if (it == held_calls_.end()) continue;
      timed_out.push_back(std::move(it->second));
      held_calls_.erase(it);
    }
    for (const auto& key : holds_.idle_keys()) {
      const shard_route r = opt_.owner_of(key);
      if (r.at == shard_route::where::unknown) continue;
      hold_queue::entry e;
      if (!holds_.take(key, e)) continue;
      auto it = held_calls_.find(e.id);
      if (it == held_calls_.end()) {  // cannot be: every waiting entry has its call
        holds_.finished(key);
        continue;
      }
      if (r.at == shard_route::where::local)
        if (status served = core_.rt->serves(key, it->second->agent_id); !served.ok()) {
          holds_.put_back(std::move(e));
          continue;
        }
      go.emplace_back(std::move(e), std::move(it->second));
      held_calls_.erase(it);
    }
    if (rearm && holds_.held() > 0) hold_armed_ = true;
    else rearm = false;
  }
  for (auto& c : timed_out) {
    held_timeouts_.fetch_add(1);
    refused_.fetch_add(1);
    spdlog::warn("gateway: forwarding: {} for {} held {} ms and still not served", c->method, c->key, hold_for_.count());
    frame_error e = std::move(c->last);
    e.message = fmt::format("held {} ms (gateway.cluster.holdMs) and still not served: {}", hold_for_.count(), e.message);
    c->reply(std::move(e));
  }
  for (auto& [e, c] : go) deliver(std::move(e), std::move(c));
  if (rearm) arm_hold(opt_.hold_tick, true);
}

// A held key's head, sent to its owner as divert would have: run here on a method worker, or
// forwarded; its answer comes to delivered().
void shard_forward::deliver(hold_queue::entry e, std::shared_ptr<held_call> c) {
  const shard_route route = opt_.owner_of(c->key);
  const forward_verdict v = decide_forward(c->method, false, c->key, route);
  auto done = [this, e, c](method_outcome out) { delivered(e, c, std::move(out)); };
  switch (v.what) {
    case forward_verdict::kind::refuse: done(v.error); return;
    case forward_verdict::kind::serve_here: {
      const method_entry* m = find_method(c->method);
      if (!m) {
        done(error_of("unknown method: " + c->method));
        return;
      }
      std::function<void()> job = [this, c, m, done] {
        method_outcome out;
        try {
          method_call call{c->params, core_, c->conn, nullptr};
          out = m->handler(call);
        } catch (const std::exception& ex) {
          out = error_of(std::string("internal error: ") + ex.what(), "UNAVAILABLE");
        }
        done(std::move(out));
      };
      // Where frame dispatch would run it: the loop (chat.send) or a method worker.
      if (m->on_loop) core_.sink->after(std::chrono::milliseconds(0), std::move(job));
      else core_.sink->run_later(std::move(job));
      return;
    }
    case forward_verdict::kind::forward: break;
  }
  const auto where = parse_address(v.address);
  node_link* link = where ? link_for(v.node, *where) : nullptr;
  if (!link) {
    done(forward_unavailable(fmt::format("node {} cannot be reached at \"{}\"", v.node, v.address), "node_unreachable",
                             v.node, route.shard));
    return;
  }
  {
    std::lock_guard lock(mu_);
    ++forwarded_[c->method];
  }
  link_call call;
  call.method = c->method;
  call.params = c->params;
  call.timeout = c->method == "chat.send" ? opt_.send_timeout : opt_.call_timeout;
  call.origin = c->conn;
  call.session_key = c->key;
  call.reply = std::move(done);
  link->submit(std::move(call));
}

// A delivered head's answer (any thread): refused again, it waits at its place; otherwise the
// caller has it, and the key's next call may go (looked at at once, on the loop).
void shard_forward::delivered(hold_queue::entry e, std::shared_ptr<held_call> c, method_outcome out) {
  if (holdable_refusal(out)) {
    bool answer_now = false;
    {
      std::lock_guard lock(hold_mu_);
      if (stopped_) {
        answer_now = true;
        holds_.finished(e.key);
      } else {
        c->last = std::get<frame_error>(out);
        held_calls_.emplace(e.id, c);
        holds_.put_back(std::move(e));
      }
    }
    if (answer_now) c->reply(std::move(out));
    return;
  }
  bool more = false;
  {
    std::lock_guard lock(hold_mu_);
    holds_.finished(e.key);
    more = holds_.busy(e.key) && !stopped_;
  }
  c->reply(std::move(out));
  if (more) arm_hold(std::chrono::milliseconds(0), false);
}

}  // namespace sessionrt::gateway
