#include "gateway/gateway_service.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <ostream>
#include <thread>

#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// ---- the record ---------------------------------------------------------------------------------

std::string gateway_record::url() const {
  const bool v6 = bind.find(':') != std::string::npos;
  return "ws://" + (v6 ? "[" + bind + "]" : bind) + ":" + std::to_string(port);
}

std::string gateway_record::probe_host() const {
  if (bind.empty() || bind == "0.0.0.0") return "127.0.0.1";
  if (bind == "::") return "::1";
  if (bind == "localhost") return "127.0.0.1";
  return bind;
}

result<std::optional<gateway_record>> read_gateway_record(storage::fs& files, const std::string& state_dir) {
  const std::string path = storage::path_join(state_dir, "gateway.json");
  auto text = storage::read_file(files, path, 64 * 1024);
  if (!text) {
    if (text.error().code() == errc::not_found) return std::optional<gateway_record>();
    return text.error().with_context("reading " + path);
  }
  auto o = json::parse_object(*text);
  if (!o) return status(errc::corrupt, path + " is not a JSON object");
  auto pid = json::get_int(*o, "pid");
  auto port = json::get_int(*o, "port");
  if (!pid || *pid <= 0 || !port || *port <= 0 || *port > 65535)
    return status(errc::corrupt, path + " names no pid and port");
  gateway_record r;
  r.pid = *pid;
  r.port = static_cast<int>(*port);
  if (auto b = json::get_string(*o, "bind"); b && !b->empty()) r.bind = std::string(*b);
  r.started_at_ms = json::get_int(*o, "startedAt").value_or(0);
  return std::optional<gateway_record>(std::move(r));
}

// ---- /healthz -----------------------------------------------------------------------------------

bool health_answer::healthy() const {
  return answered && http_status == 200 && json::get_bool(body, "ok").value_or(false);
}

namespace {

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

int ms_left(steady::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

}  // namespace

health_answer probe_healthz(const std::string& host, int port, std::chrono::milliseconds timeout) {
  health_answer h;
  const auto deadline = steady::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0 || !res) {
    h.error = fmt::format("cannot resolve {}: {}", host, ::gai_strerror(rc));
    return h;
  }
  fd_guard s;
  s.fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s.fd < 0) {
    h.error = fmt::format("socket: {}", std::strerror(errno));
    ::freeaddrinfo(res);
    return h;
  }
  int rc = ::connect(s.fd, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  const std::string where = fmt::format("{}:{}", host, port);
  if (rc != 0 && errno != EINPROGRESS) {
    h.error = fmt::format("cannot connect to {}: {}", where, std::strerror(errno));
    return h;
  }
  pollfd p{s.fd, POLLOUT, 0};
  if (rc != 0) {
    if (::poll(&p, 1, ms_left(deadline)) <= 0) {
      h.error = fmt::format("no connection to {} within {} ms", where, timeout.count());
      return h;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      h.error = fmt::format("cannot connect to {}: {}", where, std::strerror(err));
      return h;
    }
  }
  const std::string request = fmt::format("GET /healthz HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", where);
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(s.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      p = {s.fd, POLLOUT, 0};
      if (::poll(&p, 1, ms_left(deadline)) > 0) continue;
    }
    h.error = fmt::format("sending to {} failed", where);
    return h;
  }
  std::string reply;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n > 0) {
      reply.append(buf, static_cast<std::size_t>(n));
      if (reply.size() > (1u << 20)) break;
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      h.error = fmt::format("reading from {}: {}", where, std::strerror(errno));
      return h;
    }
    p = {s.fd, POLLIN, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0) {
      h.error = fmt::format("no answer from {} within {} ms", where, timeout.count());
      return h;
    }
  }
  // "HTTP/1.1 200 OK\r\n...\r\n\r\n{json}"
  if (reply.rfind("HTTP/1.", 0) != 0 || reply.size() < 12) {
    h.error = fmt::format("{} answered no HTTP", where);
    return h;
  }
  h.answered = true;
  h.http_status = std::atoi(reply.c_str() + 9);
  auto body_at = reply.find("\r\n\r\n");
  if (body_at != std::string::npos) {
    auto o = json::parse_object(std::string_view(reply).substr(body_at + 4));
    if (o) h.body = std::move(*o);
  }
  if (h.http_status != 200) h.error = fmt::format("GET /healthz answered HTTP {}", h.http_status);
  return h;
}

