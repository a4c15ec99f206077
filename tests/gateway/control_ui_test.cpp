// control_ui (gateway/control_ui.hpp) as a function: content types, cache headers, index.html
// only for HTML navigations, control-ui-config.json, paths that climb out of the root, the
// Origin check, and finding the UI directory.
#include "gateway/control_ui.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/test_support.hpp"

using namespace sessionrt::gateway;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

struct ui_dir {
  sessionrt::testing::temp_dir dir;
  fs::path root() const { return fs::path(dir.path()) / "control-ui"; }
  ui_dir() {
    write(root() / "index.html", "<!doctype html>\n<html lang=\"en\"><head></head><body>app</body></html>\n");
    write(root() / "sw.js", "self.addEventListener('fetch', () => {});\n");
    write(root() / "assets" / "index-AbC123.js", "console.log('app');\n");
    write(root() / "assets" / "index-AbC123.js.br", "BROTLI");
    write(root() / "assets" / "index-AbC123.js.gz", "GZIP");
    write(root() / "assets" / "style-x.css", "body{}\n");
    write(root() / "favicon.svg", "<svg/>");
    write(root() / "manifest.webmanifest", "{}");
    write(root() / "fonts" / "a.woff2", "w2");
    write(fs::path(dir.path()) / "secret.txt", "do not serve\n");
  }
  control_ui ui(std::vector<std::string> origins = {}) const {
    control_ui_options o;
    o.root = root().string();
    o.server_version = "sessionrt-test";
    o.assistant_agent_id = "main";
    o.allowed_origins = std::move(origins);
    o.bind = "127.0.0.1";
    o.port = 18789;
    return control_ui(o);
  }
};

