// fake_provider_process: tests/providers/fake_provider.mjs run as a child process on a free
// loopback port, for tests that drive the built-in runners over real HTTP. The server exits
// with the test (SIGTERM from the destructor; it also watches its parent). Needs `node` on
// PATH (scripts/setup.sh installs it).
#pragma once
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace sessionrt::testing {

class fake_provider_process {
 public:
  explicit fake_provider_process(std::vector<std::string> extra_args = {}) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::close(out[1]);
      const std::string script = std::string(SESSIONRT_SOURCE_DIR) + "/tests/providers/fake_provider.mjs";
      std::vector<std::string> args{"node", script, "--port", "0"};
      for (auto& a : extra_args) args.push_back(a);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("node", argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    // The first line: {"port":N}.
    std::string line;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(out[0]);
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    if (ec || !v.is_object() || !v.as_object().contains("port"))
      throw std::runtime_error("fake_provider.mjs did not start (is node installed?): " + line);
    port_ = static_cast<int>(v.as_object().at("port").to_number<std::int64_t>());
  }
  ~fake_provider_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  fake_provider_process(const fake_provider_process&) = delete;
  fake_provider_process& operator=(const fake_provider_process&) = delete;

  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The base URL a provider of `api` is configured with.
  std::string base_url(const std::string& api) const {
    if (api == "anthropic-messages") return origin();
    if (api == "google-generative-ai") return origin() + "/v1beta";
    return origin() + "/v1";
  }
  // GET a control endpoint (/__stats, /__requests) as JSON, through curl's command line.
  boost::json::value get(const std::string& path) const {
    const std::string cmd = "curl -s --max-time 10 " + origin() + path;
    std::string body;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) body.append(buf, n);
      ::pclose(p);
    }
    boost::system::error_code ec;
    auto v = boost::json::parse(body, ec);
    return ec ? boost::json::value() : v;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace sessionrt::testing
