#include "gateway/remote_commands.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <ostream>

#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"
#include "gateway/gateway_client.hpp"
#include "gateway/gateway_server.hpp"
#include "messages/ascii_text.hpp"
#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;
using namespace std::chrono_literals;

namespace {

result<std::unique_ptr<gateway_client>> connect_to(const std::string& host, std::uint16_t port, const std::string& token,
                                                   const std::string& scope) {
  gateway_client_options o;
  o.host = host;
  o.port = port;
  o.identity.token = token;
  o.identity.client_id = "cli";
  o.identity.scopes = {scope};
  o.connect_timeout = 10s;
  auto c = gateway_client::connect(o);
  if (!c && token.empty())
    return c.error().with_context(fmt::format("gateway ws://{}:{} (no token: pass --token or set SESSIONRT_GATEWAY_TOKEN; "
                                              "<state>/gateway.token has none)", host, port));
  if (!c) return c.error().with_context(fmt::format("gateway ws://{}:{}", host, port));
  return c;
}

// Text of an assistant / user message in chat.history's shape (a string, or text parts).
std::string message_text(const bj::value& m) {
  const bj::object* o = m.if_object();
  if (!o) return {};
  const bj::value* c = o->if_contains("content");
  if (!c) return std::string(json::get_string(*o, "summary").value_or(""));
  if (c->is_string()) return std::string(c->get_string());
  std::string out;
  if (const bj::array* parts = c->if_array())
    for (const auto& p : *parts)
      if (p.is_object() && json::get_string(p.get_object(), "type").value_or("") == "text")
        out += std::string(json::get_string(p.get_object(), "text").value_or(""));
  return out;
}

// A connection to the live gateway of the state dir, or to an in-process one started for this
// command (kept alive by `local`) when none is live.
struct session_link {
  std::unique_ptr<gateway_server> local;
  std::unique_ptr<gateway_client> client;
  std::string state_dir;
};

struct link_options {
  runtime::offline_options where;
  std::string token;
  std::string session = "main";
  std::string key_arg;                 // compact KEY / tail KEY
  CLI::Option* session_opt = nullptr;  // to tell --session given from its default
  bool json = false;
  bool session_given() const { return session_opt && session_opt->count() > 0; }
};

void add_link_options(CLI::App* cmd, link_options& o) {
  runtime::add_offline_options(cmd, o.where, false);
  cmd->add_option("--state-dir", o.where.state_dir,
                  "State directory (default: the config's stateDir, $SESSIONRT_STATE_DIR, ~/.sessionrt)");
  cmd->add_option("--token", o.token, "The running gateway's token (else $SESSIONRT_GATEWAY_TOKEN, <state>/gateway.token)");
  o.session_opt = cmd->add_option("--session", o.session,
                                  "Session key (default \"main\": the main session of the default agent)");
  cmd->add_flag("--json", o.json, "Print JSON");
}

// `compact KEY` / `tail KEY`: the key as a positional, or --session, not both.
void add_key_positional(CLI::App* cmd, link_options& o) {
  cmd->add_option("key", o.key_arg, "Session key, as `sessionrt sessions` prints it (same as --session; default \"main\")");
}

std::optional<status> take_key_positional(link_options& o, const std::string& command) {
  if (o.key_arg.empty()) return std::nullopt;
  if (o.session_given() && o.session != o.key_arg)
    return status(errc::invalid_argument,
                  fmt::format("two session keys: '{}' and --session '{}'; give one: `sessionrt {} KEY` or "
                              "`sessionrt {} --session KEY`",
                              o.key_arg, o.session, command, command));
  o.session = o.key_arg;
  return std::nullopt;
}

// Whether a word on the command line names a session: it has no whitespace and is a key of the
// agent:<id>:<rest> form, or (as the gateway resolves it: "main" is agent:<default>:<mainKey>)
// the key of a row in the state dir's stores.
bool looks_like_session_key(const std::string& word, const runtime::cli_io& io, const link_options& o) {
  if (word.empty() || word.find_first_of(" \t\r\n") != std::string::npos || !actors::is_plausible_session_key(word))
    return false;
  const std::string key = actors::normalize_session_key(word);
  if (actors::parse_agent_session_key(key)) return true;
  runtime::offline_options where = o.where;
  where.all_agents = true;
  auto ctx = runtime::open_offline(io, where);
  if (!ctx) return false;
  const auto& routing = ctx->settings.routing;
  const std::string agent = actors::default_agent_of(routing);
  const std::string canonical =
      actors::canonicalize_main_alias(key, agent, routing.session.main_key, routing.session.scope);
  const std::string scoped = "agent:" + agent + ":" + key;  // where the runtime keeps an unscoped key's row
  for (const auto& store : ctx->stores) {
    auto parsed = runtime::read_store_readonly(io, store);
    if (!parsed) continue;
    for (auto r : parsed->store)
      if (r.key == word || r.key == key || r.key == canonical || r.key == scoped) return true;
  }
  return false;
}

result<session_link> open_link(runtime::cli_state& st, const link_options& o, const std::string& scope) {
  auto ctx = runtime::open_offline(st.io, o.where);
  if (!ctx) return ctx.error();
  for (const auto& w : ctx->config_warnings) *st.io.err << "sessionrt: warning: " << w << "\n";
  session_link link;
  link.state_dir = ctx->state_dir;
  if (auto live = find_live_gateway(st.io, ctx->state_dir)) {
    std::string token = gateway_token(st.io, ctx->state_dir, o.token);
    auto c = connect_to(live->host, live->port, token, scope);
    if (!c) return c.error();
    link.client = std::move(*c);
    return link;
  }
  // The in-process gateway's start-up lines would mix into what this command prints.
  spdlog::set_level(spdlog::level::warn);
  gateway_options g;
  g.runtime.settings = ctx->settings;
  g.runtime.settings.state_dir = ctx->state_dir;
  g.port = 0;
  g.token = new_uuid_v4();
  auto server = gateway_server::start(std::move(g));
  if (!server) return server.error().with_context("running in-process on " + ctx->state_dir);
  auto c = connect_to("127.0.0.1", static_cast<std::uint16_t>((*server)->port()), (*server)->token(), scope);
  if (!c) return c.error();
  link.local = std::move(*server);
  link.client = std::move(*c);
  return link;
}

void finish(runtime::cli_state& st, session_link& link, int code) {
  if (link.client) (void)link.client->close();
  if (link.local) {
    auto s = link.local->stop();
    if (!s.ok()) {
      *st.io.err << "sessionrt: stopping the in-process runtime: " << s.message() << "\n";
      code = 2;
    }
  }
  st.exit_code = code;
}

// What refused: a request answered with an error by the in-process gateway was refused by the
// runtime this command started on the files, not by a gateway (none runs).
std::string refusal_text(const session_link* link, const status& e) {
  std::string m = e.message();
  const std::string prefix = "gateway refused ";
  if (!link || !link->local || m.rfind(prefix, 0) != 0) return m;
  std::string rest = m.substr(prefix.size());  // "<method>: <CODE>: <message>"
  auto method_end = rest.find(": ");
  std::string method = rest.substr(0, method_end);
  std::string detail = method_end == std::string::npos ? "" : rest.substr(method_end + 2);
  if (auto code_end = detail.find(": "); code_end != std::string::npos &&
                                         detail.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == code_end)
    detail = detail.substr(code_end + 2);
  return fmt::format("the runtime in-process on {} (no gateway is running there) refused {}: {}", link->state_dir,
                     method, detail);
}

void fail(runtime::cli_state& st, session_link* link, const status& e) {
  *st.io.err << "sessionrt: " << refusal_text(link, e) << "\n";
  if (link) finish(st, *link, 2);
  st.exit_code = 2;
}

// ---- send ---------------------------------------------------------------------------------------

struct send_options : link_options {
  std::vector<std::string> words;
  int timeout_s = 600;
};

void send_command(send_options o, runtime::cli_state& st) {
  // `send KEY TEXT...`: a first word that names a session is the session, never silently text.
  std::size_t first = 0;
  if (!o.words.empty() && looks_like_session_key(o.words.front(), st.io, o)) {
    const std::string& key = o.words.front();
    if (o.session_given())
      return fail(st, nullptr,
                  status(errc::invalid_argument,
                         fmt::format("'{}' looks like a session key, and --session '{}' names the session too: write "
                                     "`sessionrt send KEY TEXT` or `sessionrt send --session KEY TEXT`, or quote the "
                                     "whole message as one argument to send it as text",
                                     key, o.session)));
    if (o.words.size() == 1)
      return fail(st, nullptr,
                  status(errc::invalid_argument,
                         fmt::format("'{}' looks like a session key and no message follows: write `sessionrt send {} "
                                     "TEXT` (or `sessionrt send --session KEY TEXT`)",
                                     key, key)));
    o.session = key;
    first = 1;
  }
  std::string message;
  for (std::size_t i = first; i < o.words.size(); ++i) message += (message.empty() ? "" : " ") + o.words[i];
  auto link = open_link(st, o, "operator.write");
  if (!link) return fail(st, nullptr, link.error());
  const std::string run_id = new_uuid_v4();
  std::ostream& out = *st.io.out;
  std::string state, text, error_message;
  bool streamed = false;
  auto handle = [&](const gateway_event& e) {
    if (e.event != "chat" || !e.payload.is_object()) return;
    const bj::object& p = e.payload.get_object();
    if (json::get_string(p, "runId").value_or("") != run_id) return;
    std::string s(json::get_string(p, "state").value_or(""));
    if (s == "delta") {
      std::string piece(json::get_string(p, "deltaText").value_or(""));
      text += piece;
      if (!o.json) {
        out << piece << std::flush;
        streamed = true;
      }
    } else if (s == "final" || s == "aborted" || s == "error") {
      state = s;
      if (const bj::value* m = p.if_contains("message")) text = message_text(*m);
      error_message = std::string(json::get_string(p, "errorMessage").value_or(""));
    }
  };
  link->client->on_event(handle);  // deltas may come before chat.send's answer
  bj::object params{{"sessionKey", o.session}, {"message", message}, {"idempotencyKey", run_id}};
  auto started = link->client->request("chat.send", params, 30s);
  if (!started) return fail(st, &*link, started.error());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  while (state.empty()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return fail(st, &*link, status(errc::timeout, fmt::format("no final chat event for run {} within {} s", run_id, o.timeout_s)));
    auto e = link->client->next_event(left);
    if (e) handle(*e);
    else if (e.error().code() != errc::timeout) return fail(st, &*link, e.error());
  }
  if (o.json) {
    bj::object r{{"runId", run_id}, {"sessionKey", o.session}, {"state", state}, {"text", text}};
    if (!error_message.empty()) r["errorMessage"] = error_message;
    out << json::to_compact(r) << "\n";
  } else {
    if (!streamed) out << text;  // a reply that came whole (a command's output)
    out << "\n";
  }
  if (state == "error") *st.io.err << "sessionrt: the turn failed: " << error_message << "\n";
  if (state == "aborted") *st.io.err << "sessionrt: the turn was aborted\n";
  finish(st, *link, state == "final" ? 0 : 1);
}

// ---- compact ------------------------------------------------------------------------------------

void compact_command(link_options o, runtime::cli_state& st) {
  if (auto e = take_key_positional(o, "compact")) return fail(st, nullptr, *e);
  auto link = open_link(st, o, "operator.admin");
  if (!link) return fail(st, nullptr, link.error());
  auto r = link->client->request("sessions.compact", bj::object{{"key", o.session}}, 600s);
  if (!r) return fail(st, &*link, r.error());
  const bj::object* p = r->if_object();
  if (!p) return fail(st, &*link, status(errc::corrupt, "the sessions.compact answer is not an object"));
  if (o.json) {
    *st.io.out << json::to_pretty(*p) << "\n";
  } else {
    std::string key(json::get_string(*p, "key").value_or(o.session));
    if (json::get_bool(*p, "compacted").value_or(false)) {
      const bj::object* res = json::get_object(*p, "result");
      *st.io.out << fmt::format("Compacted {}: {} tokens before\n", key,
                                res ? json::get_int(*res, "tokensBefore").value_or(0) : 0);
    } else {
      *st.io.out << fmt::format("Not compacted {}: {}\n", key, json::get_string(*p, "reason").value_or("no reason given"));
    }
  }
  finish(st, *link, 0);
}

// ---- tail ---------------------------------------------------------------------------------------

struct tail_options : link_options {
  int limit = 20;
  bool follow = false;
};

void print_message(std::ostream& out, const bj::value& m, bool as_json) {
  if (as_json) {
    out << json::to_compact(m) << "\n";
    return;
  }
  std::string role = m.is_object() ? std::string(json::get_string(m.get_object(), "role").value_or("?")) : "?";
  out << role << ": " << message_text(m) << "\n";
}

void tail_command(tail_options o, runtime::cli_state& st) {
  if (auto e = take_key_positional(o, "tail")) return fail(st, nullptr, *e);
  auto link = open_link(st, o, "operator.read");
  if (!link) return fail(st, nullptr, link.error());
  if (o.follow && link->local)
    return fail(st, &*link, status(errc::invalid_argument, "--follow needs a running gateway (`sessionrt gateway`): "
                                                           "nothing else writes to the session while this command runs"));
  bj::object params{{"sessionKey", o.session}, {"limit", o.limit}};
  auto h = link->client->request("chat.history", params, 30s);
  if (!h) return fail(st, &*link, h.error());
  // A key with no row has no history: say so rather than print nothing.
  if (h->is_object() && h->get_object().contains("sessionId") && h->get_object().at("sessionId").is_null()) {
    std::string key(json::get_string(h->get_object(), "sessionKey").value_or(o.session));
    return fail(st, &*link,
                status(errc::not_found, fmt::format("no session '{}'{} in {}: `sessionrt sessions` lists the keys", key,
                                                    key == o.session ? "" : " (from '" + o.session + "')",
                                                    link->state_dir)));
  }
  const bj::array* msgs = h->is_object() ? json::get_array(h->get_object(), "messages") : nullptr;
  if (msgs)
    for (const auto& m : *msgs) print_message(*st.io.out, m, o.json);
  st.io.out->flush();
  if (!o.follow) return finish(st, *link, 0);
  std::string key = h->is_object() ? std::string(json::get_string(h->get_object(), "sessionKey").value_or(o.session)) : o.session;
  for (;;) {
    auto e = link->client->next_event(3600s);
    if (!e) {
      if (e.error().code() == errc::timeout) continue;
      return fail(st, &*link, e.error());
    }
    if (e->event != "chat" || !e->payload.is_object()) continue;
    const bj::object& p = e->payload.get_object();
    if (json::get_string(p, "sessionKey").value_or("") != key) continue;
    if (json::get_string(p, "state").value_or("") != "final") continue;
    if (const bj::value* m = p.if_contains("message")) print_message(*st.io.out, *m, o.json);
    st.io.out->flush();
  }
}

}  // namespace

