#include "gateway/gateway_client.hpp"

#include "messages/ids.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;
using steady = std::chrono::steady_clock;

namespace {
std::chrono::milliseconds left(steady::time_point deadline) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
  return d.count() < 0 ? std::chrono::milliseconds(0) : d;
}
}  // namespace

result<std::unique_ptr<gateway_client>> gateway_client::connect(const gateway_client_options& options) {
  auto deadline = steady::now() + options.connect_timeout;
  ws_connect_options wo;
  wo.host = options.host;
  wo.port = options.port;
  wo.timeout = options.connect_timeout;
  wo.max_message_bytes = options.max_message_bytes;
  auto ws = ws_client::connect(wo);
  if (!ws) return ws.error();
  return handshake(std::move(*ws), options.identity, left(deadline));
}

result<std::unique_ptr<gateway_client>> gateway_client::handshake(std::unique_ptr<ws_client> socket,
                                                                  const client_identity& who,
                                                                  std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  std::unique_ptr<gateway_client> c(new gateway_client(std::move(socket)));
  auto first = c->ws_->receive_text(left(deadline));
  if (!first) {
    if (first.error().code() == errc::timeout)
      return status(errc::timeout, "the gateway sent no connect.challenge within " +
                                       std::to_string(timeout.count()) + " ms");
    return first.error().with_context("waiting for connect.challenge");
  }
  auto frame = parse_server_frame(*first);
  if (!frame) return frame.error();
  if (frame->type != server_frame::kind::event || frame->event != "connect.challenge")
    return status(errc::corrupt, "the gateway's first frame is not a connect.challenge event");
  const bj::object* p = frame->payload.if_object();
  auto nonce = p ? json::get_string(*p, "nonce") : std::nullopt;
  if (!nonce || nonce->empty()) return status(errc::corrupt, "connect.challenge has no \"nonce\"");
  c->nonce_ = std::string(*nonce);

  auto hello = c->request("connect", connect_params(who), left(deadline));
  if (!hello) return hello.error();
  if (!hello->is_object()) return status(errc::corrupt, "the gateway's hello-ok payload is not an object");
  c->hello_ = hello->as_object();
  return c;
}

result<std::string> gateway_client::send_request(const std::string& method, const bj::value& params) {
  std::string id = std::to_string(next_id_++) + ":" + new_uuid_v4();
  SRT_RETURN_IF_ERROR(ws_->send_text(request_frame(id, method, params)).with_context("sending " + method));
  methods_[id] = method;
  return id;
}

result<bj::value> gateway_client::wait_response(const std::string& id, std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  std::string method = methods_.count(id) ? methods_[id] : std::string("request ") + id;
  for (;;) {
    auto it = responses_.find(id);
    if (it != responses_.end()) {
      server_frame f = std::move(it->second);
      responses_.erase(it);
      methods_.erase(id);
      if (f.ok) return std::move(f.payload);
      last_error_ = f.error;
      return to_status(f.error, method);
    }
    in_wait_ = true;
    status st = read_one(deadline);
    in_wait_ = false;
    if (!st.ok()) {
      if (st.code() == errc::timeout)
        return status(errc::timeout, "no answer to " + method + " within " + std::to_string(timeout.count()) + " ms");
      return st.with_context("waiting for the answer to " + method);
    }
  }
}

result<bj::value> gateway_client::request(const std::string& method, const bj::value& params,
                                          std::chrono::milliseconds timeout) {
  auto id = send_request(method, params);
  if (!id) return id.error();
  return wait_response(*id, timeout);
}

result<gateway_event> gateway_client::next_event(std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  for (;;) {
    if (!events_.empty()) {
      gateway_event e = std::move(events_.front());
      events_.pop_front();
      return e;
    }
    if (!seq_error_.ok()) return std::exchange(seq_error_, status());
    SRT_RETURN_IF_ERROR(read_one(deadline));
  }
}

status gateway_client::read_one(steady::time_point deadline) {
  auto text = ws_->receive_text(left(deadline));
  if (!text) return text.error();
  auto f = parse_server_frame(*text);
  if (!f) return f.error();
  if (f->type == server_frame::kind::response) {
    // A response nobody asked for (or asked for and abandoned) is dropped, as OpenClaw's client does.
    if (methods_.count(f->id)) responses_[f->id] = std::move(*f);
    return status::success();
  }
  return file_event(std::move(*f));
}

status gateway_client::file_event(server_frame f) {
  status gap = seq_.observe(f);
  if (!gap.ok() && seq_error_.ok()) seq_error_ = gap;
  gateway_event e{std::move(f.event), std::move(f.payload), f.seq};
  if (handler_ && in_wait_) handler_(e);
  else events_.push_back(std::move(e));
  return status::success();
}

}  // namespace sessionrt::gateway
