// spawn_logged: a child process of a cluster test (etcd, a `sessionrt gateway` node) with its
// stdout and stderr appended to a log file, and the variables that would point a node at the
// developer's own config or token left out of its environment.
// Everything the child needs is built before fork: between fork and exec the child of a
// multithreaded test process may only make async-signal-safe calls (a malloc, or an
// environment lock another thread held at the fork, would hang it before exec, leaving an
// empty log). Returns the child's pid, or -1 when fork failed.
#pragma once
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace sessionrt::testing {

inline pid_t spawn_logged(std::vector<std::string> args, const std::string& log_path) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view kv(*e);
    if (kv.rfind("SESSIONRT_CONFIG=", 0) == 0 || kv.rfind("OPENCLAW_CONFIG_PATH=", 0) == 0 ||
        kv.rfind("SESSIONRT_GATEWAY_TOKEN=", 0) == 0)
      continue;
    env.emplace_back(kv);
  }
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
  }
  ::execve(argv[0], argv.data(), envp.data());
  ::_exit(127);
}

}  // namespace sessionrt::testing