std::optional<live_gateway> find_live_gateway(const runtime::cli_io& io, const std::string& state_dir) {
  if (state_dir.empty()) return std::nullopt;
  auto text = storage::read_file(*io.files, state_dir + "/gateway.json", 64 * 1024);
  if (!text) return std::nullopt;
  auto o = json::parse_object(*text);
  if (!o) return std::nullopt;
  auto pid = json::get_int(*o, "pid");
  auto port = json::get_int(*o, "port");
  if (!pid || !port || *port <= 0 || *port > 65535 || !io.probe->alive(*pid)) return std::nullopt;
  live_gateway g;
  g.pid = *pid;
  g.port = static_cast<std::uint16_t>(*port);
  std::string bind(json::get_string(*o, "bind").value_or("127.0.0.1"));
  if (!bind.empty() && bind != "0.0.0.0" && bind != "::") g.host = bind;
  if (!ws_client::port_answers(g.host, g.port, 1s)) return std::nullopt;
  return g;
}

std::string gateway_token(const runtime::cli_io& io, const std::string& state_dir, const std::string& explicit_token) {
  if (!explicit_token.empty()) return explicit_token;
  if (io.env)
    if (auto t = io.env("SESSIONRT_GATEWAY_TOKEN"); t && !t->empty()) return *t;
  auto text = storage::read_file(*io.files, state_dir + "/gateway.token", 4096);
  return text ? std::string(ascii_trim_line(*text)) : std::string();
}

