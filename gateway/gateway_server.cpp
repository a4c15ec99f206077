#include "gateway/gateway_server.hpp"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "gateway/admission.hpp"
#include "gateway/chat_delivery.hpp"
#include "gateway/chat_runs.hpp"
#include "gateway/control_ui.hpp"
#include "gateway/runner_pool.hpp"
#include "gateway/session_messages.hpp"
#include "gateway/session_notify.hpp"
#include "gateway/ws_transport.hpp"
#include "messages/ascii_text.hpp"
#include "messages/json_writer.hpp"
#include "runtime/config.hpp"
#include "runtime/simulated_model.hpp"
#include "runtime/model_setup.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/session/session_model.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

struct gateway_server::impl {
  gateway_options opt;
  std::string state_dir, token, discovery_path;
  gateway_metrics metrics;
  chat_runs runs;
  gateway_core core;
  std::unique_ptr<ws_transport> transport;
  std::unique_ptr<shard_forward> forward;  // a cluster's forwarding (enable_forwarding), or none
  session_messages messages;  // sessions.messages.subscribe (session.message events)
  std::unique_ptr<control_ui> ui;  // always set: without a root it serves nothing but checks Origins
  std::shared_ptr<runner_pool> runners;
  std::shared_ptr<providers::provider_runner> providers;  // the configured model's runner, if any
  std::unique_ptr<runtime::runtime> rt;
  std::thread loop;
  std::mutex mu;
  std::condition_variable cv;
  bool stop_requested = false, stopped = false;
};

