#include "gateway/runner_pool.hpp"

#include <fmt/format.h>

#include "messages/json_access.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

std::uint64_t runner_pool::pick_locked() const {
  std::uint64_t best = 0;
  std::size_t load = 0;
  for (const auto& [conn, n] : runners_)
    if (best == 0 || n < load) {
      best = conn;
      load = n;
    }
  return best;
}

void runner_pool::send_request(std::uint64_t conn, const std::string& id, const model_request& r) {
  sink_->event_to(conn, "sessionrt.turn.request",
                  bj::object{{"callId", id},
                             {"sessionKey", r.session_key},
                             {"sessionId", r.session_id},
                             {"purpose", r.purpose},
                             {"systemPrompt", r.system_prompt},
                             {"messages", r.messages},
                             {"provider", r.provider},
                             {"model", r.model},
                             {"contextWindow", r.context_window},
                             {"maxTokens", r.max_tokens},
                             {"stream", static_cast<bool>(r.on_text)}});
}

void runner_pool::start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
                        std::shared_ptr<const cancellation> cancel) {
  std::string id;
  std::uint64_t conn = 0;
  {
    std::lock_guard lock(mu_);
    conn = pick_locked();
    if (conn != 0) {
      id = fmt::format("call-{}", ++next_id_);
      calls_[id] = call{request, done, conn, false};
      ++runners_[conn];
    }
  }
  if (conn == 0) {
    if (!local_) {
      done->complete(status(errc::unsupported, "no model runner is attached to the gateway"));
      return;
    }
    local_->start(std::move(request), std::move(done), std::move(cancel));
    return;
  }
  metrics_->runner_calls.fetch_add(1);
  cancel->on_cancel([this, id] {
    std::uint64_t owner = 0;
    {
      std::lock_guard lock(mu_);
      auto it = calls_.find(id);
      if (it == calls_.end()) return;
      owner = it->second.conn;
      if (auto r = runners_.find(owner); r != runners_.end() && r->second > 0) --r->second;
      calls_.erase(it);
    }
    sink_->event_to(owner, "sessionrt.turn.cancel", bj::object{{"callId", id}});
  });
  send_request(conn, id, *request);
}

void runner_pool::attach(std::uint64_t conn) {
  std::lock_guard lock(mu_);
  runners_.emplace(conn, 0);
}

std::size_t runner_pool::attached() const {
  std::lock_guard lock(mu_);
  return runners_.size();
}

void runner_pool::detach(std::uint64_t conn) {
  std::vector<std::pair<std::string, std::uint64_t>> moved;
  std::vector<std::shared_ptr<model_completion>> failed;
  {
    std::lock_guard lock(mu_);
    if (runners_.erase(conn) == 0) return;
    for (auto it = calls_.begin(); it != calls_.end();) {
      if (it->second.conn != conn) {
        ++it;
        continue;
      }
      const std::uint64_t next = it->second.streamed ? 0 : pick_locked();
      if (next != 0) {
        it->second.conn = next;
        ++runners_[next];
        moved.emplace_back(it->first, next);
        ++it;
      } else {
        failed.push_back(it->second.done);
        it = calls_.erase(it);
      }
    }
  }
  for (auto& done : failed) {
    metrics_->runner_failures.fetch_add(1);
    done->complete(status(errc::io_error, "the model runner disconnected before it answered, and no other runner "
                                          "could take the call"));
  }
  for (auto& [id, next] : moved) {
    metrics_->runner_failovers.fetch_add(1);
    std::shared_ptr<const model_request> req;
    {
      std::lock_guard lock(mu_);
      auto it = calls_.find(id);
      if (it == calls_.end()) continue;
      req = it->second.request;
    }
    send_request(next, id, *req);
  }
}

std::optional<std::string> runner_pool::result_params_problem(const bj::object& params) {
  if (!json::get_string(params, "callId")) return "must have required property 'callId'";
  const auto* delta = params.if_contains("delta");
  const auto* message = params.if_contains("message");
  const auto* error = params.if_contains("error");
  if (delta && !delta->is_string()) return "at /delta: must be string";
  if (message && !message->is_object()) return "at /message: must be object";
  if (error && !error->is_string()) return "at /error: must be string";
  if (!delta && !message && !error) return "one of delta, message, error is required";
  return std::nullopt;
}

status runner_pool::on_result(std::uint64_t conn, const bj::object& params) {
  if (auto problem = result_params_problem(params))
    return status(errc::invalid_argument, "invalid sessionrt.turn.result params: " + *problem);
  const auto id = json::get_string(params, "callId");
  std::shared_ptr<const model_request> req;
  std::shared_ptr<model_completion> done;
  const auto* delta = params.if_contains("delta");
  const auto* message = params.if_contains("message");
  const auto* error = params.if_contains("error");
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(std::string(*id));
    if (it == calls_.end()) return status(errc::not_found, "no call " + std::string(*id) + " is waiting (cancelled, answered or unknown)");
    if (it->second.conn != conn) return status(errc::invalid_argument, "call " + std::string(*id) + " was given to another runner");
    req = it->second.request;
    done = it->second.done;
    if (delta) it->second.streamed = true;
    if (message || error) {
      if (auto r = runners_.find(conn); r != runners_.end() && r->second > 0) --r->second;
      calls_.erase(it);
    }
  }
  if (delta && req->on_text) req->on_text(delta->get_string());
  if (message) {
    bj::object m = message->get_object();
    if (!m.contains("role")) m["role"] = "assistant";
    done->complete(std::move(m));
  } else if (error) {
    done->complete(status(errc::io_error, std::string(error->get_string())));
  }
  return {};
}

}  // namespace sessionrt::gateway