std::optional<result<bj::value>> call_live_gateway(const runtime::cli_io& io, const std::string& state_dir,
                                                   const std::string& token, const std::string& method,
                                                   const bj::value& params) {
  auto live = find_live_gateway(io, state_dir);
  if (!live) return std::nullopt;
  auto c = connect_to(live->host, live->port, gateway_token(io, state_dir, token), scope_for_method(method));
  if (!c) return result<bj::value>(c.error());
  auto r = (*c)->request(method, params, 60s);
  (void)(*c)->close();
  return r;
}

void add_remote_commands(CLI::App& app, runtime::cli_state& st) {
  st.gateway = call_live_gateway;

  auto so = std::make_shared<send_options>();
  auto* s = app.add_subcommand("send", "Send a message to a session and stream the reply to stdout (through the running "
                                       "gateway; without one, in-process on the files with the config's model, or the "
                                       "built-in simulated model when none is configured). `send [KEY] TEXT...`: a "
                                       "first word that is a session key (agent:<id>:..., or the key of a row) names "
                                       "the session; else the session is --session (default \"main\")");
  add_link_options(s, *so);
  s->add_option("--timeout", so->timeout_s, "Seconds to wait for the reply (default 600)")->check(CLI::PositiveNumber);
  s->add_option("message", so->words, "[KEY] TEXT...: the message (words joined by spaces), after the session key if one "
                                      "comes first")
      ->required();
  s->callback([so, &st] { send_command(*so, st); });

  auto co = std::make_shared<link_options>();
  auto* c = app.add_subcommand("compact", "Compact a session's context now (sessions.compact; through the running "
                                          "gateway, else in-process on the files)");
  add_link_options(c, *co);
  add_key_positional(c, *co);
  c->callback([co, &st] { compact_command(*co, st); });

  auto to = std::make_shared<tail_options>();
  auto* t = app.add_subcommand("tail", "Print a session's last messages (chat.history); --follow prints each reply as "
                                       "the running gateway finishes it. A key with no session is an error (exit 2)");
  add_link_options(t, *to);
  add_key_positional(t, *to);
  t->add_option("-n,--limit", to->limit, "How many messages (default 20, at most 1000)")->check(CLI::Range(1, 1000));
  t->add_flag("-f,--follow", to->follow, "Keep printing replies of the session as they complete (needs a running gateway)");
  t->callback([to, &st] { tail_command(*to, st); });
}

}  // namespace sessionrt::gateway
