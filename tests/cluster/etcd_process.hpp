// etcd_process: a private etcd for one test, from the etcd binary (Debian etcd-server):
// two free loopback ports, a data dir in a temp dir, fast elections (heartbeat 50 ms, election
// 250 ms, so etcd's minimum lease TTL is 1 s); stopped (SIGTERM, then SIGKILL) and removed at
// scope exit. start() waits until etcd answers a range (bounded: 20 s), failing with etcd's
// log when it does not come up. stop() and restart() take it down and bring it back on the same
// ports and data dir (its leases and keys survive, as an etcd restarted in production).
// SESSIONRT_TEST_ETCD(var) starts one into `var`, or ends the test with a warning "SKIPPED:
// etcd not found" (CTest reports it skipped) when there is no etcd binary.
#pragma once
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "messages/status.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {

// A loopback port nobody listens on now (another process may take it before it is used: the
// caller tries again with new ports); -1 when none could be had.
int free_loopback_port();

// $SESSIONRT_ETCD_BIN, else `etcd` on PATH; nullopt when neither is an executable file.
std::optional<std::string> etcd_binary();

class etcd_process {
 public:
  static result<std::unique_ptr<etcd_process>> start(const std::string& binary);
  ~etcd_process();
  etcd_process(const etcd_process&) = delete;
  etcd_process& operator=(const etcd_process&) = delete;

  const std::string& endpoint() const { return endpoint_; }  // http://127.0.0.1:<port>
  int client_port() const { return client_port_; }
  std::string log() const;
  // SIGTERM, then SIGKILL after 5 s; a stopped etcd stays stopped until restart().
  void stop();
  // Starts it again on the same ports and data; waits for it to answer (bounded: 20 s).
  status restart();

 private:
  etcd_process() = default;
  // Spawns etcd on the chosen ports and waits until it answers; `exited` tells a child that
  // died (a port taken meanwhile: another try with new ports may work).
  status launch(bool& exited);
  temp_dir dir_;
  std::string binary_;
  pid_t pid_ = -1;
  int client_port_ = -1, peer_port_ = -1;
  std::string endpoint_;
};

}  // namespace sessionrt::testing

#define SESSIONRT_TEST_ETCD(var)                                                                   \
  auto var##_binary = ::sessionrt::testing::etcd_binary();                                       \
  if (!var##_binary) {                                                                             \
    WARN("SKIPPED: etcd not found (install Debian's etcd-server, as scripts/setup.sh does)");      \
    return;                                                                                        \
  }                                                                                                \
  auto var##_started = ::sessionrt::testing::etcd_process::start(*var##_binary);                  \
  INFO((var##_started.ok() ? std::string() : var##_started.error().to_string()));                 \
  REQUIRE(var##_started.ok());                                                                     \
  std::unique_ptr<::sessionrt::testing::etcd_process> var = std::move(*var##_started)
