// A gateway on a temp state dir, port 0 (ephemeral), token "tok", the simulated model; and the
// helpers the socket tests share: clients with given scopes, waiting for an event that matches,
// and a plain HTTP GET.
#pragma once
#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gateway/gateway_client.hpp"
#include "gateway/gateway_server.hpp"
#include "gateway/ws_client.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::gateway::testing {

struct running_gateway {
  sessionrt::testing::temp_dir dir;
  std::unique_ptr<gateway_server> server;
  explicit running_gateway(const std::function<void(gateway_options&)>& tweak = {});
  ~running_gateway();

  gateway_client_options client_options(std::vector<std::string> scopes = {"operator.admin"},
                                        std::string client_id = "cli") const;
  std::unique_ptr<gateway_client> client(std::vector<std::string> scopes = {"operator.admin"});
  std::unique_ptr<ws_client> raw();  // upgraded, nothing read yet
};

// Reads events until one satisfies `pred` (returned) or `timeout` passes (errc::timeout).
result<gateway_event> wait_event(gateway_client& c, const std::function<bool(const gateway_event&)>& pred,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(20));
// The chat events of one run, up to its closing one (final / aborted / error).
result<std::vector<boost::json::object>> run_events(gateway_client& c, const std::string& run_id,
                                                    std::chrono::milliseconds timeout = std::chrono::seconds(20));
// GET path on 127.0.0.1:port with an optional bearer token: {status code, body}.
std::pair<int, std::string> http_get(int port, const std::string& path, const std::string& bearer = "");
// The value of a Prometheus sample line `name{labels} value` (or `name value`); -1 when absent.
double metric(const std::string& text, const std::string& series);

}  // namespace sessionrt::gateway::testing
