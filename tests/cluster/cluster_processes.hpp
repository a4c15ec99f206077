// cluster_processes: the `build/sessionrt gateway --cluster` processes of a multi-process cluster
// test (the ownership harness, the forwarding test), and the small file reads those tests share.
// - node_processes starts nodes on free loopback ports (`--port 0`), all with the cluster's name,
//   token and lease TTL, each logging to <root>/<id>.log. With shared_state_dir every node runs on
//   ONE cluster state dir (<root>/cluster, as production on a shared filesystem); otherwise each
//   has its own (<root>/<id>). start() again with a stopped node's id starts it anew (new pid,
//   same state dir and log, appended).
// - The destructor SIGCONTs and SIGKILLs every node still running and reaps it, so a failed
//   REQUIRE leaves no process behind. The temp root is removed with it.
// Every wait is bounded.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>

#include "tests/test_support.hpp"

namespace sessionrt::testing {

// The file's bytes; "" when it cannot be read.
std::string read_all(const std::string& path);
// Every transcript (*.jsonl) under `dir`, at any depth, concatenated.
std::string transcripts_under(const std::string& dir);
// Waits for `pid` to exit, bounded: its exit code (128 + signal when killed), or -1 when it did
// not exit in time (it is then SIGKILLed and reaped).
int reap(pid_t pid, std::chrono::milliseconds bound);

struct cluster_node_options {
  std::string cluster;
  std::string token;  // one for every node: forwarding authenticates with it
  int lease_ttl_s = 2;
  bool shared_state_dir = true;
};

struct node_process {
  std::string id, state_dir, log;
  pid_t pid = -1;  // -1 once stopped and reaped
};

class node_processes {
 public:
  explicit node_processes(cluster_node_options options);
  ~node_processes();
  node_processes(const node_processes&) = delete;
  node_processes& operator=(const node_processes&) = delete;

  node_process& start(const std::string& id, const std::string& etcd_endpoint);
  node_process& node(const std::string& id) { return nodes_.at(id); }
  // kill -9 and reap.
  void kill(const std::string& id);
  // SIGTERM and reap within `bound`: the exit code, -1 when it had to be killed.
  int terminate(const std::string& id, std::chrono::milliseconds bound);
  // The shared cluster state dir (shared_state_dir), else "".
  std::string cluster_dir() const;
  // Every node's log, each under a "--- <id>" line.
  std::string logs() const;
  // For a wait that timed out: per running node its pid, the program it runs (/proc cmdline: a
  // child stuck between fork and exec still shows the test's), its state and what each thread
  // waits in (/proc wchan).
  std::string process_states() const;

 private:
  cluster_node_options options_;
  temp_dir root_;
  std::map<std::string, node_process> nodes_;
};

}  // namespace sessionrt::testing
