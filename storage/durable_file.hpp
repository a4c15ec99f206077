// Durable file primitives over fs (SPEC §1.1 Decision, durability):
// - replace_file_atomic: temp file "<dir>/<prefix>.<pid>.<uuid>.tmp" opened
//   O_CREAT|O_EXCL|O_NOFOLLOW with the target mode, written fully (given whole, or in pieces by
//   a producer), fsync'd, renamed over the target, then the directory fsync'd. On any failure
//   the temp is removed and the old file is untouched; the error names the path.
// - ensure_dir: mkdir -p with mode 0700 for the directories it creates.
// - read_file: whole file, refused above a byte limit with an error that names the limit.
// Path helpers are plain string functions ('/' separated, no normalization beyond that).
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "storage/fs.hpp"

namespace sessionrt::storage {

struct replace_options {
  bool durable = true;      // fsync the temp file and the directory
  mode_t mode = 0600;
  std::string temp_prefix;  // default: the target's basename
  // replace_file_atomic only: when set, the file is opened read-write and on success its fd
  // is left open here (the caller closes it): it refers to what is now at `path`.
  int* keep_fd = nullptr;
};

status replace_file_atomic(fs& f, const std::string& path, std::string_view data, const replace_options& opt = {});
// The same with the content written in pieces: produce(write) calls write(piece) (or
// write(pieces), gathered: fs::write_gather) for each piece, in order, and returns the first
// error (write's or its own), which abandons the temp file. size_hint: fs::size_hint.
class piece_writer {
 public:
  piece_writer(fs& f, int fd) : f_(f), fd_(fd) {}
  status operator()(std::string_view piece) const { return write_all(f_, fd_, piece.data(), piece.size()); }
  status operator()(std::span<const std::string_view> pieces) const { return f_.write_gather(fd_, pieces); }
  void size_hint(std::uint64_t bytes) const { f_.size_hint(fd_, bytes); }

 private:
  fs& f_;
  int fd_;
};
status replace_file_atomic(fs& f, const std::string& path, const std::function<status(const piece_writer&)>& produce,
                           const replace_options& opt = {});
// Like replace_file_atomic, but fails with already_exists instead of replacing: the temp file
// is hard-linked to `path` (atomic, exclusive), then unlinked. Readers never see a partial file.
status create_file_exclusive(fs& f, const std::string& path, std::string_view data, const replace_options& opt = {});
status ensure_dir(fs& f, const std::string& path, mode_t mode = 0700);
status fsync_dir(fs& f, const std::string& dir);
result<std::string> read_file(fs& f, const std::string& path, std::size_t max_bytes);
// Copies `from` to `to` (created O_EXCL with `mode`), fsync'd when durable.
status copy_file(fs& f, const std::string& from, const std::string& to, mode_t mode, bool durable);

std::string path_dirname(std::string_view path);   // "a/b/c" -> "a/b"; "c" -> "."
std::string path_basename(std::string_view path);  // "a/b/c" -> "c"
std::string path_join(std::string_view dir, std::string_view name);

}  // namespace sessionrt::storage
