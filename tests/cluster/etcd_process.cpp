#include "tests/cluster/etcd_process.hpp"

#include "tests/cluster/logged_child.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cluster/blocking_etcd.hpp"

namespace sessionrt::testing {
namespace {

bool executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = -1;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

std::optional<std::string> etcd_binary() {
  if (const char* env = std::getenv("SESSIONRT_ETCD_BIN"); env != nullptr && *env != '\0')
    return executable(env) ? std::optional<std::string>(env) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && executable(dir + "/etcd")) return dir + "/etcd";
  return std::nullopt;
}

result<std::unique_ptr<etcd_process>> etcd_process::start(const std::string& binary) {
  std::string last_error, last_log;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::unique_ptr<etcd_process> p(new etcd_process());
    p->binary_ = binary;
    p->client_port_ = free_loopback_port();
    p->peer_port_ = free_loopback_port();
    if (p->client_port_ < 0 || p->peer_port_ < 0 || p->client_port_ == p->peer_port_) continue;
    p->endpoint_ = "http://127.0.0.1:" + std::to_string(p->client_port_);
    bool exited = false;
    const status st = p->launch(exited);
    if (st.ok()) return p;
    last_error = st.message();
    last_log = p->log();
    if (!exited) break;  // running but not answering: another try will not help
  }
  return status(errc::io_error, "etcd did not start (" + last_error + "); its log:\n" + last_log);
}

status etcd_process::launch(bool& exited) {
  exited = false;
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> args = {binary_,
                                   "--name", "test",
                                   "--data-dir", dir_.file("data"),
                                   "--listen-client-urls", endpoint_,
                                   "--advertise-client-urls", endpoint_,
                                   "--listen-peer-urls", peer_url,
                                   "--initial-advertise-peer-urls", peer_url,
                                   "--initial-cluster", "test=" + peer_url,
                                   "--heartbeat-interval", "50",
                                   "--election-timeout", "250",
                                   "--log-level", "warn"};
  const pid_t pid = spawn_logged(std::move(args), dir_.file("etcd.log"));
  if (pid < 0) return status(errc::io_error, "fork failed");
  pid_ = pid;
  auto etcd = cluster::blocking_etcd::connect({endpoint_, 1000});
  if (!etcd) return etcd.error();
  // A readiness poll, bounded: etcd takes ~0.3 s to elect itself on this machine.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (etcd->range("/ready").ok()) return status();
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) {
      exited = true;
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status(errc::io_error, "etcd did not answer on " + endpoint_);
}

status etcd_process::restart() {
  stop();
  bool exited = false;
  const status st = launch(exited);
  if (st.ok()) return st;
  return status(errc::io_error, st.message() + "; its log:\n" + log());
}

void etcd_process::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 250; ++i) {  // up to 5 s for a clean stop
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  int wstatus = 0;
  ::waitpid(pid_, &wstatus, 0);
  pid_ = -1;
}

etcd_process::~etcd_process() { stop(); }

std::string etcd_process::log() const {
  std::ifstream in(dir_.file("etcd.log"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sessionrt::testing
