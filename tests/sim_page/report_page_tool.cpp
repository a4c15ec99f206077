// report_page_tool: the C++ side of the report page's browser test (tests/sim/report_browser_test.sh).
//   report_page_tool sample OUT.html [OUT.json]   the sample report (sample_report.hpp) as a page;
//                                                 prints how many charts it has
//   report_page_tool render IN.json OUT.html      any report JSON as a page
//   report_page_tool check-dom DOM.html N         the DOM Chromium dumped: N chart <svg>s, each with
//                                                 a series <path> whose d is not empty
//   report_page_tool check-png SHOT.png           the screenshot is a PNG that shows the charts:
//                                                 not one flat color, and the palette's first
//                                                 series colors cover visible areas
// Exit 0 when the check holds, 1 with the reason on stderr when it does not, 2 on bad usage.
#include <stb_image.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "sim/report_chart.hpp"
#include "sim/report_html.hpp"
#include "tests/sim_page/sample_report.hpp"

namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int fail(const std::string& why) {
  std::cerr << "report_page_tool: " << why << "\n";
  return 1;
}

int check_dom(const std::string& dom, long expected) {
  static const std::regex path_tag(R"(<path\b[^>]*>)");
  static const std::regex series_class(R"re(\bclass="series\b)re");
  static const std::regex d_attr(R"re(\bd="([^"]*)")re");
  long charts = 0;
  for (auto at = dom.find("<svg"); at != std::string::npos; at = dom.find("<svg", at + 1)) {
    std::string open = dom.substr(at, dom.find('>', at) - at);
    if (open.find("class=\"chart\"") == std::string::npos) continue;
    ++charts;
    auto end = dom.find("</svg>", at);
    if (end == std::string::npos) return fail("chart " + std::to_string(charts) + ": <svg> is not closed");
    std::string svg = dom.substr(at, end - at);
    long drawn = 0;
    for (std::sregex_iterator it(svg.begin(), svg.end(), path_tag), stop; it != stop; ++it) {
      std::string tag = it->str();
      std::smatch d;
      if (std::regex_search(tag, series_class) && std::regex_search(tag, d, d_attr) && d[1].length() > 0) ++drawn;
    }
    if (drawn == 0) return fail("chart " + std::to_string(charts) + " has no series path with a non-empty d");
    std::cout << "chart " << charts << ": " << drawn << " series paths\n";
  }
  if (charts != expected)
    return fail("the DOM has " + std::to_string(charts) + " chart svgs, expected " + std::to_string(expected));
  return 0;
}

int check_png(const std::string& path) {
  int w = 0, h = 0, channels = 0;
  unsigned char* px = stbi_load(path.c_str(), &w, &h, &channels, 3);
  if (px == nullptr) return fail(path + " is not a readable PNG (" + stbi_failure_reason() + ")");
  std::map<unsigned, long> colors;
  for (long i = 0; i < static_cast<long>(w) * h; ++i)
    ++colors[(unsigned{px[i * 3]} << 16) | (unsigned{px[i * 3 + 1]} << 8) | px[i * 3 + 2]];
  stbi_image_free(px);
  auto share_of = [&](std::string_view hex) {  // "#4e79a7", within a small tolerance (anti-aliasing)
    unsigned want = static_cast<unsigned>(std::stoul(std::string(hex.substr(1)), nullptr, 16));
    long n = 0;
    for (const auto& [c, count] : colors) {
      int dr = static_cast<int>(c >> 16) - static_cast<int>(want >> 16);
      int dg = static_cast<int>((c >> 8) & 255) - static_cast<int>((want >> 8) & 255);
      int db = static_cast<int>(c & 255) - static_cast<int>(want & 255);
      if (dr * dr + dg * dg + db * db <= 48) n += count;
    }
    return static_cast<double>(n) / (static_cast<double>(w) * h);
  };
  double first = share_of(sessionrt::sim::series_color(0)), second = share_of(sessionrt::sim::series_color(1));
  std::cout << path << ": " << w << "x" << h << ", " << colors.size() << " colors, series color 1 covers "
            << first * 100 << "%, series color 2 " << second * 100 << "%\n";
  if (w < 200 || h < 200) return fail("the screenshot is only " + std::to_string(w) + "x" + std::to_string(h));
  if (colors.size() < 16) return fail("the screenshot is blank: " + std::to_string(colors.size()) + " colors");
  if (first < 0.002 || second < 0.001) return fail("the charts' series colors hardly appear: the charts did not render");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "sample" && (argc == 3 || argc == 4)) {
    auto report = sessionrt::testing::sample_report();
    if (!write_file(argv[2], sessionrt::sim::render_report_html(report))) return fail(std::string("cannot write ") + argv[2]);
    if (argc == 4 && !write_file(argv[3], sessionrt::json::to_pretty(report) + "\n"))
      return fail(std::string("cannot write ") + argv[3]);
    std::cout << report.at("charts").as_array().size() << "\n";  // the charts the page must show
    return 0;
  }
  if (cmd == "render" && argc == 4) {
    auto text = read_file(argv[2]);
    if (!text) return fail(std::string("cannot read ") + argv[2]);
    auto v = sessionrt::json::parse(*text);
    if (!v.ok() || !v->is_object()) return fail(std::string(argv[2]) + " is not a JSON object");
    if (!write_file(argv[3], sessionrt::sim::render_report_html(v->as_object()))) return fail(std::string("cannot write ") + argv[3]);
    return 0;
  }
  if (cmd == "check-dom" && argc == 4) {
    auto dom = read_file(argv[2]);
    if (!dom) return fail(std::string("cannot read ") + argv[2]);
    return check_dom(*dom, std::stol(argv[3]));
  }
  if (cmd == "check-png" && argc == 3) return check_png(argv[2]);
  std::cerr << "usage: report_page_tool sample OUT.html [OUT.json] | render IN.json OUT.html | check-dom DOM.html N | "
               "check-png SHOT.png\n";
  return 2;
}
