// remote_commands: the CLI through a running gateway. add_remote_commands() registers
// `sessionrt send`, `compact` and `tail`, and hands `sessions` / `status` (app/cli) the
// gateway_caller below, so that each of them talks to the gateway that <state>/gateway.json
// names when it is live (its pid alive and its port answering), and works on the files
// otherwise. send / compact / tail without a live gateway run in-process: an embedded runtime
// (the built-in simulated model, as `sessionrt gateway` has) behind an in-process gateway on an
// ephemeral loopback port, stopped afterwards, so both paths print the same thing.
// The token: --token, else $SESSIONRT_GATEWAY_TOKEN, else <state>/gateway.token.
// The session: --session KEY, or as the first word: `send KEY TEXT...` (a first word that is a
// key of the agent:<id>:<rest> form or of a row is never taken as text; a key alone, or a key
// and --session, is refused naming the right form), `compact KEY`, `tail KEY`.
// Errors: a live gateway that refuses (wrong token, unknown key) is an error (exit 2), never a
// silent fallback to the files; in-process, the error names the runtime that refused. `tail`
// of a key with no session is an error (exit 2) naming it.
#pragma once
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/cli/cli.hpp"

namespace sessionrt::gateway {

struct live_gateway {
  std::int64_t pid = 0;
  std::uint16_t port = 0;
  std::string host = "127.0.0.1";
};

// The gateway <state_dir>/gateway.json names, if its pid is alive and its port accepts a TCP
// connection; nullopt otherwise (no file, a stale one).
std::optional<live_gateway> find_live_gateway(const runtime::cli_io& io, const std::string& state_dir);

// The token a client of state_dir's gateway uses ("" = none found).
std::string gateway_token(const runtime::cli_io& io, const std::string& state_dir, const std::string& explicit_token);

// runtime::gateway_caller: one request on a fresh connection with the least scope the method needs.
std::optional<result<boost::json::value>> call_live_gateway(const runtime::cli_io& io, const std::string& state_dir,
                                                            const std::string& token, const std::string& method,
                                                            const boost::json::value& params);

void add_remote_commands(CLI::App& app, runtime::cli_state& st);

}  // namespace sessionrt::gateway