using headers = std::map<std::string, std::string>;
const headers kHtml{{"accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}};
const headers kAny{{"accept", "*/*"}};

}  // namespace

TEST_CASE("control ui: assets get their content type and an immutable cache, sw.js and icons no-cache") {
  ui_dir d;
  auto ui = d.ui();
  auto js = ui.serve("GET", "/assets/index-AbC123.js", kAny);
  REQUIRE(js);
  CHECK(js->status == 200);
  CHECK(js->header("content-type") == "application/javascript; charset=utf-8");
  CHECK(js->header("cache-control") == "public, max-age=31536000, immutable");
  CHECK(js->body == "console.log('app');\n");
  CHECK(js->header("content-encoding").empty());
  auto css = ui.serve("GET", "/assets/style-x.css?v=1", kAny);
  REQUIRE(css);
  CHECK(css->header("content-type") == "text/css; charset=utf-8");
  auto sw = ui.serve("GET", "/sw.js", kAny);
  REQUIRE(sw);
  CHECK(sw->header("content-type") == "application/javascript; charset=utf-8");
  CHECK(sw->header("cache-control") == "no-cache");
  auto svg = ui.serve("GET", "/favicon.svg", kAny);
  REQUIRE(svg);
  CHECK(svg->header("content-type") == "image/svg+xml");
  CHECK(svg->header("cache-control") == "no-cache");
  auto manifest = ui.serve("GET", "/manifest.webmanifest", kAny);
  REQUIRE(manifest);
  CHECK(manifest->header("content-type") == "application/manifest+json; charset=utf-8");
  auto font = ui.serve("GET", "/fonts/a.woff2", kAny);
  REQUIRE(font);
  CHECK(font->header("content-type") == "font/woff2");
  CHECK(control_ui_content_type("x.unknownext") == "application/octet-stream");
  // An asset under a client-side route resolves to assets/.
  auto nested = ui.serve("GET", "/chat/agent/assets/index-AbC123.js", kAny);
  REQUIRE(nested);
  CHECK(nested->status == 200);
  // HEAD: the same headers, no body on the wire.
  auto head = ui.serve("HEAD", "/sw.js", kAny);
  REQUIRE(head);
  CHECK(head->head_only);
  CHECK(head->wire().find("Content-Length: " + std::to_string(head->body.size())) != std::string::npos);
  CHECK(head->wire().find("self.addEventListener") == std::string::npos);
}

TEST_CASE("control ui: a precompressed sibling is served when Accept-Encoding takes it, never asked for directly") {
  ui_dir d;
  auto ui = d.ui();
  auto br = ui.serve("GET", "/assets/index-AbC123.js", {{"accept-encoding", "gzip, deflate, br"}});
  REQUIRE(br);
  CHECK(br->header("content-encoding") == "br");
  CHECK(br->body == "BROTLI");
  CHECK(br->header("vary") == "Accept-Encoding");
  auto gz = ui.serve("GET", "/assets/index-AbC123.js", {{"accept-encoding", "gzip"}});
  REQUIRE(gz);
  CHECK(gz->header("content-encoding") == "gzip");
  auto refused = ui.serve("GET", "/assets/index-AbC123.js", {{"accept-encoding", "br;q=0"}});
  REQUIRE(refused);
  CHECK(refused->body == "console.log('app');\n");
  auto direct = ui.serve("GET", "/assets/index-AbC123.js.br", kAny);
  REQUIRE(direct);
  CHECK(direct->status == 404);
}

TEST_CASE("control ui: index.html for the root and for extensionless paths only when Accept wants HTML") {
  ui_dir d;
  auto ui = d.ui();
  auto root = ui.serve("GET", "/", kAny);
  REQUIRE(root);
  CHECK(root->status == 200);
  CHECK(root->header("content-type") == "text/html; charset=utf-8");
  CHECK(root->header("cache-control") == "no-cache");
  CHECK(root->body.find("<html data-openclaw-control-ui-base-path=\"\"") != std::string::npos);
  auto route = ui.serve("GET", "/chat/agent%3Amain%3Amain", kHtml);
  REQUIRE(route);
  CHECK(route->status == 200);
  CHECK(route->body.find("<body>app</body>") != std::string::npos);
  // Not a navigation: not the UI's (the transport answers its own 404).
  CHECK_FALSE(ui.serve("GET", "/chat/agent", kAny));
  CHECK_FALSE(ui.serve("GET", "/chat/agent", {}));
  CHECK_FALSE(ui.serve("GET", "/chat/agent", {{"accept", "text/html;q=0"}}));
  // A missing file with a static extension is 404 whatever Accept says.
  auto missing = ui.serve("GET", "/assets/missing.js", kHtml);
  REQUIRE(missing);
  CHECK(missing->status == 404);
  // Only GET and HEAD.
  CHECK_FALSE(ui.serve("POST", "/", kHtml));
  // No root: nothing is the UI's.
  control_ui none(control_ui_options{});
  CHECK_FALSE(none.serve("GET", "/", kHtml));
  CHECK_FALSE(none.serve("GET", "/control-ui-config.json", kAny));
}

TEST_CASE("control ui: paths that climb out of the root are refused") {
  ui_dir d;
  auto ui = d.ui();
  for (const char* path : {"/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt",
                           "/assets/%2e%2e/%2e%2e/secret.txt", "/a\\..\\secret.txt", "/%00", "/assets//x.js",
                           "/%zz"}) {
    INFO(path);
    auto r = ui.serve("GET", path, kHtml);
    REQUIRE(r);
    CHECK(r->status == 404);
    CHECK(r->body.find("do not serve") == std::string::npos);
  }
  // A symlink inside the root that points out of it is not followed.
  fs::create_symlink(fs::path(d.dir.path()) / "secret.txt", d.root() / "leak.txt");
  auto link = ui.serve("GET", "/leak.txt", kAny);
  REQUIRE(link);
  CHECK(link->status == 404);
}

TEST_CASE("control ui: control-ui-config.json tells the base path, the assistant and the server version") {
  ui_dir d;
  auto ui = d.ui();
  for (const char* path : {"/control-ui-config.json", "/__openclaw/control-ui-config.json",
                           "/__openclaw__/control-ui-config.json"}) {
    auto r = ui.serve("GET", path, kAny);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->header("content-type") == "application/json; charset=utf-8");
    CHECK(r->header("cache-control") == "no-cache");
    auto v = boost::json::parse(r->body).as_object();
    CHECK(v.at("basePath") == "");
    CHECK(v.at("assistantName") == "Assistant");
    CHECK(v.at("serverVersion") == "sessionrt-test");
    CHECK(v.at("assistantAgentId") == "main");
  }
}

