#include "gateway/control_ui.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <ctime>

#include "messages/ascii_text.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

constexpr std::string_view kImmutable = "public, max-age=31536000, immutable";
constexpr std::size_t kMaxFileBytes = 64u << 20;  // the largest UI file served (the bundle's are < 10 MB)

std::string extension_of(std::string_view name) {
  const auto slash = name.rfind('/');
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  return ascii_lower(name.substr(dot));
}

bool compressible(const std::string& ext) {
  static constexpr std::string_view exts[] = {".css", ".html", ".js", ".json", ".svg", ".txt", ".wasm", ".webmanifest"};
  return std::find(std::begin(exts), std::end(exts), ext) != std::end(exts);
}

std::string header_of(const std::map<std::string, std::string>& h, const std::string& name) {
  auto it = h.find(name);
  return it == h.end() ? std::string() : it->second;
}

// Whether a comma-separated header lists `token` with a q above 0 (Accept, Accept-Encoding).
bool lists(const std::string& header, std::string_view token) {
  const std::string h = ascii_lower(header);
  std::size_t at = 0;
  while (at <= h.size()) {
    auto end = h.find(',', at);
    if (end == std::string::npos) end = h.size();
    std::string item = h.substr(at, end - at);
    at = end + 1;
    const auto semi = item.find(';');
    std::string name = item.substr(0, semi);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name != token) continue;
    if (semi != std::string::npos) {
      const auto q = item.find("q=", semi);
      if (q != std::string::npos && std::strtod(item.c_str() + q + 2, nullptr) <= 0) return false;
    }
    return true;
  }
  return false;
}

bool wants_html(const std::map<std::string, std::string>& headers) {
  const std::string accept = header_of(headers, "accept");
  return lists(accept, "text/html") || lists(accept, "application/xhtml+xml");
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int a = hex(s[i + 1]), b = hex(s[i + 2]);
    if (a < 0 || b < 0) return std::nullopt;
    out += static_cast<char>(a * 16 + b);
    i += 2;
  }
  return out;
}

// A relative path inside the root: no "..", ".", empty segment, NUL or backslash.
bool safe_relative(const std::string& rel) {
  if (rel.empty() || rel.front() == '/') return false;
  if (rel.find('\0') != std::string::npos || rel.find('\\') != std::string::npos) return false;
  std::size_t at = 0;
  while (at <= rel.size()) {
    auto end = rel.find('/', at);
    if (end == std::string::npos) end = rel.size();
    const std::string_view seg(rel.data() + at, end - at);
    if (seg.empty() || seg == "." || seg == "..") return false;
    at = end + 1;
  }
  return true;
}

std::string http_date(std::time_t t) {
  char buf[64];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

struct file_read {
  std::string body;
  std::time_t mtime = 0;
};

// A regular file whose real path is inside root_real.
std::optional<file_read> read_inside(const std::string& root_real, const std::string& path) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) return std::nullopt;
  const std::string real(resolved);
  if (real.size() <= root_real.size() || real.compare(0, root_real.size(), root_real) != 0 ||
      real[root_real.size()] != '/')
    return std::nullopt;
  const int fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > kMaxFileBytes) {
    ::close(fd);
    return std::nullopt;
  }
  file_read out;
  out.mtime = st.st_mtime;
  out.body.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < out.body.size()) {
    const ssize_t n = ::read(fd, out.body.data() + got, out.body.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.body.resize(got);
  return out;
}

http_response plain(int status, std::string reason, std::string body) {
  http_response r;
  r.status = status;
  r.reason = std::move(reason);
  r.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"X-Content-Type-Options", "nosniff"}};
  r.body = std::move(body);
  return r;
}

void security_headers(http_response& r) {
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
}

// A page or its config: never cached, since a new build or config changes them under one name.
http_response no_cache_response(const char* content_type, std::string body, bool head) {
  http_response r;
  r.headers = {{"Content-Type", content_type}, {"Cache-Control", "no-cache"}};
  security_headers(r);
  r.body = std::move(body);
  r.head_only = head;
  return r;
}

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]" || host == "::1";
}

