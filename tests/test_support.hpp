// Helpers shared by the tests: a scratch directory removed at scope exit, file I/O shortcuts,
// and the path of the compatibility vectors (tests/vectors, copied from ../shared/vectors).
#pragma once
#include <string>
#include <vector>

#include "messages/chat_event.hpp"

namespace sessionrt::testing {

class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string vectors_dir();
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
bool exists(const std::string& path);
std::vector<std::string> list_names(const std::string& dir);  // sorted
std::vector<std::string> split_lines(const std::string& text);  // without the '\n'
// A direct message from `peer` on `channel`.
chat_event dm(std::string peer, std::string text, std::string channel = "telegram");

}  // namespace sessionrt::testing
