// control_ui: OpenClaw's web Control UI (the Vite + Lit app the `openclaw` npm package ships in
// dist/control-ui/) served next to the gateway, as OpenClaw's gateway serves it
// (src/gateway/control-ui-static.ts), and the Origin check on WebSocket upgrades that serving
// pages calls for. No libuv, no CAF: a request (method, URL, lower-cased headers) gives a
// response {status, headers, body}, or nothing when the request is not the UI's (the transport
// then answers as it would without a UI).
//   - GET / HEAD of a file under the root: its content type by extension, Cache-Control
//     "public, max-age=31536000, immutable" under assets/ (fingerprinted names), "no-cache"
//     elsewhere (sw.js, icons, manifest); a precompressed .br / .gz sibling when Accept-Encoding
//     takes it (Content-Encoding, Vary); asking for the .br / .gz itself is 404.
//   - index.html for "/" and for extensionless paths (client-side routes) whose Accept wants
//     HTML, with data-openclaw-control-ui-base-path set on <html>; "no-cache".
//   - /control-ui-config.json (and OpenClaw's aliases /__openclaw/… and /__openclaw__/…):
//     {basePath, assistantName, serverVersion, ...}; "no-cache". No token needed: it tells
//     nothing a page load does not.
//   - a path that climbs out of the root ("..", an encoded one, a NUL, a backslash) is 404; a
//     missing file with a static extension is 404.
// The Origin check: a request without Origin (the CLI, the TUI, any non-browser client) passes;
// with one it passes when it is listed in gateway.controlUi.allowedOrigins ("*": any), or is the
// gateway's own origin: http://<Host header> where that host is the bind address, localhost or
// a loopback address (a DNS-rebinding page names its own host, which is none of these).
// As in OpenClaw 2026.9.6 the check is made at the `connect` request, not at the upgrade: the
// WebSocket opens, and a connect from a refused Origin is answered with OpenClaw's error and
// the socket closed with 1008 (with_origin_check below).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/connection_state.hpp"

namespace sessionrt::gateway {

struct http_response {
  int status = 200;
  std::string reason = "OK";
  std::vector<std::pair<std::string, std::string>> headers;  // Content-Length is added by wire()
  std::string body;
  bool head_only = false;  // a HEAD request: headers as for GET, no body

  std::string header(std::string_view name) const;  // "" when absent (name compared case-blind)
  // The whole HTTP/1.1 answer, with Content-Length and Connection: close.
  std::string wire() const;
};

struct control_ui_options {
  std::string root;                          // the UI's directory ("" = no UI: serve() answers nothing)
  std::string assistant_name = "Assistant";  // control-ui-config.json's assistantName
  std::string server_version;                // control-ui-config.json's serverVersion
  std::string assistant_agent_id;            // the default agent
  std::vector<std::string> allowed_origins;  // gateway.controlUi.allowedOrigins
  std::string bind = "127.0.0.1";            // the gateway's own address (its own origin)
  int port = 0;                              // the gateway's port (0: any port of a own host)
};

class control_ui {
 public:
  explicit control_ui(control_ui_options options);
  const control_ui_options& options() const { return opt_; }
  void set_port(int port) { opt_.port = port; }

  // The UI's answer, or nullopt when the request is not the UI's.
  std::optional<http_response> serve(std::string_view method, std::string_view url,
                                     const std::map<std::string, std::string>& headers) const;
  // Whether a connection whose upgrade had these headers may connect; if not, `why` gets
  // OpenClaw's reason: "origin not allowed", or "origin missing or invalid" for an Origin that
  // is not scheme://host (such as "null").
  bool origin_allowed(const std::map<std::string, std::string>& headers, std::string* why = nullptr) const;

 private:
  control_ui_options opt_;
};

// OpenClaw's answer to a connect from an Origin it refuses (message-handler's
// rejectGatewayConnectOrigin): INVALID_REQUEST with this message and details
// {code:"CONTROL_UI_ORIGIN_NOT_ALLOWED", reason}, then close 1008 with the message as reason.
inline constexpr const char* kOriginRefusedMessage =
    "origin not allowed (open the Control UI from the gateway host or allow it in gateway.controlUi.allowedOrigins)";
// The verdict to answer a connect with, given the verdict on its params and credentials (`v`)
// and the Origin check: OpenClaw checks the Origin after the protocol and role and before the
// credentials, so a refused Origin replaces a success or a token refusal, not a protocol
// mismatch, bad params or a refused role.
connect_verdict with_origin_check(connect_verdict v, bool origin_ok, const std::string& reason);

// The content type OpenClaw gives a file of this name ("application/octet-stream" if unknown).
std::string control_ui_content_type(std::string_view file_name);

// Where the UI is, and how it was found, for the log line at start:
//   explicit_root (--control-ui), else configured_root (gateway.controlUi.root), else an
//   installed openclaw package's dist/control-ui (found from `candidates`, in order: e.g. the
//   npm global root, ~/.cache/sessionrt-compat/openclaw/node_modules), else none.
struct control_ui_location {
  std::string root;  // "" = none found
  std::string said;  // one sentence for the log
  bool error = false;  // an explicit or configured root that is not a UI directory
};
control_ui_location find_control_ui(const std::string& explicit_root, const std::string& configured_root,
                                    const std::vector<std::string>& package_dirs);
// The places find_control_ui looks for an installed `openclaw` package, from the environment
// ($SESSIONRT_CONTROL_UI_PACKAGES, ':'-separated, then npm's global prefixes and the compat
// test cache under $HOME): node_modules directories.
std::vector<std::string> default_openclaw_package_dirs();

}  // namespace sessionrt::gateway