// "host:port" -> {host, port}; IPv6 hosts keep their brackets.
std::pair<std::string, std::string> split_host(const std::string& hostport) {
  if (!hostport.empty() && hostport.front() == '[') {
    const auto close = hostport.find(']');
    if (close == std::string::npos) return {hostport, ""};
    const std::string host = hostport.substr(0, close + 1);
    return {host, close + 1 < hostport.size() && hostport[close + 1] == ':' ? hostport.substr(close + 2) : ""};
  }
  const auto colon = hostport.rfind(':');
  if (colon == std::string::npos) return {hostport, ""};
  return {hostport.substr(0, colon), hostport.substr(colon + 1)};
}

}  // namespace

std::string http_response::header(std::string_view name) const {
  const std::string n = ascii_lower(name);
  for (const auto& [k, v] : headers)
    if (ascii_lower(k) == n) return v;
  return {};
}

std::string http_response::wire() const {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

std::string control_ui_content_type(std::string_view file_name) {
  static const std::map<std::string, std::string, std::less<>> types = {
      {".html", "text/html; charset=utf-8"},
      {".js", "application/javascript; charset=utf-8"},
      {".mjs", "application/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json; charset=utf-8"},
      {".map", "application/json; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".webp", "image/webp"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
      {".wasm", "application/wasm"},
      {".webmanifest", "application/manifest+json; charset=utf-8"},
      {".woff2", "font/woff2"},
      {".woff", "font/woff"},
      {".ttf", "font/ttf"},
      {".mp3", "audio/mpeg"},
      {".wav", "audio/wav"},
      {".mp4", "video/mp4"},
      {".webm", "video/webm"},
  };
  auto it = types.find(extension_of(file_name));
  return it == types.end() ? "application/octet-stream" : it->second;
}

control_ui::control_ui(control_ui_options options) : opt_(std::move(options)) {
  if (!opt_.root.empty()) {
    char resolved[PATH_MAX];
    if (::realpath(opt_.root.c_str(), resolved)) opt_.root = resolved;
  }
}

std::optional<http_response> control_ui::serve(std::string_view method, std::string_view url,
                                               const std::map<std::string, std::string>& headers) const {
  if (opt_.root.empty() || (method != "GET" && method != "HEAD")) return std::nullopt;
  const bool head = method == "HEAD";
  const std::string_view path = url.substr(0, url.find_first_of("?#"));
  if (path.empty() || path.front() != '/') return std::nullopt;

  if (path == "/control-ui-config.json" || path == "/__openclaw/control-ui-config.json" ||
      path == "/__openclaw__/control-ui-config.json") {
    bj::object cfg{{"basePath", ""},
                   {"assistantName", opt_.assistant_name},
                   {"assistantAvatar", nullptr},
                   {"serverVersion", opt_.server_version},
                   {"embedSandbox", "scripts"},
                   {"allowExternalEmbedUrls", false},
                   {"automaticallyFetchFavicons", false},
                   {"communityInvite", false},
                   {"terminalEnabled", false},
                   {"cliAgentsEnabled", false},
                   {"pluginAssetsRequireAuth", true},
                   {"pluginFrameGrants", bj::array{}}};
    if (!opt_.assistant_agent_id.empty()) cfg["assistantAgentId"] = opt_.assistant_agent_id;
    return no_cache_response("application/json; charset=utf-8", bj::serialize(cfg), head);
  }

  auto decoded = percent_decode(path.substr(1));
  if (!decoded) return plain(404, "Not Found", "Not Found");
  std::string rel = *decoded;
  // /some/route/assets/x.js (a relative href resolved under a client-side route) is assets/x.js.
  if (auto a = rel.find("/assets/"); a != std::string::npos) rel = rel.substr(a + 1);
  if (rel.empty() || rel.back() == '/') rel += "index.html";
  if (!safe_relative(rel)) return plain(404, "Not Found", "Not Found");
  const std::string ext = extension_of(rel);
  if (ext == ".br" || ext == ".gz") return plain(404, "Not Found", "Not Found");  // only as an encoding

  const bool is_index = rel == "index.html" || (rel.size() > 11 && rel.compare(rel.size() - 11, 11, "/index.html") == 0);
  if (!is_index) {
    if (auto f = read_inside(opt_.root, opt_.root + "/" + rel)) {
      http_response r;
      const bool immutable = rel.rfind("assets/", 0) == 0;
      r.headers = {{"Content-Type", control_ui_content_type(rel)},
                   {"Cache-Control", std::string(immutable ? kImmutable : "no-cache")},
                   {"Last-Modified", http_date(f->mtime)},
                   {"Vary", "Accept-Encoding"}};
      security_headers(r);
      r.body = std::move(f->body);
      if (compressible(ext)) {
        const std::string enc = header_of(headers, "accept-encoding");
        for (auto [token, suffix] : {std::pair{"br", ".br"}, std::pair{"gzip", ".gz"}}) {
          if (!lists(enc, token)) continue;
          if (auto z = read_inside(opt_.root, opt_.root + "/" + rel + suffix)) {
            r.body = std::move(z->body);
            r.headers.emplace_back("Content-Encoding", token);
            break;
          }
        }
      }
      r.head_only = head;
      return r;
    }
    if (ext != "" && control_ui_content_type(rel) != "application/octet-stream")
      return plain(404, "Not Found", "Not Found");
    if (!wants_html(headers)) return std::nullopt;  // not the UI's: the transport's own 404
  }
  auto index = read_inside(opt_.root, opt_.root + "/index.html");
  if (!index) return plain(503, "Service Unavailable", "Control UI assets not found at " + opt_.root + "\n");
  std::string html = std::move(index->body);
  // The base path the app reads from <html data-openclaw-control-ui-base-path>.
  if (auto at = ascii_lower(html).find("<html"); at != std::string::npos)
    html.insert(at + 5, " data-openclaw-control-ui-base-path=\"\" data-openclaw-terminal-enabled=\"false\"");
  return no_cache_response("text/html; charset=utf-8", std::move(html), head);
}

namespace {

// OpenClaw's parseOrigin: scheme://host with nothing after the host but an optional "/".
bool valid_origin(const std::string& origin) {
  const auto sep = origin.find("://");
  if (sep == std::string::npos || sep == 0 || !std::isalpha(static_cast<unsigned char>(origin[0]))) return false;
  for (std::size_t i = 1; i < sep; ++i) {
    const char ch = origin[i];
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '+' && ch != '.' && ch != '-') return false;
  }
  std::string host = origin.substr(sep + 3);
  if (!host.empty() && host.back() == '/') host.pop_back();
  return !host.empty() && host.find_first_of("/?#\\@") == std::string::npos;
}

}  // namespace

bool control_ui::origin_allowed(const std::map<std::string, std::string>& headers, std::string* why) const {
  const std::string origin = ascii_lower(header_of(headers, "origin"));
  if (origin.empty()) return true;  // not a browser
  for (const auto& a : opt_.allowed_origins) {
    const std::string allowed = ascii_lower(a);
    if (allowed == "*" || allowed == origin || (!allowed.empty() && allowed.back() == '/' && allowed.substr(0, allowed.size() - 1) == origin))
      return true;
  }
  // The gateway's own origin: http(s)://<Host>, where Host names this gateway.
  const std::string host = ascii_lower(header_of(headers, "host"));
  const bool same = origin == "http://" + host || origin == "https://" + host;
  if (same && !host.empty()) {
    auto [name, port] = split_host(host);
    const bool port_ok = opt_.port == 0 || port == std::to_string(opt_.port);
    const std::string bind = ascii_lower(opt_.bind);
    const bool ours = is_loopback_host(name) || name == bind || name == "[" + bind + "]" ||
                      ((bind == "0.0.0.0" || bind == "::") && !name.empty());
    if (port_ok && ours) return true;
  }
  if (why) *why = valid_origin(origin) ? "origin not allowed" : "origin missing or invalid";
  return false;
}

connect_verdict with_origin_check(connect_verdict v, bool origin_ok, const std::string& reason) {
  if (origin_ok) return v;
  if (!v.ok) {
    const bool credentials = v.error.why == fault::token_missing || v.error.why == fault::token_mismatch;
    if (!credentials) return v;  // refused before OpenClaw looks at the Origin
  }
  connect_verdict out;
  out.ok = false;
  out.error.code = "INVALID_REQUEST";
  out.error.message = kOriginRefusedMessage;
  out.error.details = bj::object{{"code", "CONTROL_UI_ORIGIN_NOT_ALLOWED"}, {"reason", reason}};
  out.error.why = fault::origin;
  out.close = close_request{close_code::policy, kOriginRefusedMessage};
  return out;
}

namespace {

bool is_ui_dir(const std::string& dir) {
  struct stat st{};
  return !dir.empty() && ::stat((dir + "/index.html").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string package_version(const std::string& package_dir) {
  const int fd = ::open((package_dir + "/package.json").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[1 << 16];
  ssize_t n;
  while (text.size() < (4u << 20) && (n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  boost::system::error_code ec;
  auto v = bj::parse(text, ec);
  if (ec || !v.is_object()) return {};
  if (const auto* s = v.get_object().if_contains("version"); s && s->is_string()) return std::string(s->get_string());
  return {};
}

}  // namespace

control_ui_location find_control_ui(const std::string& explicit_root, const std::string& configured_root,
                                    const std::vector<std::string>& package_dirs) {
  control_ui_location out;
  auto given = [&](const std::string& dir, const char* from) {
    if (is_ui_dir(dir)) {
      out.root = dir;
      out.said = std::string("serving the Control UI from ") + dir + " (" + from + ")";
    } else {
      out.error = true;
      out.said = std::string(from) + " " + dir + " is not a Control UI directory (no index.html in it)";
    }
    return out;
  };
  if (!explicit_root.empty()) return given(explicit_root, "--control-ui");
  if (!configured_root.empty()) return given(configured_root, "gateway.controlUi.root");
  for (const auto& modules : package_dirs) {
    const std::string pkg = modules + "/openclaw";
    const std::string dir = pkg + "/dist/control-ui";
    if (!is_ui_dir(dir)) continue;
    out.root = dir;
    const std::string v = package_version(pkg);
    out.said = "serving the Control UI of the installed openclaw" + (v.empty() ? std::string() : " " + v) +
               " package: " + dir + " (--control-ui DIR or gateway.controlUi.root to choose another)";
    return out;
  }
  out.said = "no Control UI served: no --control-ui, no gateway.controlUi.root and no installed openclaw package "
             "with dist/control-ui (npm install -g openclaw, or pass --control-ui DIR)";
  return out;
}

std::vector<std::string> default_openclaw_package_dirs() {
  std::vector<std::string> out;
  auto split = [&](const char* list) {
    std::string s(list);
    std::size_t at = 0;
    while (at <= s.size()) {
      auto end = s.find(':', at);
      if (end == std::string::npos) end = s.size();
      if (end > at) out.push_back(s.substr(at, end - at));
      at = end + 1;
    }
  };
  if (const char* env = std::getenv("SESSIONRT_CONTROL_UI_PACKAGES"); env && *env) split(env);
  if (const char* prefix = std::getenv("NPM_CONFIG_PREFIX"); prefix && *prefix)
    out.push_back(std::string(prefix) + "/lib/node_modules");
  const char* home = std::getenv("HOME");
  if (home && *home) {
    out.push_back(std::string(home) + "/.npm-global/lib/node_modules");
    out.push_back(std::string(home) + "/.local/lib/node_modules");
  }
  out.push_back("/usr/local/lib/node_modules");
  out.push_back("/usr/lib/node_modules");
  if (home && *home) out.push_back(std::string(home) + "/.cache/sessionrt-compat/openclaw/node_modules");
  return out;
}

}  // namespace sessionrt::gateway
