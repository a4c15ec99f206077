// store_backing: the sessions.json file a session_store last wrote, held open by fd so that
// rows unchanged since can be read back from it instead of being kept in memory
// (session_store::spill_clean_rows). The file is the runtime's own (it holds the state dir):
// if another program changes its size in place, every read fails with errc::corrupt naming the
// file (the reader also checks each row's text starts with its key: a same-size edit that
// moved text is caught there). A file replaced by rename is not seen: the fd keeps the bytes
// this runtime wrote, and its next save replaces the other program's file, as before.
// Not thread-safe; one owner (the store actor), shared by copies of the store.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "storage/fs.hpp"

namespace sessionrt::storage {

class store_backing {
 public:
  // Takes `fd` (open for reading, positioned anywhere) and notes what the file is now.
  // The fd is closed on failure too.
  static result<std::shared_ptr<const store_backing>> adopt(fs& f, int fd, std::string path);
  ~store_backing();
  store_backing(const store_backing&) = delete;
  store_backing& operator=(const store_backing&) = delete;

  // Appends bytes [offset, offset + length) of the file to `out`.
  status read(std::uint64_t offset, std::size_t length, std::string& out) const;
  // Checks the file is still as written (one fstat); read() checks this itself.
  status check() const;
  const std::string& path() const { return path_; }
  std::uint64_t size() const { return info_.size; }  // the file's size when adopted
  const file_info& info() const { return info_; }    // the file when adopted

 private:
  store_backing(fs& f, int fd, std::string path, const file_info& info) : fs_(f), fd_(fd), path_(std::move(path)), info_(info) {}
  fs& fs_;
  int fd_;
  std::string path_;
  file_info info_;
};

}  // namespace sessionrt::storage