// ---- waiting for a process to exit ------------------------------------------------------------

bool wait_for_exit(std::int64_t pid, std::chrono::milliseconds timeout, const storage::process_probe& probe) {
  const auto deadline = steady::now() + timeout;
#ifdef SYS_pidfd_open
  // A pidfd becomes readable when the process exits, whoever its parent is (Linux >= 5.3).
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (fd >= 0) {
    fd_guard g{fd};
    for (;;) {
      if (!probe.alive(pid)) return true;
      pollfd p{fd, POLLIN, 0};
      int rc = ::poll(&p, 1, ms_left(deadline));
      if (rc > 0) return true;
      if (rc == 0) return !probe.alive(pid);
      if (errno != EINTR) break;
    }
  } else if (errno == ESRCH) {
    return true;
  }
#endif
  // No pidfd (an old kernel, a seccomp filter): ask the kernel every 50 ms until the deadline.
  while (probe.alive(pid)) {
    if (steady::now() >= deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// ---- sd_notify ----------------------------------------------------------------------------------

bool notify_systemd(const std::string& state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return true;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  if (len >= sizeof addr.sun_path || (path[0] != '/' && path[0] != '@')) return false;
  std::memcpy(addr.sun_path, path, len);
  if (path[0] == '@') addr.sun_path[0] = '\0';  // an abstract socket
  fd_guard s;
  s.fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s.fd < 0) return false;
  const socklen_t alen = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  return ::sendto(s.fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr), alen) ==
         static_cast<ssize_t>(state.size());
}

// ---- the unit -----------------------------------------------------------------------------------

std::string systemd_quote(const std::string& word) {
  std::string escaped;
  bool quote = word.empty();
  for (char c : word) {
    switch (c) {
      case '%': escaped += "%%"; break;
      case '$': escaped += "$$"; break;
      case '\\': escaped += "\\\\"; quote = true; break;
      case '"': escaped += "\\\""; quote = true; break;
      case '\'': escaped += "\\'"; quote = true; break;
      case '\n': escaped += "\\n"; quote = true; break;
      case '\t': escaped += "\\t"; quote = true; break;
      case ' ':
      case ';': escaped += c; quote = true; break;
      default: escaped += c;
    }
  }
  return quote ? "\"" + escaped + "\"" : escaped;
}

std::string systemd_unit_text(const unit_options& o) {
  std::string exec = systemd_quote(o.exe);
  for (const auto& a : o.args) exec += " " + systemd_quote(a);
  const std::string scope = o.system ? "" : "--user ";
  std::string u;
  u += "# sessionrt gateway as a systemd " + std::string(o.system ? "system" : "user") +
       " service, written by `sessionrt gateway install`.\n";
  u += "#   start:  systemctl " + scope + "daemon-reload && systemctl " + scope + "enable --now sessionrt-gateway\n";
  u += "#   status: sessionrt gateway status --state-dir " + o.state_dir + "   (or: systemctl " + scope +
       "status sessionrt-gateway)\n";
  u += "#   log:    journalctl " + scope + "-u sessionrt-gateway -f\n";
  u += "# Variables the config names as ${VAR} (provider API keys) go in " + o.state_dir +
       "/gateway.env, one VAR=value a line (mode 0600).\n";
  u += "[Unit]\n";
  u += "Description=sessionrt gateway (OpenClaw gateway protocol)\n";
  if (o.system) u += "After=network-online.target\nWants=network-online.target\n";
  u += "\n[Service]\n";
  u += "Type=notify\n";
  u += "ExecStart=" + exec + "\n";
  // A path setting: specifiers are expanded (so '%' is doubled), quotes are not removed.
  std::string env_file;
  for (char c : o.state_dir + "/gateway.env") env_file += c == '%' ? std::string("%%") : std::string(1, c);
  u += "EnvironmentFile=-" + env_file + "\n";
  if (o.system && !o.user.empty()) u += "User=" + o.user + "\n";
  u += "Restart=on-failure\n";
  u += "RestartSec=5s\n";
  u += "KillSignal=SIGTERM\n";
  u += "KillMode=mixed\n";
  // The runtime loads every store before it listens; it flushes them when it stops.
  u += "TimeoutStartSec=300s\n";
  u += "TimeoutStopSec=120s\n";
  u += "SyslogIdentifier=sessionrt-gateway\n";
  u += "UMask=0077\n";
  u += "NoNewPrivileges=yes\n";
  u += "\n[Install]\n";
  u += std::string("WantedBy=") + (o.system ? "multi-user.target" : "default.target") + "\n";
  return u;
}

// ---- the verbs ----------------------------------------------------------------------------------

namespace {

std::string duration_words(std::int64_t ms) {
  if (ms < 0) ms = 0;
  std::int64_t s = ms / 1000;
  const std::int64_t d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60;
  s %= 60;
  if (d) return fmt::format("{}d {}h {}m", d, h, m);
  if (h) return fmt::format("{}h {}m {}s", h, m, s);
  if (m) return fmt::format("{}m {}s", m, s);
  if (s == 0) return fmt::format("{} ms", ms);
  return fmt::format("{}.{}s", s, ms % 1000 / 100);
}

struct observed {
  std::optional<gateway_record> record;
  status record_error;  // reading gateway.json failed
  bool alive = false;
  health_answer health;
};

observed observe(const runtime::cli_io& io, const std::string& state_dir, std::chrono::milliseconds timeout) {
  observed ob;
  auto rec = read_gateway_record(*io.files, state_dir);
  if (!rec) {
    ob.record_error = rec.error();
    return ob;
  }
  ob.record = *rec;
  if (!ob.record) return ob;
  ob.alive = io.probe->alive(ob.record->pid);
  if (ob.alive) ob.health = probe_healthz(ob.record->probe_host(), ob.record->port, timeout);
  return ob;
}

// Whether `pid`'s command line is a sessionrt gateway's (/proc/<pid>/cmdline has "gateway").
bool cmdline_is_gateway(std::int64_t pid) {
  auto text = storage::read_file(storage::posix_fs(), fmt::format("/proc/{}/cmdline", pid), 64 * 1024);
  if (!text) return false;
  bool sessionrt = false, gateway = false;
  std::size_t at = 0;
  while (at < text->size()) {
    std::size_t end = text->find('\0', at);
    if (end == std::string::npos) end = text->size();
    std::string_view arg(text->data() + at, end - at);
    if (arg.find("sessionrt") != std::string_view::npos) sessionrt = true;
    if (arg == "gateway") gateway = true;
    at = end + 1;
  }
  return sessionrt && gateway;
}

}  // namespace

int gateway_status_verb(const runtime::cli_io& io, const std::string& state_dir, bool as_json,
                        std::chrono::milliseconds timeout) {
  std::ostream& out = *io.out;
  observed ob = observe(io, state_dir, timeout);
  const std::string record_path = storage::path_join(state_dir, "gateway.json");
  const bool running = ob.record && ob.alive;
  const bool healthy = running && ob.health.healthy();
  std::string reason;
  if (!ob.record_error.ok()) reason = ob.record_error.message();
  else if (!ob.record) reason = fmt::format("no gateway record ({} does not exist)", record_path);
  else if (!ob.alive)
    reason = fmt::format("{} names pid {}, which is not running (a stale record: the gateway did not stop cleanly)",
                         record_path, ob.record->pid);
  else if (!ob.health.answered) reason = ob.health.error;
  else if (!healthy) reason = ob.health.error.empty() ? "GET /healthz answered ok: false (stopping)" : ob.health.error;
  const std::int64_t now = io.time ? io.time->now_ms() : 0;
  std::int64_t uptime = -1;
  if (healthy) uptime = json::get_int(ob.health.body, "uptimeMs").value_or(-1);
  if (uptime < 0 && running && ob.record->started_at_ms > 0 && now > 0) uptime = now - ob.record->started_at_ms;

  if (as_json) {
    bj::object o{{"running", running}, {"healthy", healthy}, {"stateDir", state_dir}};
    if (ob.record) {
      o["pid"] = ob.record->pid;
      o["url"] = ob.record->url();
      o["port"] = ob.record->port;
      o["bind"] = ob.record->bind;
      if (ob.record->started_at_ms > 0) o["startedAt"] = format_iso_ms(ob.record->started_at_ms);
    }
    if (uptime >= 0) o["uptimeMs"] = uptime;
    if (ob.health.answered) o["health"] = ob.health.body;
    if (!reason.empty()) o["reason"] = reason;
    out << json::to_compact(o) << "\n";
    return healthy ? 0 : 1;
  }
  if (!running) {
    out << "sessionrt gateway: not running (state " << state_dir << ")\n  " << reason << "\n";
    return 1;
  }
  out << "sessionrt gateway: " << (healthy ? "running" : "running but not healthy") << " (pid " << ob.record->pid
      << ")\n";
  out << "  url:     " << ob.record->url() << "\n";
  out << "  state:   " << state_dir << "\n";
  if (ob.record->started_at_ms > 0)
    out << "  started: " << format_iso_ms(ob.record->started_at_ms)
        << (uptime >= 0 ? " (up " + duration_words(uptime) + ")" : std::string()) << "\n";
  if (healthy)
    out << "  health:  ok (GET /healthz: " << json::get_int(ob.health.body, "connections").value_or(0)
        << " connection(s), protocol " << json::get_int(ob.health.body, "protocol").value_or(0) << ")\n";
  else
    out << "  health:  " << reason << "\n";
  return healthy ? 0 : 1;
}

int gateway_stop_verb(const runtime::cli_io& io, const std::string& state_dir, bool as_json,
                      std::chrono::milliseconds timeout) {
  std::ostream& out = *io.out;
  auto say = [&](bool stopped, const std::string& text, std::int64_t pid, std::int64_t waited_ms, int code) {
    if (as_json) {
      bj::object o{{"stopped", stopped}, {"stateDir", state_dir}, {"message", text}};
      if (pid > 0) o["pid"] = pid;
      if (waited_ms >= 0) o["waitedMs"] = waited_ms;
      out << json::to_compact(o) << "\n";
    } else {
      (code == 0 ? out : *io.err) << "sessionrt gateway: " << text << "\n";
    }
    return code;
  };
  auto rec = read_gateway_record(*io.files, state_dir);
  if (!rec) return say(false, rec.error().message(), 0, -1, 2);
  if (!*rec || !io.probe->alive((*rec)->pid))
    return say(false, fmt::format("not running (state {}): nothing to stop", state_dir), *rec ? (*rec)->pid : 0, -1, 0);
  const gateway_record r = **rec;
  // A pid written long ago may have been reused: signal only what looks like this gateway.
  const health_answer h = probe_healthz(r.probe_host(), r.port, 2s);
  const bool ours = (h.answered && json::get_int(h.body, "port").value_or(-1) == r.port) || cmdline_is_gateway(r.pid);
  if (!ours)
    return say(false,
               fmt::format("pid {} is running but does not look like the gateway of {} ({}:{} does not answer "
                           "/healthz and its command line is not a sessionrt gateway's); not signalling it",
                           r.pid, state_dir, r.probe_host(), r.port),
               r.pid, -1, 1);
  const auto started = steady::now();
  if (::kill(static_cast<pid_t>(r.pid), SIGTERM) != 0) {
    if (errno == ESRCH) return say(true, fmt::format("pid {} had already exited", r.pid), r.pid, 0, 0);
    return say(false, fmt::format("cannot signal pid {}: {}", r.pid, std::strerror(errno)), r.pid, -1, 1);
  }
  const bool gone = wait_for_exit(r.pid, timeout, *io.probe);
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count();
  if (!gone)
    return say(false,
               fmt::format("sent SIGTERM to pid {}, still running after {} (--timeout); it may be flushing a large "
                           "store, or stuck: `kill -KILL {}` ends it without flushing",
                           r.pid, duration_words(waited), r.pid),
               r.pid, waited, 1);
  return say(true, fmt::format("stopped (pid {}, {} after SIGTERM)", r.pid, duration_words(waited)), r.pid, waited, 0);
}

namespace {

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::string current_user() {
  if (const char* sudo = std::getenv("SUDO_USER"); sudo && *sudo) return sudo;
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return {};
}

}  // namespace

int gateway_install_verb(const runtime::cli_io& io, const install_request& rq) {
  std::ostream& err = *io.err;
  unit_options u;
  u.exe = rq.exe.empty() ? self_exe() : rq.exe;
  if (u.exe.empty() || u.exe[0] != '/') {
    err << "sessionrt gateway install: cannot tell this executable's absolute path (/proc/self/exe)\n";
    return 2;
  }
  std::error_code ec;
  u.state_dir = std::filesystem::absolute(rq.state_dir, ec).lexically_normal().string();
  if (ec || u.state_dir.empty()) {
    err << "sessionrt gateway install: cannot make the state dir " << rq.state_dir << " absolute\n";
    return 2;
  }
  while (u.state_dir.size() > 1 && u.state_dir.back() == '/') u.state_dir.pop_back();
  u.system = rq.system;
  if (rq.system) {
    u.user = rq.run_as.empty() ? current_user() : rq.run_as;
    if (u.user == "root") u.user.clear();
  }
  u.args = {"gateway", "run", "--state-dir", u.state_dir};
  for (const auto& a : rq.run_args) u.args.push_back(a);
  const std::string text = systemd_unit_text(u);
  if (rq.print) {
    *io.out << text;
    return 0;
  }
  std::string path = rq.output;
  if (path.empty()) {
    if (rq.system) {
      path = "/etc/systemd/system/sessionrt-gateway.service";
    } else {
      std::optional<std::string> base = io.env ? io.env("XDG_CONFIG_HOME") : std::nullopt;
      if (!base || base->empty() || (*base)[0] != '/') {
        auto home = io.env ? io.env("HOME") : std::nullopt;
        if (!home || home->empty()) {
          err << "sessionrt gateway install: $HOME is not set; pass --output FILE\n";
          return 2;
        }
        base = *home + "/.config";
      }
      path = *base + "/systemd/user/sessionrt-gateway.service";
    }
  }
  if (!rq.force && io.files->stat(path).ok()) {
    auto old = storage::read_file(*io.files, path, 1u << 20);
    if (old && *old == text) {
      *io.out << "sessionrt gateway install: " << path << " is up to date\n";
      return 0;
    }
    err << "sessionrt gateway install: " << path << " exists; pass --force to replace it (or --print to see the new unit)\n";
    return 2;
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      err << "sessionrt gateway install: cannot make " << parent.string() << ": " << ec.message() << "\n";
      return 2;
    }
  }
  storage::replace_options ro;
  ro.mode = 0644;
  if (auto w = storage::replace_file_atomic(*io.files, path, text, ro); !w.ok()) {
    err << "sessionrt gateway install: " << w.message() << "\n";
    return 2;
  }
  const std::string scope = rq.system ? "" : "--user ";
  std::ostream& out = *io.out;
  out << "sessionrt gateway install: wrote " << path << "\n";
  out << "  ExecStart=" << systemd_quote(u.exe);
  for (const auto& a : u.args) out << " " << systemd_quote(a);
  out << "\n";
  if (rq.output.empty()) {
    out << "Next:\n  systemctl " << scope << "daemon-reload\n  systemctl " << scope << "enable --now sessionrt-gateway\n";
    if (!rq.system) out << "  loginctl enable-linger " << current_user() << "   # keep it running after you log out\n";
  }
  if (rq.system && u.user.empty())
    err << "sessionrt gateway install: warning: the unit runs the gateway as root; pass --run-as USER\n";
  return 0;
}

}  // namespace sessionrt::gateway
