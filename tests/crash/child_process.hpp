// A child process for the crash tests: `exe` run with `args`, its stdout readable through `out`
// (the parent reads what the child acknowledged, then kills it with SIGKILL).
#pragma once
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace sessionrt::testing {

struct child_process {
  pid_t pid = -1;
  FILE* out = nullptr;
};

inline child_process spawn_child(const char* exe, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execv(exe, argv.data());
    _exit(127);
  }
  close(fds[1]);
  return {pid, fdopen(fds[0], "r")};
}

// SIGKILL, then every whole line the child wrote before it died (acknowledgements already in the
// pipe count too) handed to `take` with its newline; checks that the kill is what ended it.
inline void kill_and_drain(child_process& c, const std::function<void(std::string)>& take) {
  kill(c.pid, SIGKILL);
  char line[4096];
  while (std::fgets(line, sizeof line, c.out)) {
    std::string l(line);
    if (!l.empty() && l.back() == '\n') take(l);
  }
  fclose(c.out);
  int wstatus = 0;
  waitpid(c.pid, &wstatus, 0);
  REQUIRE(WIFSIGNALED(wstatus));
}

}  // namespace sessionrt::testing
