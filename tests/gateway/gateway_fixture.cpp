#include "tests/gateway/gateway_fixture.hpp"

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

namespace sessionrt::gateway::testing {
namespace bj = boost::json;
using namespace std::chrono_literals;

running_gateway::running_gateway(const std::function<void(gateway_options&)>& tweak) {
  gateway_options o;
  o.runtime.settings.state_dir = dir.path();
  o.runtime.threads = 2;
  o.port = 0;
  o.token = "tok";
  if (tweak) tweak(o);
  auto s = gateway_server::start(std::move(o));
  if (!s.ok()) FAIL("the gateway did not start: " << s.error().message());
  server = std::move(*s);
}

running_gateway::~running_gateway() {
  if (server) (void)server->stop();
}

gateway_client_options running_gateway::client_options(std::vector<std::string> scopes, std::string client_id) const {
  gateway_client_options o;
  o.port = static_cast<std::uint16_t>(server->port());
  o.identity.token = "tok";
  o.identity.scopes = std::move(scopes);
  o.identity.client_id = std::move(client_id);
  o.connect_timeout = 10s;
  return o;
}

std::unique_ptr<gateway_client> running_gateway::client(std::vector<std::string> scopes) {
  auto c = gateway_client::connect(client_options(std::move(scopes)));
  if (!c.ok()) FAIL("connect failed: " << c.error().message());
  return std::move(*c);
}

std::unique_ptr<ws_client> running_gateway::raw() {
  auto c = ws_client::connect("127.0.0.1", static_cast<std::uint16_t>(server->port()), 5s);
  if (!c.ok()) FAIL("ws connect failed: " << c.error().message());
  return std::move(*c);
}

result<gateway_event> wait_event(gateway_client& c, const std::function<bool(const gateway_event&)>& pred,
                                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return status(errc::timeout, "no matching event in time");
    auto e = c.next_event(left);
    if (!e.ok()) return e.error();
    if (pred(*e)) return *e;
  }
}

result<std::vector<bj::object>> run_events(gateway_client& c, const std::string& run_id,
                                           std::chrono::milliseconds timeout) {
  std::vector<bj::object> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto e = wait_event(c, [&](const gateway_event& ev) {
      return ev.event == "chat" && ev.payload.is_object() && ev.payload.as_object().at("runId") == run_id.c_str();
    }, left);
    if (!e.ok()) return e.error();
    out.push_back(e->payload.as_object());
    const auto state = out.back().at("state").as_string();
    if (state == "final" || state == "aborted" || state == "error") return out;
  }
}

std::pair<int, std::string> http_get(int port, const std::string& path, const std::string& bearer) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return {-1, ""};
  }
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!bearer.empty()) req += "Authorization: Bearer " + bearer + "\r\n";
  req += "\r\n";
  (void)::send(fd, req.data(), req.size(), 0);
  std::string resp;
  char buf[8192];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) resp.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  int code = -1;
  if (resp.rfind("HTTP/1.1 ", 0) == 0) code = std::atoi(resp.c_str() + 9);
  const auto body = resp.find("\r\n\r\n");
  return {code, body == std::string::npos ? std::string() : resp.substr(body + 4)};
}

double metric(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series + " ", 0) == 0) return std::atof(line.c_str() + series.size() + 1);
  return -1;
}

}  // namespace sessionrt::gateway::testing