TEST_CASE("control ui: the Origin check passes non-browsers, the gateway's own origin and the allowed list") {
  ui_dir d;
  auto ui = d.ui({"https://ops.example.com"});
  std::string why;
  CHECK(ui.origin_allowed({}, &why));
  CHECK(ui.origin_allowed({{"origin", "http://127.0.0.1:18789"}, {"host", "127.0.0.1:18789"}}));
  CHECK(ui.origin_allowed({{"origin", "http://localhost:18789"}, {"host", "localhost:18789"}}));
  CHECK(ui.origin_allowed({{"origin", "https://ops.example.com"}, {"host", "127.0.0.1:18789"}}));
  CHECK(ui.origin_allowed({{"origin", "HTTPS://OPS.EXAMPLE.COM"}, {"host", "127.0.0.1:18789"}}));
  // Another site's page.
  CHECK_FALSE(ui.origin_allowed({{"origin", "https://evil.example"}, {"host", "127.0.0.1:18789"}}, &why));
  CHECK(why == "origin not allowed");  // OpenClaw's reason (with_origin_check carries it)
  // DNS rebinding: the Host is the attacker's name, not this gateway's address.
  CHECK_FALSE(ui.origin_allowed({{"origin", "http://evil.example:18789"}, {"host", "evil.example:18789"}}));
  // A loopback page on another port is another origin.
  CHECK_FALSE(ui.origin_allowed({{"origin", "http://127.0.0.1:5173"}, {"host", "127.0.0.1:18789"}}));
  CHECK_FALSE(ui.origin_allowed({{"origin", "null"}, {"host", "127.0.0.1:18789"}}, &why));
  CHECK(why == "origin missing or invalid");
  CHECK_FALSE(ui.origin_allowed({{"origin", "https://evil.example/path"}, {"host", "127.0.0.1:18789"}}, &why));
  CHECK(why == "origin missing or invalid");
  auto any = d.ui({"*"});
  CHECK(any.origin_allowed({{"origin", "https://anything.example"}, {"host", "127.0.0.1:18789"}}));
}

TEST_CASE("control ui: the directory is the option's, else the config's, else an installed openclaw package's") {
  ui_dir d;
  sessionrt::testing::temp_dir pkgs;
  const fs::path pkg = fs::path(pkgs.path()) / "node_modules" / "openclaw";
  write(pkg / "package.json", R"({"name":"openclaw","version":"2026.9.6"})");
  write(pkg / "dist" / "control-ui" / "index.html", "<html></html>");
  const std::vector<std::string> dirs{(fs::path(pkgs.path()) / "nowhere").string(),
                                      (fs::path(pkgs.path()) / "node_modules").string()};
  auto explicit_root = find_control_ui(d.root().string(), "/elsewhere", dirs);
  CHECK(explicit_root.root == d.root().string());
  CHECK(explicit_root.said.find("--control-ui") != std::string::npos);
  auto configured = find_control_ui("", d.root().string(), dirs);
  CHECK(configured.root == d.root().string());
  CHECK(configured.said.find("gateway.controlUi.root") != std::string::npos);
  auto installed = find_control_ui("", "", dirs);
  CHECK(installed.root == (pkg / "dist" / "control-ui").string());
  CHECK(installed.said.find("openclaw 2026.9.6") != std::string::npos);
  auto none = find_control_ui("", "", {(fs::path(pkgs.path()) / "nowhere").string()});
  CHECK(none.root.empty());
  CHECK_FALSE(none.error);
  CHECK(none.said.find("no Control UI served") != std::string::npos);
  auto bad = find_control_ui((fs::path(pkgs.path()) / "nowhere").string(), "", dirs);
  CHECK(bad.error);
  CHECK(bad.said.find("not a Control UI directory") != std::string::npos);
}