namespace {

bool is_loopback(const std::string& bind) {
  return bind.rfind("127.", 0) == 0 || bind == "::1" || bind == "localhost";
}

std::string random_token() {
  unsigned char bytes[24];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return {};
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

struct gateway_token {
  std::string value;
  bool generated = false;  // drawn now: written to <state>/gateway.token once the gateway runs
};

// --token, $SESSIONRT_GATEWAY_TOKEN, gateway.auth.token, <state>/gateway.token, else a new one.
result<gateway_token> resolve_token(const gateway_options& o, const std::string& state_dir, storage::fs& files) {
  if (!o.token.empty()) return gateway_token{o.token};
  if (const char* env = std::getenv("SESSIONRT_GATEWAY_TOKEN"); env && *env) return gateway_token{std::string(env)};
  if (!o.config_token.empty()) return gateway_token{o.config_token};
  const std::string path = state_dir + "/gateway.token";
  if (auto text = storage::read_file(files, path, 4096); text.ok()) {
    std::string t = ascii_trimmed(*text);
    if (!t.empty()) return gateway_token{t};
  } else if (text.error().code() != errc::not_found) {
    return text.error().with_context("reading the gateway token");
  }
  std::string t = random_token();
  if (t.empty()) return status(errc::io_error, "cannot draw random bytes for a gateway token (OpenSSL RAND_bytes)");
  return gateway_token{t, true};
}

// Only a gateway that owns the state dir and listens writes the token file: a second gateway
// refused (the dir is owned, the port taken) must not replace the running one's token.
status write_generated_token(const gateway_token& token, const std::string& state_dir, storage::fs& files) {
  if (!token.generated) return {};
  const std::string path = state_dir + "/gateway.token";
  storage::replace_options ro;
  ro.mode = 0600;
  SRT_RETURN_IF_ERROR(storage::replace_file_atomic(files, path, token.value + "\n", ro));
  spdlog::info("gateway: generated a token in {} (mode 0600)", path);
  return {};
}

}  // namespace

gateway_server::gateway_server(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
gateway_server::~gateway_server() { (void)stop(); }

result<std::unique_ptr<gateway_server>> gateway_server::start(gateway_options options) {
  auto st = std::make_unique<impl>();
  st->opt = std::move(options);
  auto& o = st->opt;
  storage::fs& files = o.runtime.files ? *o.runtime.files : storage::posix_fs();
  st->state_dir = o.runtime.settings.state_dir;
  if (st->state_dir.empty()) {
    const auto env = runtime::process_environment();
    auto dir = storage::resolve_state_dir(env("SESSIONRT_STATE_DIR"), env("HOME"));
    if (!dir.ok()) return dir.error();
    st->state_dir = *dir;
    o.runtime.settings.state_dir = *dir;
  }
  SRT_RETURN_IF_ERROR(storage::ensure_dir(files, st->state_dir));
  auto token = resolve_token(o, st->state_dir, files);
  if (!token.ok()) return token.error();
  st->token = token->value;
  if (!is_loopback(o.bind))
    spdlog::warn("gateway: listening on {} beyond loopback; clients refuse plain ws:// there and will want wss:// "
                 "(put a TLS proxy in front)", o.bind);

  // The model: the host's runner, else the simulated model; remote runners take over while attached.
  std::shared_ptr<async_model_runner> local = o.runtime.async_runner;
  if (!local && o.runtime.runner) local = std::dynamic_pointer_cast<async_model_runner>(o.runtime.runner);
  std::string provider = "sessionrt", model = "sim-1";
  if (!local && !o.runtime.runner) {
    // The configured model (models.providers + agents.defaults.model), else the simulated one;
    // either way the operator is told which at start.
    auto setup = runtime::runner_for_config(o.runtime.settings, o.tools);
    if (!setup.ok()) return setup.error();
    for (const auto& line : setup->said) spdlog::info("gateway: {}", line);
    if (setup->runner) {
      st->providers = setup->runner;
      local = setup->runner;
      const auto primary = actors::default_model(o.runtime.settings);
      provider = primary.provider;
      model = primary.model;
    } else {
      runtime::simulated_model_options so;
      so.timers = &storage::real_alarms();
      local = std::make_shared<runtime::simulated_model>(storage::real_clock(), so);
    }
  }
  // A peer that went away must fail our write (EPIPE, then the connection closes), not kill
  // the process: libuv writes with write(2), which raises SIGPIPE by default.
  ::signal(SIGPIPE, SIG_IGN);
  transport_options to;
  to.bind = o.bind;
  to.port = o.port;
  to.token = st->token;
  to.max_connections = o.max_connections;
  to.max_buffered_bytes = o.max_buffered_bytes;
  to.max_payload = o.max_payload;
  to.tick_interval_ms = o.tick_interval_ms;
  to.handshake_timeout_ms = o.handshake_timeout_ms;
  to.handle_signals = o.install_signal_handlers;
  // Hostile clients: the settings' gateway.* keys (the command copies only the older ones).
  const auto& gw = o.runtime.settings.gateway;
  to.max_unauthenticated = gw.max_unauthenticated;
  to.fd_reserve = gw.fd_reserve;
  to.request_timeout_ms = gw.request_timeout_ms;
  to.message_timeout_ms = gw.message_timeout_ms;
  to.max_requests_in_flight = gw.max_requests_in_flight;
  to.max_queued_requests = gw.max_queued_requests;
  to.files = o.runtime.files;
  // Every socket costs a descriptor: the soft limit goes up to the hard one, and the transport
  // keeps gateway.fdReserve of them free for the runtime's files (gateway/admission.hpp).
  const std::size_t fd_limit = raise_fd_limit();
  const std::size_t fd_need = to.max_connections + to.max_unauthenticated + to.fd_reserve;
  if (fd_need > fd_limit)
    spdlog::warn("gateway: RLIMIT_NOFILE is {} but gateway.maxConnections + maxUnauthenticated + fdReserve = {}; "
                 "sockets past {} are refused at accept", fd_limit, fd_need, fd_limit > to.fd_reserve ? fd_limit - to.fd_reserve : 0);
  st->core.metrics = &st->metrics;
  st->core.runs = &st->runs;
  st->core.messages = &st->messages;
  st->core.bind = o.bind;
  st->core.default_provider = provider;
  st->core.default_model = model;
  if (o.runtime.time) st->core.time = o.runtime.time;
  st->core.started_ms = st->core.now_ms();
  st->transport = std::make_unique<ws_transport>(to, st->core);
  st->core.sink = st->transport.get();
  if (local || !o.runtime.runner) {
    st->runners = std::make_shared<runner_pool>(local, st->transport.get(), &st->metrics);
    o.runtime.async_runner = st->runners;
    o.runtime.runner = nullptr;
  } else {
    // A synchronous host runner: the runtime runs it on its pool; remote runners still attach.
    st->runners = std::make_shared<runner_pool>(nullptr, st->transport.get(), &st->metrics);
  }
  st->core.runners = st->runners.get();
  SRT_RETURN_IF_ERROR(st->transport->listen());
  st->core.port = st->transport->port();
  {
    // The web Control UI next to the protocol, and the Origin check on upgrades (control_ui.hpp).
    const auto& gw_ui = o.runtime.settings.gateway;
    control_ui_options uo;
    if (gw_ui.control_ui_enabled || !o.control_ui_root.empty()) {
      auto where = find_control_ui(o.control_ui_root, gw_ui.control_ui_root,
                                   o.find_installed_control_ui ? default_openclaw_package_dirs() : std::vector<std::string>{});
      if (where.error) {
        st->transport->request_stop();
        st->transport->run();
        return status(errc::invalid_argument, where.said);
      }
      spdlog::info("gateway: {}", where.said);
      uo.root = where.root;
    } else {
      spdlog::info("gateway: no Control UI served (gateway.controlUi.enabled is false)");
    }
    uo.server_version = st->core.server_version;
    uo.assistant_agent_id = actors::default_agent_of(o.runtime.settings.routing);
    uo.allowed_origins = gw_ui.control_ui_allowed_origins;
    uo.bind = o.bind;
    uo.port = st->core.port;
    st->ui = std::make_unique<control_ui>(std::move(uo));
    st->core.ui = st->ui.get();
  }

  // Streamed replies become chat deltas; a turn's end on the bus lets its held closing event go
  // (chat_delivery.hpp); store writes and passivations are counted.
  impl* raw = st.get();
  o.runtime.subscriptions.push_back(
      {{{"reply.delta", "turn.completed", "turn.failed", "turn.cancelled"}, "", ""}, [raw](const lifecycle_event& e) {
         if (e.type == "reply.delta") chat_reply_delta(raw->core, e);
         else chat_turn_ended(raw->core, e);
       }});
  // Every stored message, to the sessions.messages.subscribe subscribers of its session.
  o.runtime.subscriptions.push_back({{{"message.appended"}, "", ""}, [raw](const lifecycle_event& e) {
                                       session_message_appended(raw->core, e);
                                     }});
  o.runtime.subscriptions.push_back({{{"store.flushed", "session.passivated"}, "", ""}, [raw](const lifecycle_event& e) {
                                       if (e.type == "store.flushed") raw->metrics.store_writes.fetch_add(1);
                                       else raw->metrics.passivations.fetch_add(1);
                                     }});
  auto rt = runtime::runtime::start(o.runtime);
  if (!rt.ok()) {
    st->transport->request_stop();
    st->transport->run();
    return rt.error();
  }
  st->rt = std::move(*rt);
  st->core.rt = st->rt.get();
  if (status w = write_generated_token(*token, st->state_dir, files); !w.ok()) {
    st->transport->request_stop();
    st->transport->run();
    (void)st->rt->stop();
    return w.with_context("writing the gateway token");
  }
  st->transport->on_signal = [raw] {
    std::lock_guard lock(raw->mu);
    raw->stop_requested = true;
    raw->cv.notify_all();
  };
  st->loop = std::thread([t = st->transport.get()] { t->run(); });

  st->discovery_path = st->state_dir + "/gateway.json";
  bj::object disc{{"pid", static_cast<std::int64_t>(::getpid())},
                  {"port", st->core.port},
                  {"bind", o.bind},
                  {"startedAt", st->core.started_ms}};
  storage::replace_options ro;
  ro.mode = 0600;
  if (auto w = storage::replace_file_atomic(files, st->discovery_path, json::to_pretty(disc) + "\n", ro); !w.ok())
    spdlog::warn("gateway: could not write {}: {}", st->discovery_path, w.message());
  spdlog::info("gateway: listening on ws://{}:{} (state {})", o.bind, st->core.port, st->state_dir);
  return std::unique_ptr<gateway_server>(new gateway_server(std::move(st)));
}

int gateway_server::port() const { return impl_->core.port; }
const std::string& gateway_server::bind() const { return impl_->opt.bind; }
const std::string& gateway_server::token() const { return impl_->token; }
std::string gateway_server::url() const {
  const bool v6 = impl_->opt.bind.find(':') != std::string::npos;
  return "ws://" + (v6 ? "[" + impl_->opt.bind + "]" : impl_->opt.bind) + ":" + std::to_string(port());
}
runtime::runtime& gateway_server::rt() { return *impl_->rt; }
void gateway_server::set_extra_metrics(std::function<std::string()> lines) { impl_->metrics.set_extra(std::move(lines)); }

shard_forward& gateway_server::enable_forwarding(forward_options options) {
  impl_->forward = std::make_unique<shard_forward>(impl_->core, std::move(options));
  // The dispatcher reads it on the loop thread only.
  impl_->transport->after(std::chrono::milliseconds(0), [im = impl_.get(), f = impl_->forward.get()] { im->core.forward = f; });
  return *impl_->forward;
}

void gateway_server::wait() {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return impl_->stop_requested || impl_->stopped; });
}

status gateway_server::stop() {
  if (!impl_) return {};
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopped) return {};
    impl_->stopped = true;
    impl_->cv.notify_all();
  }
  // The links to other nodes end first: their answers and events go through the transport.
  if (impl_->forward) impl_->forward->stop();
  impl_->transport->request_stop();
  // Runs are cancelled or finish, stores flushed, locks released; the workers waiting on the
  // runtime then return and the loop can end.
  status result = impl_->rt ? impl_->rt->stop() : status{};
  if (impl_->loop.joinable()) impl_->loop.join();
  // A job still on a method worker (a delivery after the last run, a late call) uses the
  // runtime: it returns before the runtime is destroyed (it is declared after the transport).
  impl_->transport->wait_idle();
  storage::fs& files = impl_->opt.runtime.files ? *impl_->opt.runtime.files : storage::posix_fs();
  if (!impl_->discovery_path.empty()) (void)files.unlink(impl_->discovery_path);
  return result;
}

}  // namespace sessionrt::gateway
