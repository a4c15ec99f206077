#include "tests/cluster/cluster_processes.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/cluster/logged_child.hpp"

namespace sessionrt::testing {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string transcripts_under(const std::string& dir) {
  std::string out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".jsonl") out += read_all(it->path().string());
  return out;
}

int reap(pid_t pid, std::chrono::milliseconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  int ws = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (::waitpid(pid, &ws, WNOHANG) == pid) return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &ws, 0);
  return -1;
}

node_processes::node_processes(cluster_node_options options) : options_(std::move(options)) {}

node_processes::~node_processes() {
  for (auto& [id, n] : nodes_)
    if (n.pid > 0) {
      ::kill(n.pid, SIGCONT);
      ::kill(n.pid, SIGKILL);
      ::waitpid(n.pid, nullptr, 0);
    }
}

node_process& node_processes::start(const std::string& id, const std::string& etcd_endpoint) {
  node_process& n = nodes_[id];
  n.id = id;
  n.state_dir = options_.shared_state_dir ? cluster_dir() : root_.file(id);
  n.log = root_.file(id + ".log");
  ::mkdir(n.state_dir.c_str(), 0700);
  n.pid = spawn_logged({std::string(SESSIONRT_BINARY_DIR) + "/sessionrt", "gateway", "--state-dir", n.state_dir,
                        "--port", "0", "--token", options_.token, "--cluster", options_.cluster, "--etcd",
                        etcd_endpoint, "--node-id", id, "--cluster-lease-ttl", std::to_string(options_.lease_ttl_s),
                        "--log-level", "info"},
                       n.log);
  return n;
}

void node_processes::kill(const std::string& id) {
  node_process& n = nodes_.at(id);
  if (n.pid <= 0) return;
  ::kill(n.pid, SIGKILL);
  ::waitpid(n.pid, nullptr, 0);
  n.pid = -1;
}

int node_processes::terminate(const std::string& id, std::chrono::milliseconds bound) {
  node_process& n = nodes_.at(id);
  if (n.pid <= 0) return -1;
  ::kill(n.pid, SIGTERM);
  const int code = reap(n.pid, bound);
  n.pid = -1;
  return code;
}

std::string node_processes::cluster_dir() const {
  return options_.shared_state_dir ? root_.file("cluster") : std::string();
}

std::string node_processes::process_states() const {
  std::string out;
  for (const auto& [id, n] : nodes_) {
    if (n.pid <= 0) continue;
    const std::string proc = "/proc/" + std::to_string(n.pid);
    std::string cmd = read_all(proc + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    std::string state = read_all(proc + "/stat");
    if (auto close = state.rfind(')'); close != std::string::npos) state = state.substr(close + 2, 1);
    out += "--- " + id + " pid " + std::to_string(n.pid) + " state " + state + ": " + cmd.substr(0, 120) + "\n";
    std::error_code ec;
    std::map<std::string, int> waits;
    for (const auto& t : std::filesystem::directory_iterator(proc + "/task", ec)) ++waits[read_all(t.path() / "wchan")];
    for (const auto& [w, count] : waits) out += "  " + std::to_string(count) + " thread(s) in " + (w.empty() ? "?" : w) + "\n";
  }
  return out;
}

std::string node_processes::logs() const {
  std::string out;
  for (const auto& [id, n] : nodes_) out += "--- " + id + "\n" + read_all(n.log);
  return out;
}

}  // namespace sessionrt::testing
