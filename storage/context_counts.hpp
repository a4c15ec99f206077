// context_counts: what earlier history pages learned about the length of a transcript's model
// contexts, so that the next page need not walk to the root to count (context_page.hpp).
// For an entry X of a file, total(X) is the number of items (messages, custom messages, branch
// summaries and a compaction's summary) in the context built with X as its leaf. A leaf L whose
// path reaches X with no compaction after X has total(L) = total(X) + the items between them, so
// the pages of a growing session walk only what was appended since an earlier page.
// Counts are kept per file (path, device, inode), each with the byte offset of its entry, and a
// count is trusted only while the file is the same one (same device and inode, not shorter than
// it was) and the entry of that id is still at that offset. A file rewritten in place with the
// same ids at the same offsets and other parent links would fool it; sessionrt only appends to a
// transcript (a failed append is cut back to where it began) and replaces one by renaming.
// Thread-safe. Bounded: at most kMaxFiles files (the least recently used go first) and
// kMaxPerFile counts per file (the oldest go first).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sessionrt::storage {

class context_counts {
 public:
  static constexpr std::size_t kMaxFiles = 128;
  static constexpr std::size_t kMaxPerFile = 1024;

  struct file_id {
    std::string path;
    std::uint64_t dev = 0, ino = 0;
  };

  // The counts of one file (a handle: lookups take only this file's lock).
  class file {
   public:
    // total(id) when the entry of that id was at `offset` when it was counted.
    std::optional<std::int64_t> total_at(std::string_view id, std::uint64_t offset) const;
    // Adds counts {id, offset, total} (a later one for the same id replaces the earlier).
    void remember(const std::vector<std::pair<std::string, std::pair<std::uint64_t, std::int64_t>>>& counts);
    std::size_t size() const;

   private:
    friend class context_counts;
    struct known {
      std::uint64_t offset;
      std::int64_t total;
    };
    mutable std::mutex mu_;
    std::uint64_t dev_ = 0, ino_ = 0, end_ = 0;  // the file's identity and the end it had
    std::unordered_map<std::string, known> by_id_;
    std::list<std::string> order_;  // insertion order, oldest first (for the bound)
  };

  // The counts of the file `id` whose complete lines end at `data_end` now; a file that is not
  // the one counted before (other inode, or shorter) starts with none.
  std::shared_ptr<file> of(const file_id& id, std::uint64_t data_end);

  std::size_t files() const;

 private:
  mutable std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<file>>> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<std::pair<std::string, std::shared_ptr<file>>>::iterator> by_path_;
};

}  // namespace sessionrt::storage
