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
  std::string last_log;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::unique_ptr<etcd_process> p(new etcd_process());
    const int client = free_loopback_port(), peer = free_loopback_port();
    if (client < 0 || peer < 0 || client == peer) continue;
    p->endpoint_ = "http://127.0.0.1:" + std::to_string(client);
    const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer);
    std::vector<std::string> args = {binary,
                                     "--name", "test",
                                     "--data-dir", p->dir_.file("data"),
                                     "--listen-client-urls", p->endpoint_,
                                     "--advertise-client-urls", p->endpoint_,
                                     "--listen-peer-urls", peer_url,
                                     "--initial-advertise-peer-urls", peer_url,
                                     "--initial-cluster", "test=" + peer_url,
                                     "--heartbeat-interval", "50",
                                     "--election-timeout", "250",
                                     "--log-level", "warn"};
    const std::string log_path = p->dir_.file("etcd.log");
    const pid_t pid = spawn_logged(std::move(args), log_path);
    if (pid < 0) return status(errc::io_error, "fork failed");
    p->pid_ = pid;
    auto etcd = cluster::blocking_etcd::connect({p->endpoint_, 1000});
    if (!etcd) return etcd.error();
    // A readiness poll, bounded: etcd takes ~0.3 s to elect itself on this machine.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (etcd->range("/ready").ok()) return p;
      int wstatus = 0;
      if (::waitpid(pid, &wstatus, WNOHANG) == pid) {
        exited = true;
        p->pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    last_log = p->log();
    if (!exited) break;  // running but not answering: another try will not help
  }
  return status(errc::io_error, "etcd did not start; its log:\n" + last_log);
}

etcd_process::~etcd_process() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 250; ++i) {  // up to 5 s for a clean stop
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  int wstatus = 0;
  ::waitpid(pid_, &wstatus, 0);
}

std::string etcd_process::log() const {
  std::ifstream in(dir_.file("etcd.log"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sessionrt::testing
