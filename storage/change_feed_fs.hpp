// change_feed_fs: a forwarding fs that notes which names changed in the directories it is told
// to watch, so that a reader who listed such a directory once can look again at only what
// changed since (the maintenance pass: a full listing stats every file, and a sessions dir
// holds hundreds of thousands). A name is noted when it is created, opened for writing,
// written, truncated, renamed to or from, linked or unlinked through this fs; only the direct
// entries of a watched dir count, matched by the path's spelling ("<dir>/<name>").
// Not seen: changes made around it (another process, another fs object, another spelling of
// the dir), so a reader must still list the whole directory now and then.
// Thread-safe; the cost on a write is one lock and one hash lookup.
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/forwarding_fs.hpp"

namespace sessionrt::storage {

class change_feed_fs final : public forwarding_fs {
 public:
  explicit change_feed_fs(fs& inner) : forwarding_fs(inner) {}

  void watch(const std::string& dir);
  // The names changed in `dir` since the last take (or since watch), and forgets them;
  // nullopt when `dir` is not watched.
  std::optional<std::unordered_set<std::string>> take(const std::string& dir);

  result<int> open(const std::string& path, int flags, mode_t mode) override;
  status close(int fd) override;
  result<std::size_t> write(int fd, const char* data, std::size_t n) override;
  result<std::size_t> pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) override;
  status write_gather(int fd, std::span<const std::string_view> pieces) override;
  status ftruncate(int fd, std::uint64_t length) override;
  status rename(const std::string& from, const std::string& to) override;
  status link(const std::string& from, const std::string& to) override;
  status unlink(const std::string& path) override;

 private:
  struct where {
    std::size_t dir;  // index into dirs_
    std::string name;
  };
  std::optional<where> locate(const std::string& path) const;  // mu_ held
  void note(const std::string& path);
  void note_fd(int fd);

  mutable std::mutex mu_;
  std::vector<std::string> dirs_;
  std::vector<std::unordered_set<std::string>> changed_;  // per dir
  std::unordered_map<int, where> writable_;                // descriptors open for writing
};

}  // namespace sessionrt::storage
