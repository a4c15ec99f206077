#include "tests/test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sessionrt::testing {

temp_dir::temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sessionrt-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string vectors_dir() { return SESSIONRT_VECTORS; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

std::vector<std::string> list_names(const std::string& dir) {
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

chat_event dm(std::string peer, std::string text, std::string channel) {
  chat_event e;  // fields move-assigned: GCC 12 -O3 warns -Wrestrict (falsely) on assign("...")
  e.channel = std::move(channel);
  e.peer_kind = std::string("direct");
  e.peer_id = std::move(peer);
  e.text = std::move(text);
  return e;
}

}  // namespace sessionrt::testing
